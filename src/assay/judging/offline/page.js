// The offline judging page (assay judge html). It judges the units of one mode, keeps the work
// in localStorage (one entry per dataset), and downloads it as JSONL in autojudge-annotate's
// record shapes. Every text from the data is shown with textContent: nothing is parsed as HTML.
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("judging-data").textContent);
  const mode = data.mode; // report | document | citation
  const ratings = data.ratings;
  const notRated = ratings[0];
  const documents = data.documents;
  const STORE = "assay-judging:" + data.dataset;
  const USER = "assay-judging:username";
  const MODE_NAMES = { report: "reports", document: "documents", citation: "citations" };
  const $ = (id) => document.getElementById(id);

  // The page's words in English and German; {name} is filled in by say().
  const MESSAGES = {
    en: {
      "mode.report": "reports", "mode.document": "documents", "mode.citation": "citations",
      pageTitle: "{dataset} \u00b7 judging {mode}",
      heading: "{dataset} \u00b7 {mode} (project {project})",
      yourName: "Your name", download: "Download JSONL", background: "Background",
      previous: "\u2190 Previous", next: "Next \u2192", nextUnjudged: "Next unjudged",
      previousTitle: "Previous unit (k)", nextTitle: "Next unit (j)", nextUnjudgedTitle: "Next unjudged unit (n)",
      rating: "Rating", comment: "Comment", sidebar: "Topics and units", judgment: "Judgment",
      sentences: "The report's sentences and their citations",
      keys: "Keys:", "keys.jk": "next/previous unit", "keys.n": "next unjudged", "keys.digits": "rating",
      "keys.r": "mark the selected text (releasing the mouse marks it too)", "keys.u": "remove the last span",
      "keys.c": "comment", "keys.esc": "leave a field",
      judgedOf: "{judged} of {total} judged", judged: "judged", position: "Unit {n} of {total}",
      topic: "{title} ({id})", run: "Run {run} (team {team})", document: "Document {id}",
      documentTitled: "Document {id}: {title}", citing: "{run}, sentence {n}, citing {doc}",
      uncited: "{run}, sentence {n}, no citation", noCitation: "no citation",
      report: "Report", reportHint: "Select text to mark a span; a selection across sentences is split per sentence.",
      citedDocument: "Cited document {n}: {title}", citedHint: "Click a citation number in the report to read another.",
      citedNone: "Cited documents", citedNoneHint: "The project holds none of the documents this report cites.",
      citedLabel: "Cited document {title}", citedText: "Cited document text", missing: "Document {id} is not in the project.",
      documentHint: "Select text to mark a span.", sentence: "Sentence {n}",
      sentenceHint: "Spans here are the sentence's report spans.", documentSpansHint: "Spans here are the document's spans.",
      noCitationPane: "No citation", noCitationHint: "This sentence cites no document: judge the sentence alone.",
      missingHint: "This document is not in the project: judge the sentence alone.",
      reportText: "Report text", documentText: "Document text", sentenceText: "Sentence text",
      spans: "Spans", sentenceSpans: "Sentence spans", noSpans: "No spans yet: select text to mark it.",
      spanInSentence: "S{n}: ", quoted: "\u201c{text}\u201d", removeSpan: "Remove span \u201c{text}\u201d",
      marked: "That text is marked already.", onlySpaces: "Only spaces were selected.",
      nameFirst: "Enter your name first: the project merges judgments by it.", nothing: "Nothing is judged yet.",
      downloaded: "{n} judgments downloaded.", allJudged: "Every unit is judged.",
      storageOff: "This browser does not keep work for this page ({error}): download the JSONL before you close it.",
      storageFull: "Your last change could not be kept in this browser ({error}): download the JSONL now.",
    },
    de: {
      "mode.report": "Berichte", "mode.document": "Dokumente", "mode.citation": "Zitate",
      pageTitle: "{dataset} \u00b7 {mode} bewerten",
      heading: "{dataset} \u00b7 {mode} (Projekt {project})",
      yourName: "Ihr Name", download: "JSONL herunterladen", background: "Hintergrund",
      previous: "\u2190 Zur\u00fcck", next: "Weiter \u2192", nextUnjudged: "N\u00e4chste unbewertete",
      previousTitle: "Vorige Einheit (k)", nextTitle: "N\u00e4chste Einheit (j)", nextUnjudgedTitle: "N\u00e4chste unbewertete Einheit (n)",
      rating: "Note", comment: "Kommentar", sidebar: "Themen und Einheiten", judgment: "Bewertung",
      sentences: "Die S\u00e4tze des Berichts und ihre Zitate",
      keys: "Tasten:", "keys.jk": "n\u00e4chste/vorige Einheit", "keys.n": "n\u00e4chste unbewertete", "keys.digits": "Note",
      "keys.r": "markierten Text als Stelle nehmen (auch beim Loslassen der Maus)", "keys.u": "letzte Stelle entfernen",
      "keys.c": "Kommentar", "keys.esc": "Feld verlassen",
      judgedOf: "{judged} von {total} bewertet", judged: "bewertet", position: "Einheit {n} von {total}",
      topic: "{title} ({id})", run: "Lauf {run} (Team {team})", document: "Dokument {id}",
      documentTitled: "Dokument {id}: {title}", citing: "{run}, Satz {n}, zitiert {doc}",
      uncited: "{run}, Satz {n}, kein Zitat", noCitation: "kein Zitat",
      report: "Bericht", reportHint: "Markieren Sie Text als Stelle; eine Auswahl \u00fcber mehrere S\u00e4tze wird zu einer Stelle je Satz.",
      citedDocument: "Zitiertes Dokument {n}: {title}", citedHint: "Klicken Sie auf eine Zitatnummer im Bericht, um ein anderes zu lesen.",
      citedNone: "Zitierte Dokumente", citedNoneHint: "Das Projekt enth\u00e4lt keines der Dokumente, die dieser Bericht zitiert.",
      citedLabel: "Zitiertes Dokument {title}", citedText: "Text des zitierten Dokuments", missing: "Das Projekt enth\u00e4lt Dokument {id} nicht.",
      documentHint: "Markieren Sie Text als Stelle.", sentence: "Satz {n}",
      sentenceHint: "Stellen hier sind die Stellen im Satz (report_spans).", documentSpansHint: "Stellen hier sind die Stellen im Dokument.",
      noCitationPane: "Kein Zitat", noCitationHint: "Dieser Satz zitiert kein Dokument: Bewerten Sie nur den Satz.",
      missingHint: "Das Projekt enth\u00e4lt dieses Dokument nicht: Bewerten Sie nur den Satz.",
      reportText: "Berichtstext", documentText: "Dokumenttext", sentenceText: "Satztext",
      spans: "Stellen", sentenceSpans: "Stellen im Satz", noSpans: "Noch keine Stellen: Markieren Sie Text.",
      spanInSentence: "S{n}: ", quoted: "\u201e{text}\u201c", removeSpan: "Stelle \u201e{text}\u201c entfernen",
      marked: "Dieser Text ist schon markiert.", onlySpaces: "Es waren nur Leerzeichen markiert.",
      nameFirst: "Geben Sie zuerst Ihren Namen ein: Das Projekt f\u00fchrt Bewertungen danach zusammen.",
      nothing: "Noch nichts bewertet.", downloaded: "{n} Bewertungen heruntergeladen.", allJudged: "Alle Einheiten sind bewertet.",
      storageOff: "Dieser Browser beh\u00e4lt die Arbeit dieser Seite nicht ({error}): Laden Sie die JSONL vor dem Schlie\u00dfen herunter.",
      storageFull: "Ihre letzte \u00c4nderung konnte in diesem Browser nicht behalten werden ({error}): Laden Sie die JSONL jetzt herunter.",
    },
  };
  const words = MESSAGES[data.language] || MESSAGES.en;

  function say(key, values) {
    return words[key].replace(/\{(\w+)\}/g, (_, name) => String(values[name]));
  }

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  // ------------------------------------------------------------------ text and offsets

  // Python's str.strip() set: the server checks that spans are trimmed with it.
  const SPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;
  const SURROGATE = /[\ud800-\udfff]/;

  function trim(text, start, end) {
    while (start < end && SPACE.test(text[start])) start++;
    while (end > start && SPACE.test(text[end - 1])) end--;
    return [start, end];
  }

  // Records count offsets in code points (as Python does); the DOM counts UTF-16 units.
  function toPoints(text, units) {
    if (!SURROGATE.test(text)) return units;
    return Array.from(text.slice(0, units)).length;
  }

  function toUnits(text, points) {
    if (!SURROGATE.test(text)) return points;
    let i = 0;
    for (let n = 0; n < points && i < text.length; n++) {
      const c = text.charCodeAt(i);
      const next = text.charCodeAt(i + 1);
      i += c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
    }
    return i;
  }

  // Characters of the judged text in root before the boundary (node, offset); text inside
  // [data-skip] elements (citation buttons) is not part of the judged text.
  function textOffset(root, node, offset) {
    const boundary = document.createRange();
    boundary.setStart(node, offset);
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: (t) =>
        t.parentElement.closest("[data-skip]") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
    });
    let count = 0;
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      if (t === node) return count + offset;
      if (boundary.comparePoint(t, 0) >= 0) return count;
      count += t.data.length;
    }
    return count;
  }

  // The selection inside root as UTF-16 offsets [start, end] of the judged text, or null.
  function selectedRange(root, length) {
    const selection = window.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return null;
    const range = selection.getRangeAt(0);
    const whole = document.createRange();
    whole.selectNodeContents(root);
    const startSide = whole.comparePoint(range.startContainer, range.startOffset);
    const endSide = whole.comparePoint(range.endContainer, range.endOffset);
    if (startSide > 0 || endSide < 0) return null;
    const start = startSide < 0 ? 0 : textOffset(root, range.startContainer, range.startOffset);
    const end = endSide > 0 ? length : textOffset(root, range.endContainer, range.endOffset);
    return start < end ? [start, end] : null;
  }

  function fillText(node, text, marked) {
    // marked: [start, end] UTF-16 ranges of text to show as marks
    const cuts = new Set([0, text.length]);
    for (const [s, e] of marked) {
      cuts.add(Math.max(0, s));
      cuts.add(Math.min(text.length, e));
    }
    const points = Array.from(cuts).sort((a, b) => a - b);
    for (let i = 0; i + 1 < points.length; i++) {
      const s = points[i];
      const e = points[i + 1];
      const piece = text.slice(s, e);
      if (marked.some(([a, b]) => a <= s && e <= b)) node.appendChild(el("mark", piece));
      else node.appendChild(document.createTextNode(piece));
    }
  }

  // ------------------------------------------------------------------ units

  function reportText(report) {
    return report.sentences.map((s) => s.text).join(" ");
  }

  function sentenceStarts(report) {
    const starts = [];
    let at = 0;
    for (const s of report.sentences) {
      starts.push(at);
      at += s.text.length + 1;
    }
    return starts;
  }

  function docTitle(id) {
    const doc = documents[id];
    return doc && doc.title ? doc.title : id;
  }

  function shownText(doc) {
    return doc.title ? doc.title + "\n\n" + doc.text : doc.text;
  }

  const units = [];
  const groups = []; // the sidebar: per topic, entries (a report or a document) of units
  for (const topic of data.topics) {
    const group = { topic: topic, entries: [] };
    const add = (entry, unit) => {
      unit.topic = topic;
      unit.entry = entry;
      unit.index = units.length;
      units.push(unit);
      entry.units.push(unit);
    };
    if (mode === "document") {
      for (const id of topic.doc_ids) {
        const entry = { label: docTitle(id), units: [] };
        add(entry, { key: JSON.stringify(["document", topic.request_id, id]), doc: id });
        group.entries.push(entry);
      }
    } else {
      for (const report of data.reports.filter((r) => r.topic_id === topic.request_id)) {
        const entry = { label: report.run_id, note: report.team_id, units: [] };
        if (mode === "report") {
          add(entry, { key: JSON.stringify(["report", topic.request_id, report.run_id]), report });
        } else {
          report.sentences.forEach((sentence, i) => {
            for (const doc of sentence.citations || [null]) {
              const key = JSON.stringify(["citation", topic.request_id, report.run_id, i, doc]);
              add(entry, { key, report, sentence: i, doc });
            }
          });
        }
        group.entries.push(entry);
      }
    }
    groups.push(group);
  }

  // ------------------------------------------------------------------ stored work

  function warnStorage(message) {
    const box = $("storage-warning");
    box.textContent = message;
    box.hidden = false;
  }

  function loadWork() {
    try {
      const raw = window.localStorage.getItem(STORE);
      const stored = raw ? JSON.parse(raw) : null;
      if (stored && typeof stored === "object" && stored.judgments && typeof stored.judgments === "object") {
        return stored;
      }
    } catch (error) {
      warnStorage(say("storageOff", { error: error.name }));
    }
    return { judgments: {}, current: null };
  }

  function saveWork() {
    try {
      window.localStorage.setItem(STORE, JSON.stringify(work));
    } catch (error) {
      warnStorage(say("storageFull", { error: error.name }));
    }
  }

  function readUsername() {
    try {
      return window.localStorage.getItem(USER) || "";
    } catch (error) {
      return "";
    }
  }

  const work = loadWork();

  function judgmentOf(unit) {
    const stored = work.judgments[unit.key];
    return {
      rating: stored && typeof stored.rating === "string" ? stored.rating : notRated,
      comment: stored && typeof stored.comment === "string" ? stored.comment : "",
      spans: stored && Array.isArray(stored.spans) ? stored.spans : [],
      report_spans: stored && Array.isArray(stored.report_spans) ? stored.report_spans : [],
    };
  }

  // autojudge-annotate's rule: judged when it has a span, a rating other than "not rated", or a comment
  function isJudged(unit) {
    const j = judgmentOf(unit);
    return j.spans.length > 0 || j.report_spans.length > 0 || j.rating !== notRated || j.comment !== "";
  }

  function change(unit, fields) {
    const next = Object.assign(judgmentOf(unit), fields);
    work.judgments[unit.key] = next;
    if (!isJudged(unit)) delete work.judgments[unit.key];
    saveWork();
    refreshMarks();
  }

  // ------------------------------------------------------------------ sidebar and progress

  let current = units[0];
  const entryViews = [];

  function buildSidebar() {
    const nav = $("sidebar");
    for (const group of groups) {
      const box = el("details");
      const summary = el("summary", group.topic.title);
      const count = el("span", "", "count");
      summary.appendChild(count);
      box.appendChild(summary);
      const list = el("ul");
      for (const entry of group.entries) {
        const item = el("li");
        const button = el("button");
        button.type = "button";
        const check = el("span", "", "check");
        check.setAttribute("aria-hidden", "true");
        button.appendChild(check);
        const label = el("span", entry.label, "entry-label");
        button.appendChild(label);
        const note = el("span", entry.note || "", "muted");
        button.appendChild(note);
        button.addEventListener("click", () => {
          show(entry.units.find((u) => !isJudged(u)) || entry.units[0]);
        });
        item.appendChild(button);
        list.appendChild(item);
        entryViews.push({ entry, button, check, note });
      }
      box.appendChild(list);
      nav.insertBefore(box, $("keys"));
      group.view = { box, count };
    }
  }

  function refreshMarks() {
    let judged = 0;
    for (const group of groups) {
      const groupUnits = group.entries.flatMap((e) => e.units);
      const done = groupUnits.filter(isJudged).length;
      judged += done;
      group.view.count.textContent = say("judgedOf", { judged: done, total: groupUnits.length });
    }
    for (const view of entryViews) {
      const done = view.entry.units.filter(isJudged).length;
      const all = done === view.entry.units.length;
      view.check.textContent = all ? "\u2713" : "\u25cb";
      view.check.className = all ? "check" : "check open";
      const state = all ? words.judged : say("judgedOf", { judged: done, total: view.entry.units.length });
      view.button.setAttribute("aria-label", view.entry.label + (view.entry.note ? " (" + view.entry.note + ")" : "") + ", " + state);
      if (mode === "citation") view.note.textContent = done + "/" + view.entry.units.length;
    }
    $("overall").textContent = say("judgedOf", { judged, total: units.length });
    if (mode === "citation") refreshCitationButtons();
  }

  // ------------------------------------------------------------------ the unit on screen

  let panes = []; // the judged texts on screen: {root, text, field, report?}
  let openDoc = null; // reports mode: the cited document shown beside the report

  function show(unit) {
    if (!unit) return;
    current = unit;
    openDoc = mode === "report" ? unit.report.doc_ids.find((id) => documents[id]) || null : null;
    work.current = unit.key;
    saveWork();
    for (const view of entryViews) {
      view.button.setAttribute("aria-current", view.entry === unit.entry ? "true" : "false");
    }
    for (const group of groups) {
      if (group.topic === unit.topic) group.view.box.open = true;
    }
    const topic = unit.topic;
    $("topic-title").textContent = say("topic", { title: topic.title, id: topic.request_id });
    $("topic-problem").textContent = topic.problem_statement || "";
    $("topic-problem").hidden = !topic.problem_statement;
    $("topic-background").textContent = topic.background || "";
    $("topic-background-box").hidden = !topic.background;
    $("unit-title").textContent = unitTitle(unit);
    $("unit-position").textContent = say("position", { n: unit.index + 1, total: units.length });
    $("previous").disabled = unit.index === 0;
    $("next").disabled = unit.index === units.length - 1;
    renderSentences();
    renderPanes();
    renderJudgment();
  }

  function unitTitle(unit) {
    if (mode === "document") {
      const title = docTitle(unit.doc);
      return title === unit.doc ? say("document", { id: unit.doc }) : say("documentTitled", { id: unit.doc, title });
    }
    const run = say("run", { run: unit.report.run_id, team: unit.report.team_id });
    if (mode === "report") return run;
    const values = { run, n: unit.sentence + 1, doc: unit.doc };
    return unit.doc === null ? say("uncited", values) : say("citing", values);
  }

  function renderSentences() {
    const box = $("sentences");
    box.hidden = mode !== "citation";
    if (mode !== "citation") return;
    box.replaceChildren();
    const list = el("ol");
    current.report.sentences.forEach((sentence, i) => {
      const item = el("li", null, i === current.sentence ? "current" : "");
      item.appendChild(el("span", sentence.text));
      const cites = el("span", null, "cites");
      for (const unit of current.entry.units.filter((u) => u.sentence === i)) {
        const button = el("button");
        button.type = "button";
        button.dataset.key = unit.key;
        button.addEventListener("click", () => show(unit));
        cites.appendChild(button);
      }
      item.appendChild(cites);
      list.appendChild(item);
    });
    box.appendChild(list);
    refreshCitationButtons();
  }

  function refreshCitationButtons() {
    for (const button of $("sentences").querySelectorAll("button[data-key]")) {
      const unit = current.entry.units.find((u) => u.key === button.dataset.key);
      const mark = isJudged(unit) ? "\u2713 " : "";
      button.textContent = mark + (unit.doc === null ? words.noCitation : unit.doc);
      button.setAttribute("aria-current", unit === current ? "true" : "false");
    }
  }

  function pane(title, note) {
    const box = el("section", null, "pane");
    box.appendChild(el("h3", title));
    if (note) box.appendChild(el("p", note, "muted hint"));
    $("panes").appendChild(box);
    return box;
  }

  function judgedPane(box, label, text, field, report) {
    const root = el("div", null, "judged-text");
    root.tabIndex = 0;
    root.setAttribute("aria-label", label);
    box.appendChild(root);
    const list = el("ul", null, "spans");
    list.setAttribute("aria-label", field === "report_spans" ? words.sentenceSpans : words.spans);
    box.appendChild(list);
    const view = { root, list, text, field, report };
    panes.push(view);
    fillPane(view);
    return view;
  }

  function fillPane(view) {
    const spans = judgmentOf(current)[view.field];
    const marked = spans.map((s) => [toUnits(view.text, s.start), toUnits(view.text, s.end)]);
    view.root.replaceChildren();
    if (view.report) {
      const starts = sentenceStarts(view.report);
      view.report.sentences.forEach((sentence, i) => {
        const start = starts[i];
        const node = el("span", null, "sentence");
        node.dataset.idx = String(i);
        const local = marked.map(([s, e]) => [s - start, e - start]).filter(([s, e]) => e > 0 && s < sentence.text.length);
        fillText(node, sentence.text, local);
        view.root.appendChild(node);
        for (const id of sentence.citations || []) {
          const cite = el("button", String(view.report.doc_ids.indexOf(id) + 1), "cite");
          cite.type = "button";
          cite.dataset.skip = "";
          cite.title = docTitle(id);
          cite.setAttribute("aria-label", say("citedLabel", { title: docTitle(id) }));
          cite.addEventListener("click", () => {
            if (!documents[id]) return toast(say("missing", { id }), true);
            openDoc = id;
            renderPanes();
          });
          view.root.appendChild(cite);
        }
        if (i + 1 < view.report.sentences.length) view.root.appendChild(document.createTextNode(" "));
      });
    } else {
      fillText(view.root, view.text, marked);
    }
    view.list.replaceChildren();
    if (spans.length === 0) view.list.appendChild(el("li", words.noSpans, "none"));
    spans.forEach((span, number) => {
      const item = el("li");
      const prefix = span.sentence_idx === undefined ? "" : say("spanInSentence", { n: span.sentence_idx + 1 });
      item.appendChild(el("span", prefix + say("quoted", { text: span.text })));
      const remove = el("button", "\u00d7");
      remove.type = "button";
      remove.setAttribute("aria-label", say("removeSpan", { text: span.text }));
      remove.addEventListener("click", () => removeSpan(view.field, number));
      item.appendChild(remove);
      view.list.appendChild(item);
    });
  }

  function renderPanes() {
    $("panes").replaceChildren();
    panes = [];
    if (mode === "report") {
      const report = current.report;
      const box = pane(words.report, words.reportHint);
      judgedPane(box, words.reportText, reportText(report), "spans", report);
      if (openDoc) {
        const number = report.doc_ids.indexOf(openDoc) + 1;
        const side = pane(say("citedDocument", { n: number, title: docTitle(openDoc) }), words.citedHint);
        const cited = el("div", shownText(documents[openDoc]), "judged-text");
        cited.setAttribute("aria-label", words.citedText);
        side.appendChild(cited);
      } else {
        pane(words.citedNone, words.citedNoneHint);
      }
    } else if (mode === "document") {
      const doc = documents[current.doc];
      const box = pane(docTitle(current.doc), words.documentHint);
      if (doc.url) {
        const line = el("p", null, "muted hint");
        if (/^https?:\/\//i.test(doc.url)) {
          const link = el("a", doc.url);
          link.href = doc.url;
          link.rel = "noopener noreferrer";
          link.target = "_blank";
          line.appendChild(link);
        } else {
          line.textContent = doc.url;
        }
        box.insertBefore(line, box.children[1]);
      }
      judgedPane(box, words.documentText, shownText(doc), "spans");
    } else {
      const sentence = current.report.sentences[current.sentence];
      const left = pane(say("sentence", { n: current.sentence + 1 }), words.sentenceHint);
      judgedPane(left, words.sentenceText, sentence.text, "report_spans");
      if (current.doc === null) {
        pane(words.noCitationPane, words.noCitationHint);
      } else if (!documents[current.doc]) {
        pane(say("document", { id: current.doc }), words.missingHint);
      } else {
        const right = pane(say("document", { id: docTitle(current.doc) }), words.documentSpansHint);
        judgedPane(right, words.documentText, shownText(documents[current.doc]), "spans");
      }
    }
  }

  function renderJudgment() {
    const judgment = judgmentOf(current);
    for (const input of $("rating").querySelectorAll("input")) input.checked = input.value === judgment.rating;
    $("comment").value = judgment.comment;
  }

  function buildRatings() {
    const box = $("rating");
    ratings.forEach((value, i) => {
      const label = el("label");
      const input = el("input");
      input.type = "radio";
      input.name = "rating";
      input.value = value;
      input.addEventListener("change", () => change(current, { rating: value }));
      label.appendChild(input);
      label.appendChild(el("span", value));
      if (i < 10) label.appendChild(el("kbd", String(i)));
      box.appendChild(label);
    });
  }

  // ------------------------------------------------------------------ spans

  function markSelection() {
    for (const view of panes) {
      const range = selectedRange(view.root, view.text.length);
      if (!range) continue;
      const found = [];
      const pieces = [];
      if (view.report) {
        const starts = sentenceStarts(view.report);
        view.report.sentences.forEach((sentence, i) => {
          const s = Math.max(range[0], starts[i]);
          const e = Math.min(range[1], starts[i] + sentence.text.length);
          if (s < e) pieces.push([s, e, i]);
        });
      } else {
        pieces.push([range[0], range[1], undefined]);
      }
      for (const [s0, e0, idx] of pieces) {
        const [s, e] = trim(view.text, s0, e0);
        if (s >= e) continue;
        const span = { start: toPoints(view.text, s), end: toPoints(view.text, e), text: view.text.slice(s, e) };
        if (idx !== undefined) span.sentence_idx = idx;
        found.push(span);
      }
      window.getSelection().removeAllRanges();
      const spans = judgmentOf(current)[view.field];
      const fresh = found.filter((n) => !spans.some((o) => o.start === n.start && o.end === n.end));
      if (fresh.length === 0) {
        toast(found.length ? words.marked : words.onlySpaces);
        return;
      }
      const next = spans.concat(fresh).sort((a, b) => a.start - b.start || a.end - b.end);
      change(current, { [view.field]: next });
      fillPane(view);
      return;
    }
  }

  function removeSpan(field, number) {
    const spans = judgmentOf(current)[field].filter((_, i) => i !== number);
    change(current, { [field]: spans });
    for (const view of panes) if (view.field === field) fillPane(view);
  }

  function removeLastSpan() {
    const judgment = judgmentOf(current);
    const field = judgment.spans.length ? "spans" : "report_spans";
    if (judgment[field].length) removeSpan(field, judgment[field].length - 1);
  }

  // ------------------------------------------------------------------ download

  function documentJson(id) {
    const doc = documents[id];
    return { id: doc.id, text: doc.text, title: doc.title, url: doc.url };
  }

  function reportJson(report) {
    const embedded = {};
    for (const id of report.doc_ids) if (documents[id]) embedded[id] = documentJson(id);
    return {
      team_id: report.team_id,
      run_id: report.run_id,
      topic_id: report.topic_id,
      sentences: report.sentences,
      documents: embedded,
    };
  }

  function record(unit, username) {
    const j = judgmentOf(unit);
    const topicId = unit.topic.request_id;
    const spans = j.spans.map((s) => Object.assign({}, s));
    if (mode === "report") {
      return {
        dataset: data.dataset, request_id: topicId, run_id: unit.report.run_id, team_id: unit.report.team_id,
        topic_id: topicId, username, rating: j.rating, comment: j.comment, spans, report: reportJson(unit.report),
      };
    }
    if (mode === "document") {
      return {
        dataset: data.dataset, request_id: topicId, docid: unit.doc, topic_id: topicId, username,
        rating: j.rating, comment: j.comment, spans, document: documentJson(unit.doc),
      };
    }
    const sentence = unit.report.sentences[unit.sentence];
    return {
      dataset: data.dataset, request_id: topicId, topic_id: topicId, username, rating: j.rating,
      comment: j.comment, spans, report_spans: j.report_spans.map((s) => Object.assign({}, s)),
      citation: {
        report: reportJson(unit.report),
        sentence_idx: unit.sentence,
        sentence: { text: sentence.text, citations: sentence.citations || [] },
        docid: unit.doc,
        document: unit.doc !== null && documents[unit.doc] ? documentJson(unit.doc) : null,
      },
    };
  }

  function download() {
    const username = $("username").value.trim();
    if (!username) {
      toast(words.nameFirst, true);
      $("username").focus();
      return;
    }
    const judged = units.filter(isJudged);
    if (judged.length === 0) {
      toast(words.nothing, true);
      return;
    }
    const lines = judged.map((u) => JSON.stringify(record(u, username)) + "\n");
    const blob = new Blob(lines, { type: "application/jsonl" });
    const link = el("a");
    link.href = URL.createObjectURL(blob);
    const safe = (text) => text.replace(/[^A-Za-z0-9._-]+/g, "_");
    link.download = safe(data.dataset) + "-" + MODE_NAMES[mode] + "-" + safe(username) + ".jsonl";
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
    toast(say("downloaded", { n: judged.length }));
  }

  // ------------------------------------------------------------------ toast and keys

  let toastTimer = null;
  function toast(message, isError) {
    const box = $("toast");
    box.textContent = message;
    box.className = isError ? "show error" : "show";
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => (box.className = ""), 3500);
  }

  function nextUnjudged() {
    const after = units.slice(current.index + 1).concat(units.slice(0, current.index + 1));
    const unit = after.find((u) => !isJudged(u));
    if (unit) show(unit);
    else toast(words.allJudged);
  }

  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (event.key === "Escape") {  // leaves any field: the keys after it are keys again
      if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement
        || target instanceof HTMLSelectElement) target.blur();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (target instanceof HTMLInputElement && target.type !== "radio") return;
    if (target instanceof HTMLTextAreaElement) return;
    const key = event.key;
    if (key === "j") show(units[current.index + 1]);
    else if (key === "k") show(units[current.index - 1]);
    else if (key === "n") nextUnjudged();
    else if (key === "r") markSelection();
    else if (key === "u") removeLastSpan();
    else if (key === "c") $("comment").focus();
    else if (/^[0-9]$/.test(key) && Number(key) < ratings.length) {
      change(current, { rating: ratings[Number(key)] });
      renderJudgment();
    } else return;
    event.preventDefault();
  });

  document.addEventListener("mouseup", (event) => {
    if (panes.some((view) => view.root.contains(event.target))) markSelection();
  });

  function buildKeys() {
    const box = $("keys");
    box.appendChild(document.createTextNode(words.keys + " "));
    const keys = [[["j", "k"], "keys.jk"], [["n"], "keys.n"], [["0", "9"], "keys.digits"], [["r"], "keys.r"],
      [["u"], "keys.u"], [["c"], "keys.c"], [["Esc"], "keys.esc"]];
    keys.forEach(([names, key], i) => {
      names.forEach((name, j) => {
        if (j > 0) box.appendChild(document.createTextNode(key === "keys.digits" ? "\u2013" : "/"));
        box.appendChild(el("kbd", name));
      });
      box.appendChild(document.createTextNode(" " + words[key] + (i + 1 < keys.length ? ", " : ".")));
    });
  }

  // ------------------------------------------------------------------ start

  const shown = { dataset: data.dataset, mode: words["mode." + mode], project: data.project };
  document.documentElement.lang = words === MESSAGES.de ? "de" : "en";
  document.title = say("pageTitle", shown);
  $("heading").textContent = say("heading", shown);
  for (const node of document.querySelectorAll("[data-text]")) node.textContent = words[node.dataset.text];
  for (const node of document.querySelectorAll("[data-title]")) node.title = words[node.dataset.title];
  for (const node of document.querySelectorAll("[data-label]")) node.setAttribute("aria-label", words[node.dataset.label]);
  buildKeys();
  $("username").value = readUsername();
  $("username").addEventListener("input", () => {
    try {
      window.localStorage.setItem(USER, $("username").value.trim());
    } catch (error) {
      // the storage warning is shown already
    }
  });
  $("comment").addEventListener("input", () => change(current, { comment: $("comment").value }));
  $("previous").addEventListener("click", () => show(units[current.index - 1]));
  $("next").addEventListener("click", () => show(units[current.index + 1]));
  $("next-unjudged").addEventListener("click", nextUnjudged);
  $("download").addEventListener("click", download);
  buildRatings();
  buildSidebar();
  refreshMarks();
  show(units.find((u) => u.key === work.current) || units.find((u) => !isJudged(u)) || units[0]);
})();
