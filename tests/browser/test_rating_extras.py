"""The rating page's answers beyond a choice, and the study changing under a participant,
in a real Chromium:

* "I can't judge this one" (key 0 or a click, sent with Enter) and the comment box;
* a batch paused while a participant rates: the page says so and carries on by itself
  when the batch is resumed;
* the same participant in two tabs: the second tab's answer to an item the first tab
  answered is explained in plain words, and the second tab moves on;
* a pair's five options on a phone: full-width rows in scale order, text of 16 px or
  more, targets of 44 px or more.
"""

import re
import time

import pytest
from playwright.sync_api import Page, expect

from annotation.models import BatchState, Label
from annotation.services import leasing
from annotation.services.batches import change_state
from tests.browser.accessibility import assert_no_axe_violations
from tests.browser.conftest import PHONE, WIDE
from tests.browser.test_worker_flow import enter_study, shown_text
from tests.factories import make_batch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TIMEOUT_MS = 10_000


def _saved_labels(batch, expected: int):
    for _ in range(100):
        labels = list(Label.objects.filter(batch=batch).order_by("submitted_at", "id"))
        if len(labels) >= expected:
            return labels
        time.sleep(0.1)
    raise AssertionError(f"{expected} labels not stored: {labels}")


def _wait_for_another_item(page, item: str) -> None:
    """Wait until the page shows an item other than ``item`` (its responses' text)."""
    page.wait_for_function(
        """(item) => ["response", "response-1", "response-2"]
            .map((id) => document.getElementById(id)).filter(Boolean)
            .map((node) => node.textContent).join(" | ") !== item""",
        arg=item,
        timeout=TIMEOUT_MS,
    )


@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["wide", "phone"])
def test_cant_judge_and_a_comment_are_sent_with_the_answer(page: Page, live_server, viewport):
    page.set_viewport_size(viewport)
    batch = make_batch(n_items=3, per_item=2, allow_cant_judge=True, comment_box="optional")
    enter_study(page, live_server, batch, "worker=extras-1")
    assert_no_axe_violations(page, name=f"rating page with extras {viewport['width']}")
    first = shown_text(page)
    page.locator("#comment").fill("The answer cites a 1987 paper; I could not check it.")
    page.locator("#item").focus()
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    _wait_for_another_item(page, first)
    # a new item: the comment box is empty again
    expect(page.locator("#comment")).to_have_value("")
    # key 0 chooses the pass (and clears a chosen option); Enter sends it
    page.keyboard.press("2")
    page.keyboard.press("0")
    expect(page.locator("#cant-judge")).to_have_attribute("aria-pressed", "true")
    expect(page.locator(".choice.selected")).to_have_count(0)
    expect(page.locator("#submit")).to_be_enabled()
    second = shown_text(page)
    page.keyboard.press("Enter")
    _wait_for_another_item(page, second)
    expect(page.locator("#cant-judge")).to_have_attribute("aria-pressed", "false")
    rated, passed = _saved_labels(batch, 2)
    assert (rated.value, rated.status) == (3, "counted")
    assert rated.comment == "The answer cites a 1987 paper; I could not check it."
    assert passed.status == "cant_judge" and passed.value is None and passed.comment == ""
    # a click on the pass and then on an option: the option wins
    page.locator("#cant-judge").click()
    page.locator(".choice[data-key='4']").click()
    expect(page.locator("#cant-judge")).to_have_attribute("aria-pressed", "false")


def test_a_paused_batch_resumes_on_the_page_by_itself(page: Page, live_server, monkeypatch):
    monkeypatch.setattr(leasing, "PAUSED_RETRY_AFTER_SECONDS", 1)
    batch = make_batch(n_items=4, per_item=1)
    enter_study(page, live_server, batch, "worker=pauser")
    change_state(batch, BatchState.PAUSED)
    first = shown_text(page)
    page.keyboard.press("4")
    page.keyboard.press("Enter")  # the label is kept: it was leased before the pause
    status = page.locator("#status")
    expect(status).to_contain_text("paused this study for a moment", timeout=TIMEOUT_MS)
    expect(page.locator("#rating")).to_be_hidden()
    assert _saved_labels(batch, 1)[0].value == 4
    batch.refresh_from_db()
    change_state(batch, BatchState.LIVE)
    expect(page.locator("#rating")).to_be_visible(timeout=TIMEOUT_MS)
    _wait_for_another_item(page, first)
    expect(status).to_be_hidden()


