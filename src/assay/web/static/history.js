// An item's history page: "Restore" saves the content an earlier event left as the item's
// next version (POST .../restore with the version this page read). A stale version answers
// 409: the page says so and reloads nothing, so the reader can look again.
(function () {
  "use strict";

  document.addEventListener("DOMContentLoaded", () => {
    const data = window.assay.readJson("history-data");
    const text = document.getElementById("history-text").dataset;
    const error = document.getElementById("history-error");
    document.querySelectorAll("button.restore-button").forEach((button) => {
      button.addEventListener("click", async () => {
        const event = Number(button.dataset.event);
        if (!window.confirm(text.confirm.replace("{event}", String(event)))) return;
        error.textContent = "";
        button.disabled = true;
        try {
          await window.assay.api("POST", data.restore, { event, version: data.version });
          window.assay.toast(text.done);
          window.location.reload();
        } catch (e) {
          button.disabled = false;
          error.textContent = e.status === 409 ? `${text.conflict} ${e.message}` : e.message;
        }
      });
    });
  });
})();
