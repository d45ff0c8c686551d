// The analysis report page: start an analysis and follow its job without reloading (then
// reload once when it succeeded), switch the subsets of the headline table, and sort the
// item and annotator tables by a click on a column heading. No libraries.
//
// A page may also follow a job it did not start here (an import): its #job-progress card
// then carries data-status-url, and with data-show-outcome the page is opened again with
// ?job=<id> once the job has ended, succeeded or failed, to show how it ended;
// data-progress="share" describes the progress as a percentage.
(function () {
  "use strict";

  const POLL_MS = 1500;
  const MAX_POLL_MS = 15000;

  // ------------------------------------------------------------------ job progress

  const card = document.getElementById("job-progress");
  const fill = document.getElementById("job-bar-fill");
  const bar = document.getElementById("job-bar");
  const text = document.getElementById("job-text");
  const stateLabel = document.getElementById("job-state");
  let reloading = false;
  // how the job followed now is described and ended: set by the card, reset by a run form
  let showOutcome = Boolean(card && card.hasAttribute("data-show-outcome"));
  let asShare = Boolean(card && card.dataset.progress === "share");

  // Reload once; ?job= names the job whose outcome the page shows (kept for that job only).
  function reload(job) {
    if (reloading) return;
    reloading = true;
    const url = new URL(window.location.href);
    if (showOutcome) url.searchParams.set("job", job.id);
    else url.searchParams.delete("job");
    if (url.href === window.location.href) window.location.reload();
    else window.location.replace(url.href);
  }

  function show(element, visible) {
    if (element) element.classList.toggle("hidden", !visible);
  }

  function runForms() {
    return Array.from(document.querySelectorAll("form[data-run-analysis]"));
  }

  function setRunFormsVisible(visible) {
    show(document.getElementById("run-card"), visible);
    const rerun = document.getElementById("rerun");
    if (rerun) rerun.hidden = !visible;
    runForms().forEach((form) => {
      const button = form.querySelector("button[type=submit]");
      if (button) button.disabled = !visible;
    });
  }

  function showRunError(message) {
    runForms().forEach((form) => {
      const box = form.querySelector("[data-run-error]");
      if (!box) return;
      box.textContent = message;
      show(box, true);
    });
  }

  function render(job) {
    const total = job.total || 0;
    const share = total ? Math.min(1, job.progress / total) : 0;
    fill.style.width = (share * 100).toFixed(1) + "%";
    bar.setAttribute("aria-valuemax", String(total || 1));
    bar.setAttribute("aria-valuenow", String(job.progress || 0));
    const states = { pending: "Waiting", running: "Running", succeeded: "Done", failed: "Failed" };
    stateLabel.textContent = states[job.state] || job.state;
    if (job.state === "pending") text.textContent = "Waiting for a worker to pick up the job…";
    else if (job.state === "running" && asShare)
      text.textContent = total
        ? Math.floor(share * 100) + " % done" + (job.message ? " (" + job.message + ")" : "")
        : "Started…";
    else if (job.state === "running")
      text.textContent = total
        ? "Step " + job.progress + " of " + total + " (the bootstrap of each set of items, each category, then each figure file)"
        : "Started…";
    else if (job.state === "succeeded")
      text.textContent = showOutcome ? "Done: loading the result…" : "Done: loading the report…";
  }

  function finished(job) {
    if (job.state === "succeeded" || (job.state === "failed" && showOutcome)) {
      reload(job);
      return true;
    }
    if (job.state === "failed") {
      show(card, false);
      setRunFormsVisible(true);
      showRunError("The analysis failed: " + (job.message || "no reason recorded") + ".");
      return true;
    }
    return false;
  }

  function follow(statusUrl, delay) {
    let wait = delay || POLL_MS;
    async function poll() {
      try {
        const response = await fetch(statusUrl, {
          headers: { Accept: "application/json" },
          credentials: "same-origin",
        });
        if (!response.ok) throw new Error("HTTP " + response.status);
        const job = await response.json();
        render(job);
        if (finished(job)) return;
        wait = POLL_MS;
      } catch (error) {
        text.textContent = "Could not reach the server (" + error.message + "); retrying…";
        wait = Math.min(MAX_POLL_MS, wait * 2);
      }
      window.setTimeout(poll, wait);
    }
    poll();
  }

  runForms().forEach((form) => {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const button = form.querySelector("button[type=submit]");
      if (button) button.disabled = true;
      const box = form.querySelector("[data-run-error]");
      show(box, false);
      let job;
      try {
        const response = await fetch(form.action, {
          method: "POST",
          body: new FormData(form),
          headers: { Accept: "application/json" },
          credentials: "same-origin",
        });
        job = await response.json();
        if (!response.ok) throw new Error(job.error || "HTTP " + response.status);
      } catch (error) {
        showRunError("The analysis did not start: " + error.message);
        if (button) button.disabled = false;
        return;
      }
      setRunFormsVisible(false);
      showOutcome = false;
      // a page whose analyses run in parts (data-progress="share") keeps describing them so
      asShare = card.dataset.progress === "share" && !card.hasAttribute("data-show-outcome");
      show(card, true);
      render(job);
      if (!finished(job)) follow(job.status_url);
    });
  });

  if (card && card.dataset.statusUrl) follow(card.dataset.statusUrl);

  // ------------------------------------------------------------------ headline subsets

  const dataNode = document.getElementById("headline-data");
  const headline = document.getElementById("headline-table");
  if (dataNode && headline) {
    const cells = JSON.parse(dataNode.textContent);
    const submit = document.querySelector("#subset-form button[type=submit]");
    if (submit) submit.hidden = true;

    function fillCell(td, cell) {
      td.classList.toggle("missing", cell.missing);
      if (cell.title) td.title = cell.title;
      else td.removeAttribute("title");
      td.replaceChildren();
      const add = (className, content) => {
        const span = document.createElement("span");
        span.className = className;
        span.textContent = content;
        td.append(span);
        return span;
      };
      add("rho", cell.r);
      td.append(" ");
      add("ci", cell.ci);
      td.append(document.createElement("br"));
      add("n", cell.n);
      if (cell.reason) add("reason", cell.reason);
    }

    headline.querySelectorAll("select.subset-pick").forEach((select) => {
      select.addEventListener("change", () => {
        const column = select.dataset.column;
        headline.querySelectorAll("tbody tr[data-row]").forEach((tr) => {
          const cell = (cells[Number(tr.dataset.row)] || {})[select.value];
          const td = tr.querySelector('td[data-column="' + column + '"]');
          if (cell && td) fillCell(td, cell);
        });
        const url = new URL(window.location.href);
        url.searchParams.set(column, select.value);
        window.history.replaceState(null, "", url);
      });
    });
  }

  // ------------------------------------------------------------------ figures download

  // The analysis stores its figures; a report analysed before that, or a score import since
  // (the scatter plot shows the scores as they are now), has them drawn on the first
  // download, which takes a few seconds on a large batch: say so while it runs.
  const figuresLink = document.getElementById("download-figures");
  const figuresBox = document.getElementById("figures-progress");
  if (figuresLink && figuresBox && figuresLink.dataset.figures === "draw") {
    const figuresText = document.getElementById("figures-progress-text");
    figuresLink.addEventListener("click", async (event) => {
      if (figuresLink.dataset.figures !== "draw") return; // drawn now: a plain download
      event.preventDefault();
      if (figuresLink.getAttribute("aria-disabled") === "true") return;
      figuresLink.setAttribute("aria-disabled", "true");
      figuresBox.hidden = false;
      const started = Date.now();
      const tell = () => {
        const seconds = Math.round((Date.now() - started) / 1000);
        figuresText.textContent =
          "Drawing the figures (once; later downloads are immediate)… " + seconds + " s";
      };
      tell();
      const ticker = window.setInterval(tell, 1000);
      try {
        const response = await fetch(figuresLink.href, { credentials: "same-origin" });
        if (!response.ok) throw new Error("HTTP " + response.status);
        const blob = await response.blob();
        const save = document.createElement("a");
        save.href = URL.createObjectURL(blob);
        save.download = figuresLink.getAttribute("download") || "figures.zip";
        const name = /filename="?([^";]+)"?/.exec(response.headers.get("Content-Disposition") || "");
        if (name) save.download = name[1];
        document.body.append(save);
        save.click();
        save.remove();
        window.setTimeout(() => URL.revokeObjectURL(save.href), 60000);
        figuresLink.dataset.figures = "ready";
        figuresText.textContent = "Figures drawn and downloaded.";
      } catch (error) {
        figuresText.textContent = "The figures could not be drawn (" + error.message + "); try again.";
      } finally {
        window.clearInterval(ticker);
        figuresBox.querySelector("progress").hidden = true;
        figuresLink.removeAttribute("aria-disabled");
      }
    });
  }

  // ------------------------------------------------------------------ sortable tables

  function sortValue(td, numeric) {
    const raw = td ? td.dataset.value : undefined;
    if (raw === undefined || raw === "") return null;
    return numeric ? Number(raw) : raw;
  }

  document.querySelectorAll("table.sortable").forEach((table) => {
    const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
    table.querySelectorAll("thead button.sort").forEach((button) => {
      button.addEventListener("click", () => {
        const th = button.closest("th");
        const index = th.cellIndex;
        const numeric = th.dataset.type !== "text";
        // first click: highest first for numbers, A→Z for text; then alternate
        const current = th.getAttribute("aria-sort");
        const ascending = current ? current === "descending" : !numeric;
        table.querySelectorAll("thead th[aria-sort]").forEach((other) => {
          other.removeAttribute("aria-sort");
        });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows).map((row) => ({
          row,
          key: sortValue(row.cells[index], numeric),
        }));
        rows.sort((a, b) => {
          if (a.key === null || b.key === null) {
            return (a.key === null) - (b.key === null); // missing values last, always
          }
          const order = numeric ? a.key - b.key : collator.compare(a.key, b.key);
          return ascending ? order : -order;
        });
        const fragment = document.createDocumentFragment();
        rows.forEach((entry) => fragment.append(entry.row));
        body.append(fragment);
      });
    });
  });
})();
