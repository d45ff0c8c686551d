"""The rating page's keys, wherever the focus is (README, "On the rating page"): a digit
chooses and takes the focus to the choice, so that Enter then submits even after the
instructions' toggle was clicked; Enter on the toggle itself still opens and closes it;
? opens the key help and Escape closes it; a wide code block is reached with Tab and
scrolled with the arrow keys; the "Saved" cue is announced and then gets out of the way;
a touch screen shows no key hints; in a text field digits and ? are text.
"""

import re

import pytest
from playwright.sync_api import Page, expect

from annotation.models import Label
from tests.annotation.kinds.studies import make_study
from tests.browser.conftest import PHONE
from tests.browser.nasty_items import NASTY_TEXTS
from tests.factories import make_batch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def enter_study(page: Page, live_server, batch, worker: str) -> None:
    page.goto(f"{live_server.url}/work/{batch.slug}/?worker={worker}")
    page.locator("#start").click()
    page.wait_for_url(re.compile(rf"/work/{batch.slug}/task$"))
    expect(page.locator("#rating")).to_be_visible()


def labels(batch) -> list[int]:
    return list(Label.objects.filter(batch=batch).order_by("pk").values_list("value", flat=True))


def wait_for_progress(page: Page, text: str) -> None:
    expect(page.locator("#progress-text")).to_have_text(text)


def outline_of(page: Page, selector: str) -> str:
    return page.locator(selector).evaluate("(node) => getComputedStyle(node).outlineStyle")


def test_after_opening_the_instructions_3_then_enter_rates(page: Page, live_server):
    batch = make_batch(n_items=3, per_item=1)
    enter_study(page, live_server, batch, "reader")
    toggle = page.locator("#instructions summary")

    # Enter with nothing chosen sends nothing, and says what to do.
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_have_text(
        "Choose an answer first: press a key from 1 to 5 (or click one), then Enter."
    )

    # Clicked open (the focus stays on the toggle), then 3 and Enter: a label.
    toggle.click()
    expect(page.locator("#instructions-text")).to_be_visible()
    expect(toggle).to_be_focused()
    page.keyboard.press("3")
    expect(page.locator(".choice[data-key='3']")).to_have_class(re.compile(r"\bselected\b"))
    expect(page.locator("input[data-key='3']")).to_be_focused()
    expect(page.locator("#status")).to_be_hidden()  # the hint goes once something is chosen
    assert outline_of(page, ".choice[data-key='3']") == "solid", "no visible focus"
    page.keyboard.press("Enter")
    wait_for_progress(page, "1 / 3 done")
    assert labels(batch) == [3]
    expect(page.locator("#instructions-text")).to_be_visible()  # still open, as left
    # the sent option does not keep a focus ring that would look like a choice
    expect(page.locator("#item")).to_be_focused()
    expect(page.locator(".choice.selected")).to_have_count(0)

    # Enter on the toggle keeps its own meaning: it closes and opens the instructions,
    # and sends nothing.
    toggle.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#instructions-text")).to_be_hidden()
    page.keyboard.press("Enter")
    expect(page.locator("#instructions-text")).to_be_visible()
    page.wait_for_timeout(200)
    assert labels(batch) == [3]
    assert outline_of(page, "#instructions summary") == "solid", "no visible focus"

    # From the toggle again: a digit, then Enter.
    page.keyboard.press("5")
    page.keyboard.press("Enter")
    wait_for_progress(page, "2 / 3 done")
    assert labels(batch) == [3, 5]


def test_question_mark_shows_the_key_help_and_escape_closes_it(page: Page, live_server):
    batch = make_batch(n_items=2, per_item=1)
    enter_study(page, live_server, batch, "curious")
    help_dialog = page.get_by_role("dialog", name="Keyboard")
    expect(help_dialog).to_be_hidden()

    page.keyboard.press("?")
    expect(help_dialog).to_be_visible()
    expect(help_dialog).to_contain_text("Chooses an answer")
    # each option with its key, in key order (one per line, whatever the direction)
    expect(help_dialog.locator(".key-list li").first).to_have_text("1 Very poor")
    expect(page.locator("#keys-close")).to_be_focused()
    # while it is open, the rating keys do nothing
    page.keyboard.press("2")
    page.keyboard.press("Enter")  # on Close: closes the help
    expect(help_dialog).to_be_hidden()
    expect(page.locator(".choice.selected")).to_have_count(0)
    assert labels(batch) == []

    # the Keys button opens it too; Escape closes it and the focus goes back
    page.locator("#keys-button").click()
    expect(help_dialog).to_be_visible()
    page.keyboard.press("Escape")
    expect(help_dialog).to_be_hidden()
    expect(page.locator("#keys-button")).to_be_focused()
    page.keyboard.press("4")
    page.keyboard.press("Enter")
    wait_for_progress(page, "1 / 2 done")
    assert labels(batch) == [4]


def test_a_wide_code_block_is_reached_with_tab_and_scrolled_with_arrows(page: Page, live_server):
    batch = make_batch(n_items=1, per_item=1)
    item = batch.items.select_related("response").get()
    item.response.text = NASTY_TEXTS["long-code"]
    item.response.save(update_fields=["text"])
    page.set_viewport_size(PHONE)
    enter_study(page, live_server, batch, "coder")

    block = page.locator("#response .wide-block.code")
    expect(block).to_have_attribute("tabindex", "0")
    expect(block).to_have_attribute("aria-label", "Code, Response")
    for _ in range(8):
        page.keyboard.press("Tab")
        if block.evaluate("(node) => node === document.activeElement"):
            break
    expect(block).to_be_focused()
    assert outline_of(page, "#response .wide-block.code") == "solid", "no visible focus"
    assert block.evaluate("(node) => node.scrollLeft") == 0
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('#response .wide-block').scrollLeft > 0")
    assert page.evaluate("() => window.scrollX") == 0, "the page itself scrolled sideways"

    # the digits and Enter still work from inside the code block
    block.focus()
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    expect(page.locator("#done")).to_be_visible()
    assert labels(batch) == [2]


