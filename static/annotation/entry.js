// Entry page: the consent and instructions are prepared as content (content.js: their
// headings nest under the page's, wide code and tables scroll on their own); the Start
// button takes the keyboard focus without scrolling the page (on a phone, autofocus
// would jump past the title and the consent text), and Enter anywhere on the page —
// outside a link or another button — starts.
(function () {
  "use strict";
  const gettext = window.gettext || ((text) => text);
  if (window.WorkerContent) {
    const parts = [
      ["consent-text", gettext("Consent")],
      ["instructions-text", gettext("Instructions")],
    ];
    parts.forEach(([id, label]) => {
      const text = document.getElementById(id);
      if (text) window.WorkerContent.prepare(text, { parentLevel: 2, label: label });
    });
    window.WorkerContent.refresh();
    window.addEventListener("resize", () => window.WorkerContent.refresh());
  }
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
