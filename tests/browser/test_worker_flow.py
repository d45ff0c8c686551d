"""The crowdworker flow in a real Chromium: keyboard only, no page reloads between items,
retries after a network failure, inert untrusted text, and a layout that works on a
wide screen and on a phone.

Screenshots of the rating and end pages go to ``test-artifacts/`` (gitignored).
"""

import re
import time

import pytest
from playwright.sync_api import Page, expect

from annotation.models import Annotator, Label
from tests.browser.conftest import PHONE, WIDE
from tests.factories import make_batch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXPECT_TIMEOUT_MS = 5_000

ABSOLUTE_VALUE_OF_KEY = {"1": 1, "2": 2, "3": 3, "4": 4, "5": 5}
PAIRWISE_VALUE_OF_KEY = {"1": 2, "2": 1, "3": 0, "4": -1, "5": -2}

RICH_RESPONSE = """{title}

The answer has **bold** text, a list and some code:

1. First, check the input.
2. Then call `normalise(x)` and keep the result.

```python
def normalise(x):
    return x / sum(x)
```

| metric | value |
|--------|-------|
| mean   | 0.42  |
"""


def enter_study(page: Page, live_server, batch, query: str, screenshot=None) -> None:
    """Open the study link, start with Enter on the autofocused button, wait for an item."""
    page.goto(f"{live_server.url}/work/{batch.slug}/?{query}")
    expect(page.locator("#start")).to_be_focused()
    if screenshot:
        page.screenshot(path=screenshot, full_page=True)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/work/{batch.slug}/task$"))
    expect(page.locator("#rating")).to_be_visible()


def shown_text(page: Page) -> str:
    """The text identifying the current item (the response, or both responses)."""
    return page.evaluate(
        """() => ["response", "response-1", "response-2"]
            .map((id) => document.getElementById(id))
            .filter(Boolean).map((node) => node.textContent).join(" | ")"""
    )


def progress(page: Page) -> tuple[str, float]:
    text = page.locator("#progress-text").text_content()
    width = page.evaluate("() => parseFloat(document.getElementById('progress-fill').style.width)")
    return text, width


def item_id_of(text: str) -> str:
    """Factory responses start with 'Answer <index>'; the item is 'item-<index>'."""
    return "item-" + re.search(r"Answer (\d+)", text).group(1)


def choose(page: Page, key: str) -> None:
    page.keyboard.press(key)
    expect(page.locator(f".choice[data-key='{key}']")).to_have_class(re.compile(r"\bselected\b"))
    expect(page.locator("#submit")).to_be_enabled()


def wait_for_change(page: Page, before_progress: str) -> None:
    """Wait until the submitted item was acknowledged and the next view is shown."""
    # worker.js sets the progress and renders the next item (or the end) in one task.
    page.wait_for_function(
        "(before) => document.getElementById('progress-text').textContent !== before",
        arg=before_progress,
    )


def rate_with_keyboard(page: Page, key: str) -> tuple[str, str]:
    """Press the digit and Enter; return (text of the rated item, text of what follows)."""
    before_text = shown_text(page)
    before_progress, before_width = progress(page)
    choose(page, key)
    page.keyboard.press("Enter")
    wait_for_change(page, before_progress)
    after_progress, after_width = progress(page)
    assert after_width > before_width, (before_progress, after_progress)
    return before_text, (shown_text(page) if page.locator("#rating").is_visible() else "")


def use_rich_texts(batch) -> None:
    for item in batch.items.select_related("response", "response_a", "response_b"):
        for response in filter(None, (item.response, item.response_a, item.response_b)):
            response.text = RICH_RESPONSE.format(title=response.text)
            response.save(update_fields=["text"])


def settle_progress_bar(page: Page) -> None:
    """Wait for the bar's width transition to finish (for screenshots)."""
    page.wait_for_function(
        """() => { const fill = document.getElementById("progress-fill");
                   return fill.getAnimations().length === 0; }"""
    )


def assert_completion_page(page: Page, batch) -> None:
    expect(page.locator("#done")).to_be_visible()
    expect(page.locator("#rating")).to_be_hidden()
    expect(page.locator("#completion-code")).to_have_text(batch.completion_code)
    link = page.locator("#completion-link")
    expect(link).to_be_visible()
    expect(link).to_have_attribute("href", batch.completion_url)
    expect(link).to_be_focused()


