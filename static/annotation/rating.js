// Rating page: fetch an item, let the worker answer — choose an option (its key or a
// click) or type a short text, depending on the batch's kind — submit with Enter (or the
// button), and show the next item without reloading the page.
//
// Nothing submitted is lost: a label is kept in localStorage until the server has
// acknowledged it, and a failed request is retried (with the failure shown) until it
// gets an answer, also after a reload of the page. An answer that asks the page to come
// back later (429 or 503 with Retry-After, e.g. during a database restart) is waited
// out for as long as it says.
//
// The keys work wherever the focus is on the page: a digit chooses an option (and takes
// the focus there, so that a toggle such as the instructions' does not keep Enter for
// itself), Enter submits, ? shows the key help; only inside a text field are digits text.
// The item's texts are prepared by content.js (sub-headings, sideways-scrolling code and
// tables, direction per paragraph), and the page keeps the sticky header and rating bar
// out of the way of what is read (scroll padding of their heights).
//
// The staff preview runs this same script with {"preview": true}: it shows the one item
// the page carries (in <template id="preview-item">) and stores nothing.
(function () {
  "use strict";

  // The page's language: the messages come from the catalogue the page loads before this
  // script (/jsi18n/<language>/, Django's JavaScriptCatalog); numbers are written the
  // language's way.
  const gettext = window.gettext || ((text) => text);
  const ngettext = window.ngettext || ((one, many, count) => (count === 1 ? one : many));
  const fill = (text, values) =>
    text.replace(/%\((\w+)\)s/g, (whole, name) => (name in values ? String(values[name]) : whole));
  const numbers = new Intl.NumberFormat(document.documentElement.lang || undefined);
  const number = (value) => numbers.format(value);

  const config = JSON.parse(document.getElementById("worker-config").textContent);
  const PENDING_KEY = "pending-label:" + config.nextUrl;

  const el = (id) => document.getElementById(id);
  const form = el("choice-form");
  const submitButton = el("submit");
  const radios = Array.from(form.querySelectorAll("input[name=value]"));
  const textInput = el("answer"); // the text widget's field (kinds that write an answer)
  const answerProblem = el("answer-problem"); // what is wrong with the typed answer
  const keysHelp = el("keys-help"); // the key help dialog
  const content = window.WorkerContent;
  // "I can't judge this one" and the comment box, where the batch offers them
  const extras = window.AnswerExtras || {
    init() {},
    passKey: null,
    passChosen: () => false,
    togglePass() {},
    clearPass() {},
    comment: () => "",
    reset() {},
  };

  let current = null; // {assignment, item, shownAt}
  // a notice about the answer just sent, shown again with the next view: the next item is
  // fetched at once, and whatever that fetch shows meanwhile (a retry's wait) must not
  // take the notice's place
  let noticeForNextView = "";
  let busy = false; // a request is in flight: ignore further submits
  let statusKind = ""; // kind of the message shown; an error stays until the next choice

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

  // An error's message for the participant: the API's detail without the field it names
  // ("value: …"), which is the API's word, not theirs.
  function detailOf(data) {
    const detail = typeof data.detail === "string" ? data.detail : "";
    return detail.replace(/^[a-z_]+: /, "");
  }

  // POST JSON with retries (worker_requests.js), its waits and failures shown here. Once
  // an answer comes after a retry, the message shown before the retry comes back (e.g.
  // "you had already answered this item" while the next item was being fetched), rather
  // than nothing.
  function postWithRetry(url, body, what) {
    const status = el("status");
    const before = statusKind ? { message: status.textContent, kind: statusKind } : null;
    const showRetry = (message, kind) => {
      if (message) showStatus(message, kind);
      else if (before) showStatus(before.message, before.kind);
      else showStatus("");
    };
    return window.WorkerRequests.postWithRetry(url, body, what, showRetry);
  }
  const csrfToken = window.WorkerRequests.csrfToken;

  function setProgress(progress) {
    if (!progress) return;
    const total = progress.quota || progress.total_items || 0;
    const done = progress.done || 0;
    const share = total ? Math.min(1, done / total) : 0;
    el("progress-fill").style.width = (share * 100).toFixed(1) + "%";
    const bar = el("progress");
    bar.setAttribute("aria-valuenow", String(done));
    if (total) bar.setAttribute("aria-valuemax", String(total));
    const counts = { done: number(done), total: number(total) };
    bar.setAttribute(
      "aria-valuetext",
      fill(total ? gettext("%(done)s of %(total)s done") : gettext("%(done)s done"), counts)
    );
    el("progress-text").textContent = fill(
      total ? gettext("%(done)s / %(total)s done") : gettext("%(done)s done"),
      counts
    );
  }

  // A bundled batch: "Response 3 of 15 for this prompt" (the texts come translated
  // from the page); nothing for an item outside a bundle.
  function showBundle(bundle) {
    const cue = el("bundle-cue");
    if (!cue) return;
    cue.hidden = !bundle;
    if (!bundle) return;
    const counts = { position: bundle.position, size: bundle.size };
    cue.textContent = fill(
      bundle.partial
        ? gettext("Response %(position)s of %(size)s for this prompt (part of a set others began)")
        : gettext("Response %(position)s of %(size)s for this prompt"),
      counts
    );
  }

  function renderItem(payload) {
    waitingSince = null; // work came: a later wait starts its own count
    showBundle(payload.bundle);
    // the item's display comes from the server (its kind's template, texts sanitised)
    const item = el("item");
    // The focus was on the option just sent (or in the old item): it moves to the new
    // item, so that a screen reader reads it next and no option looks chosen.
    const focused = document.activeElement;
    const refocus = !textInput && (item.contains(focused) || form.contains(focused));
    item.innerHTML = payload.item.html;
    prepareItem(item);
    radios.forEach((radio) => (radio.checked = false));
    if (textInput) textInput.value = "";
    extras.reset();
    updateSelection();
    el("rating").hidden = false;
    el("done").hidden = true;
    current = { assignment: payload.assignment, shownAt: performance.now() };
    startHeartbeat(payload);
    window.scrollTo(0, 0);
    refreshLayout();
    if (textInput) textInput.focus({ preventScroll: true });
    else if (refocus) item.focus({ preventScroll: true });
  }

  // Each text of the item is content under its card's heading (h2): its own headings
  // nest below it, its code and tables are named after the card.
  function prepareItem(item) {
    if (!content) return;
    item.querySelectorAll(".markdown").forEach((text) => {
      const card = text.closest(".card");
      const heading = card && card.querySelector(".item-label");
      content.prepare(text, { parentLevel: 2, label: heading ? heading.textContent.trim() : "" });
    });
  }

  // The sticky header and rating bar never hide what the worker reads: focusing or
  // scrolling something into view stops short of them.
  function refreshLayout() {
    const root = document.documentElement;
    const header = el("task-header");
    const stuck = header && getComputedStyle(header).position === "sticky";
    root.style.scrollPaddingTop = (stuck ? header.offsetHeight : 0) + 8 + "px";
    // (a bar that rests at the end of the item, as a pair's on a phone, hides nothing)
    const sticky = !el("rating").hidden && getComputedStyle(form).position === "sticky";
    root.style.scrollPaddingBottom = (sticky ? form.offsetHeight : 0) + 8 + "px";
    // the link past the first of two texts, only where that text is longer than most of
    // a screen (measured on the text, which the link does not change)
    document.querySelectorAll("#item .skip-to").forEach((link) => {
      const text = link.closest(".card").querySelector(".markdown");
      link.classList.toggle("needless", !text || text.offsetHeight < 0.6 * window.innerHeight);
    });
    if (content) content.refresh();
  }

  function renderDone(payload, waitedOut) {
    current = null;
    waitingSince = null;
    stopHeartbeat();
    el("rating").hidden = true;
    const doneBox = el("done");
    doneBox.hidden = false;
    if (el("keys-button")) el("keys-button").hidden = true; // no keys to press any more
    const done = payload.progress && payload.progress.done;
    const reasons = {
      drained: done
        ? gettext("Every item has all the ratings it needs. You are done.")
        : gettext("This study is full: every item already has all the answers it needs."),
      nothing_left_for_you: done
        ? gettext("You have rated every item available to you. You are done.")
        : gettext("There is nothing left for you to rate in this study."),
      quota_reached: gettext("You have rated as many items as this study asks of one person."),
      excluded: doneBox.dataset.screenedOut,
      departed: gettext(
        "Your crowd platform reports that you have left this study (returned, timed out or rejected), so it has no more items for you."
      ),
    };
    el("done-reason").textContent = waitedOut
      ? doneBox.dataset.waitedOut
      : reasons[payload.reason] || gettext("There are no more items.");
    el("return-study").hidden = !payload.return_study;
    const screenedOut = payload.ending === "screened_out";
    if (payload.completion_code) {
      el("completion").hidden = false;
      const label = el("code-label");
      label.textContent =
        payload.ending === "completed"
          ? label.dataset.completed
          : screenedOut
            ? label.dataset.screenedOut
            : label.dataset.other;
      el("completion-code").textContent = payload.completion_code;
      if (payload.mturk_submit && !screenedOut) {
        // MTurk ends a HIT only by a POST from the worker's page to externalSubmit.
        const mturk = el("mturk-submit");
        mturk.action = payload.mturk_submit.url;
        el("mturk-assignment").value = payload.mturk_submit.assignmentId;
        el("mturk-code").value = payload.completion_code;
        mturk.hidden = false;
        el("mturk-button").focus();
      }
    }
    if (payload.completion_url) {
      // only a real address is a link: without one, no button at all
      const link = el("completion-link");
      link.href = payload.completion_url;
      link.hidden = false;
      link.focus();
    }
  }

  async function loadNext() {
    busy = true;
    submitButton.disabled = true;
    const answer = await postWithRetry(config.nextUrl, {}, "loading");
    busy = false;
    if (answer.status === 403 && answer.data.state === "paused") {
      waitWhilePaused(answer);
      return;
    }
    if (answer.status !== 200) {
      el("rating").hidden = true;
      showStatus(
        detailOf(answer.data) || gettext("This study cannot hand out items right now."),
        "error"
      );
      return;
    }
    if ((statusKind !== "error" && statusKind !== "notice") || pauseShown) showStatus("");
    pauseShown = false;
    setProgress(answer.data.progress);
    if (answer.data.assignment) renderItem(answer.data);
    else if (answer.data.reason === "wait" || answer.data.reason === "busy") waitAndRetry(answer.data);
    else renderDone(answer.data);
    if (noticeForNextView && answer.data.assignment) showStatus(noticeForNextView, "notice");
    noticeForNextView = "";
  }

  // Nothing to hand out right now, but the study is not over: the remaining items are
  // being rated by others (their leases may expire), or the study has as many people at
  // work as it can take. Ask again after the time the server suggests, for up to the
  // batch's wait_seconds in all; then show the ending the server gave with the answer
  // (the completion code for a worker who did items).
  let waitingSince = null;
  function waitAndRetry(payload) {
    current = null;
    stopHeartbeat();
    el("rating").hidden = true;
    if (waitingSince === null) waitingSince = Date.now();
    const waited = (Date.now() - waitingSince) / 1000;
    const limit = typeof payload.wait_seconds === "number" ? payload.wait_seconds : Infinity;
    if (waited >= limit) {
      showStatus("");
      renderDone(payload, true);
      return;
    }
    const seconds = Math.max(1, Math.min(payload.retry_after || 15, Math.ceil(limit - waited)));
    showStatus(
      fill(
        payload.reason === "busy"
          ? gettext(
              "The study has as many people working on it as it can take at once. Trying again in %(seconds)s s — please keep this page open."
            )
          : gettext(
              "All remaining items are being rated by others right now. Checking again in %(seconds)s s — please keep this page open."
            ),
        { seconds: number(seconds) }
      ),
      "info"
    );
    setTimeout(loadNext, seconds * 1000);
  }

  // The researchers paused the study: nothing is wrong on the worker's side, and the
  // page carries on by itself as soon as the study is resumed.
  let pauseShown = false; // the status says the study is paused (cleared when it resumes)
  function waitWhilePaused(answer) {
    pauseShown = true;
    current = null;
    stopHeartbeat();
    el("rating").hidden = true;
    const seconds = Math.round((answer.retryAfter || 15000) / 1000);
    showStatus(
      fill(
        gettext(
          "The researchers have paused this study for a moment. This page carries on by itself when it is resumed; checking again in %(seconds)s s — please keep this page open."
        ),
        { seconds: number(seconds) }
      ),
      "notice"
    );
    setTimeout(loadNext, seconds * 1000);
  }

  // The heartbeat: while this page is visible it extends its lease every few seconds
  // (the server caps how long one lease can be kept); a hidden tab lets it expire, so an
  // abandoned item goes back to the pool after the short base lease.
  let heartbeat = null;
  let heartbeatFor = null;
  function startHeartbeat(payload) {
    stopHeartbeat();
    if (config.preview || !config.heartbeatUrl || !payload.heartbeat_seconds) return;
    heartbeatFor = payload.assignment;
    heartbeat = setInterval(beat, payload.heartbeat_seconds * 1000);
  }
  function stopHeartbeat() {
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = null;
  }
  async function beat() {
    if (document.visibilityState !== "visible" || !current || current.assignment !== heartbeatFor) {
      return;
    }
    const url = config.heartbeatUrl.replace("ASSIGNMENT", encodeURIComponent(heartbeatFor));
    try {
      const response = await fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
        body: "{}",
      });
      // 409: the lease ended (expired, or the worker was excluded): stop extending it;
      // the submission is still judged by the usual rules.
      if (response.status === 409 || response.status === 404) stopHeartbeat();
    } catch (offline) {
      // a missed beat only shortens the lease; the next one tries again
    }
  }

  // "✓ Saved" for a moment after each acknowledged label. The cue is emptied and filled
  // anew each time, so that a screen reader announces every save (it is a status region).
  let savedTimer = null;
  function showSaved() {
    const cue = el("saved");
    if (!cue) return;
    clearTimeout(savedTimer);
    cue.classList.remove("shown");
    cue.textContent = "";
    const mark = document.createElement("span");
    mark.setAttribute("aria-hidden", "true");
    mark.textContent = "✓ ";
    cue.append(mark, gettext("Saved"));
    void cue.offsetWidth; // restart the fade
    cue.classList.add("shown");
    savedTimer = setTimeout(() => {
      cue.classList.remove("shown");
      cue.textContent = "";
    }, 2500);
  }

  // The text widget's limits, counted as the server counts them (characters are code
  // points, so an emoji is one; words are separated by whitespace): a valid answer is
  // never held back, and a too-long one is explained before it is sent.
  // What Python's str.split() splits on (the server's count): not JavaScript's \s, which
  // also takes U+FEFF and leaves out U+001C-U+001F and U+0085
  const PYTHON_WHITESPACE =
    /[\t\n\v\f\r\u001c-\u001f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

  function textProblem(text) {
    if (/[\u0000-\u001f\u007f-\u009f]/.test(text)) {
      return gettext("Please remove the control character (e.g. a tab) from your answer.");
    }
    const maxWords = parseInt(textInput.dataset.maxWords, 10);
    const maxChars = parseInt(textInput.dataset.maxChars, 10);
    const words = text.split(PYTHON_WHITESPACE).filter(Boolean).length;
    const chars = Array.from(text).length;
    if (maxWords && words > maxWords) {
      return fill(
        maxWords === 1
          ? gettext("Please answer with one word (you typed %(count)s).")
          : ngettext(
              "Please use at most %(max)s word (you typed %(count)s).",
              "Please use at most %(max)s words (you typed %(count)s).",
              maxWords
            ),
        { max: number(maxWords), count: number(words) }
      );
    }
    if (maxChars && chars > maxChars) {
      return fill(
        ngettext(
          "Please use at most %(max)s character (you typed %(count)s).",
          "Please use at most %(max)s characters (you typed %(count)s).",
          maxChars
        ),
        { max: number(maxChars), count: number(chars) }
      );
    }
    return "";
  }

  function showAnswerProblem(problem) {
    answerProblem.textContent = problem;
    answerProblem.hidden = !problem;
    textInput.setAttribute("aria-invalid", problem ? "true" : "false");
  }

  function selectedValue() {
    if (textInput) {
      const text = textInput.value.trim();
      return text && !textProblem(text) ? text : null;
    }
    const chosen = radios.find((radio) => radio.checked);
    return chosen ? parseInt(chosen.value, 10) : null;
  }

  function updateSelection() {
    if (textInput) showAnswerProblem(textProblem(textInput.value.trim()));
    const answered = selectedValue() !== null || extras.passChosen();
    // a choice made on the item shown clears the hint about it; with no item shown (an
    // ending, a refusal) the message stays: hiding the form blurs a typed answer, whose
    // "change" would otherwise wipe the one explanation left on the page
    const onItem = current !== null;
    if (onItem && (statusKind === "error" || statusKind === "hint" || statusKind === "notice") && answered) {
      showStatus("");
    }
    form.querySelectorAll(".choice").forEach((label) => {
      label.classList.toggle("selected", label.querySelector("input").checked);
    });
    submitButton.disabled = busy || !answered;
  }

  async function sendLabel(pending) {
    const url = config.labelUrl.replace("ASSIGNMENT", encodeURIComponent(pending.assignment));
    const body = pending.cant_judge
      ? { cant_judge: true, duration_ms: pending.duration_ms }
      : { value: pending.value, duration_ms: pending.duration_ms };
    if (pending.comment) body.comment = pending.comment;
    const answer = await postWithRetry(url, body, "saving");
    // 200/201: stored. 404: the assignment is not ours (stale storage). 409/400: a
    // resend cannot succeed. In every case the pending copy has done its job.
    localStorage.removeItem(PENDING_KEY);
    if (answer.status === 409 && answer.data.code === "already_answered") {
      // the same item was answered before, in another tab or window: that answer stands
      noticeForNextView = gettext(
        "You had already answered this item (in another tab or window); that answer is kept. Here is the next one."
      );
      showStatus(noticeForNextView, "notice");
    } else if (answer.status === 409 || answer.status === 400) {
      showStatus(detailOf(answer.data) || gettext("Your answer was not accepted."), "error");
    } else if (answer.status === 200 || answer.status === 201) {
      showSaved();
    }
    return answer;
  }

  function pretendSubmit(value) {
    const chosen = radios.find((radio) => radio.checked);
    const shown = chosen
      ? fill(gettext("“%(answer)s” (value %(value)s)"), {
          answer: chosen.closest(".choice").querySelector(".choice-text").textContent,
          value: value,
        })
      : fill(gettext("“%(answer)s”"), { answer: value });
    showStatus(
      fill(
        gettext(
          "Preview: a worker would now send %(answer)s and see the next item. Nothing was stored."
        ),
        { answer: shown }
      ),
      "info"
    );
  }

  // Enter with nothing to send says what to do instead of doing nothing. (A typed answer
  // that breaks the limits is already explained under its field.)
  function showNothingChosen() {
    if (textInput) {
      if (!textInput.value.trim()) {
        showStatus(gettext("Type your answer first, then press Enter."), "hint");
      }
      return;
    }
    const last = radios.length ? radios[radios.length - 1].dataset.key : "";
    showStatus(
      fill(
        gettext("Choose an answer first: press a key from 1 to %(last)s (or click one), then Enter."),
        { last: last }
      ),
      "hint"
    );
  }

  async function submitCurrent() {
    if (busy || !current) return;
    const passed = extras.passChosen();
    const value = passed ? null : selectedValue();
    if (value === null && !passed) {
      showNothingChosen();
      return;
    }
    if (config.preview) {
      pretendSubmit(passed ? gettext("“I can't judge this one”") : value);
      return;
    }
    busy = true;
    submitButton.disabled = true;
    const pending = {
      assignment: current.assignment,
      duration_ms: Math.round(performance.now() - current.shownAt),
    };
    if (passed) pending.cant_judge = true;
    else pending.value = value;
    const comment = extras.comment();
    if (comment) pending.comment = comment;
    localStorage.setItem(PENDING_KEY, JSON.stringify(pending));
    current = null;
    await sendLabel(pending);
    busy = false;
    await loadNext();
  }

  form.addEventListener("change", (event) => {
    if (event.target && event.target.name === "value") extras.clearPass();
    updateSelection();
  });
  // the pass clears the chosen option (and the typed answer's claim to be sent)
  extras.init(() => {
    if (extras.passChosen()) radios.forEach((radio) => (radio.checked = false));
    updateSelection();
  });
  form.addEventListener("input", updateSelection);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submitCurrent();
  });

  // A field where keys are text (the short-text answer).
  function isTextField(node) {
    if (!node || !node.tagName) return false;
    if (node.tagName === "TEXTAREA" || node.isContentEditable) return true;
    return (
      node.tagName === "INPUT" &&
      !["radio", "checkbox", "button", "submit", "reset", "hidden"].includes(node.type)
    );
  }

  function choose(radio) {
    extras.clearPass();
    radio.checked = true;
    updateSelection();
    // The focus follows the choice: Enter then submits, whatever had the focus before
    // (the instructions' toggle, a link in a response, a code block).
    radio.focus({ preventScroll: true });
  }

  let focusBeforeHelp = null;
  function openKeysHelp() {
    if (!keysHelp || keysHelp.open) return;
    focusBeforeHelp = document.activeElement;
    keysHelp.showModal();
  }
  if (keysHelp) {
    // The focus goes back where it was (browsers that do not do it themselves), unless a
    // key pressed since the dialog closed has already moved it (the close event comes late).
    keysHelp.addEventListener("close", () => {
      const now = document.activeElement;
      const lost = !now || now === document.body || keysHelp.contains(now);
      if (lost && focusBeforeHelp && focusBeforeHelp.isConnected) {
        focusBeforeHelp.focus({ preventScroll: true });
      }
      focusBeforeHelp = null;
    });
    el("keys-button").addEventListener("click", openKeysHelp);
  }

  // The digit a key stands for: the digit it types, or the digit key it is (event.code
  // names the physical key whatever the layout: on a French AZERTY keyboard the 1 key
  // types "&" unshifted, on an Arabic one "١"), so "press 1" works on every keyboard.
  function keyDigit(event) {
    if (/^[0-9]$/.test(event.key)) return event.key;
    const physical = /^(?:Digit|Numpad)([0-9])$/.exec(event.code || "");
    return physical ? physical[1] : null;
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.isComposing) return; // this Enter confirms a word in an input method
    if (keysHelp && keysHelp.open) return; // the dialog's own keys (Escape closes it)
    if (el("rating").hidden) return;
    const target = event.target;
    const typing = isTextField(target);
    const digit = keyDigit(event);
    if (event.key === "?" && !typing) {
      event.preventDefault();
      openKeysHelp();
    } else if (!typing && extras.passKey && digit === extras.passKey) {
      event.preventDefault();
      extras.togglePass();
    } else if (!typing && digit && digit !== "0") {
      const radio = radios.find((r) => r.dataset.key === digit);
      if (radio) {
        event.preventDefault();
        choose(radio);
      }
    } else if (event.key === "Enter") {
      if (target && (target.tagName === "TEXTAREA" || target.isContentEditable)) return;
      // Enter on a link, a toggle or another button keeps its own meaning; anywhere else
      // (the page, a choice, a code block, the answer field) it submits.
      // The pass ("I can't judge this one") is chosen like an option: Enter sends it.
      const own = target && target.closest && target.closest("a[href], summary, button");
      if (own && own !== submitButton && !own.matches("#cant-judge")) return;
      event.preventDefault();
      if (!event.repeat) submitCurrent();
    }
  });

  // Keep the scroll padding and the reachable blocks right when the screen changes size
  // or the instructions open.
  window.addEventListener("resize", refreshLayout);
  if (window.ResizeObserver) {
    const observer = new ResizeObserver(refreshLayout);
    observer.observe(el("task-header") || document.body);
    observer.observe(form);
    observer.observe(el("item"));
  }
  const instructions = el("instructions");
  if (instructions) instructions.addEventListener("toggle", refreshLayout);

  async function start() {
    if (content && el("instructions-text")) {
      content.prepare(el("instructions-text"), { parentLevel: 1, label: gettext("Instructions") });
    }
    if (config.preview) {
      el("progress-text").textContent = gettext("Preview");
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
