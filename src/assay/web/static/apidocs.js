// Starts Swagger UI on the API docs page (/api/docs) from the vendored bundle. Requests made
// with "Try it out" carry the page's CSRF token, like every other request the pages send.
"use strict";

window.addEventListener("DOMContentLoaded", () => {
  const root = document.getElementById("swagger-ui");
  if (!root || typeof window.SwaggerUIBundle !== "function") return;
  const token = document.querySelector('meta[name="csrf-token"]')?.content || "";
  window.SwaggerUIBundle({
    url: root.dataset.spec,
    domNode: root,
    deepLinking: true,
    validatorUrl: null,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    requestInterceptor: (request) => {
      request.headers["X-CSRF-Token"] = token;
      return request;
    },
  });
});
