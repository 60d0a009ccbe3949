// Search more, marking and keys in the conversation workbench (a part of
// static/conversation.js): hits for the active turn, a passage or a selected part of it
// marked relevant or distracting, r/d/i on a passage, j/k between passages across turns,
// Ctrl+Enter sends.
(function () {
  "use strict";

  const conv = window.assay.conversation;
  if (!conv) return;
  const { state, t, shell } = conv;
  const { el, typing } = window.assay;
  const $ = (id) => document.getElementById(id);

  // ------------------------------------------------------------ search more

  function renderHits() {
    const box = $("hits");
    box.replaceChildren();
    const tr = state.data.turns[state.active];
    state.hits.forEach((hit) => {
      const label = tr ? conv.labelOf(tr, hit) : null;
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

  // Mark the selected text (widened to whole words, clipped to its passage), else the whole
  // passage p. A selection across passages, or outside any, is refused with a message, as in
  // the item editor: it never becomes a whole passage unasked.
  function markFromSelectionOr(index, p, label) {
    const chosen = shell.selectionClip();
    if (chosen && chosen.refused) {
      window.assay.toast(t("items.select.refused_" + chosen.refused), "error");
      return;
    }
    if (chosen && !chosen.whole) {
      conv.setLabel(index, chosen.span, label, "selected");
      window.getSelection().removeAllRanges();
      if (chosen.clipped) window.assay.toast(t("items.select.clipped", { text: chosen.span.text.slice(0, 60) }));
      return;
    }
    if (chosen) window.getSelection().removeAllRanges();
    conv.setLabel(index, p, label, p.origin === "retrieved" ? "retrieved" : "searched");
  }

  // ------------------------------------------------------------ keys

  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
      if (e.target === $("composer-q") || e.target === $("composer-rewrite")) { e.preventDefault(); conv.send(); }
      return;
    }
    if (e.key === "Escape") { if (shell.closeHelp()) e.preventDefault(); return; }  // app.js leaves a field
    if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey || state.conflict) return;
    const card = e.target instanceof HTMLElement ? e.target.closest(".passage") : null;
    const key = e.key.toLowerCase();
    const hitCard = e.target instanceof HTMLElement ? e.target.closest("#hits .hit") : null;
    if (hitCard && (key === "r" || key === "d")) {  // a search hit in focus, as in the item editor
      const hit = state.hits[[...$("hits").children].indexOf(hitCard)];
      if (hit) markFromSelectionOr(state.active, Object.assign({}, hit, { origin: "searched" }), key === "r" ? "relevant" : "distracting");
      e.preventDefault();
      return;
    }
    if (card && ["r", "d", "i"].includes(key)) {
      const index = Number(card.dataset.turn);
      const p = conv.passagesOf(state.data.turns[index])[Number(card.dataset.position)];
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
    if (Number(next.dataset.turn) !== state.active) conv.activate(Number(next.dataset.turn), false);
  }

  Object.assign(conv, { renderHits, markFromSelectionOr });
})();
