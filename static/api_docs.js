// The API documentation page (Swagger UI) as axe wants every page: Swagger UI draws the
// page after it loads, so each time it redraws, the part outside its <main> (the API's
// title and description) is named as a region, and its headings get the levels they
// stand for under the page's h1 (its resource sections are h3 and "Schemas" an h4, with
// no h2 between: axe's heading-order).
(function () {
  "use strict";

  const root = document.getElementById("swagger-ui");
  if (!root) return;

  function fix() {
    const info = root.querySelector(".information-container");
    if (info && !info.hasAttribute("role")) {
      info.setAttribute("role", "region");
      info.setAttribute("aria-label", "About this API");
    }
    root.querySelectorAll("h3.opblock-tag, section.models > h4").forEach((heading) => {
      if (heading.getAttribute("aria-level") !== "2") heading.setAttribute("aria-level", "2");
    });
    root.querySelectorAll(".opblock h4, .model-container h4").forEach((heading) => {
      if (heading.getAttribute("aria-level") !== "3") heading.setAttribute("aria-level", "3");
    });
    root.querySelectorAll(".opblock h5").forEach((heading) => {
      if (heading.getAttribute("aria-level") !== "4") heading.setAttribute("aria-level", "4");
    });
  }

  // An opened operation: its example code scrolls sideways (reachable by keyboard), its
  // example picker and its responses' region are named after the operation.
  function fixOperations() {
    root.querySelectorAll(".opblock").forEach((block) => {
      const path = block.querySelector(".opblock-summary-path");
      const method = block.querySelector(".opblock-summary-method");
      const name = [method && method.textContent, path && path.textContent]
        .filter(Boolean)
        .join(" ");
      // numbered: an operation shows a request and several response examples
      const codes = block.querySelectorAll(".example.microlight, .highlight-code > pre");
      codes.forEach((code, index) => {
        const label = "Example " + (index + 1) + ", " + name;
        if (code.getAttribute("aria-label") !== label) {
          code.setAttribute("tabindex", "0");
          code.setAttribute("role", "region");
          code.setAttribute("aria-label", label);
        }
      });
      block.querySelectorAll(".examples-select-element").forEach((select) => {
        if (!select.hasAttribute("aria-label")) select.setAttribute("aria-label", "Example");
      });
      block.querySelectorAll("[id$='_responses']").forEach((region) => {
        if (!region.hasAttribute("aria-label")) region.setAttribute("aria-label", "Responses of " + name);
      });
    });
  }

  // the attributes set here change nothing Swagger UI watches: no loop
  const observer = new MutationObserver(() => {
    fix();
    fixOperations();
  });
  observer.observe(root, { childList: true, subtree: true });
  fix();
})();
