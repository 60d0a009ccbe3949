// The item editor: one question, its evidence from search or the document view, the answer,
// autosave with conflict handling, and keyboard shortcuts. User data only ever reaches the page
// through textContent and form values (never innerHTML), so typed or uploaded markup stays text.
(function () {
  "use strict";

  const { api, el, clone, sameSpan, newEvidence, typing } = window.assay;
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

  const state = window.assay.editorState(cfg, blankItem, { hitIndex: -1, searchTouched: false });
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
    saved: () => shell.renderFindings(),
    render: () => fillForm(),
    summaryRows,
  });
  const { changed, flush, renderFindings } = shell;
  window.assay.flushEditor = flush;  // comments.js saves pending edits before a comment
  window.assay.editor = { state, flush, applySaved: shell.applySaved };  // for static/review.js

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

  $("f-query").addEventListener("input", (e) => {
    turn().query = e.target.value;
    if (!state.searchTouched) $("search-q").value = e.target.value;
    changed();
  });
  $("f-answer").addEventListener("input", (e) => { turn().answer = e.target.value; changed(); });
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

  function evidenceRow(index, groupInfo) {
    const ev = turn().evidence[index];
    const name = state.docs[ev.doc_id] || ev.doc_id || t("items.evidence.no_document");
    const labelSelect = el("select", {
      "aria-label": t("items.evidence.label_of", { n: index + 1 }),
      onchange: (e) => {
        ev.label = e.target.value;
        ev.group = ev.label === "relevant" ? nextGroup() : 0;
        normaliseGroups(); renderEvidence(); renderHits(); changed();
      },
    });
    for (const label of ["relevant", "distracting"]) {
      const option = el("option", { value: label, text: t("items.label." + label) });
      if (label === "relevant" && unanswerable()) option.disabled = true;
      labelSelect.append(option);
    }
    labelSelect.value = ev.label;
    const actions = el("div", { class: "ev-actions" }, labelSelect);
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
        el("span", { class: "badge label-" + ev.label, text: t("items.label." + ev.label) }),
        el("button", { type: "button", class: "link docname", text: name, title: t("items.hit.open"),
          onclick: () => openDocument(ev.doc_id, ev.start, ev.end) }),
        el("span", { class: "muted", text: where }), flag),
      el("blockquote", { class: "ev-text", text: ev.text }),
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
  }

  // ------------------------------------------------------------ findings

  // Opened from the queue: static/queue.js submits (saving what is here) and opens the next task.
  window.assay.openEditor = {
    state, flush, setSaveState: shell.setSaveState, conflictFrom: shell.conflictFrom, dropDraft: shell.dropDraft,
    failed: () => { renderFindings(); $("findings").scrollIntoView({ block: "nearest" }); },
  };
  $("submit-button").addEventListener("click", async () => {
    if (cfg.queue) { window.assay.queueSubmit(); return; }
    if (!(await flush())) return;
    try {
      const payload = await api("POST", shell.base + "/items/" + encodeURIComponent(state.id) + "/status",
        { version: state.version, status: "submitted" });
      shell.applySaved(payload);
      shell.setSaveState("submitted");
    } catch (err) {
      if (shell.conflictFrom(err)) return;
      shell.setSaveState("error", err.status === 422 ? t("items.submit.missing") : err.message);
      renderFindings();
      $("findings").scrollIntoView({ block: "nearest" });
    }
  });

  // ------------------------------------------------------------ search and hits

  function markedLabel(hit) {
    const found = turn().evidence.find((e) => sameSpan(e, hit));
    return found ? found.label : null;
  }

  function snippet(hit) {
    const p = el("p", { class: "snippet" });
    let cursor = 0;
    const marks = [...hit.highlights].sort((a, b) => a[0] - b[0]);
    const chars = Array.from(hit.snippet);  // highlights count code points, as Python does
    for (const [start, end] of marks) {
      if (start < cursor) continue;
      p.append(chars.slice(cursor, start).join(""), el("mark", { text: chars.slice(start, end).join("") }));
      cursor = end;
    }
    p.append(chars.slice(cursor).join(""));
    return p;
  }

  function renderHits() {
    const box = $("hits");
    box.replaceChildren();
    state.hits.forEach((hit, index) => {
      const label = markedLabel(hit);
      const name = state.docs[hit.doc_id] || hit.doc_id;
      const full = el("div", {
        class: "hit-text sel-source", "data-doc-id": hit.doc_id, "data-start": String(hit.start),
        text: hit.text,
      });
      const markButton = (kind) => el("button", {
        type: "button", class: "small mark-" + kind, text: t("items.hit." + kind),
        "aria-keyshortcuts": kind[0], "aria-pressed": String(label === kind),
        onmousedown: (e) => e.preventDefault(),   // keep a text selection alive
        onclick: () => { focusHit(index); markFromSelectionOr(kind, hit); },
      });
      const article = el("article", {
        class: "hit" + (index === state.hitIndex ? " current" : "") + (label ? " marked-" + label : ""),
        role: "listitem", tabindex: index === Math.max(0, state.hitIndex) ? "0" : "-1",
        "data-index": String(index), "aria-label": t("items.hit.aria", { rank: hit.rank, doc: name }),
        onfocus: () => { state.hitIndex = index; markCurrent(); },
      },
      shell.hitMeta(hit, label, "items.hit.score"),
      snippet(hit),
      el("details", {}, el("summary", { text: t("items.hit.whole") }), full),
      el("div", { class: "hit-actions" }, markButton("relevant"), markButton("distracting"),
        el("button", { type: "button", class: "secondary small", text: t("items.hit.open"),
          onclick: () => openDocument(hit.doc_id, hit.start, hit.end) })));
      box.append(article);
    });
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
    return shell.search($("search-k").value, () => {
      state.hitIndex = state.hits.length ? 0 : -1;
      renderHits();
    });
  }

  $("search-form").addEventListener("submit", (e) => { e.preventDefault(); runSearch(); });
  $("search-q").addEventListener("input", () => { state.searchTouched = true; });
  $("search-k").addEventListener("change", runSearch);
  if ($("search-rerank")) $("search-rerank").addEventListener("change", runSearch);

  // ------------------------------------------------------------ selections and the document view

  function markFromSelectionOr(label, hit) {
    const span = shell.selectionSpan(false);
    if (span) {
      addEvidence(Object.assign(span, { label }));
      window.getSelection().removeAllRanges();
      return true;
    }
    if (hit) {
      addEvidence({ doc_id: hit.doc_id, start: hit.start, end: hit.end, text: hit.text, label, origin: "searched" });
      return true;
    }
    return false;
  }

  async function openDocument(docId, start, end) {
    if (!docId) return;
    const panel = $("doc-panel");
    try {
      const doc = await api("GET", shell.base + "/documents/" + encodeURIComponent(docId));
      state.docs[doc.id] = doc.name;
      $("doc-title").textContent = doc.name;
      const pre = $("doc-text");
      pre.dataset.docId = doc.id;
      pre.dataset.start = "0";
      pre.classList.add("sel-source");
      pre.replaceChildren();
      const chars = Array.from(doc.text);   // offsets count code points
      const from = Math.max(0, Math.min(start || 0, chars.length));
      const to = Math.max(from, Math.min(end || from, chars.length));
      const focus = el("mark", { class: "focus", text: chars.slice(from, to).join("") });
      pre.append(chars.slice(0, from).join(""), focus, chars.slice(to).join(""));
      panel.hidden = false;
      focus.scrollIntoView({ block: "center" });
      pre.focus({ preventScroll: true });
    } catch (err) {
      window.assay.toast(err.message, "error");
    }
  }

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

  async function saveAndNext() {
    if (await flush()) window.location.assign(cfg.next_url);
  }

  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && (e.key === "Enter" || e.key.toLowerCase() === "s")) {
      e.preventDefault();
      saveAndNext();
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

  normaliseGroups();
  fillForm();
  shell.setSaveState(state.id ? "saved" : "idle");
  shell.offerRestore();
  if ($("search-q").value.trim()) runSearch();
})();
