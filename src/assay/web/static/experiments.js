// Experiments: the create form and the run panel (live progress from server-sent events,
// cancel and resume). Both are Alpine components; the server checks everything.
document.addEventListener("alpine:init", () => {
  "use strict";
  let counter = 0;

  function readJson(id) {
    const node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : {};
  }

  function pipeline(retriever, embedder) {
    counter += 1;
    return { key: counter, name: retriever, retriever, embedder, k: 10, generator: "offline" };
  }

  window.Alpine.data("experimentForm", () => {
    const options = readJson("experiment-options");
    const text = readJson("experiment-text");
    return {
      text,
      name: "",
      mode: "retrieval",
      turns: "all",
      chunking: "",
      statuses: ["accepted"],
      pipelines: [pipeline("keyword", options.embedder), pipeline("hybrid", options.embedder)],
      metrics: (options.default_metrics.retrieval || []).join(", "),
      busy: false,
      error: "",
      resetMetrics() { this.metrics = (options.default_metrics[this.mode] || []).join(", "); },
      addPipeline() { this.pipelines.push(pipeline("dense", options.embedder)); this.autoName(this.pipelines.at(-1)); },
      autoName(p) {
        const taken = new Set(this.pipelines.filter((q) => q !== p).map((q) => q.name));
        if (["keyword", "dense", "hybrid"].some((n) => p.name === n || p.name.startsWith(n + "-")) || !p.name) {
          let name = p.retriever;
          for (let i = 2; taken.has(name); i += 1) name = p.retriever + "-" + i;
          p.name = name;
        }
      },
      spec(p) {
        const retriever = { kind: p.retriever, k: p.k || 10 };
        if (p.retriever !== "keyword") retriever.embedder = p.embedder;
        const spec = { name: p.name.trim(), kind: "search", retriever };
        spec.generator = p.generator === "project" ? options.generator : { kind: "offline" };
        return spec;
      },
      async submit() {
        this.error = "";
        if (this.pipelines.length < 2) { this.error = text.need_two; return; }
        this.busy = true;
        const metrics = this.metrics.split(",").map((m) => m.trim()).filter(Boolean);
        const body = {
          name: this.name.trim(), mode: this.mode, turns: this.turns,
          statuses: this.statuses, pipelines: this.pipelines.map((p) => this.spec(p)),
          metrics: metrics.length ? metrics : null, start: true,
        };
        if (this.chunking) body.chunking = this.chunking;
        try {
          const created = await window.assay.api("POST", options.api, body);
          window.location.href = window.location.pathname.replace(/\/$/, "") + "/" + created.id;
        } catch (error) {
          this.error = error.message;
          this.busy = false;
        }
      },
    };
  });

  window.Alpine.data("experimentRun", () => {
    const data = readJson("run-data");
    return {
      p: data.progress,
      source: null,
      finishedHere: false,
      init() { if (this.p.running || this.p.status === "running") this.listen(); },
      stateText() { return data.states[this.p.status] || this.p.status; },
      countsText() {
        return data.counts.replace("{done}", this.p.done).replace("{total}", this.p.total)
          .replace("{errors}", this.p.errors).replace("{percent}", this.p.percent);
      },
      listen() {
        if (this.source) this.source.close();
        const source = new EventSource(data.events);
        this.source = source;
        source.addEventListener("progress", (event) => { this.p = JSON.parse(event.data); });
        source.addEventListener("end", (event) => {
          this.p = JSON.parse(event.data);
          source.close();
          this.source = null;
          this.finishedHere = true;
        });
      },
      async cancel() {
        try { this.p = (await window.assay.api("POST", data.cancel)).progress; }
        catch (error) { window.assay.toast(error.message, "error"); }
      },
      async resume() {
        try {
          this.p = (await window.assay.api("POST", data.run)).progress;
          this.p.running = true;
          this.finishedHere = false;
          this.listen();
        } catch (error) { window.assay.toast(error.message, "error"); }
      },
    };
  });
});
