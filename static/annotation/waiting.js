// Waiting page: every slot this worker could take is held by someone else's lease (or
// the study has as many people at once as it can take). Ask the entry page again when
// the server said (Retry-After) and, once it answers with anything but this page (the
// consent form, the rating page, or "no place came back"), show that page. The server
// keeps the deadline (wait_for_release_seconds); this script only counts it down.
(function () {
  "use strict";
  const box = document.getElementById("waiting");
  const countdown = document.getElementById("wait-countdown");
  if (!box || !countdown) return;
  let next = Number(box.dataset.retry) || 5;
  let left = Number(box.dataset.left) || 0;
  let template = box.dataset.countdown;
  const numbers = new Intl.NumberFormat(document.documentElement.lang || undefined);

  function minutes(seconds) {
    const s = Math.max(0, Math.round(seconds));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }
  function show() {
    countdown.textContent = template
      .replace("%(next)s", numbers.format(Number.isFinite(next) ? Math.max(0, next) : 0))
      .replace("%(left)s", minutes(left));
  }
  function retryAfter(response) {
    const seconds = Number((response.headers.get("Retry-After") || "").trim());
    return Number.isFinite(seconds) && seconds > 0 ? seconds : 5;
  }
  async function poll() {
    let response;
    try {
      response = await fetch(window.location.href, { credentials: "same-origin" });
    } catch (offline) {
      template = box.dataset.offline;
      next = 10;
      return;
    }
    template = box.dataset.countdown;
    if (response.ok && response.headers.get("X-Wait-Seconds-Left") !== null) {
      next = retryAfter(response);
      left = Number(response.headers.get("X-Wait-Seconds-Left")) || 0;
      return;
    }
    if (response.status === 429 || response.status === 503) {
      next = retryAfter(response); // asked too often, or the server is busy: ask again
      return;
    }
    window.location.reload(); // a page of its own: consent, the items, or the end
  }
  show();
  setInterval(async () => {
    next -= 1;
    left = Math.max(0, left - 1);
    if (next <= 0) {
      next = Infinity; // no second poll while this one is under way
      await poll();
    }
    show();
  }, 1000);
})();
