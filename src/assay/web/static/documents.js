// Documents page and document view: upload (drop or picker, one request per file, per-file
// progress and outcome), rename, notes, replace, delete with a 3-second confirm.
// All user text is put into the page with textContent, never as HTML.
(function () {
  "use strict";

  const CONFIRM_MS = 3000;
  const { el } = window.assay;
  let fmt = window.assay.translator({});

  // One file as a multipart upload with progress (see window.assay.upload).
  function sendFile(method, url, file, onProgress) {
    const form = new FormData();
    form.append("file", file, file.name);
    if (file.lastModified) form.append("last_modified", new Date(file.lastModified).toISOString());
    return window.assay.upload(method, url, form, onProgress);
  }

  // ---- upload ---------------------------------------------------------------------------
  function setupUpload(section) {
    const list = document.getElementById("uploads");
    const zone = document.getElementById("dropzone");
    const picker = document.getElementById("file-picker");
    const queue = [];
    let running = false;

    function enqueue(files) {
      for (const file of files) {
        const row = el("li", { class: "upload-item pending" });
        row.append(el("span", { class: "file-name", text: file.name }));
        const bar = el("progress");
        bar.max = 100;
        bar.value = 0;
        bar.setAttribute("aria-label", file.name);
        row.append(bar, el("span", { class: "file-status", text: fmt("uploading", { percent: 0 }) }));
        list.append(row);
        queue.push({ file, row, bar });
      }
      if (!running) drain();
    }

    async function drain() {
      running = true;
      let count = 0;
      while (queue.length) {
        await uploadOne(queue.shift());
        count += 1;
      }
      running = false;
      await refreshList();
      window.assay.toast(fmt("done", { count }));
    }

    async function uploadOne({ file, row, bar }) {
      const status = row.querySelector(".file-status");
      const result = await sendFile("POST", section.dataset.api, file, (fraction) => {
        bar.value = Math.round(fraction * 100);
        status.textContent = fraction < 1 ? fmt("uploading", { percent: bar.value }) : fmt("processing");
      });
      bar.value = 100;
      row.classList.remove("pending");
      const data = result.data;
      if (result.status === 201) {
        const doc = data.document;
        // Only a clean upload is green; one kept with warnings (or without text) is amber.
        row.classList.add(doc.warnings.length || doc.without_text ? "warn" : "ok");
        if (doc.without_text) status.textContent = fmt("kept_without_text", { name: doc.name });
        else if (doc.warnings.length) status.textContent = fmt("added_warnings", { name: doc.name, warnings: doc.warnings.join("; ") });
        else status.textContent = fmt("added", { name: doc.name });
      } else if (result.status === 422 && data.reason === "no_text") {
        row.classList.add("error");
        status.textContent = fmt("no_text", { name: file.name });
        status.title = data.detail;
      } else if (result.status === 200 && data.duplicate_of) {
        row.classList.add("duplicate");
        status.textContent = fmt("duplicate", { name: data.duplicate_of.name });
      } else {
        row.classList.add("error");
        status.textContent = result.status === 0 ? fmt("network") : fmt("failed", { detail: data.detail || result.status });
      }
    }

    picker.addEventListener("change", () => {
      enqueue(Array.from(picker.files));
      picker.value = "";
    });
    zone.addEventListener("dragover", (event) => {
      event.preventDefault();
      zone.classList.add("over");
    });
    zone.addEventListener("dragleave", () => zone.classList.remove("over"));
    zone.addEventListener("drop", (event) => {
      event.preventDefault();
      zone.classList.remove("over");
      const files = Array.from((event.dataTransfer && event.dataTransfer.files) || []);
      if (files.length) enqueue(files);
    });
  }

  // Re-render the document list from the server (escaped there) after uploads.
  async function refreshList() {
    const response = await fetch(location.href, { headers: { Accept: "text/html" } });
    if (!response.ok) return;
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    for (const selector of ["#doc-list", "main h1"]) {
      const now = document.querySelector(selector);
      const next = fresh.querySelector(selector);
      if (now && next) now.replaceWith(document.importNode(next, true));
    }
  }

  // ---- row and document actions ----------------------------------------------------------
  function holder(node) { return node.closest("[data-doc-id]"); }

  function say(target, text, kind) {
    const box = holder(target).querySelector(".row-status");
    box.textContent = text;
    box.className = "row-status " + (kind || "");
  }

  function startRename(button) {
    const row = holder(button);
    const cell = row.querySelector(".doc-name");
    if (cell.querySelector("form")) return;
    const link = cell.querySelector("a");
    const form = el("form", { class: "rename" });
    const input = el("input");
    input.value = row.dataset.name;
    input.required = true;
    input.maxLength = 200;
    input.setAttribute("aria-label", fmt("new_name"));
    const save = el("button", { class: "small", text: fmt("save") });
    save.type = "submit";
    const cancel = el("button", { class: "small secondary", text: fmt("cancel") });
    cancel.type = "button";
    form.append(input, save, cancel);
    link.hidden = true;
    cell.append(form);
    input.focus();
    input.select();
    const close = () => { form.remove(); link.hidden = false; button.focus(); };
    cancel.addEventListener("click", close);
    input.addEventListener("keydown", (event) => { if (event.key === "Escape") close(); });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        const doc = await window.assay.api("PATCH", row.dataset.api, { name: input.value });
        row.dataset.name = doc.name;
        link.textContent = doc.name;
        close();
        say(button, fmt("renamed"), "ok");
      } catch (error) {
        say(button, error.message, "error");
      }
    });
  }

  // The items and conversations that cite a document, as links: a delete is refused while
  // there are any, so they are named before anything is confirmed.
  async function showCitations(button) {
    const row = holder(button);
    let data;
    try {
      data = await window.assay.api("GET", row.dataset.api + "/items");
    } catch (error) {
      say(button, error.message, "error");
      return;
    }
    if (!data.items.length) return false;
    const box = row.querySelector(".row-status");
    const list = el("ul", { class: "citing" });
    for (const item of data.items) {
      const link = el("a", { href: item.url, text: item.query || fmt("no_question") });
      list.append(el("li", {}, link, " ", el("span", { class: "muted", text: fmt("kind_" + item.kind) })));
    }
    box.replaceChildren(el("p", { text: fmt("cited_refusal", { name: row.dataset.name, count: data.items.length }) }), list);
    box.className = "row-status error";
    return true;
  }

  async function deleteDocument(button) {
    if (!button.classList.contains("confirming") && Number(holder(button).dataset.usedBy || 0) > 0) {
      if (await showCitations(button) !== false) return;
    }
    if (!button.classList.contains("confirming")) {
      button.classList.add("confirming");
      button.textContent = button.dataset.confirm;
      button._label = button.getAttribute("aria-label");
      if (button._label) button.setAttribute("aria-label", button.dataset.confirm);
      button._timer = setTimeout(() => resetDelete(button), CONFIRM_MS);
      return;
    }
    resetDelete(button);
    const row = holder(button);
    try {
      await window.assay.api("DELETE", row.dataset.api);
    } catch (error) {
      say(button, error.message, "error");
      return;
    }
    const message = fmt("deleted", { name: row.dataset.name });
    if (row.dataset.list) {
      sessionStorage.setItem("assay-flash", message);
      location.href = row.dataset.list;
      return;
    }
    row.remove();
    window.assay.toast(message);
  }

  function resetDelete(button) {
    clearTimeout(button._timer);
    button.classList.remove("confirming");
    button.textContent = button.dataset.label;
    if (button._label) button.setAttribute("aria-label", button._label);
  }

  async function replaceFile(input) {
    const file = input.files[0];
    input.value = "";
    if (!file) return;
    const row = holder(input);
    say(input, fmt("replacing", { name: file.name, percent: 0 }), "");
    const result = await sendFile("POST", row.dataset.api + "/replace", file, (fraction) => {
      say(input, fmt("replacing", { name: file.name, percent: Math.round(fraction * 100) }), "");
    });
    if (result.status === 200) {
      say(input, result.data.detail, result.data.stale_evidence ? "warn" : "ok");
      if (row.dataset.list) {  // the document view: show the new text, keep the message
        sessionStorage.setItem("assay-flash", result.data.detail);
        location.reload();
      }
    } else {
      say(input, result.status === 0 ? fmt("network") : fmt("failed", { detail: result.data.detail }), "error");
    }
  }

  async function saveDocument(form) {
    const row = holder(form);
    try {
      const doc = await window.assay.api("PATCH", row.dataset.api, {
        name: form.elements.name.value,
        notes: form.elements.notes.value,
      });
      row.dataset.name = doc.name;
      document.querySelector(".doc-title").textContent = doc.name;
      say(form, fmt("saved"), "ok");
    } catch (error) {
      say(form, error.message, "error");
    }
  }

  // ---- a new item from a selection in the document's text ---------------------------------

  // Offsets (code points) of the selection in the extracted text: every shown run of text is
  // an element with data-start whose content is exactly the text at that offset.
  function selectionOffsets(root) {
    const selection = window.getSelection();
    if (!selection || !selection.rangeCount || selection.isCollapsed) return null;
    const range = selection.getRangeAt(0);
    if (!root.contains(range.commonAncestorContainer)) return null;
    const runs = Array.from(root.querySelectorAll("[data-start]")).filter(
      (node) => !node.querySelector("[data-start]") && range.intersectsNode(node));
    if (!runs.length) return null;
    const points = (text, at) => Array.from(text.slice(0, at)).length;
    const offsetIn = (node, container, at) => {
      const before = document.createRange();
      before.selectNodeContents(node);
      before.setEnd(container, at);
      return points(node.textContent, before.toString().length);
    };
    const first = runs[0];
    const last = runs[runs.length - 1];
    const start = Number(first.dataset.start) +
      (first.contains(range.startContainer) ? offsetIn(first, range.startContainer, range.startOffset) : 0);
    const end = Number(last.dataset.start) + (last.contains(range.endContainer)
      ? offsetIn(last, range.endContainer, range.endOffset) : Array.from(last.textContent).length);
    return end > start ? { start, end } : null;
  }

  function setupSelection(bar) {
    const body = document.getElementById("doc-body");
    const button = document.getElementById("new-from-selection");
    let chosen = null;
    document.addEventListener("selectionchange", () => {
      const offsets = selectionOffsets(body);
      if (offsets) chosen = offsets;
      else if (document.activeElement !== button) chosen = null;
      button.disabled = !chosen;
    });
    button.addEventListener("click", () => {
      if (!chosen) return;
      const query = new URLSearchParams({ doc: body.dataset.docId, start: chosen.start, end: chosen.end });
      location.href = bar.dataset.new + "?" + query.toString();
    });
  }

  function setupKeepTextless(box) {
    box.addEventListener("change", async () => {
      try {
        await window.assay.api("PUT", box.dataset.api, { keep_textless_documents: box.checked });
        window.assay.toast(fmt(box.checked ? "keep_on" : "keep_off"));
      } catch (error) {
        box.checked = !box.checked;
        window.assay.toast(error.message, "error");
      }
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    fmt = window.assay.translator(window.assay.readJson("doc-messages"));
    const section = document.getElementById("upload");
    if (section) setupUpload(section);
    const bar = document.getElementById("selection-bar");
    if (bar) setupSelection(bar);
    const keep = document.getElementById("keep-textless");
    if (keep) setupKeepTextless(keep);
    const flash = sessionStorage.getItem("assay-flash");
    if (flash) {
      sessionStorage.removeItem("assay-flash");
      const box = document.querySelector("article.document .row-status");
      if (box) box.textContent = flash;
      else window.assay.toast(flash);
    }
    document.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-action]");
      if (!button || !holder(button)) return;
      if (button.dataset.action === "rename") startRename(button);
      if (button.dataset.action === "delete") deleteDocument(button);
    });
    document.addEventListener("change", (event) => {
      if (event.target.matches("input[data-action=replace]")) replaceFile(event.target);
    });
    document.addEventListener("submit", (event) => {
      if (event.target.matches("form[data-action=save-document]")) {
        event.preventDefault();
        saveDocument(event.target);
      }
    });
  });
})();
