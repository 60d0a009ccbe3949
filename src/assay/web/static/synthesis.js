// The LLM drafts page: start a synthesis job (POST .../synthesis-jobs), follow its progress,
// offer to cancel it, then list the drafts it made (each linked to its editor) and how many
// were skipped. The server's messages are shown as is.
(function () {
  "use strict";

  const { el } = window.assay;

  document.addEventListener("DOMContentLoaded", () => {
    const section = document.getElementById("synthesis");
    if (!section) return;
    const t = window.assay.translator(window.assay.readJson("synthesis-messages"));
    const form = document.getElementById("synthesis-form");
    const start = document.getElementById("synthesis-start");
    const box = document.getElementById("synthesis-job");
    const bar = document.getElementById("synthesis-progress");
    const status = document.getElementById("synthesis-status");
    const stop = document.getElementById("synthesis-cancel");
    const drafts = document.getElementById("synthesis-drafts");
    const error = document.getElementById("synthesis-error");

    function show(job) {
      window.assay.showJobProgress(bar, job);
      const result = job.result || {};
      if (job.state === "running") {
        if (job.stage === "queued") status.textContent = t("queued");
        else status.textContent = job.total ? t("count_of", { done: job.done, total: job.total }) : t("running");
      } else if (job.state === "done") {
        const skipped = (result.skipped || []).length;
        status.textContent = t("done", { count: (result.created || []).length }) + (skipped ? " " + t("skipped", { count: skipped }) : "");
      } else if (job.state === "failed") {
        status.textContent = t("failed", { detail: job.message });
      } else {
        status.textContent = t("cancelled");
      }
    }

    function listDrafts(job) {
      drafts.replaceChildren();
      for (const id of (job.result || {}).created || []) {
        drafts.append(el("li", {}, el("a", { href: section.dataset.items + "/" + encodeURIComponent(id), text: t("open", { id }) })));
      }
    }

    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      error.textContent = "";
      drafts.replaceChildren();
      const types = [...form.querySelectorAll('input[name="types"]:checked')].map((i) => i.value);
      start.disabled = true;
      try {
        const job = await window.assay.api("POST", section.dataset.api, {
          n: Number(form.elements.n.value), types, seed: Number(form.elements.seed.value),
          chunking: form.elements.chunking.value || null,
        });
        box.hidden = false;
        show(job);
        stop.hidden = false;
        stop.disabled = false;
        stop.onclick = async () => {
          stop.disabled = true;
          try { await window.assay.api("POST", job.cancel); } catch (e) { error.textContent = e.message; }
        };
        const last = await window.assay.followJob(job, show);
        stop.hidden = true;
        listDrafts(last);
      } catch (e) {
        error.textContent = e.message;
      } finally {
        start.disabled = false;
      }
    });
  });
})();
