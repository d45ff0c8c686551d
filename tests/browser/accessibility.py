"""Accessibility checks for the browser tests: axe-core, run inside the page under test.

``assert_no_axe_violations(page)`` injects the vendored axe-core (``vendor/axe.min.js``,
see ``vendor/README.md``) into the page as it is now and fails with every violation it
reports, of every impact level (minor to critical), each with its rule, the elements it
found and how to fix it. Call it after the page has settled (scripts ran, dialogs closed),
at each viewport the test cares about::

    from tests.browser.accessibility import assert_no_axe_violations

    page.goto(url)
    assert_no_axe_violations(page)
    page.set_viewport_size(PHONE)
    assert_no_axe_violations(page, name="task page, phone")
"""

from pathlib import Path

AXE_SOURCE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"
AXE_VERSION = "4.14.1"

# Violations only (passes and "incomplete" are not failures); every rule axe-core enables
# by default, which covers WCAG 2.0/2.1/2.2 A and AA plus its best practices.
RUN_OPTIONS = {"resultTypes": ["violations"]}


def axe_violations(page, *, exclude: list[str] | None = None) -> list[dict]:
    """axe-core's violations on the page as it is now (CSS selectors in ``exclude`` are
    left out of the check, e.g. a third-party widget)."""
    if not page.evaluate("() => typeof window.axe === 'object' && Boolean(window.axe.run)"):
        # evaluate() runs in the page itself, so a Content-Security-Policy that forbids
        # inline scripts cannot stop the checker (a <script> tag could be refused).
        page.evaluate(AXE_SOURCE.read_text(encoding="utf-8") + "\n;undefined")
    version = page.evaluate("() => window.axe.version")
    assert version == AXE_VERSION, f"vendored axe-core is {version}, expected {AXE_VERSION}"
    context = {"exclude": [[selector] for selector in exclude]} if exclude else "document"
    results = page.evaluate(
        """async ([context, options]) => {
            const target = context === "document" ? document : context;
            const results = await window.axe.run(target, options);
            return results.violations.map((violation) => ({
                id: violation.id,
                impact: violation.impact,
                help: violation.help,
                helpUrl: violation.helpUrl,
                nodes: violation.nodes.map((node) => ({
                    target: node.target.join(" "),
                    html: node.html,
                    summary: node.failureSummary,
                })),
            }));
        }""",
        [context, RUN_OPTIONS],
    )
    return results


def describe_violations(violations: list[dict]) -> str:
    """A readable list: one block per rule, with each offending element."""
    lines = []
    for violation in violations:
        lines.append(f"[{violation['impact']}] {violation['id']}: {violation['help']}")
        for node in violation["nodes"]:
            lines.append(f"    at {node['target']}: {node['html'][:160]}")
            for hint in (node["summary"] or "").splitlines():
                lines.append(f"        {hint.strip()}")
    return "\n".join(lines)


def assert_no_axe_violations(page, *, name: str = "", exclude: list[str] | None = None) -> None:
    """Fail with every axe-core violation (any impact) found on the page as it is now."""
    violations = axe_violations(page, exclude=exclude)
    where = name or page.url
    assert not violations, f"axe-core found violations on {where}:\n" + describe_violations(
        violations
    )