def labels_by_item(platform_id: str, platform: str = "prolific") -> dict[str, int]:
    annotator = Annotator.objects.get(platform=platform, platform_id=platform_id)
    return {
        label.item.item_id: label.value
        for label in Label.objects.filter(annotator=annotator).select_related("item")
    }


def test_absolute_flow_keyboard_only(page: Page, live_server, artifacts):
    batch = make_batch(n_items=3, per_item=2, completion_url="https://app.prolific.com/done?cc=X")
    use_rich_texts(batch)
    enter_study(
        page,
        live_server,
        batch,
        "PROLIFIC_PID=p1&STUDY_ID=s&SESSION_ID=x",
        screenshot=artifacts / "entry.png",
    )
    page.evaluate("() => { window.__marker = 1; }")
    expect(page.locator("#progress-text")).to_have_text("0 / 3 done")
    expect(page.locator(".choice-text")).to_have_text(
        ["Very poor", "Poor", "Acceptable", "Good", "Excellent"]
    )

    expected: dict[str, int] = {}
    shown = []
    for number, key in enumerate(["5", "1", "3"], start=1):
        if number == 1:
            choose(page, key)
            page.screenshot(path=artifacts / "absolute-item.png", full_page=True)
        rated, following = rate_with_keyboard(page, key)
        shown.append(rated)
        expected[item_id_of(rated)] = ABSOLUTE_VALUE_OF_KEY[key]
        expect(page.locator("#progress-text")).to_have_text(f"{number} / 3 done")
        expect(page.locator("#progress")).to_have_attribute("aria-valuenow", str(number))
        if number < 3:
            assert following and following != rated, "the next item did not replace the last"

    assert len(set(shown)) == 3
    assert page.evaluate("() => window.__marker") == 1, "the page was reloaded"
    assert_completion_page(page, batch)
    settle_progress_bar(page)
    page.screenshot(path=artifacts / "completion.png", full_page=True)
    assert labels_by_item("p1") == expected
    assert Label.objects.filter(batch=batch).count() == 3


def test_pairwise_flow_keyboard_only_and_layout(page: Page, live_server, artifacts):
    batch = make_batch(
        kind="pairwise", n_items=2, per_item=2, completion_url="https://app.prolific.com/done"
    )
    use_rich_texts(batch)
    enter_study(page, live_server, batch, "PROLIFIC_PID=p2&STUDY_ID=s&SESSION_ID=x")
    page.evaluate("() => { window.__marker = 1; }")
    expect(page.locator(".choice-text")).to_have_text(
        [
            "Response 1 is much better",
            "Response 1 is slightly better",
            "About the same",
            "Response 2 is slightly better",
            "Response 2 is much better",
        ]
    )

    card_a = page.locator(".pair .response").nth(0)
    card_b = page.locator(".pair .response").nth(1)
    box_a, box_b = card_a.bounding_box(), card_b.bounding_box()
    assert abs(box_a["y"] - box_b["y"]) < 1, (box_a, box_b)
    assert box_b["x"] > box_a["x"] + box_a["width"] - 1, (box_a, box_b)
    assert box_b["x"] + box_b["width"] <= WIDE["width"], "response B overflows the screen"
    page.screenshot(path=artifacts / "pairwise-wide.png", full_page=True)

    page.set_viewport_size(PHONE)
    box_a, box_b = card_a.bounding_box(), card_b.bounding_box()
    assert box_b["y"] >= box_a["y"] + box_a["height"] - 1, (box_a, box_b)
    assert abs(box_a["x"] - box_b["x"]) < 1
    assert box_a["x"] + box_a["width"] <= PHONE["width"], "response A overflows the phone"
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    page.screenshot(path=artifacts / "pairwise-phone.png", full_page=True)
    page.set_viewport_size(WIDE)

    expected = {}
    for key in ["1", "5"]:
        rated, _ = rate_with_keyboard(page, key)
        expected[item_id_of(rated)] = PAIRWISE_VALUE_OF_KEY[key]
    assert page.evaluate("() => window.__marker") == 1, "the page was reloaded"
    assert_completion_page(page, batch)
    # the keys are relative to the order shown; labels are stored relative to A and B
    orders = dict(
        Label.objects.filter(annotator__platform_id="p2").values_list(
            "item__item_id", "shown_order"
        )
    )
    stored = {item: value if orders[item] == "ab" else -value for item, value in expected.items()}
    assert labels_by_item("p2") == stored
    assert sorted(expected.values()) == [-2, 2]


