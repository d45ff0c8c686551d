// Admin pages: confirm dialogs, copy buttons, the batch page's live figures (polled from
// the progress endpoint with the session cookie, no reload). The worker preview runs the
// worker's own script (rating.js) in preview mode. Times are written one way everywhere,
// "2026-03-01 14:05 UTC", as the server writes them (core/templatetags/utc_time.py).
(function () {
  "use strict";

  const POLL_MS = 3000;

  // --- the outcome of what was just done (a message, a refused upload) takes the focus,
  // so a screen reader reads it and the keyboard starts from it
  const outcome = document.querySelector("[data-focus-on-load]");
  if (outcome) outcome.focus({ preventScroll: false });

  // --- progress bars: <div class="bar-fill" data-width="percent"> (no inline styles: the
  // Content-Security-Policy refuses them, while the script may still set a width)
  document.querySelectorAll(".bar-fill[data-width]").forEach((fill) => {
    const percent = Math.max(0, Math.min(100, Number(fill.dataset.width) || 0));
    fill.style.width = percent + "%";
  });

  function utcMinute(date) {
    const pad = (number) => String(number).padStart(2, "0");
    return (
      date.getUTCFullYear() + "-" + pad(date.getUTCMonth() + 1) + "-" + pad(date.getUTCDate()) +
      " " + pad(date.getUTCHours()) + ":" + pad(date.getUTCMinutes()) + " UTC"
    );
  }

  // --- forms that change something ask first: <form data-confirm="question">
  document.addEventListener("submit", (event) => {
    const form = event.target;
    const question = form.dataset ? form.dataset.confirm : undefined;
    if (question && !window.confirm(question)) event.preventDefault();
  });

  // --- copy buttons: <button data-copy="id of a readonly input">
  document.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-copy]");
    if (!button) return;
    const input = document.getElementById(button.dataset.copy);
    if (!input) return;
    let copied = false;
    try {
      await navigator.clipboard.writeText(input.value);
      copied = true;
    } catch (noClipboard) {
      // Plain http on a non-local host has no clipboard API: select and use execCommand.
      input.focus();
      input.select();
      copied = document.execCommand && document.execCommand("copy");
    }
    const text = button.textContent;
    button.textContent = copied ? "Copied" : "Press Ctrl+C";
    button.classList.toggle("copied", copied);
    setTimeout(() => {
      button.textContent = text;
      button.classList.remove("copied");
    }, 1500);
  });

  // --- live figures: elements with data-figure="path.in.the.json" are kept up to date
  function lookup(data, path) {
    return path.split(".").reduce((value, key) => (value == null ? value : value[key]), data);
  }

  function duration(seconds) {
    const minutes = Math.round(seconds / 60);
    if (seconds < 60) return Math.max(0, Math.round(seconds)) + " s";
    if (minutes < 60) return minutes + " min";
    const hours = Math.floor(minutes / 60);
    if (hours < 48) return hours + " h " + (minutes % 60) + " min";
    return Math.round(hours / 24) + " days";
  }

  function format(value, kind) {
    if (kind === "text") return value === null || value === undefined ? "" : String(value);
    if (value === null || value === undefined) return "—";
    if (kind === "seconds") return value + " s";
    if (kind === "percent") return (value * 100).toFixed(1) + "%";
    if (kind === "ago") {
      const seconds = (Date.now() - Date.parse(value)) / 1000;
      return seconds < 10 ? "just now" : duration(seconds) + " ago";
    }
    if (kind === "utc") return utcMinute(new Date(value));
    return String(value);
  }

  function showFigures(data, highlight) {
    document.querySelectorAll("[data-figure]").forEach((node) => {
      const value = lookup(data, node.dataset.figure);
      const kind = node.dataset.format;
      let text = format(value, kind);
      if (node.dataset.figure === "state" && typeof value === "string") {
        text = value.charAt(0).toUpperCase() + value.slice(1);
        node.className = "badge state-" + value;
      }
      if (kind === "ago") node.title = value ? utcMinute(new Date(value)) : "";
      if (node.textContent !== text) {
        node.textContent = text;
        // Times move by themselves; only a changed count is worth a flash.
        if (highlight && kind !== "ago" && kind !== "utc" && kind !== "text") {
          node.classList.remove("changed");
          void node.offsetWidth; // restart the highlight animation
          node.classList.add("changed");
        }
      }
    });
    document.querySelectorAll("[data-figure-bar]").forEach((node) => {
      const share = Math.max(0, Math.min(1, lookup(data, node.dataset.figureBar) || 0));
      node.style.width = (share * 100).toFixed(1) + "%";
    });
    const bar = document.getElementById("live-bar");
    if (bar) {
      bar.setAttribute("aria-valuenow", String(lookup(data, "labels.counted") || 0));
      bar.setAttribute("aria-valuemax", String(data.target_labels || 0));
    }
  }

  function startLiveFigures(panel) {
    const url = panel.dataset.progressUrl;
    const status = document.getElementById("live-status");
    const textsNode = document.getElementById("live-status-texts");
    const stateTexts = textsNode ? JSON.parse(textsNode.textContent) : {};
    let timer = null;
    let first = true; // the first answer only reformats the server's figures: no highlight

    function setStatus(text, stale) {
      if (!status) return;
      status.textContent = text;
      status.classList.toggle("stale", Boolean(stale));
    }

    async function refresh() {
      timer = null;
      let response = null;
      try {
        response = await fetch(url, {
          credentials: "same-origin",
          headers: { Accept: "application/json" },
          cache: "no-store",
        });
      } catch (networkError) {
        response = null;
      }
      if (response && (response.status === 401 || response.status === 403)) {
        setStatus("Updates stopped: your session has ended. Reload the page to log in.", true);
        return; // retrying cannot help
      }
      if (response && response.ok) {
        const data = await response.json();
        showFigures(data, !first);
        first = false;
        // The state as the server now reports it, never a "live" of its own.
        panel.dataset.state = data.state;
        const state = stateTexts[data.state] || String(data.state);
        setStatus(state + " · figures of " + utcMinute(new Date()), false);
      } else {
        setStatus("Updates interrupted (" + (response ? "server error" : "no connection") +
          "); retrying…", true);
      }
      schedule();
    }

    function schedule() {
      if (timer === null && !document.hidden) timer = setTimeout(refresh, POLL_MS);
    }

    document.addEventListener("visibilitychange", () => {
      if (!document.hidden && timer === null) refresh();
    });
    refresh();
  }

  // --- "… ago" times rendered by the server, in the same words as the live figures
  document.querySelectorAll("time.ago[datetime]").forEach((node) => {
    node.textContent = format(node.getAttribute("datetime"), "ago");
  });

  // --- background export: start a job through the API, poll it, offer the download
  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function startExportJobs(form) {
    const status = document.getElementById("export-job-status");
    const say = (text) => (status.textContent = text);
    async function poll(url) {
      const response = await fetch(url, { credentials: "same-origin" });
      const job = await response.json();
      if (job.state === "succeeded") {
        status.textContent = "Ready: ";
        const link = document.createElement("a");
        link.href = job.download_url;
        link.textContent = `download (${job.result.rows} rows)`;
        link.className = "button small primary";
        link.id = "export-job-download";
        status.appendChild(link);
      } else if (job.state === "failed") {
        say(`The export failed: ${job.message}`);
      } else {
        const share = job.total ? ` ${Math.round((100 * job.progress) / job.total)} %` : "";
        say(`Preparing…${share}`);
        setTimeout(() => poll(url), 1000);
      }
    }
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      say("Starting…");
      const response = await fetch(form.dataset.url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
        body: JSON.stringify({
          layout: form.layout.value,
          format: form.format.value,
          all_statuses: form.all_statuses.checked,
        }),
      });
      const job = await response.json();
      if (response.status !== 202) {
        say(job.detail || "The export could not start.");
        return;
      }
      poll(job.status_url);
    });
  }

  // --- the new batch form: only the chosen kind's own fields (its settings, its button
  // texts) are shown; without the script every kind's are, labelled with their kind
  function showChosenKind(form) {
    const kind = form.querySelector("select[name='kind']");
    if (!kind) return;
    const update = () => {
      form.querySelectorAll("[data-for-kind]").forEach((input) => {
        const box = input.closest(".field");
        if (box) box.hidden = input.dataset.forKind !== kind.value;
      });
    };
    kind.addEventListener("change", update);
    update();
  }
  document.querySelectorAll("form.settings-form").forEach(showChosenKind);

  const exportJobForm = document.getElementById("export-job");
  if (exportJobForm) startExportJobs(exportJobForm);
  const livePanel = document.getElementById("live");
  if (livePanel && livePanel.dataset.progressUrl) startLiveFigures(livePanel);
})();
