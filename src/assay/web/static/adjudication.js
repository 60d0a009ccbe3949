// Adjudication: the annotators' versions of one item side by side, differences highlighted.
// The adjudicator picks, per question, the version each field comes from and, passage by
// passage, whose mark the gold keeps (or leaves it out, or gives it another group); the
// server merges and saves (a stale save answers 409 and nothing is lost).
(function () {
  "use strict";
  const { api, el, toast, translator, readJson } = window.assay;
  const data = readJson("adjudication-data");
  const t = translator(data.messages || {});
  const root = document.getElementById("adjudication");
  if (!root) return;
  const sides = data.versions;
  const copies = sides.filter((v) => v.annotator !== "gold");
  const typeLabel = Object.fromEntries((data.query_types || []).map((q) => [q.id, q.label]));
  const FIELDS = ["query", "query_type", "answer"];
  let base = copies.length ? copies[0].id : sides[0].id;

  function sideName(v) {
    return v.annotator === "gold" ? t("adjudication.gold_now") : v.annotator;
  }

  function shown(field, value) {
    if (field === "query_type") {
      const label = typeLabel[value] || value;
      return value === "unanswerable" ? el("strong", { class: "unanswerable", text: label }) : label;
    }
    return value === "" ? el("span", { class: "muted", text: t("adjudication.empty") }) : value;
  }

  // the default pick: the value most copies share (ties: the first copy's)
  function majority(values) {
    const ids = copies.map((c) => c.id).filter((id) => id in values);
    if (!ids.length) return Object.keys(values)[0];
    const count = (id) => ids.filter((other) => values[other] === values[id]).length;
    return ids.reduce((best, id) => (count(id) > count(best) ? id : best), ids[0]);
  }

  function fieldRow(turn, field) {
    const info = turn.fields[field];
    const picked = majority(info.values);
    const row = el("tr", { class: info.differs ? "differs" : "" },
      el("th", { scope: "row" }, t("adjudication.field." + field),
        info.differs ? el("span", { class: "badge warn", text: t("adjudication.differs") }) : null));
    for (const v of sides) {
      if (!(v.id in info.values)) { row.append(el("td", { class: "muted", text: "—" })); continue; }
      const input = el("input", {
        type: "radio", name: `t${turn.number}-${field}`, value: v.id,
        "aria-label": `${t("adjudication.field." + field)}: ${sideName(v)}`,
      });
      input.checked = v.id === picked;
      row.append(el("td", { class: "pick" }, el("label", { class: "choice" }, input,
        el("span", { class: "value" }, shown(field, info.values[v.id])))));
    }
    return row;
  }

  function passageRow(turn, passage, index) {
    const name = `t${turn.number}-p${index}`;
    const marking = copies.filter((c) => passage.marks[c.id]);
    const take = marking.length * 2 > copies.length ? marking[0].id : "";
    const row = el("tr", { class: passage.differs ? "differs" : "", "data-passage": String(index) });
    const doc = data.documents[passage.doc_id] || passage.doc_id || "";
    row.append(el("td", { class: "passage" },
      el("div", { class: "doc", text: doc }), el("div", { class: "ptext", text: passage.text })));
    for (const v of sides) {
      const mark = passage.marks[v.id];
      if (!mark) { row.append(el("td", { class: "muted none", text: t("adjudication.not_marked") })); continue; }
      const input = el("input", { type: "radio", name, value: v.id, "aria-label": `${sideName(v)}: ${passage.text.slice(0, 60)}` });
      input.checked = v.id === take;
      input.dataset.index = String(mark.index);
      const grouped = mark.label === "relevant" && mark.group !== null;
      const group = grouped ? t("adjudication.group_n", { n: mark.group }) : "";
      row.append(el("td", { class: "pick" }, el("label", { class: "choice" }, input,
        el("span", { class: "badge label-" + mark.label, text: t("adjudication.label." + mark.label) }),
        el("span", { class: "muted", text: group }))));
    }
    const out = el("input", { type: "radio", name, value: "", "aria-label": t("adjudication.leave_out") });
    out.checked = take === "";
    row.append(el("td", { class: "pick" }, el("label", { class: "choice" }, out, t("adjudication.leave_out"))));
    row.append(el("td", {}, el("input", {
      type: "number", min: "0", class: "adj-group", "data-group": name,
      placeholder: t("adjudication.group_auto"), "aria-label": t("adjudication.group"),
    })));
    return row;
  }

  function head(extra) {
    const cells = [el("th", { scope: "col" }, "")];
    for (const v of sides) {
      cells.push(el("th", { scope: "col" }, sideName(v), " ",
        el("span", { class: "badge status-" + v.status, text: t("status." + v.status) })));
    }
    return el("thead", {}, el("tr", {}, ...cells, ...extra.map((x) => el("th", { scope: "col", text: x }))));
  }

  function render() {
    const bar = el("div", { class: "adj-use" }, el("span", { text: t("adjudication.use_version") }));
    for (const v of sides) {
      bar.append(el("button", { type: "button", class: "secondary small", "data-use": v.id, text: sideName(v), onclick: () => useAll(v.id) }));
    }
    root.append(bar);
    for (const turn of data.turns) {
      const section = el("section", { class: "adj-turn panel", "aria-label": t("adjudication.turn", { n: turn.number }) });
      if (data.turns.length > 1) section.append(el("h2", { text: t("adjudication.turn", { n: turn.number }) }));
      section.append(el("table", { class: "adj adj-fields" }, head([]),
        el("tbody", {}, ...FIELDS.map((f) => fieldRow(turn, f)))));
      section.append(el("h3", { text: t("adjudication.passages") }));
      if (turn.passages.length) {
        section.append(el("table", { class: "adj adj-passages" },
          head([t("adjudication.leave_out"), t("adjudication.group")]),
          el("tbody", {}, ...turn.passages.map((p, i) => passageRow(turn, p, i)))));
      } else {
        section.append(el("p", { class: "muted", text: t("adjudication.no_passages") }));
      }
      root.append(section);
    }
  }

  function useAll(id) {
    base = id;
    for (const input of root.querySelectorAll("input[type=radio]")) {
      const others = root.querySelectorAll(`input[type=radio][name="${input.name}"]`);
      const has = [...others].some((o) => o.value === id);
      if (input.name.includes("-p")) input.checked = has ? input.value === id : input.value === "";
      else if (has) input.checked = input.value === id;
    }
  }

  function choices() {
    const turns = data.turns.map((turn) => {
      const value = (name) => {
        const input = root.querySelector(`input[name="${name}"]:checked`);
        return input ? input.value : "";
      };
      const picked = {};
      for (const f of FIELDS) picked[f] = value(`t${turn.number}-${f}`);
      picked.passages = [];
      turn.passages.forEach((_, i) => {
        const name = `t${turn.number}-p${i}`;
        const input = root.querySelector(`input[name="${name}"]:checked`);
        if (!input || !input.value) return;
        const choice = { source: input.value, index: Number(input.dataset.index) };
        const group = root.querySelector(`input[data-group="${name}"]`).value.trim();
        if (group !== "") choice.group = Number(group);
        picked.passages.push(choice);
      });
      return picked;
    });
    return { version: data.version, base, turns: turns.filter((p) => FIELDS.every((f) => p[f])) };
  }

  async function save() {
    const state = document.getElementById("adj-state");
    const conflict = document.getElementById("adj-conflict");
    state.textContent = t("adjudication.saving");
    try {
      const saved = await api("POST", data.api, choices());
      data.version = saved.item.version;
      state.textContent = t("adjudication.saved");
      const badge = document.getElementById("gold-status");
      badge.textContent = t("status." + saved.item.status);
      badge.className = "badge status-" + saved.item.status;
      conflict.hidden = true;
      toast(t("adjudication.saved"));
    } catch (error) {
      state.textContent = "";
      if (error.status === 409) {
        conflict.replaceChildren(el("span", { text: t("adjudication.conflict") }),
          el("a", { href: location.href, text: t("adjudication.reload") }));
        conflict.hidden = false;
      } else {
        state.textContent = error.message;
        toast(error.message, "error");
      }
    }
  }

  render();
  document.getElementById("adj-save").addEventListener("click", save);
})();
