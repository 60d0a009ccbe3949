// The project page's members panel (team mode): owners and admins add a member, change a role
// or remove a member through /api/projects/NAME/members/USER; the page then reloads. Owners
// and leads switch whether annotators see every item (PUT /api/projects/NAME/settings). The
// server decides who may; its message is shown as is.
(function () {
  "use strict";

  document.addEventListener("DOMContentLoaded", () => {
    const panel = document.getElementById("members");
    if (!panel) return;
    const error = document.getElementById("members-error");
    const call = async (method, username, body) => {
      error.textContent = "";
      try {
        await window.assay.api(method, panel.dataset.api + encodeURIComponent(username), body);
        window.location.reload();
      } catch (e) {
        error.textContent = e.message;
      }
    };
    const form = document.getElementById("member-form");
    if (form) {
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        call("PUT", form.elements.username.value.trim(), { role: form.elements.role.value });
      });
    }
    const seeAll = document.getElementById("see-all");
    if (seeAll) {
      seeAll.addEventListener("change", async () => {
        error.textContent = "";
        try {
          await window.assay.api("PUT", seeAll.dataset.api, { annotators_see_all: seeAll.checked });
        } catch (e) {
          seeAll.checked = !seeAll.checked;
          error.textContent = e.message;
        }
      });
    }
    panel.querySelectorAll("button[data-remove]").forEach((button) => {
      button.addEventListener("click", () => {
        const name = button.dataset.remove;
        if (window.confirm(panel.dataset.confirm.replace("{name}", name))) call("DELETE", name);
      });
    });
  });
})();
