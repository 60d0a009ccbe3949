// The dashboard's coverage panel: totals and the first gaps from the coverage JSON.
(function () {
  "use strict";

  const { api, el, translator, readJson } = window.assay;
  const box = document.getElementById("dash-cand");
  if (!box) return;
  const t = translator(readJson("dash-cand-messages"));

  api("GET", box.dataset.api).then((cover) => {
    const s = cover.totals;
    document.getElementById("dash-cand-totals").replaceChildren(
      el("li", { text: t("cand.cov.documents", { covered: s.documents_covered, total: s.documents }) }),
      el("li", { text: t("cand.cov.sections", { covered: s.sections_covered, total: s.sections }) }),
      el("li", { text: t("cand.cov.topics", { covered: s.clusters_covered, total: s.clusters }) }),
    );
    document.getElementById("dash-cand-gaps").replaceChildren(...cover.gaps.slice(0, 8).map((g) => el("li", {},
      g.kind === "document"
        ? el("a", { href: `${box.dataset.home}/documents/${encodeURIComponent(g.doc_id)}`, text: g.name })
        : el("span", { text: t("cand.topic", { label: g.label }) }),
      el("span", { class: "muted", text: " · " + t("cand.dash.questions", { n: g.questions }) }),
    )));
  }).catch((err) => {
    document.getElementById("dash-cand-totals").replaceChildren(el("li", { text: err.message }));
  });
})();
