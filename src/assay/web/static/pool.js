// The pool view of a search panel (item editor and conversation workbench): a "hits | pool"
// toggle before #hits; the pool lists what every pool source found for the search box's
// question, each passage once, with a badge per source that found it. Marking a pooled
// passage dispatches "assay:mark" ({label, passage}) for the page's own script to add.
// It also runs the unanswerable check: when the question is marked unanswerable and the
// pool holds strong hits, a warning shows them.
(function () {
  "use strict";
  const { api, el, translator, readJson } = window.assay;
  const cfg = readJson("pool-data");
  const t = translator(cfg.messages || {});
  const $ = (id) => document.getElementById(id);
  const hits = $("hits");
  if (!hits) return;
  const base = "/api/projects/" + encodeURIComponent(cfg.project);
  const state = { mode: "hits", pool: null, asked: 0 };

  // ------------------------------------------------------------ where the question comes from

  function itemId() {
    const found = location.pathname.match(/\/projects\/[^/]+\/(?:items|conversations)\/([^/?#]+)$/);
    return found && found[1] !== "new" ? decodeURIComponent(found[1]) : null;
  }

  function activeTurn() {  // the conversation's active turn (1-based), or null in the editor
    const node = document.querySelector(".turn.active");
    return node ? Number(node.dataset.turn) + 1 : null;
  }

  function question() {
    const box = $("search-q");
    const typed = box ? box.value.trim() : "";
    if (typed) return typed;
    const field = $("f-query");
    return field ? field.value.trim() : "";
  }

  function poolUrl(q) {
    const id = itemId();
    const params = new URLSearchParams();
    if (q) params.set("q", q);
    if (id) {
      const turn = activeTurn();
      if (turn) params.set("turn", String(turn));
      return base + "/items/" + encodeURIComponent(id) + "/pool?" + params;
    }
    return base + "/pool?" + params;
  }

  // Marked unanswerable: the editor's type field as it is now; in the workbench, the saved turn.
  function markedUnanswerable(pool) {
    const type = $("f-type");
    return type ? type.value === "unanswerable" : Boolean(pool && pool.marked_unanswerable);
  }

  // ------------------------------------------------------------ the view

  const hitsButton = el("button", { type: "button", class: "small", "aria-pressed": "true", text: t("pool.toggle.hits"),
    onclick: () => setMode("hits") });
  const poolButton = el("button", { type: "button", class: "small", "aria-pressed": "false", text: t("pool.toggle.pool"),
    id: "pool-toggle", onclick: () => setMode("pool") });
  const toggle = el("div", { class: "pool-toggle", role: "group", "aria-label": t("pool.toggle.label") }, hitsButton, poolButton);
  const status = el("p", { class: "muted pool-state", role: "status", "aria-live": "polite" });
  const problems = el("ul", { class: "pool-problems" });
  const list = el("div", { class: "hits pool-list", role: "list", "aria-label": t("pool.toggle.pool") });
  const view = el("div", { id: "pool-view", class: "pool-view", hidden: true }, status, problems, list);
  const warning = el("div", { id: "pool-warning", class: "pool-warning", role: "alert", hidden: true });
  const bar = el("div", { class: "pool-bar" }, toggle);
  hits.before(bar);
  hits.after(view);
  const anchor = $("ev-unanswerable") || bar;
  anchor.after(warning);

  function setMode(mode) {
    state.mode = mode;
    hitsButton.setAttribute("aria-pressed", String(mode === "hits"));
    poolButton.setAttribute("aria-pressed", String(mode === "pool"));
    hits.hidden = mode === "pool";
    view.hidden = mode !== "pool";
    const said = $("search-state");  // "10 hits" is about the hits
    if (said) said.hidden = mode === "pool";
    if (mode === "pool") load();
  }

  function badge(source, rank) {
    return el("span", { class: "badge pool-src", "data-source": source, title: t("pool.found_by", { source, rank }),
      text: source + " #" + rank });
  }

  function entryNode(entry, index, names) {
    const name = names[entry.doc_id] || entry.doc_id;
    const mark = (label) => el("button", {
      type: "button", class: "small mark-" + label, text: t("pool.mark." + label),
      onmousedown: (e) => e.preventDefault(),
      onclick: () => document.dispatchEvent(new CustomEvent("assay:mark", {
        detail: { label, passage: { doc_id: entry.doc_id, start: entry.start, end: entry.end, text: entry.text } },
      })),
    });
    const sources = Object.entries(entry.found_by).sort((a, b) => a[1] - b[1]);
    return el("article", { class: "hit pool-entry" + (entry.judged ? " judged-" + entry.judged : ""), role: "listitem",
      tabindex: "-1", "aria-label": t("pool.aria", { n: index + 1, doc: name, sources: sources.length }) },
      el("div", { class: "hit-meta" },
        el("span", { class: "rank", text: String(index + 1) + "." }),
        el("span", { class: "docname", text: name }),
        el("span", { class: "pool-badges" }, ...sources.map(([source, rank]) => badge(source, rank))),
        entry.judged ? el("span", { class: "badge pool-judged " + entry.judged, text: t("pool.judged." + entry.judged) }) : null),
      el("p", { class: "snippet", text: entry.text.length > 320 ? entry.text.slice(0, 320) + "…" : entry.text }),
      entry.text.length > 320 ? el("details", {}, el("summary", { text: t("pool.whole") }),
        el("div", { class: "hit-text sel-source", "data-doc-id": entry.doc_id, "data-start": String(entry.start), text: entry.text })) : null,
      el("div", { class: "hit-actions" }, mark("relevant"), mark("distracting")));
  }

  function render(pool) {
    const names = pool.documents || {};
    list.replaceChildren(...pool.entries.map((entry, i) => entryNode(entry, i, names)));
    const coverage = pool.coverage === null ? "—" : Math.round(pool.coverage * 100) + "%";
    status.textContent = pool.entries.length
      ? t(pool.task_id === "query" ? "pool.summary" : "pool.summary_judged",
        { pooled: pool.pooled, sources: t("pool.sources_n", { n: pool.sources.length }), judged: pool.judged, coverage })
      : t("pool.empty");
    problems.replaceChildren(
      ...Object.entries(pool.errors).map(([source, detail]) => el("li", { class: "error", text: t("pool.source_failed", { source, detail }) })),
      ...Object.entries(pool.unplaced).map(([source, n]) => el("li", { class: "muted", text: t("pool.unplaced", { source, n }) })));
  }

  // About 180 characters of a strong hit: the stretch that holds the most question words.
  function around(text, words) {
    const lower = text.toLowerCase();
    const hits = [];
    for (const w of words) for (let at = lower.indexOf(w); at >= 0; at = lower.indexOf(w, at + 1)) hits.push([at, w]);
    let start = 0;
    let most = 0;
    for (const [at] of hits) {
      const from = Math.max(0, at - 40);
      const inside = new Set(hits.filter(([p, w]) => p >= from && p + w.length <= from + 180).map(([, w]) => w)).size;
      if (inside > most) { most = inside; start = from; }
    }
    return (start > 0 ? "…" : "") + text.slice(start, start + 180) + (start + 180 < text.length ? "…" : "");
  }

  function renderWarning(pool) {
    const strong = pool && markedUnanswerable(pool) ? pool.strong_hits : [];
    warning.hidden = !strong.length;
    if (!strong.length) { warning.replaceChildren(); return; }
    const names = pool.documents || {};
    const rule = Math.round(pool.strong_rule.coverage * 100) + "%";
    warning.replaceChildren(
      el("strong", { text: t("pool.warn.title") }),
      el("p", { text: t("pool.warn.body", { n: strong.length, coverage: rule }) }),
      el("ul", {}, ...strong.slice(0, 3).map((hit) => el("li", { class: "pool-strong" },
        el("span", { class: "docname", text: names[hit.doc_id] || hit.doc_id }), " ",
        el("span", { class: "badge warn", text: Math.round(hit.coverage * 100) + "%" }), " ",
        el("span", { class: "pool-strong-text", text: around(hit.text, hit.words) }),
        el("span", { class: "muted", text: " " + t("pool.warn.words", { words: hit.words.join(", ") }) })))));
  }

  async function load() {
    const q = question();
    const asked = ++state.asked;
    if (!q && !itemId()) {
      status.textContent = t("pool.need_query");
      list.replaceChildren();
      renderWarning(null);
      return;
    }
    if (state.mode === "pool") status.textContent = t("pool.loading");
    try {
      const pool = await api("GET", poolUrl(q));
      if (asked !== state.asked) return;  // a newer question was asked meanwhile
      state.pool = pool;
      if (state.mode === "pool") render(pool);
      renderWarning(pool);
    } catch (err) {
      if (asked !== state.asked) return;
      if (state.mode === "pool") { status.textContent = t("pool.failed", { detail: err.message }); list.replaceChildren(); }
    }
  }

  // ------------------------------------------------------------ the workbench's retriever

  // What the workbench's chat retrieves from (the pool settings' "chat"): the project's
  // retriever, the whole pool, or one pool source such as an external system.
  async function chatChoice() {
    if (!$("composer")) return;
    let settings;
    try { settings = await api("GET", base + "/pool-settings"); } catch (err) { return; }
    const select = el("select", { id: "pool-chat" },
      el("option", { value: "", text: t("pool.chat.project") }),
      el("option", { value: "pool", text: t("pool.chat.pool") }),
      ...settings.sources.map((s) => el("option", { value: s.name, text: t("pool.chat.source", { name: s.name, kind: s.kind }) })));
    select.value = settings.chat;
    const said = el("span", { class: "muted", role: "status", "aria-live": "polite" });
    select.addEventListener("change", async () => {
      try {
        const saved = await api("PUT", base + "/pool-settings", { chat: select.value });
        select.value = saved.chat;
        said.textContent = t("pool.chat.saved");
      } catch (err) {
        said.textContent = t("pool.failed", { detail: err.message });
        select.value = settings.chat;
      }
    });
    bar.append(el("span", { class: "pool-chat" }, el("label", { for: "pool-chat", text: t("pool.chat.label") }), select, said));
  }
  chatChoice();

  // The unanswerable check runs when the question is (or may have become) marked unanswerable.
  let timer = null;
  function recheck(delay) {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (state.mode === "pool" || $("f-type") === null || markedUnanswerable(null) || !warning.hidden) load();
    }, delay);
  }

  const form = $("search-form");
  if (form) form.addEventListener("submit", () => { if (state.mode === "pool") load(); });
  const type = $("f-type");
  if (type) type.addEventListener("change", () => recheck(0));
  // the workbench keeps answerability in the turns' enrichments, saved a moment after a change
  document.addEventListener("change", (e) => {
    if (e.target instanceof Element && e.target.closest(".turn")) recheck(2500);
  });
  document.addEventListener("click", (e) => {
    if (e.target instanceof Element && e.target.closest(".turn-head")) recheck(300);
  });
  recheck(type ? 300 : 1200);
})();
