// The save loop shared by the item editor and the conversation workbench.
//
// Each save sends the editor's data with the version it was read at. A 409 goes to the page's
// conflict dialog (nothing is overwritten); a network or server error keeps the change, shows
// "retrying" and tries again with a growing wait (up to 30 s); any other error stops and shows
// it. The page keeps its own state object and supplies the parts that differ as hooks.
(function () {
  "use strict";

  function autosaver(state, hooks) {
    // hooks: ready() → may a save start now; request() → Promise of the saved payload;
    // saved(payload); storeDraft(); dropDraft(id); setSaveState(kind, detail);
    // openConflict(body); render() → redraw from state.data; draftKey(id) → the local draft's
    // storage key; offerRestore() → show the banner that offers a local draft back
    function saveNow() {
      clearTimeout(state.timer);
      if (state.conflict || !state.dirty || !hooks.ready()) return state.saving || Promise.resolve();
      if (state.saving) return state.saving.then(() => saveNow());
      state.dirty = false;
      hooks.setSaveState("saving");
      state.saving = hooks.request().then((payload) => {
        hooks.saved(payload);
        state.failed = false;
        state.retries = 0;
        if (state.dirty) hooks.storeDraft(); else { hooks.dropDraft(state.id); hooks.setSaveState("saved"); }
      }, (err) => {
        state.dirty = true;
        hooks.storeDraft();
        if (err.status === 409 && err.body && err.body.current) {
          hooks.openConflict(err.body);
        } else if (err.status && err.status < 500) {
          state.failed = true;
          hooks.setSaveState("error", err.message);
        } else {
          state.failed = true;
          const delay = Math.min(30000, 1000 * 2 ** state.retries);
          state.retries += 1;
          hooks.setSaveState("retrying");
          state.timer = setTimeout(saveNow, delay);
        }
      }).finally(() => {
        state.saving = null;
        if (state.dirty && !state.conflict && !state.failed) state.timer = setTimeout(saveNow, 50);
      });
      return state.saving;
    }

    // Save whatever is pending and wait for it; false when a conflict or an error stops it.
    async function flush() {
      for (let round = 0; round < 20; round += 1) {
        if (state.conflict) return false;
        if (state.saving) { await state.saving; continue; }
        if (!state.dirty || !hooks.ready()) return true;
        state.failed = false;
        await saveNow();
        if (state.failed) return false;
      }
      return !state.dirty;
    }

    // The conflict dialog's two ways out. Neither loses anything: "keep mine" saves over the
    // stored version (which stays in the item's history); "take theirs" loads the stored
    // version and keeps mine in this browser, offered back as a draft.
    function wireConflictDialog(dialog, mineButton, theirsButton) {
      const close = () => { state.conflict = null; dialog.close(); };
      dialog.addEventListener("cancel", (event) => event.preventDefault());
      mineButton.addEventListener("click", () => {
        state.version = state.conflict.current.version;
        close();
        state.dirty = true;
        saveNow();
      });
      theirsButton.addEventListener("click", () => {
        const body = state.conflict;
        const mine = state.data;
        close();
        state.data = JSON.parse(JSON.stringify(body.current_input));
        hooks.saved({ item: body.current, findings: body.findings, documents: body.documents });
        state.dirty = false;
        hooks.render();
        hooks.setSaveState("saved");
        try {
          localStorage.setItem(hooks.draftKey(state.id), JSON.stringify(
            { data: mine, version: state.version, at: new Date().toISOString() }));
        } catch (_) { /* storage full or off: the dialog showed both versions */ }
        hooks.offerRestore();
      });
    }

    return { saveNow, flush, wireConflictDialog };
  }

  window.assay.autosaver = autosaver;
})();
