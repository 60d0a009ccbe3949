// The response cache section of the experiments page: "Drop the cache" asks first, then
// DELETE /api/projects/NAME/llm-cache and a reload shows the emptied cache. The server
// decides who may; its refusal is shown as it is.
(function () {
  "use strict";

  document.addEventListener("DOMContentLoaded", () => {
    const section = document.getElementById("llm-cache");
    const button = document.getElementById("drop-cache");
    if (!section || !button) return;
    const error = document.getElementById("llm-cache-error");
    button.addEventListener("click", async () => {
      if (!window.confirm(section.dataset.confirm)) return;
      error.textContent = "";
      button.disabled = true;
      try {
        await window.assay.api("DELETE", section.dataset.api);
        window.location.reload();
      } catch (e) {
        error.textContent = e.message;
        button.disabled = false;
      }
    });
  });
})();
