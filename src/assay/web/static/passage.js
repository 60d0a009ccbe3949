// Passages as the editor shows them: a document's text (or a part of it) drawn as runs of
// plain text nodes, with the query's words, marked spans and one focus span highlighted, and
// Markdown or HTML markup of .md and .html documents drawn as formatting.
//
// The text of the drawn element is exactly the source text, character for character: markup
// is hidden by CSS (class md-hide), never removed and never parsed by the browser (every run is
// a text node), so a selection still maps to document offsets (shell.js selectedPart) and
// nothing in a document can run script, carry an event handler or load anything.
(function () {
  "use strict";

  const { el } = window.assay;

  // Words that say nothing about what a passage is about, in English and German: never
  // highlighted. Both lists always apply (a German project has English passages too).
  const STOP_WORDS = new Set((
    "a about after all also am an and any are as at be been but by can could did do does for "
    + "from had has have he her his how i if in into is it its me my no not of on or our she so "
    + "than that the their them then there these they this to up us was we were what when where "
    + "which who whom why will with would you your "
    + "aber als am an auch auf aus bei bin bis bist da damit dann das dass dem den der des die "
    + "dies diese dieser doch du durch ein eine einem einen einer eines er es für hat hatte "
    + "ich ihr im in ist ja kann man mit nach nicht noch nun nur ob oder sein seine sich sie "
    + "sind so über um und uns von vor war waren warum was weil welche welcher wenn wer werden "
    + "wie wir wird wo zu zum zur"
  ).split(" "));

  // The words of a query worth highlighting: lower-cased, stop words and single letters out.
  function queryTerms(query) {
    const words = (query || "").toLowerCase().match(/[\p{L}\p{N}]+/gu) || [];
    return [...new Set(words.filter((w) => w.length > 1 && !STOP_WORDS.has(w)))];
  }

  // Where the terms occur in the text, as [start, end] in code points: whole words that start
  // with a term's stem (its first letters, so "ferries" matches "ferry" and "Fähre" "Fähren").
  function termMatches(chars, terms) {
    if (!terms.length) return [];
    const stems = terms.map((t) => Array.from(t).slice(0, Math.max(4, Array.from(t).length - 2)).join(""));
    const found = [];
    const word = /[\p{L}\p{N}]/u;
    let i = 0;
    while (i < chars.length) {
      if (!word.test(chars[i])) { i += 1; continue; }
      let j = i;
      while (j < chars.length && word.test(chars[j])) j += 1;
      const w = chars.slice(i, j).join("").toLowerCase();
      if (terms.includes(w) || stems.some((s) => w.startsWith(s))) found.push([i, j]);
      i = j;
    }
    return found;
  }

  // Markup of one line of Markdown (or inline HTML): [start, end, class] ranges in code
  // points of the line; md-hide ranges are the markup itself.
  function lineMarkup(line) {
    const out = [];
    const heading = /^(#{1,6})(\s+)/u.exec(line);
    if (heading) {
      out.push([0, heading[0].length, "md-hide"], [heading[0].length, line.length, "md-h"]);
    }
    const rules = [
      [/\*\*(?=\S)(.+?)\*\*/gu, 2, 2, "md-b"],
      [/(?<!\w)__(?=\S)(.+?)__(?!\w)/gu, 2, 2, "md-b"],
      [/(?<![\*\w])\*(?=\S)([^*]+?)\*(?!\*)/gu, 1, 1, "md-i"],
      [/`([^`]+)`/gu, 1, 1, "md-code"],
    ];
    for (const [pattern, open, close, cls] of rules) {
      for (const m of line.matchAll(pattern)) {
        const at = Array.from(line.slice(0, m.index)).length;
        const len = Array.from(m[0]).length;
        out.push([at, at + open, "md-hide"], [at + open, at + len - close, cls], [at + len - close, at + len, "md-hide"]);
      }
    }
    // [text](url) and ![alt](url): the text shows, the address and brackets do not
    for (const m of line.matchAll(/!?\[([^\]]*)\]\(([^)\s]*)(?:\s+"[^"]*")?\)/gu)) {
      const at = Array.from(line.slice(0, m.index)).length;
      const open = m[0].startsWith("!") ? 2 : 1;
      const text = Array.from(m[1]).length;
      const len = Array.from(m[0]).length;
      out.push([at, at + open, "md-hide"], [at + open, at + open + text, "md-link"], [at + open + text, at + len, "md-hide"]);
    }
    // HTML tags are markup: hidden (their content shows, as a browser would show it)
    for (const m of line.matchAll(/<\/?[A-Za-z][^<>]*>|<!--.*?-->/gu)) {
      const at = Array.from(line.slice(0, m.index)).length;
      out.push([at, at + Array.from(m[0]).length, "md-hide"]);
    }
    return out;
  }

  // Is a document shown with its markup drawn (by its name)?
  const marked = (name) => /\.(md|markdown|html?|xhtml)$/i.test(name || "");

  // Fill target with text (code points from offset `offset` of the document) and its
  // highlights. options: terms (query words), spans [{start, end, cls}] in document offsets,
  // markup (draw Markdown/HTML), context [start, end]: the part outside is drawn muted.
  function draw(target, text, options) {
    const o = Object.assign({ terms: [], spans: [], markup: false, offset: 0, context: null }, options);
    const chars = Array.from(text);
    const cls = new Array(chars.length).fill("");
    const add = (start, end, name) => {
      for (let i = Math.max(0, start); i < Math.min(chars.length, end); i += 1) cls[i] += " " + name;
    };
    if (o.markup) {
      let lineStart = 0;
      for (const line of text.split("\n")) {
        const length = Array.from(line).length;
        for (const [a, b, name] of lineMarkup(line)) add(lineStart + a, lineStart + b, name);
        lineStart += length + 1;
      }
      // what a script or style element holds never shows
      const joined = chars.join("");
      for (const m of joined.matchAll(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/giu)) {
        const at = Array.from(joined.slice(0, m.index)).length;
        add(at, at + Array.from(m[0]).length, "md-hide");
      }
    }
    for (const [a, b] of termMatches(chars, o.terms)) add(a, b, "q");
    for (const span of o.spans) add(span.start - o.offset, span.end - o.offset, span.cls);
    if (o.context) {
      add(0, o.context[0] - o.offset, "ctx");
      add(o.context[1] - o.offset, chars.length, "ctx");
    }
    target.replaceChildren();
    let i = 0;
    while (i < chars.length) {
      let j = i + 1;
      while (j < chars.length && cls[j] === cls[i]) j += 1;
      const run = chars.slice(i, j).join("");
      const name = cls[i].trim();
      target.append(name ? el("span", { class: name, text: run }) : document.createTextNode(run));
      i = j;
    }
    return target;
  }

  // A box that shows a few lines of its content and a button to show it all (no scroll bar
  // inside). label: [more, less] texts; focus: a selector of what the folded lines should
  // show (the first marked span or query word), else they show the beginning.
  function folded(content, label, focus) {
    const box = el("div", { class: "fold" }, content);
    const toggle = el("button", {
      type: "button", class: "link fold-toggle", text: label[0], "aria-expanded": "false",
      onclick: () => {
        const open = box.classList.toggle("open");
        box.scrollTop = 0;
        box.classList.remove("scrolled");
        toggle.textContent = label[open ? 1 : 0];
        toggle.setAttribute("aria-expanded", String(open));
        if (!open) box.refit();
      },
    });
    // shown only when the content is taller than the fold
    toggle.hidden = true;
    // measured once drawn, and again when the content changes (fold.refit())
    box.refit = () => requestAnimationFrame(() => {
      if (box.classList.contains("open")) return;
      box.scrollTop = 0;
      box.classList.remove("scrolled");
      toggle.hidden = content.scrollHeight <= box.clientHeight + 2;
      // the first of the selectors (in their order) that finds something
      const target = toggle.hidden ? null
        : (focus || "").split(",").map((f) => f.trim() && content.querySelector(f)).find(Boolean);
      if (!target) return;
      const line = parseFloat(getComputedStyle(content).lineHeight) || 20;
      const top = target.getBoundingClientRect().top - content.getBoundingClientRect().top;
      if (top > box.clientHeight - 2 * line) {
        box.scrollTop = Math.max(0, top - line);
        box.classList.add("scrolled");
      }
    });
    box.refit();
    return [box, toggle];
  }

  window.assay.passage = { STOP_WORDS, queryTerms, termMatches, draw, folded, marked };
})();