def _one_item_in_two_tabs(context, live_server, worker: str):
    """A participant's item shown in two tabs (the same lease): the batch, both tabs and
    the item's text."""
    batch = make_batch(n_items=4, per_item=1)
    first_tab = context.new_page()
    enter_study(first_tab, live_server, batch, f"worker={worker}")
    second_tab = context.new_page()
    second_tab.goto(f"{live_server.url}/work/{batch.slug}/task")
    expect(second_tab.locator("#rating")).to_be_visible()
    item = shown_text(first_tab)
    assert shown_text(second_tab) == item
    return batch, first_tab, second_tab, item


def test_an_item_answered_in_another_tab_is_explained_and_the_tab_moves_on(context, live_server):
    batch, first_tab, second_tab, item = _one_item_in_two_tabs(context, live_server, "two-tabs")
    first_tab.keyboard.press("5")
    first_tab.keyboard.press("Enter")
    _wait_for_another_item(first_tab, item)
    second_tab.keyboard.press("2")
    second_tab.keyboard.press("Enter")
    status = second_tab.locator("#status")
    expect(status).to_contain_text(
        "You had already answered this item (in another tab or window)", timeout=TIMEOUT_MS
    )
    expect(status).not_to_contain_text("value:")
    _wait_for_another_item(second_tab, item)
    [label] = _saved_labels(batch, 1)
    assert label.value == 5


def test_the_already_answered_notice_outlives_a_retried_request_for_the_next_item(
    context, live_server
):
    """The next item is fetched right after the notice is shown; when that request is
    retried (the server busy for a moment), the notice comes back with the next item."""
    batch, first_tab, second_tab, item = _one_item_in_two_tabs(context, live_server, "busy-tabs")
    first_tab.keyboard.press("5")
    first_tab.keyboard.press("Enter")
    _wait_for_another_item(first_tab, item)
    next_sent = []

    def busy_once(route):
        next_sent.append(route.request.url)
        if len(next_sent) == 1:
            route.fulfill(status=503, headers={"Retry-After": "1"}, body="")
        else:
            route.continue_()

    second_tab.route("**/next", busy_once)
    second_tab.keyboard.press("2")
    second_tab.keyboard.press("Enter")
    status = second_tab.locator("#status")
    expect(status).to_contain_text("Trying again in 1 s", timeout=TIMEOUT_MS)
    _wait_for_another_item(second_tab, item)
    expect(status).to_contain_text("You had already answered this item")
    expect(status).to_have_class(re.compile(r"\bnotice\b"))
    assert len(next_sent) == 2
    [label] = _saved_labels(batch, 1)
    assert label.value == 5


def test_a_pairs_options_on_a_phone_are_full_width_rows_in_scale_order(page: Page, live_server):
    page.set_viewport_size(PHONE)
    batch = make_batch(kind="pairwise", n_items=2, per_item=1)
    enter_study(page, live_server, batch, "worker=phone-pair")
    boxes = page.evaluate(
        """() => Array.from(document.querySelectorAll('.choice')).map((node) => {
            const box = node.getBoundingClientRect();
            const text = node.querySelector('.choice-text');
            return {key: node.dataset.key, top: box.top, width: box.width,
                    height: box.height, font: parseFloat(getComputedStyle(text).fontSize),
                    row: node.parentElement.getBoundingClientRect().width};
        })"""
    )
    assert [box["key"] for box in sorted(boxes, key=lambda box: box["top"])] == list("12345")
    for box in boxes:
        assert box["width"] >= 0.95 * box["row"], box
        assert box["height"] >= 44 and box["font"] >= 16, box
    assert_no_axe_violations(page, name="pairwise rows on a phone")
    # tapping a row chooses it, and the choice is sent
    page.locator(".choice[data-key='2']").click()
    page.locator("#submit").click()
    [label] = _saved_labels(batch, 1)
    assert label.status == "counted"
    assert re.fullmatch(r"-?[0-2]", str(label.value))
