// Read-only editors. When the reader's role may not change what an editor shows (a viewer;
// an annotator on someone else's item; a viewer in the judging workbench), the server puts
// #read-only-note on the page saying why. Then no field of the editor takes text, the
// controls that change something are hidden (items.css: .read-only), nothing is saved or
// kept as a draft, and the keys that mark or rate say why instead. The server refuses such
// changes anyway; this keeps the page from letting someone type what can never be saved.
(function () {
  "use strict";

  const note = document.getElementById("read-only-note");
  // fields that only read: the search boxes stay usable
  const FREE = "#search-form, #search-extras, .search-row, [data-read-ok]";

  function lock(root) {
    for (const field of root.querySelectorAll("textarea, input, select, [contenteditable]")) {
      if (field.closest(FREE)) continue;
      if (field.hasAttribute("contenteditable")) field.setAttribute("contenteditable", "false");
      if (field.tagName === "SELECT" || ["checkbox", "radio", "range", "file"].includes(field.type)) {
        field.disabled = true;
      } else if (field.tagName === "TEXTAREA" || field.tagName === "INPUT") {
        field.readOnly = true;
      }
    }
  }

  if (note) {
    const root = document.getElementById("main") || document.body;
    document.body.classList.add("read-only");
    lock(root);
    // the editors draw their fields as they go (turns, evidence cards, ratings)
    new MutationObserver(() => lock(root)).observe(root, { childList: true, subtree: true });
  }

  window.assay.readOnly = {
    on: Boolean(note),
    // true (after saying why) when the page is read-only: callers stop there
    refused() {
      if (!note) return false;
      window.assay.toast(note.textContent.trim(), "error");
      return true;
    },
  };
})();
