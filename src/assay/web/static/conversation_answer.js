// The answer of a conversation turn (a part of static/conversation.js): the word diff
// against the answer as first given, the answer drawn with its support by the passages
// marked relevant (copied phrases, a score per sentence), and a generated draft waiting
// beside it to be taken (with undo) or discarded. User text only as textContent.
(function () {
  "use strict";

  const conv = window.assay.conversation;
  if (!conv) return;
  const { state, t, shell } = conv;
  const { api, el, clone } = window.assay;
  const $ = (id) => document.getElementById(id);


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
    const passages = conv.passagesOf(tr);
    if (!passages.length) { delete state.overlap[index]; return; }
    const relevant = passages.map((p, i) => (conv.labelOf(tr, p) === "relevant" ? i : -1)).filter((i) => i >= 0);
    try {
      state.overlap[index] = await api("POST", shell.base + "/conversations/overlap",
        { answer: tr.answer || "", passages: passages.map((p) => p.text), support_from: relevant });
    } catch (_) { return; }
    conv.renderPassages(index);
    renderAnswerView(index);
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
    if (!(await conv.flush()) || !state.id) return;
    const before = clone(state.data.turns[index]);
    try {
      const body = await api("POST", shell.base + "/conversations/" + encodeURIComponent(state.id) + "/turns/" + (index + 1)
        + "/draft/" + action, { version: state.version });
      const server = body.input.turns[index];
      Object.assign(state.data.turns[index], {
        answer: server.answer, original_answer: server.original_answer, generation: server.generation,
      });
      conv.applySaved(body);
      state.undo = action === "take"
        ? { turn: index, answer: before.answer, original_answer: before.original_answer, generation: before.generation }
        : null;
      conv.renderAll();
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
    conv.renderAll();
    conv.changed();
  }

  Object.assign(conv, { renderDiff, renderAnswerView, scheduleOverlap, keepOriginals, draftBox, undoTake });
})();
