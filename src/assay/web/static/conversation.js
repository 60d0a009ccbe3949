// The conversation workbench: chat with the project's RAG system, then repair each turn
// (relevance of passages, passages it missed, the answer, enrichments, a rewrite). Autosave
// with versions and a conflict dialog, as in the item editor. User data reaches the page only
// through textContent and form values (never innerHTML).
//
// Also here: the conversation's own generator (extra.generator, the badge opens it), single-
// choice enrichments as radio groups, folding turns, j/k between passages and the one-click
// RAGAPHENE export after the checklist. Other scripts build on window.assay.conversation
// (static/conversation_nav.js: the list of turns).
(function () {
  "use strict";

  const LABELS = ["relevant", "distracting", "irrelevant"];
  const CHECKS = ["faithfulness", "completeness", "style", "appropriateness", "passages", "enrichments", "diversity"];
  const { api, el, clone, sameSpan, newEvidence, typing } = window.assay;
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
    saved: (payload) => { keepOriginals(payload.item); renderFindings(); renderHints(); },
    render: () => renderAll(),
    summaryRows,
    findingParams: (f) => Object.assign({ turn: f.turn }, f.params),
  });
  const { flush, saveNow, applySaved } = shell;
  // Every change is saved (shell.changed) and heard by the scripts that add to the page.
  const changed = () => { shell.changed(); touched.forEach((hear) => hear()); };
  // Opened from the queue: static/queue.js submits (saving what is here) and opens the next task.
  window.assay.openEditor = {
    state, flush, setSaveState: shell.setSaveState, conflictFrom: shell.conflictFrom, dropDraft: shell.dropDraft,
  };
  window.assay.flushEditor = flush;  // comments.js saves pending edits before a comment
  window.assay.editor = { state, flush, applySaved, render: () => renderAll() };  // for static/review.js, suggestions.js

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
    renderHits();
    scheduleOverlap(index);
    changed();
  }

  function removeEvidence(index, p) {
    const tr = state.data.turns[index];
    tr.evidence = tr.evidence.filter((e) => !sameSpan(e, p));
    normaliseGroups(tr);
    renderPassages(index);
    renderHits();
    scheduleOverlap(index);
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
        onclick: () => markFromSelectionOr(index, p, kind),
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

  // ------------------------------------------------------------ answers: diff and overlap

  function words(text) { return text.match(/\s+|[^\s]+/g) || []; }

  function wordDiff(before, after) {
    // Longest common subsequence over words and spaces: [op, text] with op "=", "-" or "+".
    const a = words(before), b = words(after);
    if (a.length * b.length > 4e6) return [["-", before], ["+", after]];
    const rows = a.length + 1, cols = b.length + 1;
    const table = new Uint32Array(rows * cols);
    for (let i = a.length - 1; i >= 0; i -= 1) {
      for (let j = b.length - 1; j >= 0; j -= 1) {
        table[i * cols + j] = a[i] === b[j] ? table[(i + 1) * cols + j + 1] + 1
          : Math.max(table[(i + 1) * cols + j], table[i * cols + j + 1]);
      }
    }
    const ops = [];
    const push = (op, text) => {
      if (ops.length && ops[ops.length - 1][0] === op) ops[ops.length - 1][1] += text; else ops.push([op, text]);
    };
    let i = 0, j = 0;
    while (i < a.length && j < b.length) {
      if (a[i] === b[j]) { push("=", a[i]); i += 1; j += 1; }
      else if (table[(i + 1) * cols + j] >= table[i * cols + j + 1]) { push("-", a[i]); i += 1; }
      else { push("+", b[j]); j += 1; }
    }
    while (i < a.length) { push("-", a[i]); i += 1; }
    while (j < b.length) { push("+", b[j]); j += 1; }
    return ops;
  }

  // A reviewer's first edit of an answer keeps the submitted text as the turn's original
  // (the server sets it, assay.review.reviews): take it, so the diff shows it at once.
  function keepOriginals(item) {
    (item.turns || []).forEach((server, index) => {
      const tr = state.data.turns[index];
      if (tr && !tr.original_answer && server.original_answer) {
        tr.original_answer = server.original_answer;
        renderDiff(index);
      }
    });
  }

  function renderDiff(index) {
    const turnNode = document.querySelector('.turn[data-turn="' + index + '"]');
    if (!turnNode) return;
    const tr = state.data.turns[index];
    const box = turnNode.querySelector(".diff");
    const edited = tr.original_answer !== tr.answer;
    turnNode.querySelector(".diff-box").hidden = !edited;
    if (!edited) { box.replaceChildren(); return; }
    const ops = wordDiff(tr.original_answer || "", tr.answer || "");
    let inserted = 0, deleted = 0;
    box.replaceChildren(...ops.map(([op, text]) => {
      if (op === "+") { inserted += text.trim() ? 1 : 0; return el("ins", { text }); }
      if (op === "-") { deleted += text.trim() ? 1 : 0; return el("del", { text }); }
      return document.createTextNode(text);
    }));
    turnNode.querySelector(".diff-count").textContent = t("conv.diff.count", { ins: inserted, del: deleted });
  }

  function renderAnswerView(index) {
    const turnNode = document.querySelector('.turn[data-turn="' + index + '"]');
    if (!turnNode) return;
    const tr = state.data.turns[index];
    const view = turnNode.querySelector(".answer-view");
    const result = state.overlap[index];
    view.replaceChildren();
    turnNode.querySelector(".support-total").textContent = "";
    if (!result || !tr.answer.trim()) return;
    const chars = Array.from(tr.answer);
    const spans = result.answer_spans;
    // Support is measured against the passages marked relevant: without one, none is shown.
    const relevant = tr.evidence.some((e) => e.label === "relevant");
    const supportUnits = relevant && result.support ? result.support.units : null;
    const units = supportUnits || [{ start: 0, end: chars.length, score: null }];
    for (const unit of units) {
      const sentence = el("span", { class: "unit" });
      let cursor = unit.start;
      for (const [s, e] of spans) {
        const from = Math.max(s, unit.start), to = Math.min(e, unit.end);
        if (from >= to || from < cursor) continue;
        sentence.append(chars.slice(cursor, from).join(""), el("mark", { class: "copied", text: chars.slice(from, to).join("") }));
        cursor = to;
      }
      sentence.append(chars.slice(cursor, unit.end).join(""));
      view.append(sentence);
      if (unit.score !== null && unit.score !== undefined) {
        const level = unit.score >= 0.5 ? "high" : unit.score >= 0.25 ? "mid" : "low";
        view.append(el("span", { class: "support support-" + level, text: assayFormat.pct(unit.score),
          title: t("conv.answer.support_unit", { score: assayFormat.pct(unit.score) }) }), " ");
      }
    }
    const total = units === supportUnits ? assayFormat.pct(result.support.score) : null;
    turnNode.querySelector(".support-total").textContent = total === null ? "" : t("conv.answer.support", { score: total });
  }

  const overlapTimers = {};
  function scheduleOverlap(index) {
    clearTimeout(overlapTimers[index]);
    overlapTimers[index] = setTimeout(() => computeOverlap(index), 350);
  }

  async function computeOverlap(index) {
    const tr = state.data.turns[index];
    if (!tr) return;
    const passages = passagesOf(tr);
    if (!passages.length) { delete state.overlap[index]; return; }
    const relevant = passages.map((p, i) => (labelOf(tr, p) === "relevant" ? i : -1)).filter((i) => i >= 0);
    try {
      state.overlap[index] = await api("POST", shell.base + "/conversations/overlap",
        { answer: tr.answer || "", passages: passages.map((p) => p.text), support_from: relevant });
    } catch (_) { return; }
    renderPassages(index);
    renderAnswerView(index);
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

  // ------------------------------------------------------------ generated drafts beside the answer

  function draftBox(index) {
    // A regenerated answer waits here until the person takes or discards it; the answer above
    // is never written by the generator.
    const draft = (state.data.turns[index].generation || {}).draft;
    if (!draft || typeof draft.text !== "string") return null;
    const by = draft.kind === "offline" ? t("conv.generator.offline") : draft.model;
    return el("section", { class: "draft-box", "aria-label": t("conv.draft.title") },
      el("h4", {}, t("conv.draft.title") + " ", el("span", { class: "muted", text: t("conv.answer.by", { model: by }) })),
      el("div", { class: "draft-text", id: "t" + index + "-draft", text: draft.text }),
      el("div", { class: "row" },
        el("button", { type: "button", class: "small take-draft", text: t("conv.draft.take"),
          onclick: () => draftAction(index, "take") }),
        el("button", { type: "button", class: "secondary small discard-draft", text: t("conv.draft.discard"),
          onclick: () => draftAction(index, "discard") })));
  }

  async function draftAction(index, action) {
    if (state.streaming) return;
    if (!(await flush()) || !state.id) return;
    const before = clone(state.data.turns[index]);
    try {
      const body = await api("POST", shell.base + "/conversations/" + encodeURIComponent(state.id) + "/turns/" + (index + 1)
        + "/draft/" + action, { version: state.version });
      const server = body.input.turns[index];
      Object.assign(state.data.turns[index], {
        answer: server.answer, original_answer: server.original_answer, generation: server.generation,
      });
      applySaved(body);
      state.undo = action === "take"
        ? { turn: index, answer: before.answer, original_answer: before.original_answer, generation: before.generation }
        : null;
      renderAll();
    } catch (err) {
      if (shell.conflictFrom(err)) return;
      window.assay.toast(err.message, "error");
    }
  }

  function undoTake() {
    // Put back the answer a taken draft replaced (and the draft beside it); saved as an edit.
    const undo = state.undo;
    if (!undo || !state.data.turns[undo.turn]) return;
    Object.assign(state.data.turns[undo.turn], {
      answer: undo.answer, original_answer: undo.original_answer, generation: undo.generation,
    });
    state.undo = null;
    renderAll();
    changed();
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
        el("button", { type: "button", class: "secondary small undo-take", text: t("conv.draft.undo"), onclick: undoTake }))
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
        ...turnHeadParts.map((part) => part(index)),
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
          tr.answer = v; renderDiff(index); scheduleOverlap(index); changed();
          if (state.undo && state.undo.turn === index) {  // an edit after taking a draft ends its undo
            state.undo = null;
            document.querySelectorAll('.turn[data-turn="' + index + '"] .undo-note').forEach((n) => n.remove());
          }
        }, { rows: "4" }),
        genInfo, errorNote, undoNote, draftBox(index),
        el("div", { class: "row" },
          el("button", { type: "button", class: "small regenerate", text: t("conv.answer.regenerate"),
            title: t("conv.answer.regenerate_help"), onclick: () => regenerate(index, "relevant") }),
          el("span", { class: "support-total muted" })),
        el("div", { class: "answer-view", "aria-label": t("conv.answer.overlap") }),
        el("div", { class: "diff-box", hidden: true },
          el("h4", {}, t("conv.diff.title") + " ", el("span", { class: "muted diff-count" })),
          el("p", { class: "diff" }))),
      el("section", { class: "turn-enrichments", "aria-label": t("conv.turn.enrichments", { n }) },
        el("h4", { text: t("conv.turn.enrichments_title") }),
        el("p", { class: "hint enrich-hint", hidden: true }),
        enrichmentsBox(index)),
      ...turnParts.map((part) => part(index))));
  }

  // Other scripts add parts to every turn (the pool view, suggestion cards): part(index) → a
  // node or null, in the turn's body (turnParts) or its head (turnHeadParts); and they hear
  // every full redraw or change of the active turn (rendered) and every change (touched).
  const turnParts = [], turnHeadParts = [], rendered = [], touched = [];

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
    state.data.turns.forEach((_, i) => { renderPassages(i); renderDiff(i); renderAnswerView(i); scheduleOverlap(i); });
    fillSettings();
    fillChecklist();
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
    rendered.forEach((hear) => hear());
    if (tr && focusSearch) {
      $("search-q").value = tr.rewrite || tr.query;
      $("search-q").focus();
    }
    renderHits();
  }

  // ------------------------------------------------------------ findings and checklist

  function renderFindings() {
    shell.renderFindings();
    updateExport();
  }

  function fillChecklist() {
    const ticked = (state.data.extra && state.data.extra.checklist) || {};
    document.querySelectorAll("[data-check]").forEach((box) => { box.checked = Boolean(ticked[box.dataset.check]); });
    updateExport();
  }

  function updateExport() {
    const ticked = (state.data.extra && state.data.extra.checklist) || {};
    const ready = Boolean(state.id) && CHECKS.every((k) => ticked[k]);
    const link = $("export-link");
    if (!link) return;  // the reader's role may not export
    link.setAttribute("aria-disabled", String(!ready));
    link.classList.toggle("disabled", !ready);
    if (state.id) link.href = shell.base + "/conversations/" + encodeURIComponent(state.id) + "/ragaphene";
    $("export-help").textContent = t(ready ? "conv.check.export_ready" : "conv.check.export_help");
  }

  document.querySelectorAll("[data-check]").forEach((box) => box.addEventListener("change", () => {
    state.data.extra = state.data.extra || {};
    state.data.extra.checklist = Object.assign({}, state.data.extra.checklist, { [box.dataset.check]: box.checked });
    updateExport();
    changed();
  }));
  // Export: the checklist above the button shows the checks; once every box is ticked one
  // click saves what is pending and downloads this conversation as RAGAPHENE JSON.
  async function exportConversation(e) {
    e.preventDefault();
    if (!state.id) { window.assay.toast(t("conv.check.unsaved"), "error"); return; }
    if ($("export-link").getAttribute("aria-disabled") === "true") {
      const box = $("check-title").closest(".checklist");
      box.scrollIntoView({ block: "nearest" });
      const open = document.querySelector("[data-check]:not(:checked)");
      if (open) open.focus();
      window.assay.toast(t("conv.check.export_help"), "error");
      return;
    }
    if (!(await flush())) return;
    window.location.assign(shell.base + "/conversations/" + encodeURIComponent(state.id) + "/ragaphene");
  }
  if ($("export-link")) $("export-link").addEventListener("click", exportConversation);
  if ($("export-button")) $("export-button").addEventListener("click", exportConversation);

  // ------------------------------------------------------------ settings panel

  function fillSettings() {
    const r = (state.data.extra && state.data.extra.retriever) || {};
    $("set-kind").value = r.kind || "";
    $("set-k").value = r.k || "";
    $("set-from").value = r.query_from || "";
    $("set-template").value = cfg.settings.generator.prompt_template;
    $("set-vocab").value = Object.entries(state.vocab)
      .map(([name, values]) => name + ": " + values.join(isSingle(name) ? " | " : ", ")).join("\n");
    const g = (state.data.extra && state.data.extra.generator) || {};
    $("set-gen-kind").value = g.kind || "";
    $("set-gen-model").value = g.model || "";
    $("set-gen-temp").value = g.temperature === undefined || g.temperature === null ? "" : g.temperature;
    $("set-gen-max").value = g.max_tokens || "";
    showGenerator();
  }

  // ------------------------------------------------------------ the generator of this conversation

  function generatorChoice() {
    const g = {};
    if ($("set-gen-kind").value) g.kind = $("set-gen-kind").value;
    const kind = g.kind || cfg.settings.generator.kind;
    if (kind === "openai" && $("set-gen-model").value.trim()) g.model = $("set-gen-model").value.trim();
    if ($("set-gen-temp").value !== "") g.temperature = Number($("set-gen-temp").value);
    if ($("set-gen-max").value) g.max_tokens = Number($("set-gen-max").value);
    return g;
  }

  function showGenerator() {
    // The badge names what answers the next question: the project's generator or this one's.
    const g = (state.data.extra && state.data.extra.generator) || {};
    const kind = g.kind || cfg.settings.generator.kind;
    const model = g.model || cfg.generator_label;
    $("gen-llm-fields").hidden = kind === "offline";  // the extractive generator has no settings
    $("gen-model-row").hidden = kind !== "openai";
    $("gen-label").textContent = kind === "offline" ? t("conv.generator.offline") : t("conv.generator.model", { model });
  }

  for (const id of ["set-gen-kind", "set-gen-model", "set-gen-temp", "set-gen-max"]) {
    $(id).addEventListener("change", () => {
      state.data.extra = Object.assign({}, state.data.extra, { generator: generatorChoice() });
      showGenerator();
      if (state.id) changed();
    });
  }
  $("gen-label").addEventListener("click", () => {
    $("settings-panel").open = true;
    $("set-gen-kind").focus();
  });

  function retrieverOverrides() {
    const r = {};
    if ($("set-kind").value) r.kind = $("set-kind").value;
    if ($("set-k").value) r.k = Number($("set-k").value);
    if ($("set-from").value) r.query_from = $("set-from").value;
    return r;
  }

  for (const id of ["set-kind", "set-k", "set-from"]) {
    $(id).addEventListener("change", () => {
      state.data.extra = Object.assign({}, state.data.extra, { retriever: retrieverOverrides() });
      changed();
    });
  }

  async function saveSettings(body) {
    $("settings-state").textContent = t("conv.settings.saving");
    try {
      const view = await api("PUT", shell.base + "/conversation-settings", body);
      cfg.settings = view;
      state.vocab = view.enrichments;
      $("settings-state").textContent = t("conv.settings.saved");
      renderAll();
    } catch (err) {
      $("settings-state").textContent = t("conv.settings.failed", { detail: err.message });
    }
  }

  $("set-template-save").addEventListener("click", () => saveSettings({ generator: { prompt_template: $("set-template").value } }));
  $("set-vocab-save").addEventListener("click", () => {
    // "name: a, b" offers any of the values; "name: a | b" exactly one of them.
    const vocab = {}, single = [];
    for (const line of $("set-vocab").value.split("\n")) {
      const at = line.indexOf(":");
      if (at < 0) { if (line.trim()) { $("settings-state").textContent = t("conv.settings.vocabulary_line", { line }); return; } continue; }
      const name = line.slice(0, at).trim(), rest = line.slice(at + 1);
      if (rest.includes("|")) single.push(name);
      vocab[name] = rest.split(rest.includes("|") ? "|" : ",").map((v) => v.trim()).filter(Boolean);
    }
    saveSettings({ enrichments: vocab, enrichments_single: single });
  });

  // ------------------------------------------------------------ sending and streaming

  function streamState(text) { $("stream-state").textContent = text; }

  function showStreamError(detail, retry, kept) {
    // kept: the turn already had an answer, which stays exactly as it was
    state.lastFailed = retry;
    $("stream-error-text").textContent = t(kept ? "conv.stream.failed_kept" : "conv.stream.failed", { detail });
    $("stream-error").hidden = false;
    $("retry-button").hidden = !retry;
  }

  async function readEvents(response, onEvent) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (value) buffer += decoder.decode(value, { stream: true });
      let at;
      while ((at = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, at).trim();
        buffer = buffer.slice(at + 1);
        if (line) onEvent(JSON.parse(line));
      }
      if (done) break;
    }
    if (buffer.trim()) onEvent(JSON.parse(buffer));
  }

  async function streamAnswer(url, body, retry) {
    $("stream-error").hidden = true;
    state.streaming = true;
    $("send-button").disabled = true;
    document.querySelectorAll(".regenerate").forEach((b) => { b.disabled = true; });
    streamState(t("conv.stream.retrieving"));
    let index = null, live = null, ended = false, kept = false;
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/x-ndjson", "X-CSRF-Token": window.assay.csrfToken() },
        body: JSON.stringify(body),
      });
      if (!response.ok) {
        let data = null;
        try { data = await response.json(); } catch (_) { data = null; }
        if (shell.conflictFrom({ status: response.status, body: data })) return false;
        showStreamError((data && data.detail) || response.statusText, null);
        return false;
      }
      await readEvents(response, (event) => {
        if (event.type === "saved") {
          const wasNew = !state.id;
          applySaved(event);
          index = event.turn;
          const server = event.input.turns;
          if (index >= state.data.turns.length) state.data.turns.push(clone(server[index]));
          else Object.assign(state.data.turns[index], { retrieved: server[index].retrieved, generation: server[index].generation });
          state.data.extra = Object.assign({}, event.input.extra, state.data.extra);
          if (wasNew) shell.adoptUrl("/projects/" + encodeURIComponent(cfg.project) + "/conversations/" + encodeURIComponent(state.id));
          state.active = index;
          kept = Boolean((state.data.turns[index].answer || "").trim());
          renderAll();
          const node = document.querySelector('.turn[data-turn="' + index + '"] .bubble.agent');
          live = el("div", { class: "live-answer" + (kept ? " live-draft" : ""), "aria-live": "polite", "aria-busy": "true" });
          if (kept) node.querySelector(".field").after(live); else node.prepend(live);
          document.querySelectorAll('#t' + index + '-answer').forEach((a) => { a.readOnly = true; });
          streamState(t(kept ? "conv.stream.drafting" : "conv.stream.generating"));
        } else if (event.type === "delta") {
          if (live) live.textContent += event.text;
        } else if (event.type === "done" || event.type === "error") {
          ended = true;
          const server = event.input.turns[event.turn];
          Object.assign(state.data.turns[event.turn], {
            answer: server.answer, original_answer: server.original_answer, generation: server.generation,
          });
          applySaved(event);
          renderAll();
          if (event.type === "error") showStreamError(event.detail, retry || { turn: event.turn }, kept);
          const done = event.stored === "draft" ? "conv.stream.draft_stored" : "conv.stream.done";
          streamState(event.type === "done" ? t(done) : "");
        }
      });
      if (!ended) showStreamError(t("conv.stream.cut"), index === null ? null : { turn: index }, kept);
      return ended;
    } catch (err) {
      showStreamError(err.message || String(err), index === null ? null : { turn: index }, kept);
      return false;
    } finally {
      if (!ended && live) renderAll();  // drop the half-streamed text; the stored answer stays
      state.streaming = false;
      $("send-button").disabled = false;
      document.querySelectorAll(".regenerate").forEach((b) => { b.disabled = false; });
      if (!ended) streamState("");
      if (state.dirty) { shell.setSaveState("pending"); state.timer = setTimeout(saveNow, 50); } else if (state.id) shell.setSaveState("saved");
    }
  }

  async function send() {
    if (!$("composer-q").value.trim() || state.sending) return;
    state.sending = true;  // a second Ctrl+Enter while this one waits sends nothing twice
    try {
      // the answer may show "stored" while its stream is still closing: wait, never drop a question
      while (state.streaming) await new Promise((done) => setTimeout(done, 50));
      await ask();
    } finally {
      state.sending = false;
    }
  }

  async function ask() {
    const query = $("composer-q").value.trim();
    if (!query) return;
    streamState("");
    if (!(await flush())) return;
    const body = {
      query, rewrite: $("composer-rewrite").value.trim(), retriever: retrieverOverrides(), generator: generatorChoice(),
    };
    let url = shell.base + "/conversations";
    if (state.id) { url += "/" + encodeURIComponent(state.id) + "/turns"; body.version = state.version; }
    const sent = streamAnswer(url, body, null);
    $("composer-q").value = "";
    $("composer-rewrite").value = "";
    const ok = await sent;
    if (!ok && state.data.turns.every((tr) => tr.query !== query)) $("composer-q").value = query;  // never stored: give it back
    else $("composer-q").focus();
  }

  async function regenerate(index, source) {
    const tr = state.data.turns[index];
    if (source === "relevant" && !tr.evidence.some((e) => e.label === "relevant")) {
      window.assay.toast(t("conv.answer.need_relevant"), "error");
      return;
    }
    streamState("");
    if (!(await flush()) || !state.id) return;
    await streamAnswer(shell.base + "/conversations/" + encodeURIComponent(state.id) + "/turns/" + (index + 1) + "/generate",
      { version: state.version, source }, { turn: index, source });
  }

  $("composer").addEventListener("submit", (e) => { e.preventDefault(); send(); });
  $("retry-button").addEventListener("click", () => {
    const retry = state.lastFailed;
    if (!retry) return;
    const tr = state.data.turns[retry.turn];
    const source = retry.source || (tr && tr.evidence.some((e) => e.label === "relevant") ? "relevant" : "retrieved");
    $("stream-error").hidden = true;
    regenerate(retry.turn, source);
  });

  // ------------------------------------------------------------ search more

  function renderHits() {
    const box = $("hits");
    box.replaceChildren();
    const tr = state.data.turns[state.active];
    state.hits.forEach((hit) => {
      const label = tr ? labelOf(tr, hit) : null;
      const add = (kind) => el("button", {
        type: "button", class: "small mark-" + kind, text: t("conv.search.add_" + kind), disabled: !tr,
        "aria-pressed": String(label === kind),
        onmousedown: (e) => e.preventDefault(),
        onclick: () => markFromSelectionOr(state.active, Object.assign({}, hit, { origin: "searched" }), kind),
      });
      box.append(el("article", { class: "hit" + (label ? " marked-" + label : ""), role: "listitem", tabindex: "-1" },
        shell.hitMeta(hit, label, "conv.passage.score"),
        el("div", { class: "hit-text sel-source", "data-doc-id": hit.doc_id, "data-start": String(hit.start), text: hit.text }),
        el("div", { class: "hit-actions" }, add("relevant"), add("distracting"))));
    });
  }

  const runSearch = () => shell.search("10", renderHits);
  $("search-form").addEventListener("submit", (e) => { e.preventDefault(); runSearch(); });
  // a passage marked in another view of the results (the pool: static/pool.js)
  document.addEventListener("assay:mark", (e) =>
    markFromSelectionOr(state.active, Object.assign({}, e.detail.passage, { origin: "searched" }), e.detail.label));

  // ------------------------------------------------------------ sub-span selections

  function markFromSelectionOr(index, p, label) {
    const span = shell.selectionSpan(true);
    if (span) {
      setLabel(index, span, label, "selected");
      window.getSelection().removeAllRanges();
      return;
    }
    setLabel(index, p, label, p.origin === "retrieved" ? "retrieved" : "searched");
  }

  // ------------------------------------------------------------ keys

  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
      if (e.target === $("composer-q") || e.target === $("composer-rewrite")) { e.preventDefault(); send(); }
      return;
    }
    if (e.key === "Escape") { if (shell.closeHelp()) e.preventDefault(); return; }
    if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey || state.conflict) return;
    const card = e.target instanceof HTMLElement ? e.target.closest(".passage") : null;
    const key = e.key.toLowerCase();
    if (card && ["r", "d", "i"].includes(key)) {
      const index = Number(card.dataset.turn);
      const p = passagesOf(state.data.turns[index])[Number(card.dataset.position)];
      const position = card.dataset.position;
      markFromSelectionOr(index, p, { r: "relevant", d: "distracting", i: "irrelevant" }[key]);
      const again = document.querySelector('.turn[data-turn="' + index + '"] .passage[data-position="' + position + '"]');
      if (again) again.focus();
      e.preventDefault();
      return;
    }
    if (key === "j" || key === "k") { movePassage(card, key === "j" ? 1 : -1); e.preventDefault(); return; }
    if (shell.sharedKey(e.key)) e.preventDefault();
  });

  // j / k: the next or previous passage, across turns (folded turns are passed over).
  function movePassage(card, step) {
    const cards = [...document.querySelectorAll(".turn:not(.collapsed) .passage")];
    if (!cards.length) return;
    let at = cards.indexOf(card);
    if (at < 0) {
      const first = cards.findIndex((c) => Number(c.dataset.turn) >= state.active);
      at = step > 0 ? Math.max(first, 0) - 1 : (first < 0 ? cards.length : first);
    }
    const next = cards[Math.min(Math.max(at + step, 0), cards.length - 1)];
    next.focus({ preventScroll: true });
    next.scrollIntoView({ block: "nearest" });
    if (Number(next.dataset.turn) !== state.active) activate(Number(next.dataset.turn), false);
  }

  // ------------------------------------------------------------ for the scripts that add to it

  window.assay.conversation = {
    state, cfg, t, shell, changed, renderAll, toggleTurn, activate, passagesOf, labelOf, setLabel,
    turnParts, turnHeadParts, rendered, touched,
  };

  // ------------------------------------------------------------ start

  state.data.turns.forEach((tr) => normaliseGroups(tr));
  renderAll();
  shell.setSaveState(state.id ? "saved" : "idle");
  shell.offerRestore();
  $("composer-q").focus();
})();
