// LLM suggestions in the two workbenches (templates/_suggestions.html): relevance labels for
// passages, shown as their own cards until a person accepts or rejects them, and (in the
// conversation workbench) a standalone rewrite drafted for a turn's question. The page's
// editor (window.assay.editor: state, flush, applySaved, render) stays in charge of the item:
// before asking or deciding, pending edits are saved; an accept answers with the item as
// stored, whose evidence and rewrites are copied into the editor. User and model text reaches
// the page only through textContent and form values.
(function () {
  "use strict";

  const { api, el } = window.assay;
  const cfg = window.assay.readJson("suggest-data");
  const t = window.assay.translator(cfg.messages);
  const editor = window.assay.editor;
  if (!editor) return;
  const state = editor.state;
  const offline = cfg.kind === "offline";
  const conversation = cfg.page === "conversation";

  let suggestions = [];         // every suggestion of the item, as the server last sent them
  let loadedFor = null;         // the item id they belong to
  const docs = {};              // document names the suggestion answers brought
  const notes = {};             // turn index → the last status line shown for it
  let busy = false;

  const base = () => "/api/projects/" + encodeURIComponent(cfg.project) + "/items/"
    + encodeURIComponent(state.id) + "/suggestions";
  const docName = (id) => docs[id] || state.docs[id] || id || "";
  const pendingOf = (index, kind) => suggestions.filter((s) => s.turn === index + 1 && s.state === "pending" && s.kind === kind);

  function keep(found, names) {
    Object.assign(docs, names || {});
    for (const s of found) {
      const at = suggestions.findIndex((x) => x.id === s.id);
      if (at >= 0) suggestions[at] = s; else suggestions.push(s);
    }
  }

  async function load() {
    if (!state.id || loadedFor === state.id) return;
    loadedFor = state.id;
    try {
      const body = await api("GET", base());
      suggestions = [];
      keep(body.suggestions, body.documents);
    } catch (_) { loadedFor = null; return; }
    renderAll();
  }

  // ------------------------------------------------------------ talking to the server

  // Save what the editor holds first: suggestions belong to the stored item and its version.
  async function ready() {
    if (!(await editor.flush())) return false;
    return Boolean(state.id);
  }

  function note(index, text, kind) {
    notes[index] = { text, kind: kind || "" };
    renderAll();
  }

  async function ask(index, body, model) {
    if (busy || offline) return;
    if (!(await ready())) { note(index, t("suggest.save_first"), "error"); return; }
    busy = true;
    note(index, t("suggest.asking", { model: model || cfg.model }));
    try {
      const made = await api("POST", base(), Object.assign({ turn: index + 1 }, body));
      await load();
      keep(made.created, made.documents);
      const text = made.created.length
        ? t("suggest.made", { count: made.created.length, model: made.model })
        : t("suggest.none_new", { count: made.skipped.length });
      busy = false;
      note(index, text);
    } catch (err) {
      busy = false;
      note(index, t("suggest.failed", { detail: err.message }), "error");
    }
  }

  // The item as stored after an accept: its evidence and rewrites go into the editor.
  function adopt(payload, turns) {
    for (const index of turns) {
      const server = payload.input.turns[index];
      const mine = state.data.turns[index];
      if (server && mine) { mine.evidence = server.evidence; mine.rewrite = server.rewrite; }
    }
    editor.applySaved(payload);
    if (editor.render) editor.render(); else window.location.reload();
  }

  async function decide(index, action, ids, extra) {
    if (busy || !ids.length) return;
    if (!(await ready())) return;
    busy = true;
    try {
      const body = action === "accept" ? Object.assign({ version: state.version, ids }, extra) : { ids };
      const payload = await api("POST", base() + "/" + action, body);
      keep(payload.suggestions, payload.documents);
      busy = false;
      const decided = payload.suggestions.filter((s) => s.state !== "pending").length;
      const rewrites = payload.suggestions.every((s) => s.kind === "rewrite");
      const key = action === "reject" ? "suggest.rejected" : rewrites ? "suggest.rewrite.taken" : "suggest.accepted";
      let text = t(key, { count: decided });
      if (payload.skipped.length) text += " " + t("suggest.skipped", { count: payload.skipped.length });
      notes[index] = { text, kind: "" };
      if (action === "accept") adopt(payload, [...new Set(payload.suggestions.map((s) => s.turn - 1))]);
      renderAll();
      window.assay.toast(text);
    } catch (err) {
      busy = false;
      const open = window.assay.openEditor;
      if (open && open.conflictFrom && open.conflictFrom(err)) return;
      note(index, err.message, "error");
      window.assay.toast(err.message, "error");
    }
  }

  // ------------------------------------------------------------ cards

  function excerpt(text) {
    const flat = text.replace(/\s+/g, " ").trim();
    return flat.length > 160 ? flat.slice(0, 159) + "…" : flat;
  }

  function card(index, s) {
    const label = t("items.label." + s.label);
    const made = t("suggest.made_with", {
      hash: s.prompt_hash.slice(0, 12), temperature: s.params.temperature === undefined ? "–" : s.params.temperature,
    });
    const model = el("span", { class: "muted sg-model", text: s.model, title: made });
    const actions = el("div", { class: "sg-actions" },
      cfg.can_edit ? el("button", { type: "button", class: "small sg-accept", text: t("suggest.accept"),
        onclick: () => decide(index, "accept", [s.id]) }) : null,
      cfg.can_edit ? el("button", { type: "button", class: "secondary small sg-reject", text: t("suggest.reject"),
        onclick: () => decide(index, "reject", [s.id]) }) : null,
      model);
    return el("li", {
      class: "sg-card sg-" + s.label, "data-suggestion": String(s.id),
      "aria-label": t("suggest.card_aria", { label, doc: docName(s.doc_id) }),
    },
    el("div", { class: "sg-head" },
      el("span", { class: "sg-tag", text: t("suggest.tag") }),
      el("span", { class: "badge sg-label label-" + s.label, text: t("suggest.card_label", { label }) }),
      el("span", { class: "docname", text: docName(s.doc_id) })),
    el("p", { class: "sg-reason", text: s.reason }),
    el("details", { class: "sg-passage" },
      el("summary", { text: excerpt(s.text) }),
      el("blockquote", { class: "sg-text", text: s.text })),
    actions);
  }

  function fillBox(box, index) {
    const pending = pendingOf(index, "relevance");
    const decided = suggestions.filter((s) => s.turn === index + 1 && s.kind === "relevance" && (s.state === "accepted" || s.state === "rejected"));
    const said = notes[index];
    const parts = [];
    if (said) parts.push(el("p", { class: "sg-note" + (said.kind ? " " + said.kind : ""), role: "status", text: said.text }));
    if (pending.length > 1 && cfg.can_edit) {
      const ids = pending.map((s) => s.id);
      parts.push(el("div", { class: "sg-bulk" },
        el("span", { class: "muted", text: t("suggest.waiting", { count: pending.length }) }),
        el("button", { type: "button", class: "small sg-accept-all", text: t("suggest.accept_all", { count: ids.length }),
          onclick: () => decide(index, "accept", ids, { skip_disagreeing: true }) }),
        el("button", { type: "button", class: "secondary small sg-reject-all", text: t("suggest.reject_all", { count: ids.length }),
          onclick: () => decide(index, "reject", ids) })));
    }
    if (pending.length) parts.push(el("ol", { class: "sg-list" }, ...pending.map((s) => card(index, s))));
    if (decided.length) {
      const accepted = decided.filter((s) => s.state === "accepted").length;
      parts.push(el("p", { class: "muted sg-decided", text: t("suggest.decided", { accepted, rejected: decided.length - accepted }) }));
    }
    const focused = box.contains(document.activeElement) ? document.activeElement.className : null;
    box.replaceChildren(...parts);
    if (focused) {
      const again = box.querySelector("button." + focused.split(" ").filter(Boolean).join("."));
      if (again) again.focus({ preventScroll: true });
    }
  }

  // ------------------------------------------------------------ the item editor

  function renderItem() {
    const panel = document.getElementById("sg-panel");
    if (!panel) return;
    document.getElementById("sg-needs").hidden = !offline;
    const button = document.getElementById("sg-ask");
    button.disabled = offline || busy || !cfg.can_edit;
    button.textContent = t(state.hits.length ? "suggest.ask_hits" : "suggest.ask_default");
    fillBox(panel.querySelector(".sg-box"), 0);
  }

  if (!conversation) {
    document.getElementById("sg-ask").addEventListener("click", () => {
      const passages = state.hits.map((h) => ({ doc_id: h.doc_id, start: h.start, end: h.end }));
      ask(0, passages.length ? { passages } : {});
    });
    // the editor redraws its results after a search: the button says what it will judge
    new MutationObserver(() => renderItem()).observe(document.getElementById("hits"), { childList: true });
  }

  // ------------------------------------------------------------ the conversation workbench

  function rewriteCard(index, s) {
    const id = "sg-rewrite-" + s.id;
    const input = el("input", { type: "text", id, class: "sg-rewrite-text" });
    input.value = s.text;
    return el("div", { class: "sg-card sg-rewrite", "data-suggestion": String(s.id) },
      el("div", { class: "sg-head" },
        el("span", { class: "sg-tag", text: t("suggest.tag") }),
        el("label", { for: id, class: "sg-rewrite-label", text: t("suggest.rewrite.title") }),
        el("span", { class: "muted sg-model", text: s.model, title: t("suggest.rewrite.field", { n: index + 1 }) })),
      input,
      cfg.can_edit ? el("div", { class: "sg-actions" },
        el("button", { type: "button", class: "small sg-accept", text: t("suggest.rewrite.accept"),
          onclick: () => decide(index, "accept", [s.id], { rewrite: input.value }) }),
        el("button", { type: "button", class: "secondary small sg-reject", text: t("suggest.reject"),
          onclick: () => decide(index, "reject", [s.id]) })) : null);
  }

  function decorateTurn(node) {
    const index = Number(node.dataset.turn);
    const passages = node.querySelector(".turn-passages");
    let box = node.querySelector(".sg-turn");
    if (!box && passages) {
      box = el("section", { class: "sg-turn", "aria-label": t("suggest.turn_title", { n: index + 1 }) },
        el("div", { class: "sg-bar" },
          el("span", { class: "sg-tag", text: "LLM" }),
          el("button", { type: "button", class: "secondary small sg-ask", text: t("suggest.ask_turn"),
            disabled: offline || !cfg.can_edit, title: offline ? t("suggest.needs_llm") : "",
            onclick: () => ask(index, {}) })),
        el("div", { class: "sg-box" }));
      passages.after(box);
    }
    if (box) fillBox(box.querySelector(".sg-box"), index);
    // a first question has nothing before it to lean on: rewrites are for later turns
    const field = index > 0 ? node.querySelector('[data-field="rewrite"]') : null;
    if (!field) return;
    const holder = field.closest(".field");
    let rewrite = node.querySelector(".sg-rewrite-box");
    if (!rewrite) {
      rewrite = el("div", { class: "sg-rewrite-box" });
      holder.after(rewrite);
    }
    const pending = pendingOf(index, "rewrite");
    const latest = pending[pending.length - 1];
    const said = notes["r" + index];
    const parts = [el("button", { type: "button", class: "secondary small sg-ask-rewrite", text: t("suggest.rewrite.ask"),
      disabled: offline || !cfg.can_edit || busy, title: offline ? t("suggest.needs_llm") : "",
      onclick: () => askRewrite(index) })];
    if (said) parts.push(el("span", { class: "sg-note" + (said.kind ? " " + said.kind : ""), role: "status", text: said.text }));
    if (latest) parts.push(rewriteCard(index, latest));
    rewrite.replaceChildren(...parts);
  }

  async function askRewrite(index) {
    const key = "r" + index;
    if (busy || offline) return;
    if (!(await ready())) return;
    busy = true;
    notes[key] = { text: t("suggest.asking", { model: cfg.model }), kind: "" };
    renderAll();
    try {
      const made = await api("POST", base(), { kind: "rewrite", turn: index + 1 });
      await load();
      keep(made.created, made.documents);
      delete notes[key];
    } catch (err) {
      notes[key] = { text: t("suggest.failed", { detail: err.message }), kind: "error" };
    }
    busy = false;
    renderAll();
    const input = document.querySelector('.turn[data-turn="' + index + '"] .sg-rewrite-text');
    if (input) input.focus();
  }

  function renderConversation() {
    document.querySelectorAll("#turns > .turn").forEach(decorateTurn);
  }

  // ------------------------------------------------------------ start

  function renderAll() {
    if (state.id && loadedFor !== state.id) load();
    if (conversation) renderConversation(); else renderItem();
  }

  if (conversation) {
    // the workbench redraws its turns often: each new turn node gets its boxes again
    new MutationObserver(() => renderAll()).observe(document.getElementById("turns"), { childList: true });
  }
  renderAll();
})();
