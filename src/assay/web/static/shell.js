// The shell both editors stand in (the item editor and the conversation workbench): the save
// loop, drafts kept in the browser, the conflict dialog, findings, search, text selections,
// the help overlay and the keys they share. Each page keeps its own state object and passes
// what differs as options; everything else is here once. The judging workbench
// (static/judging.js) uses only its text selections and help overlay.
//
// Each save sends the editor's data with the version it was read at. A 409 goes to the
// conflict dialog (nothing is overwritten); a network or server error keeps the change, shows
// "retrying" and tries again with a growing wait (up to 30 s); any other error stops and shows
// it. Unsaved changes are also kept in localStorage and offered back on the next visit.
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const { api, el, clone } = window.assay;
  const DEBOUNCE_MS = 700;

  const sameSpan = (a, b) => a.doc_id === b.doc_id && a.start === b.start && a.end === b.end;
  const codePoints = (text, utf16) => Array.from(text.slice(0, utf16)).length;

  // A new evidence record for a span (doc_id, start, end, text) of a document.
  function newEvidence(span, label, group, origin) {
    return {
      doc_id: span.doc_id, start: span.start, end: span.end, text: span.text, label, grade: null,
      group, origin, anchor: null, author: null, created_at: null,
    };
  }

  // Is the person typing into a field (where letter keys are text, not shortcuts)?
  function typing(target) {
    return target instanceof HTMLElement
      && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
  }

  // The part of a range inside one text element, trimmed of white space, in code points of
  // that text ({start, end, text, whole, snapped}); null when the range does not touch it or
  // holds only white space there. The range may go on into other elements (a selection across
  // sentences). snap: a word cut at either end is taken whole (the text's edges stop it).
  const WORD = /[\p{L}\p{N}]/u;
  function selectedPart(node, range, snap) {
    if (!range.intersectsNode(node)) return null;
    const full = node.textContent;
    const offset = (container, at) => {
      const before = document.createRange();
      before.selectNodeContents(node);
      before.setEnd(container, at);
      return before.toString().length;
    };
    let start = node.contains(range.startContainer) ? offset(range.startContainer, range.startOffset) : 0;
    let end = node.contains(range.endContainer) ? offset(range.endContainer, range.endOffset) : full.length;
    while (start < end && /\s/.test(full[start])) start += 1;
    while (end > start && /\s/.test(full[end - 1])) end -= 1;
    if (start >= end) return null;
    const [from, to] = [start, end];
    if (snap) {
      while (start > 0 && WORD.test(full[start]) && WORD.test(full[start - 1])) start -= 1;
      while (end < full.length && WORD.test(full[end - 1]) && WORD.test(full[end])) end += 1;
    }
    return {
      start: codePoints(full, start), end: codePoints(full, end), text: full.slice(start, end),
      whole: start === 0 && end === full.length, snapped: start !== from || end !== to,
    };
  }

  // The help overlay (#help-overlay, opened by #help-button, closed by #help-close):
  // toggle(show) opens, closes or flips it.
  function helpOverlay() {
    function toggle(show) {
      const overlay = $("help-overlay");
      const open = show === undefined ? overlay.hidden : show;
      overlay.hidden = !open;
      if (open) $("help-close").focus();
    }
    $("help-button").addEventListener("click", () => toggle(true));
    $("help-close").addEventListener("click", () => toggle(false));
    return { toggle };
  }

  // The state every editor starts from (the page adds its own fields in extra): the record
  // as the server sent it (cfg.item, cfg.input) or blank() for a new one, and the save loop's.
  function editorState(cfg, blank, extra) {
    return Object.assign({
      id: cfg.item ? cfg.item.id : null,
      version: cfg.item ? cfg.item.version : 0,
      status: cfg.item ? cfg.item.status : "draft",
      data: cfg.input ? clone(cfg.input) : blank(),
      docs: Object.assign({}, cfg.documents),
      findings: cfg.findings || [],
      hits: [],
      dirty: false,
      saving: null,       // the promise of the save in flight
      failed: false,
      conflict: null,
      retries: 0,
      timer: null,
    }, extra);
  }

  // options:
  //   state     the page's state (see editorState)
  //   project, messages, t     the project name, the page's catalog and its message function
  //   prefix    "items" or "conv": the catalog keys PREFIX.save.*, .restore.*, .conflict.meta,
  //             .search.*
  //   findings  [status prefix, finding prefix], e.g. ["items.findings", "items.finding"]
  //   draftKey  the localStorage key prefix of kept drafts
  //   statusId  the element that shows the item's status
  //   needsId   true when the record is created elsewhere (a conversation by its first
  //             question): nothing is saved or kept in the browser before it has an id
  //   ready()   may a save start now; busy() → keep the page from closing (default: never)
  //   request() → Promise of the saved payload; saved(payload): redraw after a save
  //   render(): redraw everything from state.data; summaryRows(data) → [[key, text]] for the
  //   conflict dialog; findingParams(finding) → the parameters of its message
  function editorShell(options) {
    const o = Object.assign({ busy: () => false, findingParams: (f) => f.params }, options);
    const { state, t, prefix } = o;
    const base = "/api/projects/" + encodeURIComponent(o.project);

    // ---------------------------------------------------------- drafts kept in the browser

    const draftKey = (id) => o.draftKey + o.project + ":" + (id || "new");

    function keepDraft(data) {
      try {
        localStorage.setItem(draftKey(state.id), JSON.stringify(
          { data, version: state.version, at: new Date().toISOString() }));
      } catch (_) { /* storage full or disabled: the server copy still counts */ }
    }

    function storeDraft() {
      if (o.needsId && !state.id) return;
      keepDraft(state.data);
    }

    function dropDraft(id) {
      try { localStorage.removeItem(draftKey(id)); } catch (_) { /* ignore */ }
    }

    const readOnly = () => Boolean(window.assay.readOnly && window.assay.readOnly.on);

    function offerRestore() {
      if ((o.needsId && !state.id) || readOnly()) return;
      let draft = null;
      try { draft = JSON.parse(localStorage.getItem(draftKey(state.id)) || "null"); } catch (_) { draft = null; }
      if (!draft || !draft.data || JSON.stringify(draft.data) === JSON.stringify(state.data)) {
        if (draft) dropDraft(state.id);
        return;
      }
      const when = new Date(draft.at).toLocaleString(document.documentElement.lang);
      const key = draft.version < state.version ? ".restore.changed" : ".restore.found";
      $("restore-text").textContent = t(prefix + key, { time: when });
      $("restore-banner").hidden = false;
      $("restore-yes").onclick = () => {
        state.data = draft.data;
        $("restore-banner").hidden = true;
        o.render();
        changed();
      };
      $("restore-no").onclick = () => {
        dropDraft(state.id);
        $("restore-banner").hidden = true;
      };
    }

    // ---------------------------------------------------------- saving

    function setSaveState(kind, detail) {
      const box = $("save-state");
      box.className = "save-state " + kind;
      box.textContent = t(prefix + ".save." + kind) + (detail ? ": " + detail : "");
    }

    function changed() {
      if (readOnly()) return;  // a reader who may not edit: nothing is saved or kept
      state.dirty = true;
      storeDraft();
      if (state.conflict || (o.needsId && !state.id)) return;
      setSaveState("pending");
      clearTimeout(state.timer);
      state.timer = setTimeout(saveNow, DEBOUNCE_MS);
    }

    function applySaved(payload) {
      state.id = payload.item.id;
      state.version = payload.item.version;
      state.status = payload.item.status;
      state.findings = payload.findings;
      Object.assign(state.docs, payload.documents);
      $(o.statusId).textContent = t("status." + state.status);
      o.saved(payload);
    }

    function saveNow() {
      clearTimeout(state.timer);
      if (state.conflict || !state.dirty || !o.ready()) return state.saving || Promise.resolve();
      if (state.saving) return state.saving.then(() => saveNow());
      state.dirty = false;
      setSaveState("saving");
      state.saving = o.request().then((payload) => {
        applySaved(payload);
        state.failed = false;
        state.retries = 0;
        if (state.dirty) storeDraft(); else { dropDraft(state.id); setSaveState("saved"); }
      }, (err) => {
        state.dirty = true;
        storeDraft();
        if (conflictFrom(err)) return;
        state.failed = true;
        if (err.status && err.status < 500) {
          setSaveState("error", err.message);
        } else {
          const delay = Math.min(30000, 1000 * 2 ** state.retries);
          state.retries += 1;
          setSaveState("retrying");
          state.timer = setTimeout(saveNow, delay);
        }
      }).finally(() => {
        state.saving = null;
        if (state.dirty && !state.conflict && !state.failed) state.timer = setTimeout(saveNow, 50);
      });
      return state.saving;
    }

    // Save whatever is pending and wait for it; false when a conflict or an error stops it.
    async function flush() {
      for (let round = 0; round < 20; round += 1) {
        if (state.conflict) return false;
        if (state.saving) { await state.saving; continue; }
        if (!state.dirty || !o.ready()) return true;
        state.failed = false;
        await saveNow();
        if (state.failed) return false;
      }
      return !state.dirty;
    }

    // The first save of a new record gives it its own address (and the language switch's).
    function adoptUrl(url) {
      history.replaceState(null, "", url);
      const next = document.querySelector('form.lang input[name="next"]');
      if (next) next.value = url;
    }

    window.addEventListener("beforeunload", (event) => {
      const unsaved = state.dirty && (state.id || !o.needsId);
      if (unsaved || state.saving || state.conflict || o.busy()) {
        event.preventDefault();
        event.returnValue = "";
      }
    });

    // ---------------------------------------------------------- conflicts

    function summary(target, data) {
      target.replaceChildren();
      for (const [key, value] of o.summaryRows(data)) target.append(el("dt", { text: t(key) }), el("dd", { text: value }));
    }

    function openConflict(body) {
      state.conflict = body;
      setSaveState("conflict");
      summary($("conflict-mine"), state.data);
      summary($("conflict-theirs"), body.current_input);
      $("conflict-theirs-meta").textContent = t(prefix + ".conflict.meta", {
        version: body.current.version,
        author: body.current.author,
        time: new Date(body.current.updated_at).toLocaleString(document.documentElement.lang),
      });
      if (!$("conflict").open) $("conflict").showModal();
    }

    // A request refused because the record changed meanwhile opens the dialog; true if it did.
    function conflictFrom(err) {
      if (!(err.status === 409 && err.body && err.body.current)) return false;
      state.dirty = true;
      openConflict(err.body);
      return true;
    }

    // The dialog's two ways out. Neither loses anything: "keep mine" saves over the stored
    // version (which stays in the item's history); "take theirs" loads the stored version and
    // keeps mine in this browser, offered back as a draft.
    const dialog = $("conflict");
    const closeConflict = () => { state.conflict = null; dialog.close(); };
    dialog.addEventListener("cancel", (event) => event.preventDefault());
    $("conflict-mine-button").addEventListener("click", () => {
      state.version = state.conflict.current.version;
      closeConflict();
      state.dirty = true;
      saveNow();
    });
    $("conflict-theirs-button").addEventListener("click", () => {
      const body = state.conflict;
      const mine = state.data;
      closeConflict();
      state.data = clone(body.current_input);
      applySaved({ item: body.current, findings: body.findings, documents: body.documents });
      state.dirty = false;
      o.render();
      setSaveState("saved");
      keepDraft(mine);
      offerRestore();
    });

    // ---------------------------------------------------------- findings

    function renderFindings() {
      const [statusKey, findingKey] = o.findings;
      const list = $("findings");
      list.replaceChildren();
      if (!state.id) {
        list.append(el("li", { class: "muted", text: t(statusKey + ".unsaved") }));
        return;
      }
      if (!state.findings.length) {
        list.append(el("li", { class: "ok", text: t(statusKey + ".none") }));
        return;
      }
      for (const f of state.findings) {
        const key = findingKey + "." + f.code;
        const text = o.messages[key] ? t(key, o.findingParams(f)) : f.message;
        list.append(el("li", { class: "finding " + f.level },
          el("strong", { text: t(statusKey + "." + f.level) + ": " }), text));
      }
    }

    // ---------------------------------------------------------- search

    // Search the documents for the search box's words; onHits() draws state.hits.
    async function search(k, onHits) {
      const query = $("search-q").value.trim();
      if (!query) return;
      const say = (key, params) => { $("search-state").textContent = t(prefix + ".search." + key, params); };
      say("searching");
      const asked = (state.searchSeq = (state.searchSeq || 0) + 1);
      try {
        const params = { q: query, k };
        if ($("search-rerank") && $("search-rerank").checked) params.rerank = "true";
        const result = await api("GET", base + "/editor/search?" + new URLSearchParams(params));
        if (asked !== state.searchSeq) return;  // a later search was asked meanwhile: its hits count
        state.hits = result.hits;
        Object.assign(state.docs, result.documents);
        onHits();
        if (state.hits.length) say("found", { count: state.hits.length }); else say("none");
      } catch (err) {
        say("failed", { detail: err.message });
      }
    }

    // The head line of a search hit: rank, document, score and the label it has (if any).
    function hitMeta(hit, label, scoreKey) {
      return el("div", { class: "hit-meta" },
        el("span", { class: "rank", text: String(hit.rank) }),
        el("span", { class: "docname", text: state.docs[hit.doc_id] || hit.doc_id }),
        el("span", { class: "muted", text: t(scoreKey, { score: assayFormat.num(hit.score, 2) }) }),
        label ? el("span", { class: "badge label-" + label, text: t("items.label." + label) }) : null);
    }

    // ---------------------------------------------------------- text selections

    // The selection as a span of the one text (sel-source) it touches, clipped to that text
    // when it strays past its edges and widened to whole words: {span, clipped, whole};
    // {refused: "none"} when it touches no such text, {refused: "several"} when it touches
    // more than one; null when nothing is selected. Never a whole passage in place of a
    // selection that went wrong.
    function selectionClip() {
      const selection = window.getSelection();
      if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return null;
      const range = selection.getRangeAt(0);
      if (!range.toString().trim()) return null;
      const sources = [...document.querySelectorAll(".sel-source")]
        .filter((node) => node.dataset.docId && node.offsetParent !== null && range.intersectsNode(node));
      if (sources.length !== 1) return { refused: sources.length ? "several" : "none" };
      const source = sources[0];
      const part = selectedPart(source, range, true);
      if (!part) return { refused: "none" };
      const shift = Number(source.dataset.start || 0);
      const clipped = !source.contains(range.startContainer) || !source.contains(range.endContainer);
      return {
        span: {
          doc_id: source.dataset.docId, start: shift + part.start, end: shift + part.end, text: part.text,
          origin: "selected",
        },
        clipped, whole: part.whole,
      };
    }

    // ---------------------------------------------------------- help overlay and shared keys

    const { toggle: toggleHelp } = helpOverlay();

    // Escape closes the help overlay; true when it was open.
    function closeHelp() {
      if ($("help-overlay").hidden) return false;
      toggleHelp(false);
      return true;
    }

    // ? toggles the help, / goes to the search box; true when the key was one of them.
    function sharedKey(key) {
      if (key === "?") toggleHelp();
      else if (key === "/") { $("search-q").focus(); $("search-q").select(); } else return false;
      return true;
    }

    return {
      base, changed, saveNow, flush, applySaved, setSaveState, offerRestore, adoptUrl, dropDraft,
      openConflict, conflictFrom, renderFindings, search, hitMeta, selectionClip,
      closeHelp, sharedKey,
    };
  }

  window.assay.editorShell = editorShell;
  Object.assign(window.assay, { editorState, sameSpan, newEvidence, typing, selectedPart, helpOverlay });
})();