def test_repeated_enter_submits_once(page: Page, live_server):
    batch = make_batch(n_items=3, per_item=1)
    requests = []
    page.on(
        "request",
        lambda request: (
            requests.append(request.url.rsplit("/", 1)[-1])
            if request.method == "POST" and "/api/" in request.url
            else None
        ),
    )
    enter_study(page, live_server, batch, "worker=w-repeat")
    assert requests == ["next"]

    def double_press():
        page.keyboard.press("Enter")
        page.keyboard.press("Enter")

    def held_down():  # the first keydown submits; auto-repeat ones have event.repeat
        page.keyboard.down("Enter")
        page.keyboard.down("Enter")
        page.keyboard.down("Enter")
        page.keyboard.up("Enter")

    def same_task():  # two Enter keydowns before the page gets to run anything else
        page.evaluate(
            """() => { for (let i = 0; i < 2; i++) document.dispatchEvent(
                 new KeyboardEvent("keydown", {key: "Enter", bubbles: true})); }"""
        )

    shown = [shown_text(page)]
    for number, press in enumerate([double_press, held_down, same_task], start=1):
        before_progress, _ = progress(page)
        choose(page, "4")
        press()
        wait_for_change(page, before_progress)
        expect(page.locator("#progress-text")).to_have_text(f"{number} / 3 done")
        page.wait_for_timeout(150)  # let any stray second submit reach the server
        assert requests.count("label") == number, requests
        assert requests.count("next") == number + 1, requests
        assert Label.objects.filter(batch=batch).count() == number
        if number < 3:
            shown.append(shown_text(page))
    assert len(set(shown)) == 3, "an item was shown twice"
    expect(page.locator("#done")).to_be_visible()
    annotator = Annotator.objects.get(platform="generic", platform_id="w-repeat")
    assert sorted(
        Label.objects.filter(annotator=annotator).values_list("item__item_id", flat=True)
    ) == ["item-0", "item-1", "item-2"]


def test_network_failure_is_shown_and_retried(page: Page, live_server, artifacts):
    batch = make_batch(n_items=2, per_item=1)
    use_rich_texts(batch)
    page.set_viewport_size(PHONE)  # a long page on a phone: the worker scrolls down
    attempts = []

    def flaky_label(route):
        attempts.append(route.request.url)
        if len(attempts) == 1:
            route.abort("internetdisconnected")
        else:
            route.continue_()

    page.route("**/label", flaky_label)
    enter_study(page, live_server, batch, "worker=w-offline")
    first = shown_text(page)
    choose(page, "2")
    page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")  # read it all
    page.keyboard.press("Enter")

    status = page.locator("#status")
    expect(status).to_be_visible()
    expect(status).to_be_in_viewport()  # seen where the worker is, not above the fold
    expect(status).to_have_class(re.compile(r"\bwarning\b"))
    expect(status).to_contain_text("saving your answer")
    expect(status).to_contain_text("Retrying")
    page.screenshot(path=artifacts / "network-retry.png")
    assert Label.objects.filter(batch=batch).count() == 0

    expect(page.locator("#progress-text")).to_have_text("1 / 2 done")
    expect(status).to_be_hidden()
    assert len(attempts) == 2
    assert attempts[0] == attempts[1], "the retry must resend the same assignment"
    second = shown_text(page)
    assert second != first
    assert list(Label.objects.filter(batch=batch).values_list("value", flat=True)) == [2]
    assert page.evaluate("() => localStorage.length") == 0, "acknowledged label still pending"

    rate_with_keyboard(page, "3")
    expect(page.locator("#done")).to_be_visible()
    assert sorted(Label.objects.filter(batch=batch).values_list("value", flat=True)) == [2, 3]


