// Entry page: the Start button takes the keyboard focus without scrolling the page (on a
// phone, autofocus would jump past the title and the consent text), and Enter anywhere
// on the page — outside a link or another button — starts.
(function () {
  "use strict";
  const start = document.getElementById("start");
  if (!start) return;
  start.focus({ preventScroll: true });
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target && target.closest && target.closest("a, button, summary, input, textarea")) {
      return;
    }
    event.preventDefault();
    start.click();
  });
})();
