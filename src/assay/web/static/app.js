// Assay's small shared browser code, loaded on every page: the CSRF header on every
// state-changing request, a JSON helper for fetch, an upload with progress, a toast, and the
// DOM helpers the page scripts build with (user text only ever goes in as textContent).
// Page-specific behaviour lives with its page; the two editors share static/shell.js.
(function () {
  "use strict";

  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    const fromCookie = document.cookie.split("; ").find((c) => c.startsWith("assay_csrf="));
    return (fromCookie && fromCookie.split("=")[1]) || (meta && meta.content) || "";
  }

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

  // One multipart request with upload progress (fetch has none); resolves with {status, data},
  // status 0 when the connection broke (for example the server stopped reading a large file).
  function upload(method, url, form, onProgress) {
    return new Promise((resolve) => {
      const xhr = new XMLHttpRequest();
      xhr.open(method, url);
      xhr.setRequestHeader("X-CSRF-Token", csrfToken());
      xhr.setRequestHeader("Accept", "application/json");
      xhr.upload.addEventListener("progress", (event) => {
        if (event.lengthComputable) onProgress(event.loaded / event.total);
      });
      xhr.addEventListener("load", () => {
        let data = null;
        try { data = JSON.parse(xhr.responseText); } catch (_) { data = { detail: xhr.statusText }; }
        resolve({ status: xhr.status, data: data || {} });
      });
      xhr.addEventListener("error", () => resolve({ status: 0, data: {} }));
      xhr.send(form);
    });
  }

  // An element with properties (text, class, on<event>, hidden, disabled, other attributes)
  // and children; null, undefined and false children are left out.
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "hidden" || key === "disabled") node[key] = Boolean(value);
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
    return node;
  }

  // The message function of a page's catalog: t(key, {name: value}) fills {name}; a missing
  // key shows as itself, a placeholder without a value stays as it is.
  function translator(messages) {
    return (key, params = {}) => (messages[key] || key).replace(/\{(\w+)\}/g, (m, name) =>
      (name in params ? String(params[name]) : m));
  }

  const clone = (value) => JSON.parse(JSON.stringify(value));

  // The data a page hands its script in a <script type="application/json" id=...> island
  // (no inline script under the CSP); {} when the page has none.
  function readJson(id) {
    const node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : {};
  }

  function toast(message, kind = "info") {
    const box = document.getElementById("toast");
    if (!box) return;
    box.textContent = message;
    box.className = "show " + kind;
    clearTimeout(box._timer);
    box._timer = setTimeout(() => { box.className = ""; }, 4000);
  }

  // Esc leaves any field on every page (the keys that follow are shortcuts again, never text
  // in the field): a dialog's field is left to the dialog, which Esc closes.
  document.addEventListener("keydown", (e) => {
    const field = e.target;
    if (e.key !== "Escape" || !(field instanceof HTMLElement) || field.closest("dialog[open]")) return;
    if (field.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(field.tagName)) field.blur();
  });

  window.assay = { api, upload, toast, csrfToken, ApiError, el, translator, clone, readJson };
})();
