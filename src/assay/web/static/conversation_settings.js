// The conversation's settings and its export (a part of static/conversation.js): the
// retriever and generator this conversation uses (the badge names the generator), the
// project's prompt template and enrichment vocabulary, and the checklist that opens the
// one-click RAGAPHENE export.
(function () {
  "use strict";

  const conv = window.assay.conversation;
  if (!conv) return;
  const { state, cfg, t, shell } = conv;
  const { api } = window.assay;
  const CHECKS = ["faithfulness", "completeness", "style", "appropriateness", "passages", "enrichments", "diversity"];
  const $ = (id) => document.getElementById(id);


  function fillChecklist() {
    const ticked = (state.data.extra && state.data.extra.checklist) || {};
    document.querySelectorAll("[data-check]").forEach((box) => { box.checked = Boolean(ticked[box.dataset.check]); });
    updateExport();
  }

  function updateExport() {
    const ticked = (state.data.extra && state.data.extra.checklist) || {};
    const ready = Boolean(state.id) && CHECKS.every((k) => ticked[k]);
    const link = $("export-link");
    if (!link) return;  // the reader's role may not export
    link.setAttribute("aria-disabled", String(!ready));
    link.classList.toggle("disabled", !ready);
    if (state.id) link.href = shell.base + "/conversations/" + encodeURIComponent(state.id) + "/ragaphene";
    $("export-help").textContent = t(ready ? "conv.check.export_ready" : "conv.check.export_help");
  }

  document.querySelectorAll("[data-check]").forEach((box) => box.addEventListener("change", () => {
    state.data.extra = state.data.extra || {};
    state.data.extra.checklist = Object.assign({}, state.data.extra.checklist, { [box.dataset.check]: box.checked });
    updateExport();
    conv.changed();
  }));
  // Export: the checklist above the button shows the checks; once every box is ticked one
  // click saves what is pending and downloads this conversation as RAGAPHENE JSON.
  async function exportConversation(e) {
    e.preventDefault();
    if (!state.id) { window.assay.toast(t("conv.check.unsaved"), "error"); return; }
    if ($("export-link").getAttribute("aria-disabled") === "true") {
      const box = $("check-title").closest(".checklist");
      box.scrollIntoView({ block: "nearest" });
      const open = document.querySelector("[data-check]:not(:checked)");
      if (open) open.focus();
      window.assay.toast(t("conv.check.export_help"), "error");
      return;
    }
    if (!(await conv.flush())) return;
    window.location.assign(shell.base + "/conversations/" + encodeURIComponent(state.id) + "/ragaphene");
  }
  if ($("export-link")) $("export-link").addEventListener("click", exportConversation);
  if ($("export-button")) $("export-button").addEventListener("click", exportConversation);

  // ------------------------------------------------------------ settings panel

  function fillSettings() {
    const r = (state.data.extra && state.data.extra.retriever) || {};
    $("set-kind").value = r.kind || "";
    $("set-k").value = r.k || "";
    $("set-from").value = r.query_from || "";
    $("set-template").value = cfg.settings.generator.prompt_template;
    $("set-vocab").value = Object.entries(state.vocab)
      .map(([name, values]) => name + ": " + values.join(conv.isSingle(name) ? " | " : ", ")).join("\n");
    const g = (state.data.extra && state.data.extra.generator) || {};
    $("set-gen-kind").value = g.kind || "";
    $("set-gen-model").value = g.model || "";
    $("set-gen-temp").value = g.temperature === undefined || g.temperature === null ? "" : g.temperature;
    $("set-gen-max").value = g.max_tokens || "";
    showGenerator();
  }

  // ------------------------------------------------------------ the generator of this conversation

  function generatorChoice() {
    const g = {};
    if ($("set-gen-kind").value) g.kind = $("set-gen-kind").value;
    const kind = g.kind || cfg.settings.generator.kind;
    if (kind === "openai" && $("set-gen-model").value.trim()) g.model = $("set-gen-model").value.trim();
    if ($("set-gen-temp").value !== "") g.temperature = Number($("set-gen-temp").value);
    if ($("set-gen-max").value) g.max_tokens = Number($("set-gen-max").value);
    return g;
  }

  function showGenerator() {
    // The badge names what answers the next question: the project's generator or this one's.
    const g = (state.data.extra && state.data.extra.generator) || {};
    const kind = g.kind || cfg.settings.generator.kind;
    const model = g.model || cfg.generator_label;
    $("gen-llm-fields").hidden = kind === "offline";  // the extractive generator has no settings
    $("gen-model-row").hidden = kind !== "openai";
    $("gen-label").textContent = kind === "offline" ? t("conv.generator.offline") : t("conv.generator.model", { model });
  }

  for (const id of ["set-gen-kind", "set-gen-model", "set-gen-temp", "set-gen-max"]) {
    $(id).addEventListener("change", () => {
      state.data.extra = Object.assign({}, state.data.extra, { generator: generatorChoice() });
      showGenerator();
      if (state.id) conv.changed();
    });
  }
  $("gen-label").addEventListener("click", () => {
    $("settings-panel").open = true;
    $("set-gen-kind").focus();
  });

  function retrieverOverrides() {
    const r = {};
    if ($("set-kind").value) r.kind = $("set-kind").value;
    if ($("set-k").value) r.k = Number($("set-k").value);
    if ($("set-from").value) r.query_from = $("set-from").value;
    return r;
  }

  for (const id of ["set-kind", "set-k", "set-from"]) {
    $(id).addEventListener("change", () => {
      state.data.extra = Object.assign({}, state.data.extra, { retriever: retrieverOverrides() });
      conv.changed();
    });
  }

  async function saveSettings(body) {
    $("settings-state").textContent = t("conv.settings.saving");
    try {
      const view = await api("PUT", shell.base + "/conversation-settings", body);
      cfg.settings = view;
      state.vocab = view.enrichments;
      $("settings-state").textContent = t("conv.settings.saved");
      conv.renderAll();
    } catch (err) {
      $("settings-state").textContent = t("conv.settings.failed", { detail: err.message });
    }
  }

  $("set-template-save").addEventListener("click", () => saveSettings({ generator: { prompt_template: $("set-template").value } }));
  $("set-vocab-save").addEventListener("click", () => {
    // "name: a, b" offers any of the values; "name: a | b" exactly one of them.
    const vocab = {}, single = [];
    for (const line of $("set-vocab").value.split("\n")) {
      const at = line.indexOf(":");
      if (at < 0) { if (line.trim()) { $("settings-state").textContent = t("conv.settings.vocabulary_line", { line }); return; } continue; }
      const name = line.slice(0, at).trim(), rest = line.slice(at + 1);
      if (rest.includes("|")) single.push(name);
      vocab[name] = rest.split(rest.includes("|") ? "|" : ",").map((v) => v.trim()).filter(Boolean);
    }
    saveSettings({ enrichments: vocab, enrichments_single: single });
  });

  Object.assign(conv, { fillSettings, fillChecklist, updateExport, retrieverOverrides, generatorChoice });
})();
