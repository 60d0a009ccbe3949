// Queues: "Start" on the queue page, the lead's assignment form, and the queue bar of an
// editor opened from the queue (Submit then opens the next task; Skip asks why). The editors
// hand over their state as window.assay.openEditor; user text only goes in as textContent.
(function () {
  "use strict";

  const { api, clone, el } = window.assay;
  const $ = (id) => document.getElementById(id);
  const bar = $("queue-data") ? window.assay.readJson("queue-data") : null;

  function alertBar(text) {
    const box = $("queue-alert");
    box.textContent = text;
    box.hidden = !text;
  }

  // Save and submit the open task in one request, then open the next one. When someone
  // else took the task after our reservation ran out, the server keeps our work as our own
  // version and says so; we show it and offer the next task.
  async function submitTask() {
    const editor = window.assay.openEditor;
    if (editor.state.saving) await editor.state.saving;
    editor.setSaveState("saving");
    try {
      const answer = await api("POST", bar.submit_url, { version: editor.state.version, item: clone(editor.state.data) });
      editor.state.dirty = false;
      editor.dropDraft(editor.state.id);
      window.location.assign(answer.next_url);
    } catch (err) {
      if (err.status === 409 && err.body && err.body.kept) {
        editor.state.dirty = false;
        editor.dropDraft(editor.state.id);
        editor.setSaveState("error", err.message);
        alertBar(err.message);
        return;
      }
      if (editor.conflictFrom(err)) return;
      editor.setSaveState("error", err.message);
      if (editor.failed) editor.failed(err);
    }
  }

  if (bar) {
    window.assay.queueSubmit = submitTask;
    const submit = $("queue-submit");
    if (submit) submit.addEventListener("click", submitTask);
    $("queue-skip-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      try {
        const answer = await api("POST", bar.skip_url, { reason: $("queue-skip-reason").value });
        const editor = window.assay.openEditor;
        if (editor && editor.state.dirty) await editor.flush();
        window.location.assign(answer.next_url);
      } catch (err) {
        alertBar(err.message);
      }
    });
  }

  const start = $("queue-start");
  if (start) {
    start.addEventListener("click", async () => {
      try {
        const answer = await api("POST", start.dataset.api);
        if (answer.task) window.location.assign(answer.url);
        else $("queue-error").textContent = start.dataset.empty;
      } catch (err) {
        $("queue-error").textContent = err.message;
      }
    });
  }

  // The lead's table: open, done and skipped tasks per annotator (the pool's row has no user).
  function showProgress(rows) {
    const table = $("assign-table");
    const body = table.querySelector("tbody");
    body.replaceChildren(...rows.map((row) => {
      const who = row.user
        ? el("a", { href: table.dataset.home + "/queue?user=" + encodeURIComponent(row.user), text: row.name })
        : document.createTextNode(table.dataset.pool);
      return el("tr", {}, el("td", {}, who),
        ...[row.open, row.done, row.skipped].map((n) => el("td", { class: "num", text: String(n) })));
    }));
    table.hidden = rows.length === 0;
    $("assign-none").hidden = rows.length > 0;
  }

  const form = $("assign-form");
  if (form) {
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const data = new FormData(form);
      const split = (text) => text.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean);
      const body = {
        to: [...data.getAll("to"), ...split(data.get("others") || "")],
        ids: split(data.get("ids") || ""),
        overlap: Number(data.get("overlap")),
        method: data.get("method"),
        blind: data.get("blind") === "on",
        lock_minutes: Number(data.get("lock_minutes")),
      };
      if (!body.ids.length) {
        for (const key of ["status", "query_type", "kind", "text", "origin"]) body[key] = data.get(key) || "";
      }
      $("assign-error").textContent = "";
      try {
        const answer = await api("POST", form.dataset.api, body);
        $("assign-result").textContent = form.dataset.done
          .replace("{items}", answer.items).replace("{already}", answer.already_assigned);
        showProgress(answer.annotators);
      } catch (err) {
        $("assign-error").textContent = err.message;
      }
    });
  }
})();
