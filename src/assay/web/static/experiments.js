// Experiments: the create form and the run panel (live progress from server-sent events,
// cancel and resume). Both are Alpine components; the server checks everything. A pipeline
// of kind "file" uploads its run and answers files first; the experiment then names the
// stored files by sha256 (the server never opens a path it is sent).
document.addEventListener("alpine:init", () => {
  "use strict";
  let counter = 0;

  const { readJson } = window.assay;

  function pipeline(retriever, embedder) {
    counter += 1;
    return {
      key: counter, name: retriever, kind: "search", retriever, embedder, k: 10,
      generator: "offline", runFile: null, answersFile: null, ...window.assay.stageDefaults(),
    };
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
      version: "",
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
      forgetFiles(p) { p.runFile = null; p.answersFile = null; },
      pickFile(p, which, event) { p[which] = event.target.files[0] || null; },
      async upload(file, kind) {
        const form = new FormData();
        form.append("kind", kind);
        form.append("file", file, file.name);
        const stored = await window.assay.api("POST", options.files_api, form);
        return { sha256: stored.sha256, name: stored.name };
      },
      async fileSpec(p) {
        const spec = { name: p.name.trim(), kind: "file" };
        if (p.runFile) spec.run_file = await this.upload(p.runFile, "run");
        if (p.answersFile) spec.answers_file = await this.upload(p.answersFile, "answers");
        return spec;
      },
      spec(p) {
        const retriever = { kind: p.retriever, k: p.k || 10 };
        if (p.retriever !== "keyword") retriever.embedder = p.embedder;
        const spec = { name: p.name.trim(), kind: "search", retriever };
        spec.generator = p.generator === "project" ? options.generator : { kind: "offline" };
        return Object.assign(spec, window.assay.stageSpec(p, options));
      },
      async submit() {
        this.error = "";
        if (this.pipelines.length < 2) { this.error = text.need_two; return; }
        const empty = this.pipelines.find((p) => p.kind === "file" && !p.runFile && !p.answersFile);
        if (empty) { this.error = text.need_file.replace("{name}", empty.name); return; }
        this.busy = true;
        const metrics = this.metrics.split(",").map((m) => m.trim()).filter(Boolean);
        try {
          const pipelines = [];
          for (const p of this.pipelines) {
            pipelines.push(p.kind === "file" ? await this.fileSpec(p) : this.spec(p));
          }
          const body = {
            name: this.name.trim(), mode: this.mode, turns: this.turns,
            statuses: this.statuses, pipelines, metrics: metrics.length ? metrics : null,
            start: true,
          };
          if (this.chunking) body.chunking = this.chunking;
          if (this.version) body.version = this.version;
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
      reload() { window.location.reload(); },
    };
  });
});
