// Rating page: fetch an item, let the worker answer — choose an option (its key or a
// click) or type a short text, depending on the batch's kind — submit with Enter (or the
// button), and show the next item without reloading the page.
//
// Nothing submitted is lost: a label is kept in localStorage until the server has
// acknowledged it, and a failed request is retried (with the failure shown) until it
// gets an answer, also after a reload of the page.
//
// The staff preview runs this same script with {"preview": true}: it shows the one item
// the page carries (in <template id="preview-item">) and stores nothing.
(function () {
  "use strict";

  const config = JSON.parse(document.getElementById("worker-config").textContent);
  const PENDING_KEY = "pending-label:" + config.nextUrl;
  const RETRY_DELAYS_MS = [1000, 2000, 4000, 8000, 15000];

  const el = (id) => document.getElementById(id);
  const form = el("choice-form");
  const submitButton = el("submit");
  const radios = Array.from(form.querySelectorAll("input[name=value]"));
  const textInput = el("answer"); // the text widget's field (kinds that write an answer)

  let current = null; // {assignment, item, shownAt}
  let busy = false; // a request is in flight: ignore further submits
  let statusKind = ""; // kind of the message shown; an error stays until the next choice

  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function showStatus(message, kind) {
    const status = el("status");
    statusKind = message ? kind || "info" : "";
    if (!message) {
      status.hidden = true;
      status.textContent = "";
      return;
    }
    status.hidden = false;
    status.className = "status " + (kind || "info");
    status.textContent = message;
  }

  function sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  // POST JSON; network errors and 5xx are retried forever with back-off, and shown.
  async function postWithRetry(url, body, what) {
    for (let attempt = 0; ; attempt++) {
      let response = null;
      try {
        response = await fetch(url, {
          method: "POST",
          credentials: "same-origin",
          headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
          body: JSON.stringify(body || {}),
        });
      } catch (networkError) {
        response = null;
      }
      if (response && response.status < 500) {
        if (attempt > 0) showStatus("");
        let data = {};
        try {
          data = await response.json();
        } catch (notJson) {
          data = { detail: "Unexpected answer from the server (" + response.status + ")." };
        }
        return { status: response.status, data: data };
      }
      const delay = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)];
      const problem = response ? "The server had a problem" : "No connection";
      showStatus(
        problem + " while " + what + ". Retrying in " + Math.round(delay / 1000) +
          " s — please keep this page open.",
        "warning"
      );
      await sleep(delay);
    }
  }

  function setProgress(progress) {
    if (!progress) return;
    const total = progress.quota || progress.total_items || 0;
    const done = progress.done || 0;
    const share = total ? Math.min(1, done / total) : 0;
    el("progress-fill").style.width = (share * 100).toFixed(1) + "%";
    const bar = el("progress");
    bar.setAttribute("aria-valuenow", String(done));
    if (total) bar.setAttribute("aria-valuemax", String(total));
    el("progress-text").textContent = total ? done + " / " + total + " done" : done + " done";
  }

  function renderItem(payload) {
    // the item's display comes from the server (its kind's template, texts sanitised)
    el("item").innerHTML = payload.item.html;
    radios.forEach((radio) => (radio.checked = false));
    if (textInput) textInput.value = "";
    updateSelection();
    el("rating").hidden = false;
    el("done").hidden = true;
    current = { assignment: payload.assignment, shownAt: performance.now() };
    window.scrollTo(0, 0);
    document.querySelectorAll(".scroll").forEach((box) => (box.scrollTop = 0));
    if (textInput) textInput.focus();
  }

  function renderDone(payload) {
    current = null;
    el("rating").hidden = true;
    el("done").hidden = false;
    const reasons = {
      drained: "Every item has all the ratings it needs. You are done.",
      nothing_left_for_you: "You have rated every item available to you. You are done.",
      quota_reached: "You have rated as many items as this study asks of one person.",
      excluded: "This study has no more items for you.",
    };
    el("done-reason").textContent = reasons[payload.reason] || "There are no more items.";
    if (payload.completion_code) {
      el("completion").hidden = false;
      el("completion-code").textContent = payload.completion_code;
      if (payload.mturk_submit) {
        // MTurk ends a HIT only by a POST from the worker's page to externalSubmit.
        const mturk = el("mturk-submit");
        mturk.action = payload.mturk_submit.url;
        el("mturk-assignment").value = payload.mturk_submit.assignmentId;
        el("mturk-code").value = payload.completion_code;
        mturk.hidden = false;
        el("mturk-button").focus();
      }
      if (payload.completion_url) {
        const link = el("completion-link");
        link.href = payload.completion_url;
        link.hidden = false;
        link.focus();
      }
    }
  }

  async function loadNext() {
    busy = true;
    submitButton.disabled = true;
    const answer = await postWithRetry(config.nextUrl, {}, "loading the next item");
    busy = false;
    if (answer.status !== 200) {
      el("rating").hidden = true;
      showStatus(answer.data.detail || "This study cannot hand out items right now.", "error");
      return;
    }
    if (statusKind !== "error") showStatus("");
    setProgress(answer.data.progress);
    if (answer.data.assignment) renderItem(answer.data);
    else renderDone(answer.data);
  }

  function selectedValue() {
    if (textInput) {
      const text = textInput.value.trim();
      return text ? text : null;
    }
    const chosen = radios.find((radio) => radio.checked);
    return chosen ? parseInt(chosen.value, 10) : null;
  }

  function updateSelection() {
    if (statusKind === "error" && selectedValue() !== null) showStatus("");
    form.querySelectorAll(".choice").forEach((label) => {
      label.classList.toggle("selected", label.querySelector("input").checked);
    });
    submitButton.disabled = busy || selectedValue() === null;
  }

  async function sendLabel(pending) {
    const url = config.labelUrl.replace("ASSIGNMENT", encodeURIComponent(pending.assignment));
    const answer = await postWithRetry(
      url,
      { value: pending.value, duration_ms: pending.duration_ms },
      "saving your answer"
    );
    // 200/201: stored. 404: the assignment is not ours (stale storage). 409/400: a
    // resend cannot succeed. In every case the pending copy has done its job.
    localStorage.removeItem(PENDING_KEY);
    if (answer.status === 409 || answer.status === 400) {
      showStatus(answer.data.detail || "Your answer was not accepted.", "error");
    }
    return answer;
  }

  function pretendSubmit(value) {
    const chosen = radios.find((radio) => radio.checked);
    const shown = chosen
      ? "“" + chosen.closest(".choice").querySelector(".choice-text").textContent +
        "” (value " + value + ")"
      : "“" + value + "”";
    showStatus(
      "Preview: a worker would now send " + shown + " and see the next item. Nothing was stored.",
      "info"
    );
  }

  async function submitCurrent() {
    if (busy || !current) return;
    const value = selectedValue();
    if (value === null) return;
    if (config.preview) {
      pretendSubmit(value);
      return;
    }
    busy = true;
    submitButton.disabled = true;
    const pending = {
      assignment: current.assignment,
      value: value,
      duration_ms: Math.round(performance.now() - current.shownAt),
    };
    localStorage.setItem(PENDING_KEY, JSON.stringify(pending));
    current = null;
    await sendLabel(pending);
    busy = false;
    await loadNext();
  }

  form.addEventListener("change", updateSelection);
  form.addEventListener("input", updateSelection);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submitCurrent();
  });

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (el("rating").hidden) return;
    const target = event.target;
    if (target && (target.tagName === "TEXTAREA" || target.isContentEditable)) return;
    const inTextField = target && target.tagName === "INPUT" && target.type === "text";
    if (!inTextField && /^[1-9]$/.test(event.key)) {
      const radio = radios.find((r) => r.dataset.key === event.key);
      if (radio) {
        radio.checked = true;
        updateSelection();
        event.preventDefault();
      }
    } else if (event.key === "Enter") {
      // Enter on a link, a summary (the instructions toggle) or another button keeps its
      // own meaning; anywhere else it submits the chosen option.
      const own = target && target.closest && target.closest("a, summary, button");
      if (own && own !== submitButton) return;
      event.preventDefault();
      if (!event.repeat) submitCurrent();
    }
  });

  async function start() {
    if (config.preview) {
      el("progress-text").textContent = "Preview";
      renderItem({ assignment: "preview", item: { html: el("preview-item").innerHTML } });
      return;
    }
    const stored = localStorage.getItem(PENDING_KEY);
    if (stored) {
      busy = true;
      try {
        await sendLabel(JSON.parse(stored));
      } catch (corrupt) {
        localStorage.removeItem(PENDING_KEY);
      }
      busy = false;
    }
    await loadNext();
  }

  start();
})();
