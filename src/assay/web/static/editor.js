// The item editor: one question, its evidence from search or the document view, the answer,
// autosave with conflict handling, and keyboard shortcuts. User data only ever reaches the page
// through textContent and form values (never innerHTML), so typed or uploaded markup stays text.
(function () {
  "use strict";

  const { api, el, clone, sameSpan, newEvidence, typing } = window.assay;
  const P = window.assay.passage;
  const cfg = window.assay.readJson("editor-data");
  const t = window.assay.translator(cfg.messages);
  const $ = (id) => document.getElementById(id);

  function blankItem() {
    return {
      kind: "qa", notes: "", origin: "human", extra: {},
      turns: [{
        query: "", rewrite: "", query_type: cfg.default_type, enrichments: {}, answer: "",
        alternatives: [], original_answer: "", generation: {}, retrieved: [], evidence: [],
      }],
    };
  }

  const state = window.assay.editorState(cfg, blankItem, {
    hitIndex: -1, searchTouched: false, texts: {}, searchTimer: null,
  });
  const SEARCH_DEBOUNCE_MS = 600;
  // Other parts of the page (suggestions, pools) listen for these: assay:evidence (the
  // evidence changed), assay:hits (new search hits drawn), assay:saved (a save came back).
  const announce = (name, detail) => document.dispatchEvent(new CustomEvent("assay:" + name, { detail }));
  const turn = () => state.data.turns[0];

  // ------------------------------------------------------------ saving and conflicts

  // The request of one save: the first save of a new item creates it (and its URL).
  function saveRequest() {
    const body = clone(state.data);
    if (state.id) {
      return api("PUT", shell.base + "/items/" + encodeURIComponent(state.id), { version: state.version, item: body });
    }
    return api("POST", shell.base + "/items", body).then((payload) => {
      shell.dropDraft(null);
      shell.adoptUrl("/projects/" + encodeURIComponent(cfg.project) + "/items/" + encodeURIComponent(payload.item.id));
      $("editor-title").textContent = t("items.editor.title");
      return payload;
    });
  }

  function summaryRows(data) {
    const tr = data.turns[0] || {};
    const relevant = (tr.evidence || []).filter((e) => e.label === "relevant").length;
    return [
      ["items.field.query", tr.query || "—"],
      ["items.field.answer", tr.answer || "—"],
      ["items.conflict.evidence", t("items.conflict.evidence_count",
        { count: (tr.evidence || []).length, relevant: relevant })],
      ["items.field.notes", data.notes || "—"],
    ];
  }

  const shell = window.assay.editorShell({
    state, project: cfg.project, messages: cfg.messages, t, prefix: "items",
    findings: ["items.findings", "items.finding"], draftKey: "assay:draft:", statusId: "item-status",
    ready: () => true,
    request: saveRequest,
    saved: (payload) => { shell.renderFindings(); announce("saved", payload); },
    render: () => fillForm(),
    summaryRows,
  });
  const { changed, flush, renderFindings } = shell;
  window.assay.flushEditor = flush;  // comments.js saves pending edits before a comment
  window.assay.editor = { state, flush, applySaved: shell.applySaved, render: fillForm };  // for static/review.js, suggestions.js

  // ------------------------------------------------------------ the form

  function typeHelp() {
    const selected = cfg.query_types.find((q) => q.id === turn().query_type);
    $("type-help").textContent = selected ? selected.help : t("items.field.type_unknown");
  }

  function fillForm() {
    const tr = turn();
    $("f-query").value = tr.query;
    const select = $("f-type");
    if (![...select.options].some((o) => o.value === tr.query_type)) {
      select.append(el("option", { value: tr.query_type, text: tr.query_type }));
    }
    select.value = tr.query_type;
    $("f-answer").value = tr.answer;
    $("f-notes").value = state.data.notes;
    if (!state.searchTouched) $("search-q").value = tr.query;
    typeHelp();
    renderAlternatives();
    renderEvidence();
    renderHits();
    renderFindings();
  }

  const unanswerable = () => turn().query_type === "unanswerable";

  // The search follows the question (after a pause in typing) until the search box is
  // edited by hand.
  $("f-query").addEventListener("input", (e) => {
    turn().query = e.target.value;
    $("f-query").removeAttribute("aria-invalid");
    if (!state.searchTouched) {
      $("search-q").value = e.target.value;
      clearTimeout(state.searchTimer);
      state.searchTimer = setTimeout(runSearch, SEARCH_DEBOUNCE_MS);
    }
    changed();
  });
  $("f-answer").addEventListener("input", (e) => {
    turn().answer = e.target.value;
    $("f-answer").removeAttribute("aria-invalid");
    changed();
  });
  $("f-notes").addEventListener("input", (e) => { state.data.notes = e.target.value; changed(); });
  $("f-type").addEventListener("change", (e) => {
    const next = e.target.value;
    const relevant = turn().evidence.filter((ev) => ev.label === "relevant").length;
    if (next === "unanswerable" && relevant > 0
        && !window.confirm(t("items.confirm.unanswerable", { count: relevant }))) {
      e.target.value = turn().query_type;
      return;
    }
    if (next === "unanswerable") turn().evidence = turn().evidence.filter((ev) => ev.label !== "relevant");
    turn().query_type = next;
    typeHelp();
    renderEvidence();
    renderHits();
    changed();
  });

  function renderAlternatives() {
    const list = $("alt-list");
    list.replaceChildren();
    turn().alternatives.forEach((text, index) => {
      const input = el("input", {
        type: "text", "aria-label": t("items.field.alternative_n", { n: index + 1 }),
        oninput: (e) => { turn().alternatives[index] = e.target.value; changed(); },
      });
      input.value = text;
      const remove = el("button", {
        type: "button", class: "secondary small", text: t("items.field.remove"),
        "aria-label": t("items.field.remove_alternative", { n: index + 1 }),
        onclick: () => { turn().alternatives.splice(index, 1); renderAlternatives(); changed(); },
      });
      list.append(el("li", {}, input, remove));
    });
  }
  $("alt-add").addEventListener("click", () => {
    turn().alternatives.push("");
    renderAlternatives();
    changed();
    const inputs = $("alt-list").querySelectorAll("input");
    inputs[inputs.length - 1].focus();
  });

  // ------------------------------------------------------------ evidence and AND/OR groups

  function relevantGroups() {
    // Relevant evidence by group (ascending); evidence of one group are alternatives (OR),
    // the groups are all needed (AND).
    const groups = new Map();
    turn().evidence.forEach((ev, index) => {
      if (ev.label !== "relevant") return;
      const key = ev.group || 0;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(index);
    });
    return [...groups.entries()].sort((a, b) => a[0] - b[0]);
  }

  function nextGroup() {
    return Math.max(0, ...turn().evidence.map((e) => (e.label === "relevant" ? e.group || 0 : 0))) + 1;
  }

  function normaliseGroups() {
    // Number the groups 1..n in their current order, so the page and the data agree.
    relevantGroups().forEach(([, members], position) => {
      for (const index of members) turn().evidence[index].group = position + 1;
    });
    for (const ev of turn().evidence) if (ev.label !== "relevant") ev.group = 0;
  }

  function addEvidence(ev) {
    if (ev.label === "relevant" && unanswerable()) {
      window.assay.toast(t("items.evidence.no_relevant_unanswerable"), "error");
      return;
    }
    const existing = turn().evidence.find((e) => sameSpan(e, ev));
    if (existing) {
      if (existing.label === ev.label) {
        window.assay.toast(t("items.evidence.already", { label: t("items.label." + ev.label) }));
        return;
      }
      existing.label = ev.label;
      existing.group = ev.label === "relevant" ? nextGroup() : 0;
    } else {
      turn().evidence.push(newEvidence(ev, ev.label, ev.label === "relevant" ? nextGroup() : 0, ev.origin));
    }
    normaliseGroups();
    renderEvidence();
    renderHits();
    changed();
    window.assay.toast(t("items.evidence.added", { label: t("items.label." + ev.label) }));
  }

  // The text a document's passages are shown from (loaded once per document and page).
  async function documentText(docId) {
    if (!(docId in state.texts)) {
      state.texts[docId] = api("GET", shell.base + "/documents/" + encodeURIComponent(docId))
        .then((doc) => { state.docs[doc.id] = doc.name; return doc.text; }, () => null);
    }
    return state.texts[docId];
  }

  const CONTEXT_CHARS = 90;
  const foldLabels = () => [t("items.passage.more"), t("items.passage.less")];

  // An evidence passage with a little of the text around it (muted), the passage itself
  // highlighted, folded to a few lines. The passage's own element (.ev-text) holds exactly
  // its text (comments.js anchors on it); the context stands beside it.
  function evidencePassage(ev) {
    const name = () => state.docs[ev.doc_id] || "";
    const own = el("span", { class: "ev-text ev-span span-" + ev.label });
    P.draw(own, ev.text, { markup: P.marked(name()) });
    const before = el("span", { class: "ctx" });
    const after = el("span", { class: "ctx" });
    const box = el("div", { class: "passage ev-passage" }, before, own, after);
    const fold = P.folded(box, foldLabels(), ".ev-text");
    const anchored = ev.doc_id && ev.start !== null && ev.start !== undefined && (!ev.anchor || ev.anchor === "ok");
    if (anchored) {
      documentText(ev.doc_id).then((text) => {
        if (text === null || !box.isConnected) return;
        const chars = Array.from(text);
        if (chars.slice(ev.start, ev.end).join("") !== ev.text) return;
        let from = Math.max(0, ev.start - CONTEXT_CHARS);
        let to = Math.min(chars.length, ev.end + CONTEXT_CHARS);
        // start and stop at a word (or line) boundary
        while (from > 0 && from < ev.start && !/\s/.test(chars[from - 1])) from += 1;
        while (to < chars.length && to > ev.end && !/\s/.test(chars[to])) to -= 1;
        const lineStart = chars.lastIndexOf("\n", ev.start - 1);
        if (lineStart >= from) from = lineStart + 1;
        const lineEnd = chars.indexOf("\n", ev.end);
        if (lineEnd >= 0 && lineEnd < to) to = lineEnd;
        P.draw(before, chars.slice(from, ev.start).join(""), { markup: P.marked(name()) });
        P.draw(after, chars.slice(ev.end, to).join(""), { markup: P.marked(name()) });
        fold[0].refit();
      });
    }
    return fold;
  }

  function evidenceRow(index, groupInfo) {
    const ev = turn().evidence[index];
    const name = state.docs[ev.doc_id] || ev.doc_id || t("items.evidence.no_document");
    // the one label control of a card (its colour says the label too)
    const labelSelect = el("select", {
      class: "ev-label label-" + ev.label,
      "aria-label": t("items.evidence.label_of", { n: index + 1 }),
      onchange: (e) => {
        ev.label = e.target.value;
        ev.group = ev.label === "relevant" ? nextGroup() : 0;
        normaliseGroups(); renderEvidence(); renderHits(); changed();
      },
    });
    for (const label of ["relevant", "distracting"].concat(ev.label === "irrelevant" ? ["irrelevant"] : [])) {
      const option = el("option", { value: label, text: t("items.label." + label) });
      if (label === "relevant" && unanswerable()) option.disabled = true;
      labelSelect.append(option);
    }
    labelSelect.value = ev.label;
    const actions = el("div", { class: "ev-actions" });
    if (groupInfo) {
      actions.append(
        el("button", {
          type: "button", class: "secondary small", text: t("items.evidence.join_above"),
          title: t("items.evidence.join_above_help"), disabled: groupInfo.position === 0,
          onclick: () => {
            ev.group = groupInfo.previousGroup;
            normaliseGroups(); renderEvidence(); changed();
          },
        }),
        el("button", {
          type: "button", class: "secondary small", text: t("items.evidence.own_group"),
          title: t("items.evidence.own_group_help"), disabled: groupInfo.size === 1,
          onclick: () => {
            ev.group = nextGroup();
            normaliseGroups(); renderEvidence(); changed();
          },
        }),
      );
    }
    actions.append(el("button", {
      type: "button", class: "secondary small", text: t("items.field.remove"),
      "aria-label": t("items.evidence.remove_n", { n: index + 1 }),
      onclick: () => {
        turn().evidence.splice(index, 1);
        normaliseGroups(); renderEvidence(); renderHits(); changed();
      },
    }));
    const where = ev.start === null || ev.start === undefined ? "" : t("items.evidence.chars", { start: ev.start, end: ev.end });
    const flag = ev.anchor && ev.anchor !== "ok" ? el("span", { class: "badge warn", text: t("items.evidence.anchor_" + ev.anchor) }) : null;
    return el("li", { class: "ev ev-" + ev.label, "data-label": ev.label, "data-group": String(ev.group) },
      el("div", { class: "ev-head" },
        labelSelect,
        el("button", { type: "button", class: "link docname", text: name, title: t("items.hit.open"),
          onclick: () => openDocument(ev.doc_id, ev.start, ev.end) }),
        el("span", { class: "muted", text: where }), flag),
      ...evidencePassage(ev),
      actions);
  }

  function renderEvidence() {
    const box = $("ev-list");
    box.replaceChildren();
    const groups = relevantGroups();
    groups.forEach(([group, members], position) => {
      const title = t(members.length > 1 ? "items.evidence.group_or" : "items.evidence.group", { n: position + 1 });
      const list = el("ol", { class: "ev-members" });
      for (const index of members) {
        list.append(evidenceRow(index, {
          position, size: members.length, previousGroup: position > 0 ? groups[position - 1][0] : group,
        }));
      }
      if (position > 0) box.append(el("p", { class: "and", text: t("items.evidence.and") }));
      box.append(el("section", { class: "group", "data-group": String(position + 1) },
        el("h3", { text: title }), list));
    });
    const distracting = turn().evidence.map((e, i) => [e, i]).filter(([e]) => e.label !== "relevant");
    if (distracting.length) {
      const list = el("ol", { class: "ev-members" });
      for (const [, index] of distracting) list.append(evidenceRow(index, null));
      box.append(el("section", { class: "group distracting" },
        el("h3", { text: t("items.evidence.distracting_title") }), list));
    }
    const count = turn().evidence.length;
    $("ev-count").textContent = count ? "(" + count + ")" : "";
    $("ev-empty").hidden = count > 0;
    $("ev-unanswerable").hidden = !unanswerable();
    announce("evidence", { evidence: turn().evidence });
  }

  // ------------------------------------------------------------ findings

  // Opened from the queue: static/queue.js submits (saving what is here) and opens the next task.
  window.assay.openEditor = {
    state, flush, setSaveState: shell.setSaveState, conflictFrom: shell.conflictFrom, dropDraft: shell.dropDraft,
    failed: () => { renderFindings(); window.assay.itemActions.pointAtMissing(); },
  };

  // ------------------------------------------------------------ search and hits

  function markedLabel(hit) {
    const found = turn().evidence.find((e) => sameSpan(e, hit));
    return found ? found.label : null;
  }

  // The evidence already marked inside a hit's passage (sub-spans; the whole passage is
  // markedLabel's), in passage order.
  function spansIn(hit) {
    return turn().evidence
      .filter((e) => e.doc_id === hit.doc_id && e.start !== null && e.start !== undefined
        && e.start >= hit.start && e.end <= hit.end && !sameSpan(e, hit))
      .sort((a, b) => a.start - b.start);
  }

  function spanBadges(spans) {
    if (!spans.length) return null;
    return el("ul", { class: "span-badges", "aria-label": t("items.hit.spans") },
      ...spans.map((e) => el("li", { class: "badge label-" + e.label, title: e.text },
        t("items.label." + e.label) + ": ", el("q", { text: e.text.length > 32 ? e.text.slice(0, 30) + "…" : e.text }))));
  }

  function renderHits() {
    const box = $("hits");
    box.replaceChildren();
    const terms = P.queryTerms($("search-q").value);
    state.hits.forEach((hit, index) => {
      const label = markedLabel(hit);
      const spans = spansIn(hit);
      const name = state.docs[hit.doc_id] || hit.doc_id;
      const text = el("div", {
        class: "passage hit-text sel-source", "data-doc-id": hit.doc_id, "data-start": String(hit.start),
      });
      P.draw(text, hit.text, {
        terms, offset: hit.start, markup: P.marked(name),
        spans: spans.map((e) => ({ start: e.start, end: e.end, cls: "ev-span span-" + e.label })),
      });
      const markButton = (kind) => el("button", {
        type: "button", class: "small mark-" + kind, text: t("items.hit." + kind),
        "aria-keyshortcuts": kind[0], "aria-pressed": String(label === kind),
        onmousedown: (e) => e.preventDefault(),   // keep a text selection alive
        onclick: () => { focusHit(index); markFromSelectionOr(kind, hit); },
      });
      const meta = shell.hitMeta(hit, label, "items.hit.score");
      const article = el("article", {
        class: "hit" + (index === state.hitIndex ? " current" : "") + (label ? " marked-" + label : ""),
        role: "listitem", tabindex: index === Math.max(0, state.hitIndex) ? "0" : "-1",
        "data-index": String(index), "aria-label": t("items.hit.aria", { rank: hit.rank, doc: name }),
        onfocus: () => { state.hitIndex = index; markCurrent(); },
      },
      meta,
      spanBadges(spans),
      ...P.folded(text, foldLabels(), ".ev-span, .q"));
      meta.append(el("span", { class: "spacer" }), el("span", { class: "hit-actions" },
        markButton("relevant"), markButton("distracting"),
        el("button", { type: "button", class: "secondary small", text: t("items.hit.open_short"),
          "aria-label": t("items.hit.open"), title: t("items.hit.open"),
          onclick: () => openDocument(hit.doc_id, hit.start, hit.end) })));
      box.append(article);
    });
    announce("hits", { hits: state.hits });
  }

  function markCurrent() {
    document.querySelectorAll("#hits .hit").forEach((node, index) => {
      node.classList.toggle("current", index === state.hitIndex);
      node.tabIndex = index === state.hitIndex ? 0 : -1;
    });
  }

  function focusHit(index) {
    if (!state.hits.length) return;
    state.hitIndex = Math.max(0, Math.min(state.hits.length - 1, index));
    markCurrent();
    const node = document.querySelector('#hits .hit[data-index="' + state.hitIndex + '"]');
    if (node && document.activeElement !== node && !node.contains(document.activeElement)) node.focus();
    if (node) node.scrollIntoView({ block: "nearest" });
  }

  function runSearch() {
    clearTimeout(state.searchTimer);
    return shell.search($("search-k").value, () => {
      state.hitIndex = state.hits.length ? 0 : -1;
      renderHits();
    });
  }

  $("search-form").addEventListener("submit", (e) => { e.preventDefault(); runSearch(); });
  $("search-q").addEventListener("input", () => { state.searchTouched = true; });
  $("search-k").addEventListener("change", runSearch);
  // a passage marked in another view of the results (the pool: static/pool.js)
  document.addEventListener("assay:mark", (e) => { markFromSelectionOr(e.detail.label, e.detail.passage); renderHits(); });
  if ($("search-rerank")) $("search-rerank").addEventListener("change", runSearch);

  // ------------------------------------------------------------ selections and the document view

  // Mark the selected text, else the given hit's whole passage. A selection that strays past
  // its passage is clipped to it (and says so); one across several passages, or outside any,
  // is refused with a message: it never becomes a whole passage unasked.
  function markFromSelectionOr(label, hit) {
    if (window.assay.readOnly.refused()) return true;
    const chosen = shell.selectionClip();
    if (chosen && chosen.refused) {
      window.assay.toast(t("items.select.refused_" + chosen.refused), "error");
      return true;
    }
    if (chosen) {
      addEvidence(Object.assign(chosen.span, { label }));
      window.getSelection().removeAllRanges();
      if (chosen.clipped) window.assay.toast(t("items.select.clipped", { text: chosen.span.text.slice(0, 60) }));
      return true;
    }
    if (hit) {
      addEvidence({ doc_id: hit.doc_id, start: hit.start, end: hit.end, text: hit.text, label, origin: "searched" });
      return true;
    }
    return false;
  }

  // The document panel: the whole text, the evidence already marked in it highlighted, the
  // passage it was opened for in focus; select a part of it and mark it.
  let shownDoc = null;
  function drawDocument() {
    if (!shownDoc) return;
    const { doc, from, to } = shownDoc;
    const spans = turn().evidence
      .filter((e) => e.doc_id === doc.id && e.start !== null && e.start !== undefined)
      .map((e) => ({ start: e.start, end: e.end, cls: "ev-span span-" + e.label }));
    spans.push({ start: from, end: to, cls: "focus" });
    P.draw($("doc-text"), doc.text, { spans, markup: P.marked(doc.name) });
  }

  async function openDocument(docId, start, end) {
    if (!docId) return;
    const panel = $("doc-panel");
    try {
      const doc = await api("GET", shell.base + "/documents/" + encodeURIComponent(docId));
      state.docs[doc.id] = doc.name;
      state.texts[doc.id] = Promise.resolve(doc.text);
      $("doc-title").textContent = doc.name;
      const pre = $("doc-text");
      pre.dataset.docId = doc.id;
      pre.dataset.start = "0";
      pre.classList.add("sel-source");
      const length = Array.from(doc.text).length;   // offsets count code points
      const from = Math.max(0, Math.min(start || 0, length));
      shownDoc = { doc, from, to: Math.max(from, Math.min(end || from, length)) };
      drawDocument();
      panel.hidden = false;
      const focus = pre.querySelector(".focus");
      if (focus) focus.scrollIntoView({ block: "center" });
      pre.focus({ preventScroll: true });
    } catch (err) {
      window.assay.toast(err.message, "error");
    }
  }
  document.addEventListener("assay:evidence", drawDocument);

  function closeDocument() {
    $("doc-panel").hidden = true;
  }

  $("doc-close").addEventListener("click", closeDocument);
  for (const kind of ["relevant", "distracting"]) {
    const button = $("doc-" + kind);
    button.addEventListener("mousedown", (e) => e.preventDefault());
    button.addEventListener("click", () => {
      if (!markFromSelectionOr(kind, null)) window.assay.toast(t("items.doc.select_first"), "error");
    });
  }

  // ------------------------------------------------------------ keys

  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") {
      // saves, and stays: never leaves the page
      e.preventDefault();
      flush().then((ok) => { if (ok && state.id) shell.setSaveState("saved"); });
      return;
    }
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
      e.preventDefault();
      window.assay.itemActions.submitByKey();
      return;
    }
    if (e.key === "Escape") {
      if (shell.closeHelp()) e.preventDefault(); else if (!$("doc-panel").hidden) closeDocument();
      return;
    }
    if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey || state.conflict) return;
    const inHits = e.target instanceof HTMLElement && e.target.closest("#hits");
    switch (e.key) {
      case "?": case "/": shell.sharedKey(e.key); break;
      case "j": focusHit(state.hitIndex + 1); break;
      case "k": focusHit(state.hitIndex - 1); break;
      case "ArrowDown": if (!inHits) return; focusHit(state.hitIndex + 1); break;
      case "ArrowUp": if (!inHits) return; focusHit(state.hitIndex - 1); break;
      case "r": case "d":
        markFromSelectionOr(e.key === "r" ? "relevant" : "distracting", state.hits[state.hitIndex]);
        break;
      case "o": {
        const hit = state.hits[state.hitIndex];
        if (hit) openDocument(hit.doc_id, hit.start, hit.end);
        break;
      }
      default: return;
    }
    e.preventDefault();
  });

  // ------------------------------------------------------------ start

  Object.assign(window.assay.editor, {
    cfg, t, shell, turn, addEvidence, openDocument, runSearch, render: fillForm,
  });
  normaliseGroups();
  fillForm();
  shell.setSaveState(state.id ? "saved" : "idle");
  shell.offerRestore();
  if ($("search-q").value.trim()) runSearch();
  if (!state.id && !$("f-query").readOnly) $("f-query").focus();
})();
