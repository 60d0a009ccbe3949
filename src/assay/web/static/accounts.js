// The account admin page (workspace admins): disable, enable, a new password, create an
// account, make an invite link (shown once) and revoke one. The server decides and checks
// everything; its message is shown as is, and the page reloads after a change.
(function () {
  "use strict";

  const { api } = window.assay;

  function fields(form) {
    const data = new FormData(form);
    const out = {};
    for (const [key, value] of data.entries()) out[key] = typeof value === "string" ? value.trim() : value;
    for (const box of form.querySelectorAll("input[type=checkbox]")) out[box.name] = box.checked;
    return out;
  }

  // Run one request; its answer ({} for an empty one), or null after showing its error.
  async function attempt(errorBox, work) {
    errorBox.textContent = "";
    try { return (await work()) || {}; } catch (e) { errorBox.textContent = e.message; return null; }
  }

  document.addEventListener("DOMContentLoaded", () => {
    const errors = document.getElementById("accounts-error");
    const passwordForm = document.getElementById("password-form");
    const passwordBox = document.getElementById("password-box");
    let chosen = "";
    const account = (name) => "/api/accounts/" + encodeURIComponent(name);

    document.querySelectorAll("#accounts-table button[data-action]").forEach((button) => {
      const name = button.closest("tr").dataset.username;
      button.addEventListener("click", async () => {
        const action = button.dataset.action;
        if (action === "password") {
          chosen = name;
          document.getElementById("password-user").textContent = name;
          passwordBox.hidden = false;
          passwordForm.elements.password.focus();
          return;
        }
        if (await attempt(errors, () => api("POST", account(name) + "/" + action))) window.location.reload();
      });
    });
    passwordForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const done = await attempt(errors, () =>
        api("PUT", account(chosen) + "/password", { password: passwordForm.elements.password.value }));
      passwordForm.elements.password.value = "";
      if (done) window.location.reload();
    });
    document.getElementById("password-cancel").addEventListener("click", () => { passwordBox.hidden = true; });

    const create = document.getElementById("create-form");
    create.addEventListener("submit", async (event) => {
      event.preventDefault();
      const done = await attempt(document.getElementById("create-error"), () => api("POST", "/api/accounts", fields(create)));
      if (done) window.location.reload();
    });

    const invite = document.getElementById("invite-form");
    invite.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = fields(invite);
      body.days = Number(body.days);
      if (!body.project) { body.project = null; body.role = null; }
      const made = await attempt(document.getElementById("invite-error"), () => api("POST", "/api/invites", body));
      if (!made) return;
      document.getElementById("invite-result").hidden = false;
      const link = document.getElementById("invite-link");
      link.value = made.link;
      link.select();
      invite.reset();
    });
    document.getElementById("invite-copy").addEventListener("click", async () => {
      const link = document.getElementById("invite-link");
      link.select();
      try { await navigator.clipboard.writeText(link.value); } catch (_) { document.execCommand("copy"); }
    });

    document.querySelectorAll("#invites-table button[data-revoke]").forEach((button) => {
      button.addEventListener("click", async () => {
        const done = await attempt(errors, () => api("DELETE", "/api/invites/" + button.dataset.revoke));
        if (done) window.location.reload();
      });
    });
  });
})();
