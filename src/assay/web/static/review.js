// Review: the verdict bar of the item editor and the conversation workbench (accept, accept
// with edits after seeing the diff, reject with a reason), the item's past verdicts, and the
// review queue page's "Start review". A reviewer's edits are saved by the editor's own
// autosave (window.assay.editor); a verdict first waits for that save, then names the version
// it judged, so a verdict that comes second gets a clear conflict and changes nothing. After a
// verdict the next item of the queue opens. User text only goes in as textContent.
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const { api, el, toast } = window.assay;
  const t = window.assay.translator(window.assay.readJson("review-messages"));

  // ------------------------------------------------------------ the queue

  async function openNext(queueApi, queuePage) {
    const next = await api("POST", queueApi + "/next");
    if (next.url) window.location.assign(next.url);
    else if (queuePage) window.location.assign(queuePage);
    return next;
  }

  const queue = $("review-queue");
  if (queue) {
    const start = $("review-start");
    if (start) {
      start.addEventListener("click", async () => {
        start.disabled = true;
        try {
          const next = await openNext(queue.dataset.queue, null);
          if (!next.url) $("review-queue-state").textContent = t("review.queue.none_for_you");
        } catch (err) {
          $("review-queue-state").textContent = err.message;
        } finally {
          start.disabled = false;
        }
      });
    }
    return;
  }

  // ------------------------------------------------------------ the editors' verdict bar

  const panel = $("review");
  const editor = window.assay.editor;
  if (!panel || !editor) return;
  const conversation = panel.dataset.kind === "conversation";
  let info = null;  // GET .../reviews: reviews, pending, refusal, version, status, progress

  function fieldLabel(field) {
    const m = /^turns\[(\d+)\](?:\.(\w+))?$/.exec(field);
    if (!m) return t("review.field." + field);
    const name = m[2] ? t("review.field." + m[2]) : t("review.field.turn");
    return conversation ? t("review.field.turn_n", { n: Number(m[1]) + 1 }) + " · " + name : name;
  }

  function shown(value) {
    if (value === null || value === undefined) return "—";
    if (typeof value === "string") return value || "—";
    if (Array.isArray(value)) {
      if (!value.length) return "—";
      return value.map((v) => (v && typeof v === "object" && "label" in v
        ? t("review.evidence_line", { label: t("review.label." + v.label), text: v.text })
        : typeof v === "string" ? v : JSON.stringify(v))).join("\n");
    }
    if (typeof value === "object" && "query" in value) return value.query + "\n→ " + (value.answer || "—");
    return JSON.stringify(value, null, 1);
  }

  function changesTable(changes) {
    const body = el("tbody");
    for (const c of changes) {
      body.append(el("tr", {},
        el("th", { scope: "row", text: fieldLabel(c.field) }),
        el("td", { class: "before", text: shown(c.before) }),
        el("td", { class: "after", text: shown(c.after) })));
    }
    return el("table", { class: "changes" },
      el("thead", {}, el("tr", {},
        el("th", { scope: "col", text: t("review.diff.field") }),
        el("th", { scope: "col", text: t("review.diff.before") }),
        el("th", { scope: "col", text: t("review.diff.after") }))),
      body);
  }

  function renderHistory() {
    const list = $("review-list");
    list.replaceChildren();
    for (const r of info.reviews) {
      const when = new Date(r.at).toLocaleString(document.documentElement.lang);
      const item = el("li", {},
        el("span", { class: "verdict-" + r.verdict, text: t("review.verdict." + r.verdict) }), " ",
        el("span", { class: "muted", text: t("review.by", { name: r.reviewer, time: when, version: r.submitted_version }) }));
      if (r.reason) item.append(el("p", { class: "reason", text: r.reason }));
      if (r.changes.length) item.append(el("details", {}, el("summary", { text: t("review.changes", { count: r.changes.length }) }), changesTable(r.changes)));
      list.append(item);
    }
    $("review-count").textContent = "(" + info.reviews.length + ")";
    $("review-history").hidden = info.reviews.length === 0;
    const latest = info.reviews[info.reviews.length - 1];
    if (latest && latest.verdict === "reject" && info.status === "rejected") $("review-history").open = true;
  }

  function renderBar() {
    const may = !info.refusal;
    $("review-bar").hidden = !may;
    const edited = info.pending.length > 0;
    $("review-accept").disabled = edited;
    $("review-accept-edited").disabled = !edited;
    const note = $("review-edits-state");
    note.hidden = !may;
    note.textContent = edited ? t("review.edits_pending", { count: info.pending.length }) : t("review.no_edits");
    const p = info.progress;
    $("review-progress").textContent = t("review.progress", { reviewed: p.reviewed, total: p.total });
  }

  async function refresh() {
    try {
      info = await api("GET", panel.dataset.api + "/reviews");
    } catch (err) {
      return showError(err.message, false);
    }
    renderBar();
    renderHistory();
  }

  function showError(message, reload) {
    $("review-error-text").textContent = message;
    $("review-reload").hidden = !reload;
    $("review-error").hidden = false;
  }

  // Wait for the editor's pending save; false (with the reason shown) when it could not save.
  async function saved() {
    if (await editor.flush()) return true;
    showError(t("review.error.unsaved"), false);
    return false;
  }

  async function give(verdict, reason) {
    $("review-error").hidden = true;
    if (!(await saved())) return;
    const body = { verdict, version: editor.state.version };
    if (reason) body.reason = reason;
    let payload;
    try {
      payload = await api("POST", panel.dataset.api + "/review", body);
    } catch (err) {
      if (err.status === 409) showError(err.message, true);
      else showError(err.message, false);
      return;
    }
    editor.applySaved(payload);
    toast(t("review.done." + payload.review.verdict));
    try {
      const next = await openNext(panel.dataset.queue, null);
      if (!next.url) { toast(t("review.queue.all_done")); await refresh(); }
    } catch (err) {
      await refresh();
    }
  }

  async function acceptEdited() {
    if (!(await saved())) return;
    await refresh();
    if (!info.pending.length) return;
    $("review-diff-body").replaceChildren(changesTable(info.pending));
    $("review-diff").showModal();
    $("review-diff-confirm").focus();
  }

  function openReject() {
    $("review-reason-error").hidden = true;
    $("review-reject-dialog").showModal();
    $("review-reason").focus();
  }

  $("review-accept").addEventListener("click", () => give("accept"));
  $("review-accept-edited").addEventListener("click", acceptEdited);
  $("review-reject").addEventListener("click", openReject);
  $("review-skip").addEventListener("click", async () => {
    try {
      await api("POST", panel.dataset.queue + "/" + encodeURIComponent(editor.state.id) + "/skip", {});
      await openNext(panel.dataset.queue, panel.dataset.queuePage);
    } catch (err) {
      showError(err.message, false);
    }
  });
  $("review-diff-cancel").addEventListener("click", () => $("review-diff").close());
  $("review-diff-confirm").addEventListener("click", () => {
    $("review-diff").close();
    give("accept_edited");
  });
  $("review-reject-cancel").addEventListener("click", () => $("review-reject-dialog").close());
  $("review-reject-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const reason = $("review-reason").value.trim();
    if (!reason) {
      $("review-reason-error").hidden = false;
      $("review-reason").focus();
      return;
    }
    $("review-reject-dialog").close();
    give("reject", reason);
  });
  $("review-reload").addEventListener("click", () => window.location.reload());

  // After each save of the editor, what an accept would record may have changed.
  new MutationObserver(() => {
    if ($("save-state").classList.contains("saved")) refresh();
  }).observe($("save-state"), { attributes: true, attributeFilter: ["class"] });

  // Shift+A accept, Shift+E accept with edits, Shift+X reject; from inside a field
  // Alt+Shift+A/E/X (so no letter is ever typed into the answer). Shift+E waits for the
  // editor's save and shows what would be recorded, whatever the button showed a moment ago.
  document.addEventListener("keydown", (e) => {
    if (!e.shiftKey || e.ctrlKey || e.metaKey) return;
    if (document.querySelector("dialog[open]") || !$("help-overlay").hidden) return;
    if (!e.altKey && window.assay.typing(e.target)) return;
    // with Alt the key may be another character (macOS): the physical key counts then
    const letter = e.altKey ? e.code.replace(/^Key/, "") : e.key.toUpperCase();
    if (!["A", "E", "X"].includes(letter)) return;
    e.preventDefault();
    loaded.then(() => {  // a key pressed before the page knew whether its reader may review
      if (!info || info.refusal) return;
      if (letter === "E") acceptEdited();
      else if (letter === "A" && !$("review-accept").disabled) give("accept");
      else if (letter === "X") openReject();
    });
  });

  const loaded = refresh();
})();
