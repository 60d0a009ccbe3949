// The item editor's ways out: Submit (and new, and next in the list it was opened from),
// Previous / Next in that list, Discard and Delete. Each saves what is pending first; a blank
// or incomplete item is never sent for submitting: the page points at the field that is
// missing. Needs static/editor.js (window.assay.editor) loaded before it.
(function () {
  "use strict";

  const { api } = window.assay;
  const $ = (id) => document.getElementById(id);
  const editor = window.assay.editor;
  const { cfg, t, shell, state, flush, turn } = editor;

  // The fields each completeness finding is about (checks.Finding.target).
  const FIELDS = { query: "f-query", answer: "f-answer", query_type: "f-type", evidence: "search-q" };

  // Point at a missing field: mark it invalid, focus it, and say what is missing.
  function pointAt(target, message) {
    const field = $(FIELDS[target] || "f-query");
    if (target !== "evidence") field.setAttribute("aria-invalid", "true");
    field.focus();
    field.scrollIntoView({ block: "nearest" });
    shell.setSaveState("missing", message);   // saved as a draft; not submitted
  }

  // After a refused submit: the first error finding's field.
  function pointAtMissing() {
    const first = (state.findings || []).find((f) => f.level === "error");
    if (first) pointAt(first.target, t("items.finding." + first.code));
    else $("findings").scrollIntoView({ block: "nearest" });
  }

  // What the page itself can tell is missing before anything is sent (a new blank item has
  // no id yet: nothing to submit).
  function missingHere() {
    if (!turn().query.trim()) return "query";
    if (!turn().answer.trim()) return "answer";
    return null;
  }

  // Save, then submit; resolves true when the item is submitted.
  async function submit() {
    const missing = missingHere();
    if (missing) {
      pointAt(missing, t("items.finding." + missing + "_required"));
      return false;
    }
    if (!(await flush()) || !state.id) return false;
    try {
      const payload = await api("POST", shell.base + "/items/" + encodeURIComponent(state.id) + "/status",
        { version: state.version, status: "submitted" });
      shell.applySaved(payload);
      shell.dropDraft(state.id);
      shell.setSaveState("submitted");
      return true;
    } catch (err) {
      if (shell.conflictFrom(err)) return false;
      if (err.status === 422) {
        // the server's checks say what is missing: show them and point at the first
        const item = await api("GET", shell.base + "/items/" + encodeURIComponent(state.id)).catch(() => null);
        if (item) state.findings = item.findings;
        shell.renderFindings();
        pointAtMissing();
      } else {
        shell.setSaveState("error", err.message);
      }
      return false;
    }
  }

  const place = cfg.place;
  const nextInList = place && place.next_url;

  async function submitThen(url) {
    if (await submit()) window.location.assign(url);
  }

  // Ctrl+Enter: the queue's submit, else the button that carries the shortcut.
  function submitByKey() {
    if (cfg.queue) { window.assay.queueSubmit(); return; }
    if (nextInList) submitThen(nextInList); else submitThen(cfg.new_url);
  }

  if (cfg.queue) {
    $("submit-button").addEventListener("click", () => window.assay.queueSubmit());
  } else {
    $("submit-button").addEventListener("click", submit);
    const more = $("submit-new");
    if (more) more.addEventListener("click", () => submitThen(cfg.new_url));
    const next = $("submit-next");
    if (next) next.addEventListener("click", () => submitThen(nextInList));
  }

  // Previous / Next: save what is pending, then go (a conflict or an error keeps the page).
  for (const id of ["list-prev", "list-next"]) {
    const link = $(id);
    if (!link) continue;
    link.addEventListener("click", async (e) => {
      e.preventDefault();
      if (await flush()) window.location.assign(link.href);
    });
  }

  // Discard (a draft) or Delete, after asking. A new item that was never saved has nothing
  // stored: its browser copy goes and the page starts afresh.
  const remove = $("delete-button");
  if (remove) {
    remove.addEventListener("click", async () => {
      const draft = state.status === "draft";
      const question = turn().query.trim() || t("items.delete.untitled");
      if (!window.confirm(t(draft ? "items.delete.confirm_draft" : "items.delete.confirm", { query: question.slice(0, 120) }))) return;
      clearTimeout(state.timer);
      if (state.saving) await state.saving.catch(() => null);
      if (state.id) {
        try {
          await api("DELETE", shell.base + "/items/" + encodeURIComponent(state.id));
        } catch (err) {
          shell.setSaveState("error", err.message);
          return;
        }
      }
      shell.dropDraft(state.id);
      state.dirty = false;
      window.location.assign(cfg.list_url);
    });
  }

  // The two columns fill the window below what stands above them (bar, banners, review),
  // so the page itself does not scroll: each column does.
  function fitColumns() {
    const cols = document.querySelector(".editor-cols");
    const top = cols.getBoundingClientRect().top + window.scrollY;
    document.documentElement.style.setProperty("--editor-top", Math.ceil(top + 12) + "px");
  }
  fitColumns();
  window.addEventListener("resize", fitColumns);
  const watch = new ResizeObserver(fitColumns);
  for (let node = document.querySelector(".editor-cols").previousElementSibling; node; node = node.previousElementSibling) {
    watch.observe(node);
  }

  window.assay.itemActions = { submit, submitByKey, pointAt, pointAtMissing };
})();
