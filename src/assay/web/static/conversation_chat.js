// Asking and regenerating in the conversation workbench (a part of static/conversation.js):
// a question or a regeneration is streamed (NDJSON: saved, delta, done or error), shown live
// and stored by the server; a failed or cut stream keeps the stored answer and offers a retry.
(function () {
  "use strict";

  const conv = window.assay.conversation;
  if (!conv) return;
  const { state, cfg, t, shell } = conv;
  const { el, clone } = window.assay;
  const $ = (id) => document.getElementById(id);

  // ------------------------------------------------------------ sending and streaming

  function streamState(text) { $("stream-state").textContent = text; }

  function showStreamError(detail, retry, kept) {
    // kept: the turn already had an answer, which stays exactly as it was
    state.lastFailed = retry;
    $("stream-error-text").textContent = t(kept ? "conv.stream.failed_kept" : "conv.stream.failed", { detail });
    $("stream-error").hidden = false;
    $("retry-button").hidden = !retry;
  }

  async function readEvents(response, onEvent) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (value) buffer += decoder.decode(value, { stream: true });
      let at;
      while ((at = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, at).trim();
        buffer = buffer.slice(at + 1);
        if (line) onEvent(JSON.parse(line));
      }
      if (done) break;
    }
    if (buffer.trim()) onEvent(JSON.parse(buffer));
  }

  async function streamAnswer(url, body, retry) {
    $("stream-error").hidden = true;
    state.streaming = true;
    $("send-button").disabled = true;
    document.querySelectorAll(".regenerate").forEach((b) => { b.disabled = true; });
    streamState(t("conv.stream.retrieving"));
    let index = null, live = null, ended = false, kept = false;
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/x-ndjson", "X-CSRF-Token": window.assay.csrfToken() },
        body: JSON.stringify(body),
      });
      if (!response.ok) {
        let data = null;
        try { data = await response.json(); } catch (_) { data = null; }
        if (shell.conflictFrom({ status: response.status, body: data })) return false;
        showStreamError((data && data.detail) || response.statusText, null);
        return false;
      }
      await readEvents(response, (event) => {
        if (event.type === "saved") {
          const wasNew = !state.id;
          conv.applySaved(event);
          index = event.turn;
          const server = event.input.turns;
          if (index >= state.data.turns.length) state.data.turns.push(clone(server[index]));
          else Object.assign(state.data.turns[index], { retrieved: server[index].retrieved, generation: server[index].generation });
          state.data.extra = Object.assign({}, event.input.extra, state.data.extra);
          if (wasNew) shell.adoptUrl("/projects/" + encodeURIComponent(cfg.project) + "/conversations/" + encodeURIComponent(state.id));
          state.active = index;
          kept = Boolean((state.data.turns[index].answer || "").trim());
          conv.renderAll();
          const node = document.querySelector('.turn[data-turn="' + index + '"] .bubble.agent');
          live = el("div", { class: "live-answer" + (kept ? " live-draft" : ""), "aria-live": "polite", "aria-busy": "true" });
          if (kept) node.querySelector(".field").after(live); else node.prepend(live);
          document.querySelectorAll('#t' + index + '-answer').forEach((a) => { a.readOnly = true; });
          streamState(t(kept ? "conv.stream.drafting" : "conv.stream.generating"));
        } else if (event.type === "delta") {
          if (live) live.textContent += event.text;
        } else if (event.type === "done" || event.type === "error") {
          ended = true;
          const server = event.input.turns[event.turn];
          Object.assign(state.data.turns[event.turn], {
            answer: server.answer, original_answer: server.original_answer, generation: server.generation,
          });
          conv.applySaved(event);
          conv.renderAll();
          if (event.type === "error") showStreamError(event.detail, retry || { turn: event.turn }, kept);
          const done = event.stored === "draft" ? "conv.stream.draft_stored" : "conv.stream.done";
          streamState(event.type === "done" ? t(done) : "");
        }
      });
      if (!ended) showStreamError(t("conv.stream.cut"), index === null ? null : { turn: index }, kept);
      return ended;
    } catch (err) {
      showStreamError(err.message || String(err), index === null ? null : { turn: index }, kept);
      return false;
    } finally {
      if (!ended && live) conv.renderAll();  // drop the half-streamed text; the stored answer stays
      state.streaming = false;
      $("send-button").disabled = false;
      document.querySelectorAll(".regenerate").forEach((b) => { b.disabled = false; });
      if (!ended) streamState("");
      if (state.dirty) { shell.setSaveState("pending"); state.timer = setTimeout(saveNow, 50); } else if (state.id) shell.setSaveState("saved");
    }
  }

  async function send() {
    if (!$("composer-q").value.trim() || state.sending) return;
    state.sending = true;  // a second Ctrl+Enter while this one waits sends nothing twice
    try {
      // the answer may show "stored" while its stream is still closing: wait, never drop a question
      while (state.streaming) await new Promise((done) => setTimeout(done, 50));
      await ask();
    } finally {
      state.sending = false;
    }
  }

  async function ask() {
    const query = $("composer-q").value.trim();
    if (!query) return;
    streamState("");
    if (!(await conv.flush())) return;
    const body = {
      query, rewrite: $("composer-rewrite").value.trim(), retriever: conv.retrieverOverrides(), generator: conv.generatorChoice(),
    };
    let url = shell.base + "/conversations";
    if (state.id) { url += "/" + encodeURIComponent(state.id) + "/turns"; body.version = state.version; }
    const sent = streamAnswer(url, body, null);
    $("composer-q").value = "";
    $("composer-rewrite").value = "";
    const ok = await sent;
    if (!ok && state.data.turns.every((tr) => tr.query !== query)) $("composer-q").value = query;  // never stored: give it back
    else $("composer-q").focus();
  }

  async function regenerate(index, source) {
    const tr = state.data.turns[index];
    if (source === "relevant" && !tr.evidence.some((e) => e.label === "relevant")) {
      window.assay.toast(t("conv.answer.need_relevant"), "error");
      return;
    }
    streamState("");
    if (!(await conv.flush()) || !state.id) return;
    await streamAnswer(shell.base + "/conversations/" + encodeURIComponent(state.id) + "/turns/" + (index + 1) + "/generate",
      { version: state.version, source }, { turn: index, source });
  }

  $("composer").addEventListener("submit", (e) => { e.preventDefault(); send(); });
  $("retry-button").addEventListener("click", () => {
    const retry = state.lastFailed;
    if (!retry) return;
    const tr = state.data.turns[retry.turn];
    const source = retry.source || (tr && tr.evidence.some((e) => e.label === "relevant") ? "relevant" : "retrieved");
    $("stream-error").hidden = true;
    regenerate(retry.turn, source);
  });

  Object.assign(conv, { regenerate, send });
})();
