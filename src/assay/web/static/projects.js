// Projects page: the "new project" form (an Alpine component). The server checks the name and
// language; its message is shown as is. Lives here, not in the page, so the page needs no
// inline script (see docs/security.md).
document.addEventListener("alpine:init", () => {
  "use strict";
  window.Alpine.data("newProject", () => ({
    name: "",
    language: document.documentElement.lang || "en",
    error: "",
    busy: false,
    async create() {
      this.busy = true;
      this.error = "";
      try {
        const project = await window.assay.api("POST", "/api/projects", {
          name: this.name, language: this.language,
        });
        window.location.href = "/projects/" + encodeURIComponent(project.name);
      } catch (e) {
        this.error = e.message;
        this.busy = false;
      }
    },
  }));
});
