// How rendered Markdown (a model's response, a prompt, the instructions) sits on a
// crowdworker's page, whatever it holds. Used by rating.js and entry.js:
//
//   WorkerContent.prepare(container, {parentLevel: 2, label: "Response 1"})
//
// - Headings become sub-headings of the part they are in (a response's "# Title" is one
//   level below the card's "Response" heading), with no level skipped, so the page's
//   outline stays the interface's own.
// - Code blocks and tables are wrapped in a block that scrolls sideways on its own and
//   is named ("Code, Response 1"); refresh() makes a block that does overflow reachable
//   with Tab, so its hidden part can be scrolled with the arrow keys.
// - Each paragraph, list item, quote and cell takes its direction from its own text (a
//   list from its first item), so Arabic or Hebrew reads right to left inside an English
//   page.
// - Links open in a new tab: following one never leaves the study.
(function () {
  "use strict";
  // looked up when used: this script may run before the page's catalogue has loaded
  const gettext = (text) => (window.gettext ? window.gettext(text) : text);

  const BLOCKS = "p, li, blockquote, h1, h2, h3, h4, h5, h6, td, th, dt, dd";

  function renameHeading(heading, level) {
    const replacement = document.createElement("h" + level);
    Array.from(heading.attributes).forEach((attribute) =>
      replacement.setAttribute(attribute.name, attribute.value)
    );
    while (heading.firstChild) replacement.appendChild(heading.firstChild);
    heading.replaceWith(replacement);
  }

  function nestHeadings(container, parentLevel) {
    const headings = Array.from(container.querySelectorAll("h1, h2, h3, h4, h5, h6"));
    const levels = Array.from(new Set(headings.map((h) => Number(h.tagName[1])))).sort();
    let previous = parentLevel;
    headings.forEach((heading) => {
      const wanted = parentLevel + 1 + levels.indexOf(Number(heading.tagName[1]));
      const level = Math.min(6, wanted, previous + 1);
      previous = level;
      if (level !== Number(heading.tagName[1])) renameHeading(heading, level);
    });
  }

  function wrapWideBlocks(container, label) {
    container.querySelectorAll("pre, table").forEach((block) => {
      if (block.parentElement.classList.contains("wide-block")) return;
      const wrapper = document.createElement("div");
      const code = block.tagName === "PRE";
      const what = code ? gettext("Code") : gettext("Table");
      wrapper.className = "wide-block " + (code ? "code" : "table");
      wrapper.setAttribute("role", "group");
      wrapper.setAttribute(
        "aria-label",
        label ? gettext("%(what)s, %(label)s").replace("%(what)s", what).replace("%(label)s", label) : what
      );
      block.replaceWith(wrapper);
      wrapper.appendChild(block);
    });
  }

  function prepare(container, options) {
    if (!container || container.dataset.prepared) return;
    const settings = options || {};
    container.dataset.prepared = "1";
    nestHeadings(container, settings.parentLevel || 2);
    wrapWideBlocks(container, settings.label || "");
    container.querySelectorAll(BLOCKS).forEach((block) => block.setAttribute("dir", "auto"));
    // A list follows its first item (dir="auto" on the list itself would skip items that
    // have their own), so that its markers and indent sit on the side the text starts.
    container.querySelectorAll("ul, ol").forEach((list) => {
      const first = list.querySelector(":scope > li");
      if (first) list.setAttribute("dir", getComputedStyle(first).direction);
    });
    // A table, likewise, runs in the direction of its first cell's text (its columns
    // would otherwise follow the page's, e.g. right to left on an Arabic page).
    // Its sideways-scrolling box takes that direction too, so it opens at the table's start.
    container.querySelectorAll("table").forEach((table) => {
      const cell = table.querySelector("th, td");
      if (!cell) return;
      const box = table.parentElement.classList.contains("wide-block") ? table.parentElement : table;
      box.setAttribute("dir", getComputedStyle(cell).direction);
    });
    container.querySelectorAll("a[href]").forEach((link) => {
      link.target = "_blank";
      link.rel = "noopener noreferrer nofollow";
    });
  }

  // A block that overflows (a wide code line or table, a capped instructions panel)
  // takes part in the Tab order, so a keyboard can reach and scroll it; one that fits
  // does not, so Tab does not stop on it for nothing.
  function refresh(root) {
    (root || document).querySelectorAll(".wide-block, [data-scroll-region]").forEach((box) => {
      const scrolls =
        box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1;
      box.classList.toggle("scrolls", scrolls);
      if (scrolls) box.tabIndex = 0;
      else if (box !== document.activeElement) box.removeAttribute("tabindex");
    });
  }

  window.WorkerContent = { prepare: prepare, refresh: refresh };
})();
