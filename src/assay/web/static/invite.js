// An invite link's page: the invitee chooses a password (typed twice); the server makes the
// account, signs it in and the browser goes on to the projects.
(function () {
  "use strict";

  document.addEventListener("DOMContentLoaded", () => {
    const form = document.getElementById("invite-accept-form");
    if (!form) return;
    const error = document.getElementById("invite-accept-error");
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      error.textContent = "";
      const password = form.elements.password.value;
      if (password !== form.elements.again.value) {
        error.textContent = form.dataset.mismatch;
        return;
      }
      try {
        const answer = await window.assay.api("POST", "/api/invite-accept", { token: form.dataset.token, password });
        window.location.href = answer.next;
      } catch (e) {
        error.textContent = e.message;
      }
    });
  });
})();
