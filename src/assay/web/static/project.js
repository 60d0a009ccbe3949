// Project home: the query-type editor (an Alpine component). Saved with
// PUT /api/projects/{name}/settings; the server validates and its message is shown as is.
document.addEventListener("alpine:init", () => {
  "use strict";
  let counter = 0;

  function toRow(entry) {
    counter += 1;
    const label = entry.label || {};
    const help = entry.help || {};
    return {
      key: counter, id: entry.id || "",
      label_en: label.en || "", label_de: label.de || "",
      help_en: help.en || "", help_de: help.de || "",
    };
  }

  function toEntry(row) {
    return {
      id: row.id,
      label: { en: row.label_en, de: row.label_de },
      help: { en: row.help_en, de: row.help_de },
    };
  }

  window.Alpine.data("taxonomyEditor", () => {
    const data = window.assay.readJson("taxonomy-data");
    return {
      text: data,
      rows: data.current.map(toRow),
      saved: data.current.map(toRow),
      custom: data.custom,
      busy: false,
      error: "",
      message: "",
      add() {
        this.rows.push(toRow({}));
        this.$nextTick(() => {
          const sets = this.$root.querySelectorAll("fieldset");
          if (sets.length) sets[sets.length - 1].querySelector("input").focus();
        });
      },
      move(index, step) {
        const [row] = this.rows.splice(index, 1);
        this.rows.splice(index + step, 0, row);
      },
      async send(queryTypes) {
        this.busy = true;
        this.error = this.message = "";
        try {
          const project = await window.assay.api("PUT", data.api, { query_types: queryTypes });
          this.rows = project.query_types.map(toRow);
          this.saved = project.query_types.map(toRow);
          this.custom = project.custom_query_types;
          this.message = data.saved;
        } catch (error) {
          this.error = error.message;
        } finally {
          this.busy = false;
        }
      },
      save() { return this.send(this.rows.map(toEntry)); },
      reset() { return this.send(null); },
    };
  });
});
