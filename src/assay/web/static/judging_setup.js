// The judging setup page: upload topics, runs and judgments (the offline page's JSON Lines)
// to the judging API and show each report; save the rating scale (PUT .../settings with
// judging_ratings, one label a line, the first meaning "not rated"). The server checks
// everything; its messages are shown as is.
(function () {
  "use strict";

  const { el } = window.assay;
  const COUNTS = [
    "topics_added", "topics_updated", "reports_added", "reports_unchanged", "documents_added",
    "documents_reused", "added", "updated", "unchanged",
  ];

  function report(t, box, data) {
    const list = el("ul", {});
    for (const key of COUNTS) {
      if (key in data) list.append(el("li", { text: t("r_" + key, { count: data[key] }) }));
    }
    for (const issue of data.issues || []) {
      list.append(el("li", { class: "warn-text", text: issue.where + ": " + issue.message }));
    }
    box.replaceChildren(el("p", { class: "ok-text", text: t("upload_done") }), list);
  }

  document.addEventListener("DOMContentLoaded", () => {
    const catalog = window.assay.readJson("judging-setup-messages");  // keys "uploads.*"
    const t = (key, params) => window.assay.translator(catalog)("uploads." + key, params);
    const api = document.getElementById("judging-inputs").dataset.api;
    document.querySelectorAll("form.judging-upload").forEach((form) => {
      const box = form.querySelector(".upload-report");
      const button = form.querySelector("button[type=submit]");
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        const body = new FormData();
        body.append("file", form.elements.file.files[0]);
        body.append("lenient", form.elements.lenient.checked ? "true" : "false");
        button.disabled = true;
        box.replaceChildren(el("p", { text: t("upload_sending") }));
        const answer = await window.assay.upload("POST", api + "/" + form.dataset.path, body, () => {});
        button.disabled = false;
        if (answer.status === 200) {
          report(t, box, answer.data);
          form.elements.file.value = "";
        } else {
          const detail = answer.status ? answer.data.detail : t("upload_network");
          box.replaceChildren(el("p", { class: "error-text", role: "alert", text: typeof detail === "string" ? detail : JSON.stringify(detail) }));
        }
      });
    });

    const scale = document.getElementById("scale-form");
    const error = document.getElementById("scale-error");
    const saved = document.getElementById("scale-saved");
    const settings = document.getElementById("rating-scale").dataset.api;
    scale.addEventListener("submit", async (event) => {
      event.preventDefault();
      error.textContent = "";
      saved.textContent = "";
      const labels = scale.elements.labels.value.split("\n").map((l) => l.trim()).filter(Boolean);
      try {
        await window.assay.api("PUT", settings, { judging_ratings: labels });
        saved.textContent = t("scale_saved");
      } catch (e) {
        error.textContent = e.message;
      }
    });
    document.getElementById("scale-default").addEventListener("click", (event) => {
      scale.elements.labels.value = event.target.dataset.labels;
    });
  });
})();
