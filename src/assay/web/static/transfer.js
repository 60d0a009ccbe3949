// Import and export page: start a job, follow its progress through server-sent events (with
// polling as the fallback), offer to cancel it while it runs, then offer the download
// (export) or show the report (import).
// All text from the server or the user goes into the page with textContent, never as HTML.
(function () {
  "use strict";

  const CONFIRM_MS = 3000;
  const { el } = window.assay;
  let messages = {};
  let fmt = window.assay.translator(messages);

  function size(bytes) {
    if (bytes >= 1e6) return assayFormat.num(bytes / 1e6, 1) + " MB";
    if (bytes >= 1e3) return assayFormat.num(bytes / 1e3, 1) + " kB";
    return assayFormat.num(bytes) + " B";
  }

  function stageText(job) {
    const key = "stage_" + job.stage;
    const stage = key in messages ? fmt(key) : fmt("stage_other", { stage: job.stage });
    if (job.state !== "running" || (!job.done && !job.total)) return stage;
    return job.total
      ? fmt("count_of", { stage, done: job.done, total: job.total })
      : fmt("count", { stage, done: job.done });
  }

  const follow = (job, onUpdate) => window.assay.followJob(job, onUpdate);

  // Show the job box's cancel button while the job runs; resolves with the job's last state.
  async function followWithCancel(job, button, onUpdate) {
    button.hidden = false;
    button.disabled = false;
    button.onclick = async () => {
      button.disabled = true;
      try { await window.assay.api("POST", job.cancel); }
      catch (error) { window.assay.toast(error.message, "error"); button.disabled = false; }
    };
    try { return await follow(job, onUpdate); }
    finally { button.hidden = true; }
  }

  function showProgress(bar, status, job) {
    window.assay.showJobProgress(bar, job);
    status.textContent = stageText(job);
  }

  // ---- export ------------------------------------------------------------------------------

  // Items an export left out because their evidence no longer matches its document, each
  // linked to its editor with the passages that need a look.
  function showNeedsReview(target, result, itemsUrl) {
    const entries = result.needs_review || [];
    if (!entries.length) return;
    const list = el("ul", { class: "needs-review-items" });
    for (const entry of entries) {
      const link = el("a", { href: itemsUrl + encodeURIComponent(entry.id), text: entry.id });
      const why = entry.problems.map((p) => fmt("problem_" + p.reason, { turn: p.turn, passage: p.passage }));
      list.append(el("li", {}, link, ": " + why.join("; ")));
    }
    target.append(
      el("p", { class: "needs-review", text: fmt("needs_review", { count: result.needs_review_count }) }),
      list,
    );
  }
  function setupExport() {
    const section = document.getElementById("export");
    const form = document.getElementById("export-form");
    const format = document.getElementById("export-format");
    const chunking = document.getElementById("export-chunking");
    const help = document.getElementById("export-format-help");
    const box = document.getElementById("export-job");
    const bar = document.getElementById("export-progress");
    const status = document.getElementById("export-status");
    const result = document.getElementById("export-result");
    const start = document.getElementById("export-start");
    const stop = document.getElementById("export-cancel");
    // MTRAG and RAGAPHENE write the project's MTRAG collection: shown, and saved, for them only
    const collectionBox = document.getElementById("export-collection-box");
    const collection = document.getElementById("export-collection");
    let savedCollection = collection.value;

    function describe() {
      const option = format.selectedOptions[0];
      help.textContent = option ? option.dataset.description : "";
      chunking.disabled = !option || option.dataset.chunking !== "yes" || !chunking.options.length;
      collectionBox.hidden = !["mtrag", "ragaphene"].includes(format.value);
    }
    format.addEventListener("change", describe);
    describe();

    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const statuses = Array.from(form.querySelectorAll('input[name="statuses"]:checked')).map((i) => i.value);
      const body = { format: format.value, statuses };
      if (document.getElementById("export-strict").checked) body.strict = true;
      if (document.getElementById("export-unanswerable").checked) body.include_unanswerable = true;
      if (!chunking.disabled && chunking.value) body.chunking = chunking.value;
      box.hidden = false;
      box.className = "job";
      result.replaceChildren();
      status.textContent = fmt("starting");
      bar.removeAttribute("value");
      start.disabled = true;
      try {
        const wanted = collection.value.trim();
        if (!collectionBox.hidden && !collection.readOnly && wanted !== savedCollection) {
          await window.assay.api("PUT", collectionBox.dataset.api, { mtrag_collection: wanted });
          savedCollection = wanted;
        }
        const job = await window.assay.api("POST", section.dataset.api, body);
        refreshJobs();
        const last = await followWithCancel(job, stop, (data) => showProgress(bar, status, data));
        refreshJobs();
        if (last.state === "done") {
          box.classList.add("ok");
          bar.max = 1;
          bar.value = 1;
          status.textContent = fmt("done_export", { items: assayFormat.num(last.result.items), size: size(last.result.size) });
          const link = el("a", { class: "button", text: fmt("download", { name: last.filename }) });
          link.href = last.download;
          link.setAttribute("download", last.filename);
          link.id = "export-download";
          result.append(link);
          // The page may have scrolled on while the job ran: bring the link into view.
          link.scrollIntoView({ block: "center", behavior: "smooth" });
          link.focus({ preventScroll: true });
          const left = Object.entries(last.result.left_out || {}).map(([st, n]) => n + " " + fmt("status_" + st));
          if (left.length) result.append(el("p", { class: "muted left-out", text: fmt("left_out", { items: left.join(", ") }) }));
          showNeedsReview(result, last.result, section.dataset.items);
          for (const note of last.result.notes || []) result.append(el("p", { class: "muted", text: note }));
        } else if (last.state === "cancelled") {
          status.textContent = fmt("cancelled");
        } else {
          box.classList.add("error");
          status.textContent = fmt("failed", { detail: last.message });
        }
      } catch (error) {
        box.classList.add("error");
        status.textContent = fmt("failed", { detail: error.message });
      } finally {
        start.disabled = false;
      }
    });
  }

  // ---- import ------------------------------------------------------------------------------

  function showReport(target, result) {
    target.replaceChildren();
    const head = el("p", { class: "ok-text", text: fmt("imported_into", { project: result.project }) + " " });
    const link = el("a", { text: fmt("open_project") });
    link.href = "/projects/" + encodeURIComponent(result.project);
    head.append(link);
    target.append(head);
    const table = el("table", { class: "docs report" });
    const row = el("tr");
    for (const key of ["kind", "imported", "flagged", "skipped"]) {
      const th = el("th", { text: fmt(key) });
      th.scope = "col";
      row.append(th);
    }
    const thead = el("thead");
    thead.append(row);
    const tbody = el("tbody");
    for (const [kind, counts] of Object.entries(result.summary)) {
      const tr = el("tr");
      tr.append(el("td", { text: kind }));
      for (const key of ["imported", "flagged", "skipped"]) {
        tr.append(el("td", { class: "num" + (counts[key] && key !== "imported" ? " " + key : ""), text: String(counts[key]) }));
      }
      tbody.append(tr);
    }
    table.append(thead, tbody);
    target.append(table, el("p", { class: "muted help", text: fmt("counts_help") }));
    if (!result.noted.length) {
      target.append(el("p", { class: "muted", text: fmt("all_clean") }));
      return;
    }
    const list = el("ul", { class: "noted" });
    for (const o of result.noted) {
      const li = el("li", { class: o.status });
      li.append(el("strong", { text: fmt(o.status) }), document.createTextNode(" " + o.kind + " " + o.ref + ": " + o.message));
      list.append(li);
    }
    target.append(list);
    if (result.noted_total > result.noted.length) {
      target.append(el("p", { class: "muted", text: fmt("more_noted", { count: result.noted_total - result.noted.length }) }));
    }
  }

  function setupImport() {
    const section = document.getElementById("import");
    const form = document.getElementById("import-form");
    const file = document.getElementById("import-file");
    const format = document.getElementById("import-format");
    const help = document.getElementById("import-format-help");
    const replace = document.getElementById("import-replace");
    const start = document.getElementById("import-start");
    const box = document.getElementById("import-job");
    const bar = document.getElementById("import-progress");
    const status = document.getElementById("import-status");
    const report = document.getElementById("import-report");
    const stop = document.getElementById("import-cancel");
    let armedUntil = 0;
    let timer = null;

    function describe() {
      const option = format.selectedOptions[0];
      help.textContent = option ? option.dataset.description : "";
    }
    format.addEventListener("change", describe);
    describe();
    // Pick the format from the file name where it is plain (a .csv is csv, a .zip stays),
    // unless the link that opened the page chose it.
    const linked = new URLSearchParams(location.search).get("format");
    const dropped = document.getElementById("import-dropped");
    file.addEventListener("change", () => {
      const name = (file.files[0] && file.files[0].name.toLowerCase()) || "";
      if (name.endsWith(".csv") && format.value !== linked) format.value = "csv";
      dropped.textContent = file.files[0] ? fmt("dropped", { name: file.files[0].name }) : "";
      describe();
    });
    const zone = document.getElementById("import-drop");
    zone.addEventListener("dragover", (event) => {
      event.preventDefault();
      zone.classList.add("over");
    });
    zone.addEventListener("dragleave", () => zone.classList.remove("over"));
    zone.addEventListener("drop", (event) => {
      event.preventDefault();
      zone.classList.remove("over");
      const files = event.dataTransfer && event.dataTransfer.files;
      if (!files || !files.length) return;
      const one = new DataTransfer();
      one.items.add(files[0]);
      file.files = one.files;
      file.dispatchEvent(new Event("change", { bubbles: true }));
    });

    function disarm() {
      armedUntil = 0;
      start.textContent = start.dataset.label;
      start.classList.remove("danger", "confirming");
    }
    replace.addEventListener("change", disarm);

    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!file.files.length) {
        window.assay.toast(fmt("no_file"), "error");
        file.focus();
        return;
      }
      let confirmed = false;
      if (replace.checked) {
        if (Date.now() > armedUntil) {
          armedUntil = Date.now() + CONFIRM_MS;
          start.textContent = fmt("confirm_replace");
          start.classList.add("danger", "confirming");
          clearTimeout(timer);
          timer = setTimeout(disarm, CONFIRM_MS);
          return;
        }
        confirmed = true;
        clearTimeout(timer);
        disarm();
      }
      const data = new FormData();
      data.append("format", format.value);
      data.append("project", form.elements.project.value);
      data.append("lenient", form.elements.lenient.checked ? "true" : "false");
      data.append("status", form.elements.status.value);
      data.append("replace", replace.checked ? "true" : "false");
      if (confirmed) data.append("confirm", "replace");
      data.append("file", file.files[0], file.files[0].name);
      box.hidden = false;
      box.className = "job";
      report.replaceChildren();
      bar.max = 100;
      bar.value = 0;
      status.textContent = fmt("uploading", { percent: 0 });
      start.disabled = true;
      try {
        const sent = await window.assay.upload("POST", section.dataset.api, data, (fraction) => {
          bar.value = Math.round(fraction * 100);
          status.textContent = fmt("uploading", { percent: bar.value });
        });
        if (sent.status !== 202) {
          box.classList.add("error");
          status.textContent = sent.status === 0
            ? fmt("network")
            : fmt("failed", { detail: sent.data.detail || sent.status }) + " " + fmt("nothing_changed");
          return;
        }
        refreshJobs();
        const last = await followWithCancel(sent.data, stop, (job) => showProgress(bar, status, job));
        refreshJobs();
        if (last.state === "done") {
          box.classList.add("ok");
          status.textContent = fmt("stage_finished");
          showReport(report, last.result);
        } else if (last.state === "cancelled") {
          status.textContent = fmt("cancelled") + " " + fmt("nothing_changed");
        } else {
          box.classList.add("error");
          status.textContent = fmt("failed", { detail: last.message }) + " " + fmt("nothing_changed");
        }
      } finally {
        start.disabled = false;
      }
    });
  }

  // ---- the job list ----------------------------------------------------------------------

  // Redraw the list of jobs from the server (rendered and escaped there), so jobs started
  // here, in another tab or by the CLI show up and move on without a reload.
  let refreshing = null;
  function refreshJobs() {
    if (refreshing) return refreshing;
    refreshing = (async () => {
      try {
        const response = await fetch(location.pathname, { headers: { Accept: "text/html" } });
        if (!response.ok) return;
        const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
        const next = fresh.getElementById("jobs");
        const now = document.getElementById("jobs");
        if (next && now) now.replaceWith(document.importNode(next, true));
      } catch (_) { /* a moment without the server: the next round tries again */ }
      finally { refreshing = null; }
    })();
    return refreshing;
  }

  function watchJobs() {
    const POLL_MS = 3000;
    setInterval(() => {
      const list = document.getElementById("jobs");
      if (document.hidden || !list) return;
      refreshJobs();
    }, POLL_MS);
  }

  document.addEventListener("DOMContentLoaded", () => {
    messages = window.assay.readJson("transfer-messages");
    fmt = window.assay.translator(messages);
    setupExport();
    setupImport();
    watchJobs();
  });
})();
