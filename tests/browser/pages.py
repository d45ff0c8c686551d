"""What the browser tests of the staff pages do alike: open a page of its own watched for
script errors, and check its charts and that it fits a phone's width."""

from contextlib import contextmanager

from playwright.sync_api import Page, expect

from tests.browser.conftest import PHONE


@contextmanager
def watched_page(browser, viewport: dict, timeout_ms: int = 10_000):
    """A page in a fresh browser context at ``viewport`` (closed on leaving), and the list
    its scripts' uncaught errors are added to: a test checks it is empty at the end."""
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(timeout_ms)
    page = context.new_page()
    script_errors: list[str] = []
    page.on("pageerror", lambda error: script_errors.append(str(error)))
    try:
        yield page, script_errors
    finally:
        context.close()


def assert_charts_drawn(page: Page, count: int, min_height: int = 200) -> None:
    """The page shows ``count`` charts, inline SVG each with a real size."""
    charts = page.locator("svg.chart")
    expect(charts).to_have_count(count)
    for index in range(count):
        box = charts.nth(index).bounding_box()
        assert box and box["width"] > 300 and box["height"] > min_height, box


def assert_fits_a_phone(page: Page, what: str) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{what} scrolls sideways on a phone ({width}px)"
