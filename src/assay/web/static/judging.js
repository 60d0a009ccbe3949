// The judging workbench: one topic's units in one mode (reports, documents, citations), each
// judged with a rating, a comment and spans selected in the texts. Keyboard first (? shows the
// keys). Every change is saved by itself (PUT .../judging/judgments with the version read; a
// 409 opens the conflict dialog, nothing is overwritten); unsaved changes are also kept in
// localStorage and offered back on the next visit. Offsets are code points, as the server
// counts them. Texts only ever reach the page through textContent.
(function () {
  "use strict";

  const { api, el, clone, translator, readJson, toast, selectedPart, helpOverlay } = window.assay;
  const cfg = readJson("judging-data");
  const t = translator(cfg.messages);
  const $ = (id) => document.getElementById(id);
  const url = "/api/projects/" + encodeURIComponent(cfg.project) + "/judging/judgments";
  const notRated = cfg.ratings[0].value;
  const DEBOUNCE_MS = 600;

  const state = {
    at: 0,
    saving: null,
    timer: null,
    retries: 0,
    conflict: null,   // {unit, current}
    openDoc: null,    // reports mode: the cited document shown beside the report
    units: cfg.units.map((u) => Object.assign({}, u, {
      version: u.judgment ? u.judgment.version : 0,
      data: fromJudgment(u.judgment),
      dirty: false,
    })),
  };

  function fromJudgment(j) {
    return {
      rating: j ? j.rating : notRated,
      comment: j ? j.comment : "",
      spans: j ? clone(j.spans) : [],
      report_spans: j ? clone(j.report_spans) : [],
    };
  }

  // autojudge-annotate's rule: judged when it has a span, a rating other than the first, or a comment
  const judged = (data) => Boolean(data.spans.length || data.report_spans.length
    || data.rating !== notRated || data.comment);
  const unit = () => state.units[state.at];
  const chars = (text) => Array.from(text);

  // ------------------------------------------------------------ drafts kept in the browser

  const draftKey = (u) => "assay:judging:" + cfg.project + ":" + u.key;

  function keepDraft(u, data) {
    try {
      localStorage.setItem(draftKey(u), JSON.stringify({ data, version: u.version, at: new Date().toISOString() }));
    } catch (_) { /* storage full or disabled: the server copy still counts */ }
  }

  function dropDraft(u) {
    try { localStorage.removeItem(draftKey(u)); } catch (_) { /* ignore */ }
  }

  function readDraft(u) {
    try { return JSON.parse(localStorage.getItem(draftKey(u)) || "null"); } catch (_) { return null; }
  }

  function offerRestore() {
    if (window.assay.readOnly.on) return;
    const found = [];
    for (const u of state.units) {
      const draft = readDraft(u);
      if (!draft || !draft.data) continue;
      if (JSON.stringify(draft.data) === JSON.stringify(u.data)) dropDraft(u); else found.push([u, draft]);
    }
    if (!found.length) return;
    const latest = found.map(([, d]) => d.at).sort().pop();
    $("restore-text").textContent = t("judging.restore.found", {
      count: found.length, time: new Date(latest).toLocaleString(document.documentElement.lang),
    });
    $("restore-banner").hidden = false;
    $("restore-yes").onclick = () => {
      $("restore-banner").hidden = true;
      for (const [u, draft] of found) { u.data = draft.data; changed(u); }
      render();
    };
    $("restore-no").onclick = () => {
      $("restore-banner").hidden = true;
      for (const [u] of found) dropDraft(u);
    };
  }

  // ------------------------------------------------------------ saving and conflicts

  function setSaveState(kind, detail) {
    const box = $("save-state");
    box.className = "save-state " + kind;
    box.textContent = t("judging.save." + kind) + (detail ? ": " + detail : "");
  }

  function changed(u) {
    u.dirty = true;
    keepDraft(u, u.data);
    renderProgress();
    if (state.conflict) return;
    setSaveState("pending");
    clearTimeout(state.timer);
    state.timer = setTimeout(saveAll, DEBOUNCE_MS);
  }

  function body(u) {
    return Object.assign({
      mode: cfg.mode, topic_id: u.topic_id, run_id: u.run_id, doc_id: u.doc_id,
      sentence_idx: u.sentence_idx, version: u.version,
    }, clone(u.data), cfg.mode === "citation" ? {} : { report_spans: [] });
  }

  // Save one unit; true when saved, false when a conflict or an error stopped it.
  async function saveOne(u) {
    u.dirty = false;
    setSaveState("saving");
    try {
      const saved = await api("PUT", url, body(u));
      u.version = saved.version;
      u.judgment = saved;
      if (!u.dirty) dropDraft(u);
      state.retries = 0;
      renderUnitList();
      return true;
    } catch (err) {
      u.dirty = true;
      keepDraft(u, u.data);
      if (err.status === 409 && err.body && err.body.current) {
        openConflict(u, err.body.current);
      } else if (err.status && err.status < 500) {
        setSaveState("error", err.message);
      } else {
        const delay = Math.min(30000, 1000 * 2 ** state.retries);
        state.retries += 1;
        setSaveState("retrying");
        clearTimeout(state.timer);
        state.timer = setTimeout(saveAll, delay);
      }
      return false;
    }
  }

  // Save every unit with changes, one after the other; true when all are saved.
  function saveAll() {
    clearTimeout(state.timer);
    if (state.saving) return state.saving.then(() => saveAll());
    state.saving = (async () => {
      for (;;) {
        if (state.conflict) return false;
        const next = state.units.find((u) => u.dirty);
        if (!next) { setSaveState("saved"); return true; }
        if (!(await saveOne(next))) return false;
      }
    })().finally(() => { state.saving = null; });
    return state.saving;
  }

  window.addEventListener("beforeunload", (event) => {
    if (state.saving || state.conflict || state.units.some((u) => u.dirty)) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  function summaryRows(data) {
    const label = (value) => (cfg.ratings.find((r) => r.value === value) || { label: value }).label;
    return [
      ["judging.rating", label(data.rating)],
      ["judging.comment", data.comment || "—"],
      ["judging.spans", t("judging.conflict.spans", { count: data.spans.length + data.report_spans.length })],
    ];
  }

  function summary(target, data) {
    target.replaceChildren();
    for (const [key, value] of summaryRows(data)) target.append(el("dt", { text: t(key) }), el("dd", { text: value }));
  }

  function openConflict(u, current) {
    state.conflict = { unit: u, current };
    setSaveState("conflict");
    summary($("conflict-mine"), u.data);
    summary($("conflict-theirs"), fromJudgment(current));
    $("conflict-theirs-meta").textContent = t("judging.conflict.meta", {
      version: current.version,
      time: new Date(current.updated_at).toLocaleString(document.documentElement.lang),
    });
    if (!$("conflict").open) $("conflict").showModal();
  }

  // Neither way out loses anything: "keep mine" saves over the stored version; "take the
  // saved one" loads it and keeps mine in this browser, offered back.
  const dialog = $("conflict");
  dialog.addEventListener("cancel", (event) => event.preventDefault());
  $("conflict-mine-button").addEventListener("click", () => {
    const { unit: u, current } = state.conflict;
    state.conflict = null;
    dialog.close();
    u.version = current.version;
    changed(u);
    saveAll();
  });
  $("conflict-theirs-button").addEventListener("click", () => {
    const { unit: u, current } = state.conflict;
    const mine = u.data;
    state.conflict = null;
    dialog.close();
    u.version = current.version;
    u.judgment = current;
    u.data = fromJudgment(current);
    u.dirty = false;
    keepDraft(u, mine);
    render();
    saveAll();
    offerRestore();
  });

  // ------------------------------------------------------------ texts with their spans

  // A text as segments, the characters inside any span in <mark>: offsets are code points.
  function markedText(node, text, spans) {
    const cs = chars(text);
    const inside = new Array(cs.length).fill(false);
    for (const s of spans) for (let i = Math.max(0, s.start); i < Math.min(cs.length, s.end); i += 1) inside[i] = true;
    node.replaceChildren();
    let from = 0;
    for (let i = 1; i <= cs.length; i += 1) {
      if (i === cs.length || inside[i] !== inside[from]) {
        const part = cs.slice(from, i).join("");
        node.append(inside[from] ? el("mark", { text: part }) : part);
        from = i;
      }
    }
    return node;
  }

  // The spans the current selection makes: [field, span] pairs ("spans" or "report_spans").
  function selectionSpans() {
    const selection = window.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return [];
    const range = selection.getRangeAt(0);
    const made = [];
    for (const node of document.querySelectorAll("#texts .sel-source")) {
      const part = selectedPart(node, range);
      if (!part) continue;
      const shift = Number(node.dataset.start || 0);
      const span = { start: shift + part.start, end: shift + part.end, text: part.text };
      if (node.dataset.sentence !== undefined && cfg.mode === "report") span.sentence_idx = Number(node.dataset.sentence);
      made.push([node.dataset.field, span]);
    }
    return made;
  }

  function addSelection() {
    if (window.assay.readOnly.refused()) return;
    const made = selectionSpans();
    if (!made.length) { toast(t("judging.spans.select_first"), "error"); return; }
    const u = unit();
    let added = 0;
    for (const [field, span] of made) {
      if (u.data[field].some((s) => s.start === span.start && s.end === span.end)) continue;
      u.data[field].push(span);
      u.data[field].sort((a, b) => a.start - b.start || a.end - b.end);
      added += 1;
    }
    window.getSelection().removeAllRanges();
    if (!added) { toast(t("judging.spans.exists")); return; }
    changed(u);
    renderUnit();
    toast(t("judging.spans.added"));
  }

  function removeSpan(field, index) {
    if (window.assay.readOnly.refused()) return;
    const u = unit();
    u.data[field].splice(index, 1);
    changed(u);
    renderUnit();
  }

  function removeLastSpan() {
    if (window.assay.readOnly.refused()) return;
    const u = unit();
    const field = ["report_spans", "spans"].find((f) => u.data[f].length);
    if (field) removeSpan(field, u.data[field].length - 1);
  }

  // ------------------------------------------------------------ drawing

  const docName = (id) => cfg.titles[id] || id;

  function unitLabel(u) {
    if (cfg.mode === "document") return docName(u.doc_id);
    if (cfg.mode === "report") return u.run_id + " · " + cfg.reports[u.run_id].team_id;
    const cited = u.doc_id ? docName(u.doc_id) : t("judging.unit.no_citation");
    return u.run_id + " · " + t("judging.unit.sentence", { n: u.sentence_idx + 1 }) + " · " + cited;
  }

  function renderProgress() {
    const done = state.units.filter((u) => judged(u.data)).length;
    $("judged-count").textContent = t("judging.progress", { judged: done, total: state.units.length });
  }

  function renderUnitList() {
    const list = $("units");
    list.replaceChildren();
    state.units.forEach((u, index) => {
      const isJudged = judged(u.data);
      const button = el("button", {
        type: "button", class: "unit-button link", "aria-current": index === state.at ? "true" : "false",
        onclick: () => go(index),
      },
      el("span", { class: "check" + (isJudged ? " yes" : ""), text: isJudged ? "✓" : "○", "aria-hidden": "true" }),
      el("span", { class: "unit-label", text: unitLabel(u) }),
      el("span", { class: "visually-hidden", text: " · " + t(isJudged ? "judging.unit.judged" : "judging.unit.unjudged") }));
      list.append(el("li", { class: index === state.at ? "current" : "" }, button));
    });
    renderProgress();
  }

  function sentenceNode(text, field, start, index, spans) {
    const node = el("span", { class: "sentence sel-source", "data-field": field, "data-start": String(start) });
    if (index !== null) node.dataset.sentence = String(index);
    return markedText(node, text, spans);
  }

  // A sentence's citations as buttons that open the cited text: beside the report (reports
  // mode), or the unit of that sentence and document (citations mode), as the offline page does.
  function citeChips(citations) {
    if (!citations.length) return null;
    return el("span", { class: "cites", "aria-label": t("judging.cites") },
      ...citations.map((id) => el("button", {
        type: "button", class: "cite", text: docName(id), title: id,
        "aria-label": t("judging.cite_open", { title: docName(id) }),
        "aria-pressed": state.openDoc === id ? "true" : "false",
        onclick: () => openCited(id),
      })));
  }

  function openCited(docId) {
    const u = unit();
    if (cfg.mode === "citation") {
      const index = state.units.findIndex((other) => other.run_id === u.run_id
        && other.sentence_idx === u.sentence_idx && other.doc_id === docId);
      if (index >= 0) go(index);
      return;
    }
    state.openDoc = state.openDoc === docId ? null : docId;
    renderUnit();
  }

  // The cited document beside the report: to read, never to mark (report spans are on the report).
  function citedBox(docId) {
    const doc = cfg.documents[docId];
    const close = el("button", {
      type: "button", class: "secondary small", text: t("judging.cite_close"),
      onclick: () => { state.openDoc = null; renderUnit(); },
    });
    const head = el("h3", { text: t("judging.document") + " · " + docName(docId) });
    if (!doc) return el("section", { class: "text-box cited-doc" }, head, el("p", { class: "muted", text: t("judging.cite_missing") }), close);
    const link = doc.url ? el("a", { href: doc.url, rel: "noopener noreferrer", target: "_blank", text: doc.url }) : null;
    return el("section", { class: "text-box cited-doc", "aria-label": t("judging.cite_text") }, head,
      el("p", { class: "muted doc-id" }, el("code", { text: docId }), link ? " · " : null, link),
      el("pre", { class: "doc-text", tabindex: "0", text: doc.text }), close);
  }

  function reportPane(u) {
    const report = cfg.reports[u.run_id];
    const box = el("div", { class: "report-text" });
    report.sentences.forEach((s, index) => {
      const start = report.starts[index];
      const end = start + chars(s.text).length;
      const mine = u.data.spans.filter((sp) => sp.start < end && sp.end > start)
        .map((sp) => ({ start: sp.start - start, end: sp.end - start }));
      box.append(el("span", { class: "sentence-wrap" },
        el("span", { class: "sentence-no", text: String(index + 1), "aria-hidden": "true" }),
        sentenceNode(s.text, "spans", start, index, mine), citeChips(s.citations)), " ");
    });
    return el("section", { class: "text-box", "aria-label": t("judging.report") },
      el("h3", { text: t("judging.report") + " · " + u.run_id + " · " + t("judging.unit.team", { team: report.team_id }) }), box);
  }

  function documentBox(docId, heading) {
    const doc = cfg.documents[docId];
    const head = el("h3", { text: heading });
    if (!doc) return el("section", { class: "text-box" }, head, el("p", { class: "muted", text: t("judging.document_missing") }));
    const pre = el("pre", { class: "doc-text sel-source", "data-field": "spans", "data-start": "0", tabindex: "0" });
    markedText(pre, doc.text, unit().data.spans);
    const link = doc.url ? el("a", { href: doc.url, rel: "noopener noreferrer", target: "_blank", text: doc.url }) : null;
    return el("section", { class: "text-box" }, head,
      el("p", { class: "muted doc-id" }, el("code", { text: docId }), link ? " · " : null, link), pre);
  }

  function citationPane(u) {
    const report = cfg.reports[u.run_id];
    const sentence = report.sentences[u.sentence_idx];
    const around = (index) => (report.sentences[index] ? el("p", { class: "context muted", text: report.sentences[index].text }) : null);
    const left = el("section", { class: "text-box" },
      el("h3", { text: t("judging.sentence") + " " + (u.sentence_idx + 1) + " · " + u.run_id }),
      around(u.sentence_idx - 1),
      el("p", { class: "judged-sentence" }, sentenceNode(sentence.text, "report_spans", 0, null, u.data.report_spans),
        citeChips(sentence.citations)),
      around(u.sentence_idx + 1));
    const right = u.doc_id
      ? documentBox(u.doc_id, t("judging.document") + " · " + docName(u.doc_id))
      : el("section", { class: "text-box" }, el("h3", { text: t("judging.document") }),
        el("p", { class: "muted", text: t("judging.no_citation") }));
    return el("div", { class: "side-by-side" }, left, right);
  }

  function spanList(field, heading) {
    const spans = unit().data[field];
    const list = el("ol", { class: "spans" });
    spans.forEach((s, index) => {
      const where = s.sentence_idx === undefined || s.sentence_idx === null
        ? s.start + "–" + s.end
        : t("judging.spans.in_sentence", { n: s.sentence_idx + 1 }) + " · " + s.start + "–" + s.end;
      list.append(el("li", {},
        el("q", { text: s.text }), " ", el("span", { class: "muted", text: where }), " ",
        el("button", {
          type: "button", class: "secondary small remove-span", text: "×", title: t("judging.spans.remove"),
          "aria-label": t("judging.spans.remove_n", { n: index + 1 }), onclick: () => removeSpan(field, index),
        })));
    });
    return el("section", { class: "span-list", "data-field": field }, el("h3", { text: heading }),
      spans.length ? list : el("p", { class: "muted", text: t("judging.spans.none") }));
  }

  function renderRating() {
    const box = $("rating-options");
    box.replaceChildren();
    cfg.ratings.forEach((r, index) => {
      const input = el("input", {
        type: "radio", name: "rating", value: r.value, id: "rating-" + index,
        onchange: () => { unit().data.rating = r.value; changed(unit()); renderUnitList(); },
      });
      input.checked = unit().data.rating === r.value;
      box.append(el("label", { class: "rating-option", for: "rating-" + index },
        input, el("kbd", { text: String(index) }), el("span", { text: r.label })));
    });
  }

  function renderUnit() {
    const u = unit();
    $("unit-title").textContent = unitLabel(u);
    $("unit-meta").textContent = t("judging.unit.position", { n: state.at + 1, total: state.units.length })
      + " · " + t("judging.unit.judges", { count: u.judges });
    const texts = $("texts");
    texts.replaceChildren();
    const lists = $("span-lists");
    lists.replaceChildren();
    if (cfg.mode === "report") {
      const cited = state.openDoc && cfg.reports[u.run_id].sentences.some((c) => c.citations.includes(state.openDoc));
      texts.append(cited ? el("div", { class: "side-by-side" }, reportPane(u), citedBox(state.openDoc)) : reportPane(u));
      lists.append(spanList("spans", t("judging.spans.report")));
    } else if (cfg.mode === "document") {
      texts.append(documentBox(u.doc_id, t("judging.document.plain")));
      lists.append(spanList("spans", t("judging.spans.document")));
    } else {
      texts.append(citationPane(u));
      lists.append(spanList("report_spans", t("judging.spans.sentence")));
      if (u.doc_id && cfg.documents[u.doc_id]) lists.append(spanList("spans", t("judging.spans.document")));
    }
    renderRating();
    $("comment").value = u.data.comment;
  }

  function render() {
    renderUnitList();
    renderUnit();
  }

  // ------------------------------------------------------------ moving between units

  function go(index) {
    if (!state.units.length) return;
    state.at = Math.max(0, Math.min(state.units.length - 1, index));
    const params = new URLSearchParams(window.location.search);
    params.set("at", String(state.at));
    history.replaceState(null, "", "?" + params.toString());
    render();
    const current = document.querySelector("#units li.current");
    if (current) current.scrollIntoView({ block: "nearest" });
  }

  function nextUnjudged() {
    const count = state.units.length;
    for (let step = 1; step <= count; step += 1) {
      const index = (state.at + step) % count;
      if (!judged(state.units[index].data)) { go(index); return; }
    }
    toast(t("judging.all_done"));
  }

  $("comment").addEventListener("input", (e) => { unit().data.comment = e.target.value; changed(unit()); renderUnitList(); });
  $("add-span").addEventListener("mousedown", (e) => e.preventDefault());  // keep the selection
  $("add-span").addEventListener("click", addSelection);
  $("prev-unit").addEventListener("click", () => go(state.at - 1));
  $("next-unit").addEventListener("click", () => go(state.at + 1));
  $("next-unjudged").addEventListener("click", nextUnjudged);

  // ------------------------------------------------------------ help and keys

  const { toggle: toggleHelp } = helpOverlay();

  // Letters are text in the comment field (and other text fields); radio buttons take keys.
  const typing = (target) => target instanceof HTMLElement && (target.isContentEditable
    || target.tagName === "TEXTAREA" || target.tagName === "SELECT"
    || (target.tagName === "INPUT" && !["radio", "checkbox"].includes(target.type)));

  function setRating(index) {
    if (window.assay.readOnly.refused()) return;
    const r = cfg.ratings[index];
    if (!r) return;
    unit().data.rating = r.value;
    changed(unit());
    renderRating();
    renderUnitList();
  }

  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && (e.key === "Enter" || e.key.toLowerCase() === "s")) {
      e.preventDefault();
      const next = e.key === "Enter";
      saveAll().then((ok) => { if (ok && next) nextUnjudged(); });
      return;
    }
    if (e.key === "Escape") {
      if (!$("help-overlay").hidden) { toggleHelp(false); e.preventDefault(); }  // app.js leaves the field
      return;
    }
    if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey || state.conflict) return;
    if (/^[0-9]$/.test(e.key)) { setRating(Number(e.key)); e.preventDefault(); return; }
    switch (e.key) {
      case "?": toggleHelp(); break;
      case "j": go(state.at + 1); break;
      case "k": go(state.at - 1); break;
      case "n": nextUnjudged(); break;
      case "r": addSelection(); break;
      case "u": removeLastSpan(); break;
      case "c": $("comment").focus(); break;
      default: return;
    }
    e.preventDefault();
  });

  // ------------------------------------------------------------ start

  const asked = Number(new URLSearchParams(window.location.search).get("at"));
  state.at = Number.isInteger(asked) && asked >= 0 && asked < state.units.length ? asked : 0;
  if (state.units.length) render();
  else $("texts").replaceChildren(el("p", { class: "muted", text: t("judging.no_units") }));
  setSaveState("idle");
  offerRestore();
})();
