// Experiments: the create form and the run panel (live progress from server-sent events,
// cancel and resume). Both are Alpine components; the server checks everything. A pipeline
// of kind "file" uploads its run and answers files first; the experiment then names the
// stored files by sha256 (the server never opens a path it is sent).
document.addEventListener("alpine:init", () => {
  "use strict";
  let counter = 0;

  const { readJson } = window.assay;
  // metric families each mode can score (the server checks again)
  const SHOWN = {
    retrieval: ["retrieval", "ir", "llm_context"],
    generation: ["generation", "support", "llm_answer"],
    rag: ["retrieval", "ir", "generation", "support", "llm_answer", "llm_context"],
  };

  function splitMetrics(names) {
    return names.map((text) => {
      const [name, k] = text.split("@");
      return { name, k: k || "" };
    });
  }

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
      picked: [],
      cutoffs: {},
      busy: false,
      error: "",
      init() { this.resetMetrics(); },
      resetMetrics() {
        const chosen = splitMetrics(options.default_metrics[this.mode] || []);
        this.picked = chosen.map((m) => m.name);
        this.cutoffs = Object.fromEntries(
          options.metric_kinds.flatMap((g) => g.metrics).filter((m) => m.cutoff !== "none")
            .map((m) => [m.name, m.cutoff === "required" ? "10" : ""]));
        for (const m of chosen) if (m.k) this.cutoffs[m.name] = m.k;
      },
      kindShown(kind) { return (SHOWN[this.mode] || []).includes(kind); },
      chosenMetrics() {
        const shown = new Set(options.metric_kinds.filter((g) => this.kindShown(g.kind))
          .flatMap((g) => g.metrics.map((m) => m.name)));
        return this.picked.filter((name) => shown.has(name)).map((name) => {
          const k = String(this.cutoffs[name] ?? "").trim();
          return k ? name + "@" + k : name;
        });
      },
      chosenText() {
        const chosen = this.chosenMetrics();
        return chosen.length ? text.chosen.replace("{metrics}", chosen.join(", ")) : text.none_chosen;
      },
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
        const metrics = this.chosenMetrics();
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
      noCache: false,  // ask every model again instead of answering from the response cache
      init() { if (this.p.running || this.p.status === "running") this.listen(); },
      maxCost: "",
      maxRequests: "",
      stateText() {
        if (this.p.running && this.p.status !== "running") return data.queued;
        return data.states[this.p.status] || this.p.status;
      },
      number(value) { return new Intl.NumberFormat(data.lang).format(value || 0); },
      percent(share) {
        return new Intl.NumberFormat(data.lang, { style: "percent", maximumFractionDigits: 1 }).format(share || 0);
      },
      money(value) {
        return new Intl.NumberFormat(data.lang, { style: "currency", currency: "USD", maximumFractionDigits: 4 }).format(value || 0);
      },
      etaText() {
        const eta = this.p.eta_s;
        if (eta === null || eta === undefined || this.p.status !== "running") return "–";
        const whole = Math.round(eta);
        const h = Math.floor(whole / 3600), m = Math.floor((whole % 3600) / 60), s = whole % 60;
        const clock = h ? `${h} h ${String(m).padStart(2, "0")} min` : `${m} min ${String(s).padStart(2, "0")} s`;
        const rate = this.p.units_per_s ? " · " + data.rate.replace("{rate}", this.number(this.p.units_per_s)) : "";
        return clock + rate;
      },
      budgetText() {
        const b = this.p.budget;
        if (!b) return data.noBudget;
        const parts = [];
        if (b.max_cost_usd) parts.push(this.money(b.max_cost_usd));
        if (b.max_requests) parts.push(data.budgetRequests.replace("{n}", this.number(b.max_requests)));
        return parts.join(" · ");
      },
      // a run the budget stopped says so in the page's language (the stored message is English)
      messageText() {
        if (!this.p.message.startsWith("budget reached")) return this.p.message;
        return data.budgetReached.replace("{requests}", this.number(this.p.spent.requests))
          .replace("{cost}", this.money(this.p.spent.cost_usd));
      },
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
          this.refresh();
        });
      },
      async cancel() {
        try { this.p = (await window.assay.api("POST", data.cancel)).progress; }
        catch (error) { window.assay.toast(error.message, "error"); }
      },
      async resume() {
        try {
          const body = {};
          if (this.maxCost !== "" && this.maxCost !== null) body.max_cost = Number(this.maxCost);
          if (this.maxRequests !== "" && this.maxRequests !== null) body.max_requests = Number(this.maxRequests);
          const url = data.run + (this.noCache ? "?cache=false" : "");
          this.p = (await window.assay.api("POST", url, body)).progress;
          this.p.running = true;
          this.finishedHere = false;
          this.listen();
        } catch (error) { window.assay.toast(error.message, "error"); }
      },
      reload() { window.location.reload(); },
      // The results on the page were drawn when the page was loaded, before the run wrote
      // them: once it is over, the same page is fetched again and its results put in place.
      async refresh() {
        try {
          const response = await fetch(window.location.href, { headers: { Accept: "text/html" } });
          if (!response.ok) throw new Error(String(response.status));
          const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
          const incoming = fresh.getElementById("exp-results");
          const here = document.getElementById("exp-results");
          if (!incoming || !here) throw new Error("no results on the page");
          here.replaceWith(document.importNode(incoming, true));
        } catch (error) {
          this.finishedHere = true; // the button reloads the whole page instead
        }
      },
    };
  });
});
