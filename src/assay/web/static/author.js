// The annotator's name in the header: kept in the cookie `assay_author` (percent-encoded, so
// any name survives; the server decodes it and records it as the author of what is created).
(function () {
  "use strict";
  const COOKIE = "assay_author";

  function read() {
    const entry = document.cookie.split("; ").find((c) => c.startsWith(COOKIE + "="));
    if (!entry) return "";
    try { return decodeURIComponent(entry.slice(COOKIE.length + 1)); } catch (_) { return ""; }
  }

  function write(name) {
    const value = encodeURIComponent(name.trim().slice(0, 200));
    const age = value ? 365 * 24 * 3600 : 0;
    document.cookie = `${COOKIE}=${value}; Max-Age=${age}; Path=/; SameSite=Lax`;
  }

  document.addEventListener("DOMContentLoaded", () => {
    const form = document.getElementById("author-form");
    const input = document.getElementById("author-name");
    const status = document.getElementById("author-status");
    if (!form || !input) return;
    input.value = read();
    const save = () => {
      write(input.value);
      const name = read();
      status.textContent = name ? form.dataset.saved.replace("{name}", name) : form.dataset.cleared;
    };
    input.addEventListener("change", save);
    form.addEventListener("submit", (event) => { event.preventDefault(); save(); input.blur(); });
  });

  window.assayAuthor = { read, write };
})();
