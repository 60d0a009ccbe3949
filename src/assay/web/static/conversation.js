// The conversation workbench: chat with the project's RAG system, then repair each turn
// (relevance of passages, passages it missed, the answer, enrichments, a rewrite). Autosave
// with versions and a conflict dialog, as in the item editor. User data reaches the page only
// through textContent and form values (never innerHTML).
//
// This file holds the conversation's state, its saving and its turns (passages, enrichments,
// folding). Its other concerns are parts, each a file that adds its functions to
// window.assay.conversation while the page loads (deferred, in order):
//   conversation_answer.js    the answer: its diff, support overlap, generated drafts
//   conversation_chat.js      asking and regenerating: the streamed answer
//   conversation_search.js    search more, marking (sub-span selections), keys
//   conversation_settings.js  the settings panel, the generator, the checklist and export
// Calls into a part go through conv (looked up when called); the workbench starts at
// DOMContentLoaded, which comes after every deferred script. Other scripts build on the
// same object (static/conversation_nav.js: the list of turns).
(function () {
  "use strict";

  const LABELS = ["relevant", "distracting", "irrelevant"];
  const { api, el, clone, sameSpan, newEvidence } = window.assay;
  const cfg = window.assay.readJson("conv-data");
  const t = window.assay.translator(cfg.messages);
  const $ = (id) => document.getElementById(id);

  const blank = () => ({ kind: "conversation", notes: "", origin: "human", extra: {}, turns: [] });

  const state = window.assay.editorState(cfg, blank, {
    vocab: cfg.settings.enrichments,
    overlap: {},        // turn index → overlap result from the server
    active: 0,          // the turn the search panel adds to
    streaming: false, lastFailed: null,
    collapsed: new Set(),  // turn indexes shown folded
    undo: null,         // the answer a taken draft replaced: { turn, answer, original_answer, generation }
  });
  state.active = Math.max(0, state.data.turns.length - 1);


  // ------------------------------------------------------------ saving and conflicts

  function summaryRows(data) {
    const turns = data.turns || [];
    const last = turns[turns.length - 1] || {};
    return [
      ["conv.conflict.turns", String(turns.length)],
      ["conv.turn.question", last.query || "—"],
      ["conv.turn.answer", last.answer || "—"],
      ["conv.conflict.labels", String(turns.reduce((n, tr) => n + (tr.evidence || []).length, 0))],
    ];
  }

  // A conversation is created by its first question (the stream), never by the autosave.
  const shell = window.assay.editorShell({
    state, project: cfg.project, messages: cfg.messages, t, prefix: "conv",
    findings: ["conv.check", "conv.finding"], draftKey: "assay:conv-draft:", statusId: "conv-status",
    needsId: true,
    ready: () => Boolean(state.id) && !state.streaming,
    busy: () => state.streaming,
    request: () => api("PUT", shell.base + "/conversations/" + encodeURIComponent(state.id),
      { version: state.version, item: clone(state.data) }),
    saved: (payload) => { conv.keepOriginals(payload.item); renderFindings(); renderHints(); },
    render: () => renderAll(),
    summaryRows,
    findingParams: (f) => Object.assign({ turn: f.turn }, f.params),
  });
  const { flush, saveNow, applySaved } = shell;
  // Every change is saved (shell.changed) and heard by the scripts that add to the page.
  const changed = () => { shell.changed(); conv.touched.forEach((hear) => hear()); };
  // Opened from the queue: static/queue.js submits (saving what is here) and opens the next task.
  window.assay.openEditor = {
    state, flush, setSaveState: shell.setSaveState, conflictFrom: shell.conflictFrom, dropDraft: shell.dropDraft,
  };
  window.assay.flushEditor = flush;  // comments.js saves pending edits before a comment
  window.assay.editor = { state, flush, applySaved, render: () => renderAll() };  // for static/review.js, suggestions.js

  // Other scripts add parts to every turn (the pool view, suggestion cards): part(index) → a
  // node or null, in the turn's body (turnParts) or its head (turnHeadParts); and they hear
  // every full redraw or change of the active turn (rendered) and every change (touched).
  const conv = {
    state, cfg, t, shell, flush, saveNow, applySaved, changed,
    turnParts: [], turnHeadParts: [], rendered: [], touched: [],
  };
  window.assay.conversation = conv;

  // ------------------------------------------------------------ passages of a turn

  function passagesOf(tr) {
    // Retrieved contexts in rank order, then evidence the retriever did not bring.
    const list = (tr.retrieved || []).map((r) => ({
      doc_id: r.doc_id, start: r.start, end: r.end, text: r.text, rank: r.rank, score: r.score, origin: "retrieved",
      outside: Boolean(r.outside_corpus), source_id: r.document_id || null,
    }));
    for (const ev of tr.evidence) {
      if (!list.some((p) => sameSpan(p, ev))) {
        list.push({ doc_id: ev.doc_id, start: ev.start, end: ev.end, text: ev.text, rank: null, score: null, origin: ev.origin });
      }
    }
    return list;
  }

  const labelOf = (tr, p) => { const ev = tr.evidence.find((e) => sameSpan(e, p)); return ev ? ev.label : null; };

  function normaliseGroups(tr) {
    let group = 0;
    for (const ev of tr.evidence) ev.group = ev.label === "relevant" ? (group += 1) : 0;
  }

  function setLabel(index, p, label, origin) {
    if (window.assay.readOnly.refused()) return;
    const tr = state.data.turns[index];
    const at = tr.evidence.findIndex((e) => sameSpan(e, p));
    if (at >= 0) {
      if (tr.evidence[at].label === label && p.origin === "retrieved") tr.evidence.splice(at, 1);  // toggle off
      else tr.evidence[at].label = label;
    } else {
      tr.evidence.push(newEvidence(p, label, 0, origin || p.origin));
    }
    normaliseGroups(tr);
    renderPassages(index);
    conv.renderHits();
    conv.scheduleOverlap(index);
    changed();
  }

  function removeEvidence(index, p) {
    const tr = state.data.turns[index];
    tr.evidence = tr.evidence.filter((e) => !sameSpan(e, p));
    normaliseGroups(tr);
    renderPassages(index);
    conv.renderHits();
    conv.scheduleOverlap(index);
    changed();
  }

  function passageCard(index, p, position) {
    const tr = state.data.turns[index];
    const label = labelOf(tr, p);
    const name = state.docs[p.doc_id] || p.doc_id || p.source_id || t("conv.passage.no_document");
    const result = state.overlap[index];
    const ov = result && result.passages[position];
    // Markdown and HTML drawn as formatting (markup hidden, never parsed), similar sentences
    // shaded and copied phrases marked; offsets in code points, the text kept as it is
    const support = ov ? [
      ...ov.sentences.map((s) => ({ start: s.start, end: s.end, cls: "similar" })),
      ...ov.phrases.map(([start, end]) => ({ start, end, cls: "copied" })),
    ] : [];
    const body = window.assay.passage.draw(el("div", { class: "passage-text sel-source" }), p.text,
      { markup: window.assay.passage.marked(name), spans: support });
    body.dataset.docId = p.doc_id || "";
    body.dataset.start = String(p.start || 0);
    const toggles = el("div", { class: "toggles", role: "group", "aria-label": t("conv.passage.relevance") },
      ...LABELS.map((kind) => el("button", {
        type: "button", class: "small toggle toggle-" + kind, text: t("items.label." + kind),
        "aria-pressed": String(label === kind), "aria-keyshortcuts": kind[0],
        onmousedown: (e) => e.preventDefault(),
        onclick: () => conv.markFromSelectionOr(index, p, kind),
      })));
    if (p.outside) {  // not in the corpus: no document to anchor evidence in
      toggles.replaceChildren(el("span", { class: "muted", text: t("conv.passage.outside_help") }));
    } else if (p.origin !== "retrieved") {
      toggles.append(el("button", { type: "button", class: "secondary small", text: t("conv.passage.remove"),
        onclick: () => removeEvidence(index, p) }));
    }
    const meta = el("div", { class: "passage-meta" },
      p.rank ? el("span", { class: "rank", text: String(p.rank) }) : null,
      el("span", { class: "docname", text: name }),
      p.score !== null ? el("span", { class: "muted", text: t("conv.passage.score", { score: assayFormat.num(p.score, 2) }) }) : null,
      p.origin !== "retrieved" ? el("span", { class: "badge", text: t("conv.origin." + p.origin) }) : null,
      p.outside ? el("span", { class: "badge", text: t("conv.passage.outside") })
        : label ? el("span", { class: "badge label-" + label, text: t("items.label." + label) })
        : el("span", { class: "badge warn", text: t("conv.passage.unrated") }),
      ov && ov.score ? el("span", { class: "muted", text: t("conv.passage.overlap", { score: assayFormat.num(ov.score, 2) }) }) : null);
    return el("li", {
      class: "passage" + (label ? " marked-" + label : ""), tabindex: "0",
      "data-turn": String(index), "data-position": String(position),
      "aria-label": t("conv.passage.aria", { n: position + 1, doc: name }),
    }, meta, body, toggles);
  }

  function renderPassages(index) {
    const box = document.querySelector('.turn[data-turn="' + index + '"] .passages');
    if (!box) return;
    const tr = state.data.turns[index];
    const focused = box.contains(document.activeElement) && document.activeElement.classList.contains("passage")
      ? document.activeElement.dataset.position : null;
    box.replaceChildren(...passagesOf(tr).map((p, position) => passageCard(index, p, position)));
    if (focused !== null) {
      const again = box.querySelector('.passage[data-position="' + focused + '"]');
      if (again) again.focus({ preventScroll: true });
    }
    renderHints();
  }

  // ------------------------------------------------------------ one turn

  const isSingle = (name) => (cfg.settings.enrichments_single || [])
    .some((n) => n.trim().toLowerCase() === name.trim().toLowerCase());

  function enrichmentsBox(index) {
    const tr = state.data.turns[index];
    const box = el("div", { class: "enrichments" });
    const names = Object.keys(state.vocab);
    for (const name of Object.keys(tr.enrichments || {})) if (!names.includes(name)) names.push(name);
    for (const name of names) {
      const values = [...(state.vocab[name] || [])];
      for (const v of tr.enrichments[name] || []) if (!values.includes(v)) values.push(v);
      const one = isSingle(name);
      const set = el("fieldset", { class: "enrichment" + (one ? " single" : "") },
        el("legend", {}, name, one ? el("span", { class: "muted one-of", text: " · " + t("conv.enrich.one") }) : null));
      const group = "t" + index + "-enr-" + names.indexOf(name);
      const choose = (value, on) => {
        // A single-choice enrichment holds one value at most: choosing one replaces the other.
        const chosen = new Set(one ? [] : tr.enrichments[name] || []);
        if (on && value !== null) chosen.add(value); else chosen.delete(value);
        if (chosen.size) tr.enrichments[name] = values.filter((v) => chosen.has(v));
        else delete tr.enrichments[name];
        renderHints();
        changed();
      };
      const held = tr.enrichments[name] || [];
      for (const value of one ? [null, ...values] : values) {
        const input = el("input", Object.assign({ type: one ? "radio" : "checkbox",
          value: value === null ? "" : value, "data-enrichment": name }, one ? { name: group } : {}));
        input.checked = value === null ? !held.length : held.includes(value);
        input.addEventListener("change", () => choose(value, input.checked));
        set.append(el("label", { class: "check" }, input, " " + (value === null ? t("conv.enrich.none") : value)));
      }
      if (one && held.length > 1) set.append(el("p", { class: "hint", text: t("conv.enrich.two", { values: held.join(", ") }) }));
      box.append(set);
    }
    return box;
  }


  function turnNode(index) {
    const tr = state.data.turns[index];
    const n = index + 1;
    const field = (key, tag, value, oninput, props) => {
      const id = "t" + index + "-" + key;
      const input = el(tag, Object.assign({ id, "data-field": key }, props || {}));
      input.value = value || "";
      input.addEventListener("input", (e) => oninput(e.target.value));
      return el("div", { class: "field" }, el("label", { for: id, text: t("conv.turn." + key) }), input);
    };
    // A role that may not change questions (reviewers) sees them read-only, with a note why.
    function questionField() {
      if (!cfg.question_locked) {
        return field("question", "textarea", tr.query, (v) => { tr.query = v; changed(); }, { rows: "2" });
      }
      const note = "t" + index + "-question-locked";
      const box = field("question", "textarea", tr.query, () => {}, { rows: "2", readonly: "", "aria-describedby": note });
      box.append(el("p", { class: "help", id: note, text: t("conv.turn.question_locked") }));
      return box;
    }
    const gen = tr.generation || {};
    const genInfo = el("p", { class: "muted gen-info" },
      gen.model ? t("conv.answer.by", { model: gen.kind === "offline" ? t("conv.generator.offline") : gen.model }) : "",
      gen.partial ? el("span", { class: "badge warn", text: t("conv.answer.partial") }) : null);
    const errorNote = gen.error ? el("p", { class: "turn-error", role: "note", text: t("conv.stream.failed_stored", { detail: gen.error }) }) : null;
    const undoNote = state.undo && state.undo.turn === index
      ? el("p", { class: "undo-note", role: "status" }, t("conv.draft.taken") + " ",
        el("button", { type: "button", class: "secondary small undo-take", text: t("conv.draft.undo"), onclick: () => conv.undoTake() }))
      : null;
    const collapsed = state.collapsed.has(index);
    const body = "turn-body-" + index;
    return el("li", { class: "turn" + (index === state.active ? " active" : "") + (collapsed ? " collapsed" : ""),
      "data-turn": String(index), id: "turn-" + n, "aria-labelledby": "turn-title-" + index },
      el("div", { class: "turn-head" },
        el("h3", { id: "turn-title-" + index },
          el("button", { type: "button", class: "turn-toggle", "aria-expanded": String(!collapsed), "aria-controls": body,
            title: t(collapsed ? "conv.turn.expand" : "conv.turn.collapse"), onclick: () => toggleTurn(index) },
            el("span", { class: "chevron", "aria-hidden": "true" }), t("conv.turn.title", { n }))),
        el("span", { class: "turn-summary muted", text: collapsed ? tr.query : "" }),
        ...conv.turnHeadParts.map((part) => part(index)),
        el("button", { type: "button", class: "secondary small", text: t("conv.turn.search_here"),
          onclick: () => activate(index, true) })),
      el("div", { class: "turn-body", id: body, hidden: collapsed },
      el("div", { class: "bubble user" },
        questionField(),
        field("rewrite", "input", tr.rewrite, (v) => { tr.rewrite = v; changed(); }, { type: "text" })),
      el("section", { class: "turn-passages", "aria-label": t("conv.turn.passages", { n }) },
        el("h4", { text: t("conv.turn.passages_title") }),
        el("p", { class: "hint passages-hint", hidden: true }),
        el("ol", { class: "passages" })),
      el("div", { class: "bubble agent" },
        field("answer", "textarea", tr.answer, (v) => {
          tr.answer = v; conv.renderDiff(index); conv.scheduleOverlap(index); changed();
          if (state.undo && state.undo.turn === index) {  // an edit after taking a draft ends its undo
            state.undo = null;
            document.querySelectorAll('.turn[data-turn="' + index + '"] .undo-note').forEach((n) => n.remove());
          }
        }, { rows: "4" }),
        genInfo, errorNote, undoNote, conv.draftBox(index),
        el("div", { class: "row" },
          el("button", { type: "button", class: "small regenerate", text: t("conv.answer.regenerate"),
            title: t("conv.answer.regenerate_help"), onclick: () => conv.regenerate(index, "relevant") }),
          el("span", { class: "support-total muted" })),
        el("div", { class: "answer-view", "aria-label": t("conv.answer.overlap") }),
        el("div", { class: "diff-box", hidden: true },
          el("h4", {}, t("conv.diff.title") + " ", el("span", { class: "muted diff-count" })),
          el("p", { class: "diff" }))),
      el("section", { class: "turn-enrichments", "aria-label": t("conv.turn.enrichments", { n }) },
        el("h4", { text: t("conv.turn.enrichments_title") }),
        el("p", { class: "hint enrich-hint", hidden: true }),
        enrichmentsBox(index)),
      ...conv.turnParts.map((part) => part(index))));
  }

  function toggleTurn(index, open) {
    const show = open === undefined ? state.collapsed.has(index) : open;
    if (show) state.collapsed.delete(index); else state.collapsed.add(index);
    const node = document.querySelector('.turn[data-turn="' + index + '"]');
    if (!node) return;
    node.classList.toggle("collapsed", !show);
    node.querySelector(".turn-body").hidden = !show;
    const button = node.querySelector(".turn-toggle");
    button.setAttribute("aria-expanded", String(show));
    button.title = t(show ? "conv.turn.collapse" : "conv.turn.expand");
    node.querySelector(".turn-summary").textContent = show ? "" : state.data.turns[index].query;
  }

  function renderAll() {
    const list = $("turns");
    list.replaceChildren(...state.data.turns.map((_, i) => turnNode(i)));
    $("chat-empty").hidden = state.data.turns.length > 0;
    state.data.turns.forEach((_, i) => { renderPassages(i); conv.renderDiff(i); conv.renderAnswerView(i); conv.scheduleOverlap(i); });
    conv.fillSettings();
    conv.fillChecklist();
    renderFindings();
    renderHints();
    activate(Math.min(state.active, Math.max(0, state.data.turns.length - 1)), false);
  }

  function renderHints() {
    state.data.turns.forEach((tr, index) => {
      const node = document.querySelector('.turn[data-turn="' + index + '"]');
      if (!node) return;
      const unrated = passagesOf(tr).filter((p) => !p.outside && !labelOf(tr, p)).length;
      const ph = node.querySelector(".passages-hint");
      ph.hidden = unrated === 0;
      ph.textContent = t("conv.hint.unrated", { count: unrated });
      const eh = node.querySelector(".enrich-hint");
      eh.hidden = Object.values(tr.enrichments || {}).some((v) => v.length);
      eh.textContent = t("conv.hint.enrichments");
    });
  }

  function activate(index, focusSearch) {
    state.active = index;
    document.querySelectorAll(".turn").forEach((node) => node.classList.toggle("active", Number(node.dataset.turn) === index));
    const tr = state.data.turns[index];
    $("search-turn").textContent = tr ? t("conv.search.for_turn", { n: index + 1 }) : "";
    conv.rendered.forEach((hear) => hear());
    if (tr && focusSearch) {
      $("search-q").value = tr.rewrite || tr.query;
      $("search-q").focus();
    }
    conv.renderHits();
  }

  // ------------------------------------------------------------ findings and checklist

  function renderFindings() {
    shell.renderFindings();
    conv.updateExport();
  }
  // ------------------------------------------------------------ for the parts and the scripts that add to it

  Object.assign(conv, {
    LABELS, isSingle, renderAll, renderPassages, renderHints, toggleTurn, activate, passagesOf, labelOf, setLabel,
  });

  // ------------------------------------------------------------ start

  document.addEventListener("DOMContentLoaded", () => {
    state.data.turns.forEach((tr) => normaliseGroups(tr));
    renderAll();
    shell.setSaveState(state.id ? "saved" : "idle");
    shell.offerRestore();
    $("composer-q").focus();
  });
})();
