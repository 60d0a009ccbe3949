// The list of a conversation's turns above the chat: each entry jumps to its turn (unfolding
// it) and says whether its answer and passages are done; fold or unfold every turn at once.
// Built on window.assay.conversation (static/conversation.js); user text only as textContent.
(function () {
  "use strict";

  const conv = window.assay.conversation;
  if (!conv) return;
  const { state, t, el } = Object.assign({ el: window.assay.el }, conv);
  const $ = (id) => document.getElementById(id);

  function jump(index) {
    conv.toggleTurn(index, true);
    conv.activate(index, false);
    const node = document.querySelector('.turn[data-turn="' + index + '"]');
    if (!node) return;
    node.scrollIntoView({ block: "start" });
    node.querySelector(".turn-toggle").focus({ preventScroll: true });
  }

  function entry(tr, index) {
    const unrated = conv.passagesOf(tr).filter((p) => !conv.labelOf(tr, p)).length;
    const done = Boolean((tr.answer || "").trim()) && unrated === 0;
    const link = el("a", { href: "#turn-" + (index + 1), class: "turn-link" + (index === state.active ? " current" : ""),
      title: tr.query, "aria-current": index === state.active ? "true" : "false",
      onclick: (e) => { e.preventDefault(); jump(index); } },
      el("span", { class: "turn-no", text: String(index + 1) }),
      el("span", { class: "turn-q", text: tr.query }),
      el("span", { class: "turn-state " + (done ? "done" : "open"), "aria-hidden": "true", title: t(done ? "conv.nav.done" : "conv.nav.open") }),
      el("span", { class: "sr-only", text: t(done ? "conv.nav.done" : "conv.nav.open") }));
    return el("li", {}, link);
  }

  function render() {
    const turns = state.data.turns;
    $("turn-nav").hidden = turns.length < 2;
    $("turn-nav-list").replaceChildren(...turns.map(entry));
  }

  function foldAll(open) {
    state.data.turns.forEach((_, index) => conv.toggleTurn(index, open));
  }

  $("fold-all").addEventListener("click", () => foldAll(false));
  $("unfold-all").addEventListener("click", () => foldAll(true));
  conv.rendered.push(render);
  conv.touched.push(render);  // a label or an answer changed without a full redraw
  render();
})();
