// The retrieval stages of a pipeline on the experiment form: reranking (the project's
// reranker, or the LLM reranker with the project's generator), a query rewrite, neighbouring
// chunks and metadata filters. stageSpec() adds them to a pipeline's JSON; the server checks.
(() => {
  "use strict";
  window.assay = window.assay || {};
  window.assay.stageDefaults = () => ({ rerank: "none", rewrite: "none", expand: 0, filters: "" });
  window.assay.stageSpec = (p, options) => {
    const stages = options.stages || {};
    const spec = {};
    if (p.rerank === "project" && stages.reranker) spec.reranker = stages.reranker;
    if (p.rerank === "llm" && stages.llm) spec.reranker = { kind: "llm", generator: stages.llm };
    if (p.rewrite !== "none" && stages.llm) {
      spec.rewrite = p.rewrite;
      spec.rewrite_generator = stages.llm;
    }
    if (p.expand) spec.expand = Number(p.expand);
    if (p.filters && p.filters.trim()) spec.filters = p.filters.trim();
    return spec;
  };
})();
