// Signing in and out (team mode). The form posts JSON with the CSRF header like every other
// change; the server's answer code picks the message in the page's language.
(function () {
  "use strict";

  async function signIn(form) {
    const error = document.getElementById("signin-error");
    error.textContent = "";
    const data = new FormData(form);
    try {
      const answer = await window.assay.api("POST", "/api/session", {
        username: data.get("username"), password: data.get("password"), next: form.dataset.next,
      });
      window.location.href = answer.next;
    } catch (e) {
      const body = e.body || {};
      const key = { wrong: "wrong", locked: "locked", disabled: "disabled", too_many: "tooMany" }[body.code];
      const text = key ? form.dataset[key] : e.message;
      error.textContent = text.replace("{until}", body.until || "");
      form.elements.password.value = "";
    }
  }

  async function signOut() {
    try { await window.assay.api("DELETE", "/api/session"); } finally { window.location.href = "/login"; }
  }

  document.addEventListener("DOMContentLoaded", () => {
    const form = document.getElementById("signin-form");
    if (form) form.addEventListener("submit", (event) => { event.preventDefault(); signIn(form); });
    const out = document.getElementById("signout-form");
    if (out) out.addEventListener("submit", (event) => { event.preventDefault(); signOut(); });
  });
})();
