// The production candidates page: upload a log (the report, then the page again), show the
// sample with the reasons for each pick, and take it into assigned tasks in one request.
// User text only goes in as textContent.
(function () {
  "use strict";

  const { api, upload, el, translator, readJson } = window.assay;
  const $ = (id) => document.getElementById(id);
  const data = readJson("candidates-data");
  const t = translator(data.messages || {});
  let shown = [];

  $("cand-upload").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("cand-upload-error").textContent = "";
    const file = $("cand-file").files[0];
    if (!file) return;
    const form = new FormData();
    form.append("shape", $("cand-shape").value);
    form.append("map", $("cand-map").value);
    form.append("mask", $("cand-mask").value);
    form.append("skip_bad", $("cand-skip").checked ? "true" : "false");
    form.append("file", file, file.name);
    $("cand-import").disabled = true;
    $("cand-report").textContent = t("cand.importing");
    const answer = await upload("POST", data.api + "/candidates/imports", form, () => {});
    $("cand-import").disabled = false;
    if (answer.status !== 201) {
      $("cand-report").textContent = "";
      $("cand-upload-error").textContent = answer.data.detail || t("cand.failed");
      return;
    }
    const r = answer.data;
    const masks = Object.entries(r.masks).map(([k, v]) => `${k} ${v}`).join(", ") || t("cand.nothing");
    $("cand-report").replaceChildren(
      el("p", { text: t("cand.report", { stored: r.stored, lines: r.lines, skipped: r.skipped, groups: r.grouping.groups }) }),
      el("p", { text: t("cand.report_masks", { masks }) }),
      el("p", { text: t("cand.report_passages", { anchored: r.passages.anchored, unlocated: r.passages.unlocated }) }),
      ...r.problems.slice(0, 5).map((p) => el("p", { class: "muted small", text: p })),
      el("p", {}, el("a", { href: window.location.pathname, text: t("cand.reload") })),
    );
  });

  function annotators() {
    const named = [...document.querySelectorAll('#cand-sample input[name="to"]:checked')].map((b) => b.value);
    const others = $("cand-others").value.split(",").map((s) => s.trim()).filter(Boolean);
    return [...named, ...others];
  }

  function reasonText(reason) {
    const key = "cand.reason." + reason.kind;
    const text = t(key, reason);
    return text === key ? reason.text : text;
  }

  $("cand-sample").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("cand-error").textContent = "";
    $("cand-result").textContent = "";
    try {
      const answer = await api("GET", `${data.api}/candidates/sample?n=${encodeURIComponent($("cand-n").value)}`);
      shown = answer.picks.map((p) => p.group_id);
      $("cand-picks").replaceChildren(...answer.picks.map((p) => el("li", { "data-group": String(p.group_id) },
        el("span", { class: "q", text: p.question }),
        el("span", { class: "muted", text: " · " + (p.asked === 1 ? t("cand.asked_once") : t("cand.asked_n", { n: p.asked })) }),
        el("ul", { class: "reasons" }, ...p.reasons.map((r, i) => el("li", { class: i === 0 ? "reason-main" : "", text: reasonText(r) }))),
      )));
      $("cand-take").hidden = !answer.picks.length;
      $("cand-take").textContent = t("cand.take_n", { n: answer.picks.length });
      if (!answer.picks.length) $("cand-result").textContent = t("cand.nothing_open");
    } catch (err) {
      $("cand-error").textContent = err.message;
    }
  });

  $("cand-take").addEventListener("click", async () => {
    $("cand-error").textContent = "";
    $("cand-take").disabled = true;
    try {
      const answer = await api("POST", data.api + "/candidates/assignments", {
        n: shown.length, groups: shown, to: annotators(), overlap: Number($("cand-overlap").value || 1),
      });
      const shares = Object.entries(answer.tasks).map(([name, n]) => `${name || t("cand.pool")} ${n}`).join(", ");
      $("cand-result").replaceChildren(
        el("span", { text: t("cand.taken", { items: answer.item_ids.length, shares }) + " " }),
        el("a", { href: data.home + "/assignments", text: t("cand.to_assignments") }),
      );
      $("cand-take").hidden = true;
    } catch (err) {
      $("cand-error").textContent = err.message;
    } finally {
      $("cand-take").disabled = false;
    }
  });
})();
