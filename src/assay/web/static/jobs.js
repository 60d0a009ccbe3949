// Following a background job (an import, an export, LLM drafts) from a page: server-sent
// events from the job's `events` address, polling the job itself as the fallback. Shared by
// the Import & export page, a version's page and the LLM drafts page.
(function () {
  "use strict";

  // Follow a job until it ends; calls onUpdate(job) on every change and resolves with the last.
  function followJob(job, onUpdate) {
    return new Promise((resolve) => {
      let finished = false;
      function seen(data) {
        onUpdate(data);
        if (data.state !== "running" && !finished) {
          finished = true;
          resolve(data);
        }
      }
      async function poll() {
        while (!finished) {
          try {
            seen(await window.assay.api("GET", job.events.replace(/\/events$/, "")));
          } catch (_) { /* a moment without the server: try again */ }
          if (!finished) await new Promise((r) => setTimeout(r, 500));
        }
      }
      if (!window.EventSource) { poll(); return; }
      const source = new EventSource(job.events);
      source.onmessage = (event) => {
        const data = JSON.parse(event.data);
        seen(data);
        if (data.state !== "running") source.close();
      };
      source.onerror = () => {
        source.close();
        if (!finished) poll();
      };
    });
  }

  // A <progress> bar for a job: its share done, or moving while the total is unknown.
  function showJobProgress(bar, job) {
    if (job.total) {
      bar.max = job.total;
      bar.value = job.done;
    } else if (job.state === "running") {
      bar.removeAttribute("value");
    } else {
      bar.max = 1;
      bar.value = 1;
    }
  }

  window.assay.followJob = followJob;
  window.assay.showJobProgress = showJobProgress;
})();
