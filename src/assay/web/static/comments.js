// Comments on the item or conversation open in the editor: select text in a question, an
// answer or a passage, press the "Comment" button (or Ctrl+Alt+M) and write; the side panel
// lists the threads with their quoted span (shown in the text when a thread is hovered or
// focused), replies, resolve/reopen, and an "outdated" badge when the text changed under a
// comment. Offsets are counted in code points, as the server counts characters. User text
// only ever reaches the page through textContent.
(function () {
  "use strict";

  const { api, el, toast } = window.assay;
  const cfg = window.assay.readJson("comments-data");
  const t = window.assay.translator(cfg.messages);
  const $ = (id) => document.getElementById(id);
  const HIGHLIGHT = "assay-comment";
  const state = { comments: [], canWrite: cfg.can_write, draft: null, showResolved: false, loaded: null };

  // ------------------------------------------------------------ where the item is

  function itemId() {
    const match = window.location.pathname.match(/\/(items|conversations)\/([^/]+)$/);
    return match && match[2] !== "new" ? decodeURIComponent(match[2]) : null;
  }
  const apiBase = () => "/api/projects/" + encodeURIComponent(cfg.project) + "/items/" + encodeURIComponent(itemId()) + "/comments";
  const points = (text, units) => Array.from(text.slice(0, units)).length;       // UTF-16 → code points
  const units = (text, pointsAt) => Array.from(text).slice(0, pointsAt).join("").length;  // and back

  // The text fields a comment can sit on: the question and answer boxes, and passage texts.
  function fieldOf(node) {
    if (!(node instanceof HTMLElement)) return null;
    if (node.id === "f-query") return { target: "question", turn: 0 };
    if (node.id === "f-answer") return { target: "answer", turn: 0 };
    const turnNode = node.closest(".turn[data-turn]");
    if (turnNode && node.matches("textarea[data-field=question], textarea[data-field=answer]")) {
      return { target: node.dataset.field, turn: Number(turnNode.dataset.turn) };
    }
    return null;
  }
  const PASSAGES = "#ev-list .ev-text, .turn .passage-text";

  function passageTurn(node) {
    const turnNode = node.closest(".turn[data-turn]");
    return turnNode ? Number(turnNode.dataset.turn) : 0;
  }

  // The current selection as a comment anchor: {target, turn, text, start, end, quote,
  // passage?} (offsets in code points into the field's text), or null.
  function selectedSpan() {
    const active = document.activeElement;
    const field = fieldOf(active);
    if (field && active.selectionStart !== active.selectionEnd) {
      const text = active.value;
      const start = points(text, active.selectionStart);
      const end = points(text, active.selectionEnd);
      return Object.assign(field, { start, end, quote: Array.from(text).slice(start, end).join("") });
    }
    const selection = window.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return null;
    const range = selection.getRangeAt(0);
    const host = (n) => (n.nodeType === 1 ? n : n.parentElement).closest(PASSAGES);
    const source = host(range.startContainer);
    if (!source || source !== host(range.endContainer)) return null;
    const before = (container, at) => {
      const r = document.createRange();
      r.selectNodeContents(source);
      r.setEnd(container, at);
      return points(r.toString(), r.toString().length);
    };
    const text = source.textContent;
    const start = before(range.startContainer, range.startOffset);
    const end = before(range.endContainer, range.endOffset);
    if (start >= end) return null;
    return { target: "evidence", turn: passageTurn(source), passageText: text, start, end,
      quote: Array.from(text).slice(start, end).join("") };
  }

  // ------------------------------------------------------------ the "Comment" button

  const floating = $("comment-selection");
  function placeButton(x, y) {
    if (!state.canWrite || !itemId()) { floating.hidden = true; return; }
    const span = selectedSpan();
    if (!span) { floating.hidden = true; return; }
    floating.hidden = false;
    floating.style.left = Math.min(window.innerWidth - 110, x + 8) + window.scrollX + "px";
    floating.style.top = y + 12 + window.scrollY + "px";
  }
  document.addEventListener("mouseup", (e) => {
    if (floating.contains(e.target) || $("comments-panel").contains(e.target)) return;
    setTimeout(() => placeButton(e.clientX, e.clientY), 0);
  });
  document.addEventListener("keyup", (e) => {
    if (!e.shiftKey) return;
    const box = document.activeElement.getBoundingClientRect();
    placeButton(box.left + 8, box.bottom - 12);
  });
  floating.addEventListener("mousedown", (e) => e.preventDefault());  // keep the selection
  floating.addEventListener("click", () => startDraft());

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey && e.altKey && e.code === "KeyM") {
      e.preventDefault();
      startDraft();
    } else if (e.key === "Escape" && state.draft) {
      cancelDraft();
    }
  });

  // The item as stored, after the editor saved what is pending: the passage a selection sits
  // in is found there (its number in the turn), and the server checks the quote against it.
  async function storedItem() {
    if (window.assay.flushEditor && !(await window.assay.flushEditor())) return null;
    const url = "/api/projects/" + encodeURIComponent(cfg.project) + "/items/" + encodeURIComponent(itemId());
    return (await api("GET", url)).item;
  }

  async function startDraft() {
    floating.hidden = true;
    if (!state.canWrite) return;
    if (!itemId()) { toast(t("comments.save_first"), "error"); return; }
    const span = selectedSpan();
    if (!span) { toast(t("comments.select_first"), "info"); openPanel(true); $("comment-new").focus(); return; }
    state.draft = span;
    openPanel(true);
    renderDraft();
    $("comment-draft-body").focus();
  }

  function cancelDraft() {
    state.draft = null;
    renderDraft();
  }

  function renderDraft() {
    const box = $("comment-draft");
    box.hidden = !state.draft;
    if (!state.draft) return;
    $("comment-draft-where").textContent = whereText(state.draft);
    $("comment-draft-quote").textContent = state.draft.quote;
  }

  $("comment-draft").addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = $("comment-draft-body").value;
    const span = state.draft;
    if (!span || !body.trim()) return;
    try {
      const item = await storedItem();
      if (!item) { toast(t("comments.save_first"), "error"); return; }
      const payload = { body, target: span.target, turn: span.turn, start: span.start, end: span.end, quote: span.quote };
      if (span.target === "evidence") {
        const passages = (item.turns[span.turn] || {}).evidence || [];
        const index = passages.findIndex((p) => p.text === span.passageText);
        if (index < 0) { toast(t("comments.mark_first"), "error"); return; }
        payload.evidence = index;
      }
      await api("POST", apiBase(), payload);
      $("comment-draft-body").value = "";
      cancelDraft();
      await load();
    } catch (err) {
      toast(err.message, "error");
    }
  });
  $("comment-draft-cancel").addEventListener("click", cancelDraft);

  $("comment-general").addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = $("comment-new").value;
    if (!body.trim() || !itemId()) return;
    try {
      await api("POST", apiBase(), { body });
      $("comment-new").value = "";
      await load();
    } catch (err) {
      toast(err.message, "error");
    }
  });

  // ------------------------------------------------------------ the panel

  // The toggle sits in the editor's bar, beside its other buttons, where there is one.
  const bar = document.querySelector(".editor-bar #help-button");
  if (bar) { bar.before($("comments-toggle")); $("comments-toggle").classList.add("in-bar"); }

  const panel = $("comments-panel");
  function openPanel(open) {
    panel.hidden = !open;
    document.body.classList.toggle("comments-open", open);
    $("comments-toggle").setAttribute("aria-expanded", String(open));
    if (open && itemId() && state.loaded !== itemId()) load();
  }
  $("comments-toggle").addEventListener("click", () => openPanel(panel.hidden));
  $("comments-close").addEventListener("click", () => openPanel(false));
  $("comments-show-resolved").addEventListener("change", (e) => {
    state.showResolved = e.target.checked;
    render();
  });

  function whereText(c) {
    const n = (c.turn || 0) + 1;
    const key = c.target === "evidence" ? "comments.on.evidence" : "comments.on." + c.target;
    return t(key, { turn: n, passage: (c.evidence || 0) + 1 });
  }

  async function load() {
    if (!itemId()) { render(); return; }
    try {
      const payload = await api("GET", apiBase());
      state.comments = payload.comments;
      state.canWrite = payload.can_write;
      state.loaded = itemId();
      render();
      if (payload.comments.some((c) => c.target === "evidence")) refreshItem();
    } catch (err) {
      toast(err.message, "error");
    }
  }

  function threads() {
    const roots = state.comments.filter((c) => c.parent_id === null);
    return roots.map((root) => ({ root, replies: state.comments.filter((c) => c.parent_id === root.id) }));
  }

  function render() {
    const all = threads();
    const open = all.filter((th) => !th.root.resolved);
    const resolved = all.length - open.length;
    $("comments-count").textContent = open.length ? String(open.length) : "";
    $("comments-title-count").textContent = t("comments.open_count", { n: open.length });
    $("comments-resolved-label").textContent = t("comments.show_resolved", { n: resolved });
    $("comments-resolved-row").hidden = resolved === 0;
    const shown = state.showResolved ? all : open;
    $("comments-empty").hidden = shown.length > 0;
    $("comments-list").replaceChildren(...shown.map(threadNode));
    for (const node of document.querySelectorAll(".comment-write")) node.hidden = !state.canWrite || !itemId();
  }

  function commentNode(c) {
    const when = new Date(c.created_at);
    const edited = c.updated_at !== c.created_at && !c.resolved;
    const body = el("p", { class: "comment-body", text: c.body });
    const actions = el("div", { class: "comment-actions" });
    if (c.mine && state.canWrite) {
      actions.append(
        el("button", { type: "button", class: "link small", text: t("comments.edit"), onclick: () => editInPlace(c, body) }),
        el("button", { type: "button", class: "link small", text: t("comments.delete"), onclick: () => remove(c) }));
    }
    return el("article", { class: "comment", "data-id": String(c.id) },
      el("div", { class: "comment-head" },
        el("strong", { text: c.author }),
        el("time", { datetime: c.created_at, text: when.toLocaleString(document.documentElement.lang || undefined, { dateStyle: "short", timeStyle: "short" }) }),
        edited ? el("span", { class: "muted", text: t("comments.edited") }) : null),
      body, actions.childNodes.length ? actions : null);
  }

  function threadNode(th) {
    const c = th.root;
    const badges = [];
    if (c.anchor === "outdated") badges.push(el("span", { class: "badge warn comment-outdated", title: t("comments.outdated_help"), text: t("comments.outdated") }));
    if (c.anchor === "moved") badges.push(el("span", { class: "badge comment-moved", title: t("comments.moved_help"), text: t("comments.moved") }));
    if (c.resolved) badges.push(el("span", { class: "badge comment-resolved", text: t("comments.resolved_by", { name: c.resolved_by }) }));
    const head = el("div", { class: "thread-where" },
      el("span", { text: c.target === "item" ? t("comments.on.item") : whereText(c) }), ...badges);
    const quote = c.target === "item" ? null : el("button", {
      type: "button", class: "thread-quote", title: t("comments.show_in_text"), text: c.quote,
      onclick: () => showInText(c, true),
    });
    const replyBox = el("textarea", { rows: "1", "aria-label": t("comments.reply_label"), placeholder: t("comments.reply_placeholder") });
    const reply = el("form", { class: "comment-reply comment-write" }, replyBox,
      el("button", { type: "submit", class: "small", text: t("comments.reply") }));
    reply.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (!replyBox.value.trim()) return;
      try {
        await api("POST", apiBase(), { body: replyBox.value, parent_id: c.id });
        await load();
      } catch (err) { toast(err.message, "error"); }
    });
    const resolve = el("button", {
      type: "button", class: "secondary small comment-write comment-resolve", text: t(c.resolved ? "comments.reopen" : "comments.resolve"),
      onclick: () => change(c, { resolved: !c.resolved }),
    });
    const node = el("li", { class: "thread" + (c.resolved ? " resolved" : "") + (c.anchor === "outdated" ? " outdated" : ""), tabindex: "0", "data-id": String(c.id) },
      head, quote, commentNode(c), ...th.replies.map(commentNode), reply, el("div", { class: "thread-actions" }, resolve));
    node.addEventListener("mouseenter", () => showInText(c, false));
    node.addEventListener("mouseleave", clearHighlight);
    node.addEventListener("focusin", () => showInText(c, false));
    node.addEventListener("focusout", (e) => { if (!node.contains(e.relatedTarget)) clearHighlight(); });
    return node;
  }

  function editInPlace(c, body) {
    const box = el("textarea", { rows: "3", "aria-label": t("comments.edit") });
    box.value = c.body;
    const form = el("form", { class: "comment-edit" }, box,
      el("button", { type: "submit", class: "small", text: t("comments.save") }),
      el("button", { type: "button", class: "secondary small", text: t("comments.cancel"), onclick: () => form.replaceWith(body) }));
    form.addEventListener("submit", (e) => { e.preventDefault(); change(c, { body: box.value }); });
    body.replaceWith(form);
    box.focus();
  }

  async function change(c, body) {
    try {
      await api("PATCH", apiBase() + "/" + c.id, body);
      await load();
    } catch (err) { toast(err.message, "error"); }
  }

  async function remove(c) {
    if (!window.confirm(t(c.parent_id === null ? "comments.delete_thread_confirm" : "comments.delete_confirm"))) return;
    try {
      await api("DELETE", apiBase() + "/" + c.id);
      await load();
    } catch (err) { toast(err.message, "error"); }
  }

  // ------------------------------------------------------------ showing a span in the text

  function fieldFor(c) {
    if (c.target === "evidence") return null;
    const own = $(c.target === "question" ? "f-query" : "f-answer");
    if (own) return own;
    return $("t" + c.turn + "-" + c.target);
  }

  function passageFor(c) {
    const item = state.itemCache;
    const text = item && ((item.turns[c.turn] || {}).evidence || [])[c.evidence];
    if (!text) return null;
    return [...document.querySelectorAll(PASSAGES)].find((n) => n.textContent === text.text && passageTurn(n) === c.turn) || null;
  }

  function clearHighlight() {
    if (window.CSS && CSS.highlights) CSS.highlights.delete(HIGHLIGHT);
    document.querySelectorAll(".comment-focus").forEach((n) => n.classList.remove("comment-focus"));
  }

  // Hover or focus: outline the text and mark the span; a click on the quote also selects
  // it in a question or answer box. Outdated comments have no span to show.
  function showInText(c, select) {
    clearHighlight();
    if (c.target === "item" || c.anchor === "outdated") return;
    const field = fieldFor(c);
    if (field) {
      if (select) {  // focus first: the thread losing focus clears the outline
        field.focus();
        field.setSelectionRange(units(field.value, c.start), units(field.value, c.end));
        field.scrollIntoView({ block: "center" });
      }
      field.classList.add("comment-focus");
      return;
    }
    const passage = passageFor(c);
    if (!passage) return;
    passage.classList.add("comment-focus");
    if (window.CSS && CSS.highlights && window.Highlight) {
      const range = rangeIn(passage, c.start, c.end);
      if (range) CSS.highlights.set(HIGHLIGHT, new Highlight(range));
    }
    if (select) passage.scrollIntoView({ block: "center" });
  }

  // A DOM range over code points start..end of a node's text (across nested elements).
  function rangeIn(root, start, end) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    let seen = 0;
    let begun = false;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const length = Array.from(node.data).length;
      if (!begun && start <= seen + length) { range.setStart(node, units(node.data, start - seen)); begun = true; }
      if (begun && end <= seen + length) { range.setEnd(node, units(node.data, end - seen)); return range; }
      seen += length;
    }
    return null;
  }

  // Passages are matched to the stored item's evidence: keep the item at hand for hovering.
  async function refreshItem() {
    if (!itemId()) return;
    try {
      const url = "/api/projects/" + encodeURIComponent(cfg.project) + "/items/" + encodeURIComponent(itemId());
      state.itemCache = (await api("GET", url)).item;
    } catch (err) { /* hovering only: the panel still works */ }
  }
  panel.addEventListener("mouseenter", refreshItem);

  // ------------------------------------------------------------ the help overlay's line

  const helpRow = $("comments-help-row");
  const keys = document.querySelector("#help-overlay dl.keys");
  if (helpRow && keys) keys.append(...helpRow.content.cloneNode(true).childNodes);

  if (itemId()) load(); else render();
  openPanel(false);
})();