def test_a_busy_server_is_waited_out_for_as_long_as_it_asks(page: Page, live_server):
    # 503 and 429 answers with Retry-After (a database restart, a rate limit) are retried
    # after that many seconds — longer than the page's own first back-off (1 s) — with a
    # calm message, and the label being sent is kept until it is acknowledged.
    batch = make_batch(n_items=2, per_item=1)
    label_sent: list[float] = []
    next_sent: list[float] = []

    def busy_once(times: list[float], status: int, seconds: int):
        def handle(route):
            times.append(time.monotonic())
            if len(times) == 1:
                route.fulfill(
                    status=status,
                    headers={"Retry-After": str(seconds)},
                    content_type="application/json",
                    body='{"detail": "The service is busy; try again shortly."}',
                )
            else:
                route.continue_()

        return handle

    enter_study(page, live_server, batch, "worker=w-busy")
    first = shown_text(page)
    page.route("**/label", busy_once(label_sent, 503, 3))
    page.route("**/next", busy_once(next_sent, 429, 2))
    choose(page, "2")
    page.keyboard.press("Enter")

    status = page.locator("#status")
    expect(status).to_contain_text("Trying again in 3 s")
    expect(status).to_contain_text("your answer is kept")
    expect(status).to_have_class(re.compile(r"\binfo\b"))
    assert Label.objects.filter(batch=batch).count() == 0
    assert page.evaluate("() => localStorage.length") == 1, "the unacknowledged label is kept"

    expect(status).to_contain_text("Trying again in 2 s", timeout=10_000)  # then /next: 429
    expect(page.locator("#progress-text")).to_have_text("1 / 2 done")
    assert list(Label.objects.filter(batch=batch).values_list("value", flat=True)) == [2]
    expect(status).to_be_hidden(timeout=10_000)
    assert shown_text(page) != first
    assert page.evaluate("() => localStorage.length") == 0

    assert len(label_sent) == 2 and label_sent[1] - label_sent[0] >= 2.9
    assert len(next_sent) == 2 and next_sent[1] - next_sent[0] >= 1.9
    rate_with_keyboard(page, "3")
    expect(page.locator("#done")).to_be_visible()
    assert sorted(Label.objects.filter(batch=batch).values_list("value", flat=True)) == [2, 3]


HOSTILE = (
    "Look: <script>window.__pwned=1</script>\n\n"
    'And <img src=x onerror="window.__pwned=2"> here.\n\n'
    "Click [link](javascript:window.__pwned=3) or [docs](https://example.com/docs)."
)


def test_untrusted_text_renders_inert(page: Page, live_server):
    batch = make_batch(n_items=1, per_item=1)
    item = batch.items.select_related("query", "response").get()
    item.response.text = HOSTILE
    item.response.save(update_fields=["text"])
    item.query.text = "Query with <script>window.__pwned=4</script> inside"
    item.query.save(update_fields=["text"])

    enter_study(page, live_server, batch, "worker=w-hostile")
    container = page.locator("#response")
    expect(container).to_contain_text("<script>window.__pwned=1</script>")
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(200)  # an injected image's onerror would have fired by now

    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert container.locator("script, img, iframe, object, embed").count() == 0
    assert page.locator("#query script").count() == 0
    text = container.inner_text()
    assert "<script>window.__pwned=1</script>" in text
    assert '<img src=x onerror="window.__pwned=2">' in text
    assert "javascript:window.__pwned=3" in text
    expect(page.locator("#query")).to_contain_text("<script>window.__pwned=4</script>")

    links = container.locator("a")
    assert links.count() >= 1
    for index in range(links.count()):
        link = links.nth(index)
        assert "noopener" in (link.get_attribute("rel") or "").split()
        assert not (link.get_attribute("href") or "").lower().startswith("javascript:")
    for node in container.locator("*").all():
        attributes = node.evaluate("(n) => Array.from(n.attributes).map((a) => a.name)")
        assert not [name for name in attributes if name.startswith("on")], attributes

    rate_with_keyboard(page, "3")
    expect(page.locator("#done")).to_be_visible()
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
