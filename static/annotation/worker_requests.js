// The rating page's requests (rating.js): JSON POSTs that are retried until they get an
// answer, so that nothing a participant submits is lost. Network errors, 5xx and 429 are
// retried forever, and shown: after the time the server asks for (Retry-After: seconds or
// an HTTP date, e.g. during a database restart), else with back-off. Any other answer is
// returned as {status, data, retryAfter}.
(function () {
  "use strict";

  const gettext = window.gettext || ((text) => text);
  const fill = (text, values) =>
    text.replace(/%\((\w+)\)s/g, (whole, name) => (name in values ? String(values[name]) : whole));
  const numbers = new Intl.NumberFormat(document.documentElement.lang || undefined);
  const number = (value) => numbers.format(value);
  const RETRY_DELAYS_MS = [1000, 2000, 4000, 8000, 15000];

  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  // How long the server asks us to wait (Retry-After: seconds or an HTTP date), in ms,
  // within [1 s, RETRY_AFTER_MAX_MS]; null when it does not say.
  const RETRY_AFTER_MAX_MS = 120000;
  function retryAfterMs(response) {
    const header = (response.headers.get("Retry-After") || "").trim();
    if (!header) return null;
    let ms = /^\d+$/.test(header) ? parseInt(header, 10) * 1000 : Date.parse(header) - Date.now();
    if (Number.isNaN(ms)) return null;
    return Math.min(RETRY_AFTER_MAX_MS, Math.max(1000, ms));
  }

  // POST JSON. Network errors, 5xx and 429 are retried forever, and shown: after the time
  // the server asks for (Retry-After), else with back-off. Any other answer is returned.
  // ``what`` is "saving" or "loading" (which message a wait shows); ``showStatus(message,
  // kind)`` shows it, and "" clears it once an answer came after a failure
  async function postWithRetry(url, body, what, showStatus) {
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
      if (response && response.status < 500 && response.status !== 429) {
        if (attempt > 0) showStatus("");
        let data = {};
        try {
          data = await response.json();
        } catch (notJson) {
          data = {
            detail: fill(gettext("Unexpected answer from the server (%(status)s)."), {
              status: response.status,
            }),
          };
        }
        return { status: response.status, data: data, retryAfter: retryAfterMs(response) };
      }
      const asked = response ? retryAfterMs(response) : null;
      if (asked !== null) {
        // the server is busy or restarting and said when to come back: nothing is wrong
        // on the worker's side, and an answer being sent is kept until it is stored
        const busyMessage =
          what === "saving"
            ? gettext(
                "The server is busy for a moment; your answer is kept on this page. Trying again in %(seconds)s s — please keep this page open."
              )
            : gettext(
                "The server is busy for a moment. Trying again in %(seconds)s s — please keep this page open."
              );
        showStatus(fill(busyMessage, { seconds: number(Math.round(asked / 1000)) }), "info");
        await sleep(asked);
        continue;
      }
      const delay = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)];
      const retryMessages = {
        saving: response
          ? gettext(
              "The server had a problem while saving your answer. Retrying in %(seconds)s s — please keep this page open."
            )
          : gettext(
              "No connection while saving your answer. Retrying in %(seconds)s s — please keep this page open."
            ),
        loading: response
          ? gettext(
              "The server had a problem while loading the next item. Retrying in %(seconds)s s — please keep this page open."
            )
          : gettext(
              "No connection while loading the next item. Retrying in %(seconds)s s — please keep this page open."
            ),
      };
      showStatus(fill(retryMessages[what], { seconds: number(Math.round(delay / 1000)) }), "warning");
      await sleep(delay);
    }
  }

  window.WorkerRequests = { csrfToken, postWithRetry, retryAfterMs };
})();
