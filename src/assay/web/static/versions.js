// The versions page's create form (leads and owners): POST /api/projects/NAME/versions with
// the name, the statuses to freeze and the chunking; the page then reloads with the new
// version listed. The server's message (a name already used, nothing to freeze) is shown as is.
(function () {
  "use strict";

  document.addEventListener("DOMContentLoaded", () => {
    const form = document.getElementById("version-form");
    if (!form) return;
    const data = window.assay.readJson("versions-data");
    const error = document.getElementById("version-error");
    const created = document.getElementById("versions-text").dataset.created;
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      error.textContent = "";
      const statuses = [...form.querySelectorAll('input[name="statuses"]:checked')].map((i) => i.value);
      const chunking = form.elements.chunking ? form.elements.chunking.value : "";
      const button = document.getElementById("version-create");
      button.disabled = true;
      try {
        const made = await window.assay.api("POST", data.api, {
          name: form.elements.name.value.trim(), statuses, chunking: chunking || null,
        });
        window.assay.toast(created.replace("{name}", made.name));
        window.location.reload();
      } catch (e) {
        button.disabled = false;
        error.textContent = e.message;
      }
    });
  });
})();