def test_the_saved_cue_is_announced_and_then_gets_out_of_the_way(page: Page, live_server):
    batch = make_batch(n_items=2, per_item=1)
    enter_study(page, live_server, batch, "saver")
    cue = page.locator("#saved")
    expect(cue).to_have_attribute("role", "status")  # a polite live region
    expect(cue).to_have_text("")
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    expect(cue).to_have_text("✓ Saved")
    expect(cue).to_be_in_viewport()
    # the check mark is not read out; the word is
    assert cue.locator("[aria-hidden='true']").text_content().strip() == "✓"
    progress = page.locator("#progress-text").bounding_box()
    shown = cue.bounding_box()
    assert shown["x"] + shown["width"] <= progress["x"], "the cue covers the progress"
    expect(cue).to_have_text("", timeout=4_000)  # gone after a moment
    assert labels(batch) == [1]


def test_no_key_hints_on_a_touch_screen(browser, live_server, artifacts):
    batch = make_batch(kind="pairwise", n_items=1, per_item=1)
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/work/{batch.slug}/?worker=thumb")
        expect(page.get_by_text("Tap an answer, then Submit.")).to_be_visible()
        expect(page.get_by_text(re.compile(r"^Press 1"))).to_be_hidden()
        page.locator("#start").tap()
        page.wait_for_url(re.compile(r"/task$"))
        expect(page.locator("#rating")).to_be_visible()
        for hint in ("#submit kbd", ".choice .key >> nth=0", "#keys-button"):
            expect(page.locator(hint)).to_be_hidden()
        # the options and Submit are on the first screen
        for node in page.locator(".choice, #submit").all():
            expect(node).to_be_in_viewport()
        page.screenshot(path=artifacts / "touch-pairwise.png")
        page.locator(".choice[data-key='5']").tap()
        page.locator("#submit").tap()
        expect(page.locator("#done")).to_be_visible()
    finally:
        context.close()
    (label,) = Label.objects.filter(batch=batch)
    assert label.value == (-2 if label.shown_order == "ab" else 2)


def test_keys_are_text_in_the_short_text_field(page: Page, live_server):
    batch = make_study("short_text", slug="keys-short-text", n_items=1, per_item=1)
    enter_study(page, live_server, batch, "typist")
    field = page.locator("#answer")
    expect(field).to_be_focused()
    page.keyboard.type("5?")
    expect(field).to_have_value("5?")
    expect(page.locator("#keys-help")).to_be_hidden()
    field.fill("")
    page.keyboard.type("teal")
    page.keyboard.press("Enter")
    expect(page.locator("#done")).to_be_visible()
    (label,) = Label.objects.filter(batch=batch)
    assert label.text == "teal"


def test_on_a_phone_a_link_skips_past_a_long_first_response(page: Page, live_server):
    batch = make_batch(kind="pairwise", n_items=1, per_item=1)
    item = batch.items.select_related("response_a", "response_b").get()
    for response in (item.response_a, item.response_b):
        response.text = NASTY_TEXTS["long-answer"] + f"\n\nEND-OF-{response.response_id}"
        response.save(update_fields=["text"])
    page.set_viewport_size(PHONE)
    enter_study(page, live_server, batch, "skipper")
    skip = page.get_by_role("link", name="Skip to the second response")
    expect(skip).to_be_in_viewport()
    second = page.locator("#response-2-card")
    assert second.bounding_box()["y"] > 10 * PHONE["height"], "the first response is short"
    skip.focus()
    page.keyboard.press("Enter")  # on a link, Enter follows it (and submits nothing)
    expect(second).to_be_focused()
    heading = page.locator("#response-2-label")
    expect(heading).to_be_in_viewport()
    header_bottom = page.locator("#task-header").bounding_box()
    assert heading.bounding_box()["y"] >= header_bottom["y"] + header_bottom["height"]
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    expect(page.locator("#done")).to_be_visible()
    assert labels(batch) == [0]


def test_the_digit_keys_choose_on_every_keyboard_layout(page: Page, live_server):
    batch = make_batch(n_items=2, per_item=1)
    enter_study(page, live_server, batch, "azerty")

    def press(key: str, code: str) -> None:
        page.evaluate(
            "([key, code]) => document.body.dispatchEvent("
            "new KeyboardEvent('keydown', {key, code, bubbles: true, cancelable: true}))",
            [key, code],
        )

    for key, code, chosen in [
        ("&", "Digit1", "1"),  # French AZERTY: the 1 key types & unshifted
        ("é", "Digit2", "2"),
        ("٣", "Digit3", "3"),  # Arabic keyboard
        ("4", "Numpad4", "4"),
    ]:
        press(key, code)
        expect(page.locator(f".choice[data-key='{chosen}']")).to_have_class(
            re.compile(r"\bselected\b")
        )
    page.keyboard.press("Enter")
    wait_for_progress(page, "1 / 2 done")
    assert labels(batch) == [4]
