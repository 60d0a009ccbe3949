// The Endpoints page: workspace admins register an outgoing endpoint (POST /api/endpoints)
// or remove one (DELETE /api/endpoints/NAME); the page then reloads. The server decides who
// may and checks the URL; its message is shown as is.
(function () {
  "use strict";

  document.addEventListener("DOMContentLoaded", () => {
    const list = document.getElementById("endpoints");
    const error = document.getElementById("endpoints-error");
    const call = async (method, url, body) => {
      error.textContent = "";
      try {
        await window.assay.api(method, url, body);
        window.location.reload();
      } catch (e) {
        error.textContent = e.message;
      }
    };
    const form = document.getElementById("endpoint-form");
    if (form) {
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        call("POST", "/api/endpoints", {
          name: form.elements.name.value.trim(),
          url: form.elements.url.value.trim(),
          allow_private: form.elements.allow_private.checked,
          note: form.elements.note.value.trim(),
        });
      });
    }
    list.querySelectorAll("button[data-remove]").forEach((button) => {
      button.addEventListener("click", () => {
        const name = button.dataset.remove;
        if (window.confirm(list.dataset.confirm.replace("{name}", name))) {
          call("DELETE", "/api/endpoints/" + encodeURIComponent(name));
        }
      });
    });
  });
})();
