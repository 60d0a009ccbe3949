// Assay's small shared browser code: the CSRF header on every state-changing request, a JSON
// helper for fetch, and a toast. Page-specific behaviour lives with its page (Alpine components).
(function () {
  "use strict";

  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    const fromCookie = document.cookie.split("; ").find((c) => c.startsWith("assay_csrf="));
    return (fromCookie && fromCookie.split("=")[1]) || (meta && meta.content) || "";
  }

  document.addEventListener("htmx:configRequest", (event) => {
    event.detail.headers["X-CSRF-Token"] = csrfToken();
  });

  class ApiError extends Error {
    constructor(status, detail, body) {
      super(detail);
      this.status = status;
      this.body = body;
    }
  }

  async function api(method, url, body, options = {}) {
    const headers = { "X-CSRF-Token": csrfToken(), Accept: "application/json" };
    let payload = body;
    if (body !== undefined && !(body instanceof FormData)) {
      headers["Content-Type"] = "application/json";
      payload = JSON.stringify(body);
    }
    const response = await fetch(url, { method, headers, body: payload, ...options });
    const text = await response.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (_) { data = { detail: text }; }
    if (!response.ok) {
      const detail = (data && data.detail) || response.statusText;
      throw new ApiError(response.status, typeof detail === "string" ? detail : JSON.stringify(detail), data);
    }
    return data;
  }

  function toast(message, kind = "info") {
    const box = document.getElementById("toast");
    if (!box) return;
    box.textContent = message;
    box.className = "show " + kind;
    clearTimeout(box._timer);
    box._timer = setTimeout(() => { box.className = ""; }, 4000);
  }

  window.assay = { api, toast, csrfToken, ApiError };
})();
