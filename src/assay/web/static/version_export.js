// A version's page: export the frozen version in a chosen format. Starts an export job
// (POST .../transfer/exports with the version's name), follows its progress and offers the
// file when it is written. The server's message is shown as is.
(function () {
  "use strict";

  document.addEventListener("DOMContentLoaded", () => {
    const section = document.getElementById("version-export");
    if (!section) return;
    const t = window.assay.translator(window.assay.readJson("version-export-messages"));
    const form = document.getElementById("version-export-form");
    const start = document.getElementById("version-export-start");
    const box = document.getElementById("version-export-job");
    const bar = document.getElementById("version-export-progress");
    const status = document.getElementById("version-export-status");
    const link = document.getElementById("version-export-download");
    const error = document.getElementById("version-export-error");

    function show(job) {
      window.assay.showJobProgress(bar, job);
      if (job.state === "running") {
        status.textContent = job.total
          ? t("count_of", { done: job.done, total: job.total })
          : t("running");
      } else if (job.state === "done") {
        status.textContent = t("done", { items: (job.result || {}).items || 0 });
      } else if (job.state === "failed") {
        status.textContent = t("failed", { detail: job.message });
      } else {
        status.textContent = t("cancelled");
      }
    }

    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      error.textContent = "";
      link.hidden = true;
      start.disabled = true;
      try {
        const job = await window.assay.api("POST", section.dataset.api, {
          format: form.elements.format.value, version: section.dataset.version,
        });
        box.hidden = false;
        show(job);
        const last = await window.assay.followJob(job, show);
        if (last.download) {
          link.href = last.download;
          link.textContent = t("download", { name: last.filename });
          link.hidden = false;
        }
      } catch (e) {
        error.textContent = e.message;
      } finally {
        start.disabled = false;
      }
    });
  });
})();
