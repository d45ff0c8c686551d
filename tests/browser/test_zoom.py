"""The rating page zoomed to 200 % (a 1280 x 800 window seen as 640 x 400) or on a phone
held sideways: the header and the rating bar scroll with the page instead of covering
most of it, so the text to rate can be read whole; the options wrap between words, never
inside one (WCAG 1.4.4 and 1.4.10)."""

import pytest
from playwright.sync_api import expect

from tests.browser.accessibility import assert_no_axe_violations
from tests.browser.test_worker_flow import enter_study
from tests.factories import make_batch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ZOOMED = {"width": 640, "height": 400}
SIDEWAYS = {"width": 844, "height": 390}

# every word of every option on one line (a Range over a word has one box)
WORDS_WHOLE = """() => {
  const broken = [];
  document.querySelectorAll('.choice-text').forEach((node) => {
    const text = node.firstChild;
    if (!text || text.nodeType !== Node.TEXT_NODE) return;
    const words = /\\S+/g;
    let match;
    while ((match = words.exec(text.data))) {
      const range = document.createRange();
      range.setStart(text, match.index);
      range.setEnd(text, match.index + match[0].length);
      if (range.getClientRects().length > 1) broken.push(match[0]);
    }
  });
  return broken;
}"""


@pytest.mark.parametrize("viewport", [ZOOMED, SIDEWAYS], ids=["zoomed-200", "phone-sideways"])
@pytest.mark.parametrize("kind", ["absolute", "pairwise"])
def test_a_short_screen_reads_the_whole_item(browser, live_server, artifacts, viewport, kind):
    batch = make_batch(kind=kind, n_items=2, per_item=1)
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    try:
        enter_study(page, live_server, batch, f"worker=zoom-{kind}")
        for part in ("#task-header", "#choice-form"):
            position = page.locator(part).evaluate("(node) => getComputedStyle(node).position")
            assert position == "static", (part, position)
        assert page.evaluate(WORDS_WHOLE) == []
        # scrolled to the middle of the item, nothing sticks over it
        page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight / 3)")
        covering = page.evaluate(
            "() => [...document.querySelectorAll('body *')].filter((node) => {"
            " const p = getComputedStyle(node).position; return p === 'sticky' || p === 'fixed';"
            " }).map((node) => node.id || node.className)"
        )
        assert covering == []
        assert_no_axe_violations(page, name=f"{kind} at {viewport['width']}x{viewport['height']}")
        page.screenshot(
            path=artifacts / f"zoom-{kind}-{viewport['width']}x{viewport['height']}.png",
            full_page=True,
        )
        page.keyboard.press("3")
        page.keyboard.press("Enter")
        expect(page.locator("#progress-text")).to_have_text("1 / 2 done")
    finally:
        context.close()
