// The dashboard's pool section: asks for the project's pool coverage when the button is pressed
// (pooling every question takes a while, so the page never does it on its own).
(function () {
  "use strict";
  const { api, el } = window.assay;
  const box = document.getElementById("pool-dash");
  if (!box) return;
  const $ = (id) => document.getElementById(id);
  const fill = (text, params) => text.replace(/\{(\w+)\}/g, (m, name) => (name in params ? String(params[name]) : m));
  const lang = document.documentElement.lang || "en";
  const pct = (value) => value === null ? "—" : new Intl.NumberFormat(lang, { style: "percent", maximumFractionDigits: 1 }).format(value);

  $("pool-dash-run").addEventListener("click", async () => {
    const state = $("pool-dash-state");
    const button = $("pool-dash-run");
    state.textContent = state.dataset.computing;
    button.disabled = true;
    try {
      const url = "/api/projects/" + encodeURIComponent(box.dataset.project) + "/pool/summary";
      const result = await api("GET", url);
      const s = result.summary;
      $("pool-dash-figures").textContent = fill($("pool-dash-figures").dataset.text,
        { questions: s.questions, depth: s.depth, pooled: s.pooled, judged: s.judged, coverage: pct(s.coverage) });
      $("pool-dash-rows").replaceChildren(...Object.entries(s.sources).map(([name, f]) => el("tr", {},
        el("td", { text: name }), el("td", { class: "num", text: String(f.found) }), el("td", { class: "num", text: String(f.only) }),
        el("td", { class: "num", text: String(f.judged) }), el("td", { class: "num", text: String(f.errors) }))));
      const warnings = result.unanswerable_with_strong_hits;
      const note = $("pool-dash-unanswerable");
      note.hidden = !warnings.length;
      note.textContent = fill(note.dataset.text, { n: warnings.length });
      $("pool-dash-warnings").replaceChildren(...warnings.map((w) => el("li", {},
        el("span", { text: w.query + " — " }), el("span", { class: "muted", text: w.text.slice(0, 160) }))));
      $("pool-dash-result").hidden = false;
      state.textContent = "";
    } catch (err) {
      state.textContent = fill(state.dataset.failed, { detail: err.message });
    } finally {
      button.disabled = false;
    }
  });
})();
