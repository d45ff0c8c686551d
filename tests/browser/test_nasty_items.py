"""The rating page holds any content: the nasty-item corpus (``nasty_items.py``: long
code, a 200-column table, a 5,000-word answer, right-to-left text, emoji, a very long URL,
nested lists, Markdown headings, a string that looks like HTML) rated as a new worker
would, keyboard only, in Chromium at 1280×900 and 390×844, for the kinds that show
responses (absolute, pairwise, similarity), after opening the instructions.

The instructions stay open for the first item and are closed from the keyboard after it.
For every item, at its viewport, the page must:
- have no horizontal scroll, with every response card inside the screen's width (long
  lines, tables and code scroll inside their own block, which is then reachable with Tab
  and named);
- show pairs in two equal columns side by side on the wide screen, one above the other
  on the phone (Response 1 first);
- let the first and the last line of every response be scrolled into view between the
  sticky header and the rating bar, with nothing drawn over them;
- show every option and Submit on the first screen, without scrolling past the texts;
- style headings inside a text as content, not as the interface's labels.

Each label is sent with a digit and Enter, acknowledged with the "Saved" cue, and read
back from the database. A screenshot of each item goes to ``test-artifacts/nasty/``.
"""

import re

import pytest
from playwright.sync_api import Page, expect

from annotation.models import Annotator, Label
from tests.browser.conftest import PHONE, WIDE
from tests.browser.nasty_items import NASTY_TEXTS, PAIRS, make_nasty_study
from tests.browser.pages import watched_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TEXT_IDS = {
    "absolute": ["response"],
    "pairwise": ["response-1", "response-2"],
    "similarity": ["reference", "candidate"],
}
# the key pressed for the n-th item, and the value it stands for (as shown)
KEYS = ["3", "1", "5", "2", "4", "3", "1", "5", "2"]
VALUE_OF_KEY = {
    "absolute": {"1": 1, "2": 2, "3": 3, "4": 4, "5": 5},
    "pairwise": {"1": 2, "2": 1, "3": 0, "4": -1, "5": -2},
    "similarity": {"1": 1, "2": 2, "3": 3, "4": 4, "5": None},
}

# Counts the "Saved" cues and notes, as each appears, whether it can be seen.
COUNT_SAVES = """() => {
    window.__saves = 0;
    window.__cues = [];
    const cue = document.getElementById("saved");
    new MutationObserver(() => {
        if (!cue.textContent.includes("Saved")) return;
        window.__saves += 1;
        const box = cue.getBoundingClientRect();
        window.__cues.push({
            opacity: Number(getComputedStyle(cue).opacity),
            onScreen: box.top >= 0 && box.bottom <= window.innerHeight && box.width > 0,
        });
    }).observe(cue, { childList: true });
}"""

# Measures the page as it is: widths, the pair's columns, the options on the first screen.
MEASURE = """(ids) => {
    const root = document.documentElement;
    const width = root.clientWidth;
    const rect = (node) => node.getBoundingClientRect();
    const cards = ids.map((id) => rect(document.getElementById(id).closest(".card")));
    const texts = ids.map((id) => {
        const text = document.getElementById(id);
        return { id, scrollWidth: text.scrollWidth, clientWidth: text.clientWidth };
    });
    const wide = Array.from(document.querySelectorAll("#item .wide-block")).map((block) => ({
        overflows: block.scrollWidth > block.clientWidth + 1,
        tabindex: block.getAttribute("tabindex"),
        role: block.getAttribute("role"),
        label: block.getAttribute("aria-label"),
        right: rect(block).right,
        cardRight: rect(block.closest(".card")).right,
    }));
    const headings = Array.from(
        document.querySelectorAll("#item .markdown :is(h1, h2, h3, h4, h5, h6)")
    ).map((heading) => ({
        level: Number(heading.tagName[1]),
        transform: getComputedStyle(heading).textTransform,
        color: getComputedStyle(heading).color,
    }));
    const label = document.querySelector("#item .item-label");
    const controls = Array.from(
        document.querySelectorAll("#choice-form .choice, #submit")
    ).map((node) => ({ top: rect(node).top, bottom: rect(node).bottom }));
    // the bar's parts: the question's lines, each option, Submit; none may cover another
    const legend = document.createRange();
    legend.selectNodeContents(document.querySelector("#choice-form legend"));
    const parts = Array.from(legend.getClientRects()).map((r) => ["question", r]).concat(
        Array.from(document.querySelectorAll("#choice-form .choice, #submit")).map(
            (node) => [node.id || node.dataset.key, rect(node)])
    );
    const overlaps = [];
    parts.forEach(([a, ra], i) => parts.slice(i + 1).forEach(([b, rb]) => {
        const apart = ra.right <= rb.left || rb.right <= ra.left
            || ra.bottom <= rb.top || rb.bottom <= ra.top;
        if (!apart && a !== b) overlaps.push([a, b]);
    }));
    return {
        width, height: window.innerHeight, scrollWidth: root.scrollWidth,
        scrollY: window.scrollY, cards, texts, wide, headings, controls, overlaps,
        labelColor: getComputedStyle(label).color,
        labelTransform: getComputedStyle(label).textTransform,
    };
}"""

# Scrolls one line of a text (its first or last) to just above the rating bar, or just
# below the header, and reports where it is and what is drawn at its middle.
SHOW_LINE = """([id, which]) => {
    const text = document.getElementById(id);
    const walker = document.createTreeWalker(text, NodeFilter.SHOW_TEXT);
    const nodes = [];
    while (walker.nextNode()) {
        if (walker.currentNode.textContent.trim()) nodes.push(walker.currentNode);
    }
    const node = which === "last" ? nodes[nodes.length - 1] : nodes[0];
    const range = document.createRange();
    range.selectNodeContents(node);
    const line = () => {
        const rects = Array.from(range.getClientRects()).filter((r) => r.width > 0);
        return which === "last" ? rects[rects.length - 1] : rects[0];
    };
    const header = () => document.getElementById("task-header").getBoundingClientRect();
    const bar = () => document.getElementById("choice-form").getBoundingClientRect();
    if (which === "last") window.scrollBy(0, line().bottom - (bar().top - 4));
    else window.scrollBy(0, line().top - (header().bottom + 4));
    const shown = line();
    const box = text.getBoundingClientRect();
    const x = Math.max(shown.left, box.left) + 2;
    const y = (shown.top + shown.bottom) / 2;
    const hit = document.elementFromPoint(x, y);
    return {
        text: node.textContent.trim().slice(0, 40),
        top: shown.top, bottom: shown.bottom,
        headerBottom: header().bottom, barTop: bar().top,
        drawnHere: Boolean(hit && text.contains(hit)),
        hit: hit ? hit.outerHTML.slice(0, 80) : null,
    };
}"""


def assert_layout(page: Page, kind: str, viewport: dict, where: str) -> None:
    ids = TEXT_IDS[kind]
    page.evaluate("() => window.scrollTo(0, 0)")
    shown = page.evaluate(MEASURE, ids)
    assert shown["scrollWidth"] <= shown["width"], f"{where}: the page scrolls sideways {shown}"
    for card in shown["cards"]:
        assert card["left"] >= 0 and card["right"] <= shown["width"], f"{where}: {card}"
    for text in shown["texts"]:
        assert text["scrollWidth"] <= text["clientWidth"] + 1, f"{where}: {text} overflows"
    for block in shown["wide"]:
        assert block["right"] <= block["cardRight"] + 0.5, f"{where}: {block}"
        assert block["role"] == "group" and block["label"], f"{where}: {block}"
        if block["overflows"]:
            assert block["tabindex"] == "0", f"{where}: a wide block Tab cannot reach {block}"
    if len(ids) == 2:
        first, second = shown["cards"]
        if viewport is WIDE:
            assert abs(first["width"] - second["width"]) < 1, f"{where}: unequal columns"
            assert abs(first["top"] - second["top"]) < 1, f"{where}: not side by side"
            assert second["left"] >= first["right"], f"{where}: columns overlap"
            assert first["width"] > 0.4 * shown["width"], f"{where}: a column is squeezed"
        else:
            assert second["top"] >= first["bottom"], f"{where}: not one above the other"
            assert abs(first["left"] - second["left"]) < 1
    for heading in shown["headings"]:
        assert heading["level"] >= 3, f"{where}: a text's heading outranks the card's label"
        assert heading["transform"] != "uppercase", f"{where}: {heading} looks like a label"
        assert heading["color"] != shown["labelColor"], f"{where}: {heading} looks like a label"
    assert shown["labelTransform"] == "uppercase"
    assert not shown["overlaps"], f"{where}: parts of the rating bar overlap {shown['overlaps']}"
    # every option and Submit on the first screen, however long the texts
    for control in shown["controls"]:
        assert 0 <= control["top"] and control["bottom"] <= shown["height"], (
            f"{where}: an option is off the first screen: {control}"
        )
    # the first and the last line of every text can be read between header and bar
    for text_id in ids:
        for which in ("first", "last"):
            line = page.evaluate(SHOW_LINE, [text_id, which])
            assert line["top"] >= line["headerBottom"] - 0.5, f"{where} {text_id}: {line}"
            assert line["bottom"] <= line["barTop"] + 0.5, f"{where} {text_id}: {line}"
            assert line["drawnHere"], f"{where} {text_id}: something covers the line: {line}"
            if which == "last":
                assert line["text"].startswith("END-OF-"), line
    page.evaluate("() => window.scrollTo(0, 0)")


def rate(page: Page, key: str) -> None:
    """A digit then Enter; wait until the label is acknowledged (the Saved cue) and the
    next view is shown."""
    saves = page.evaluate("() => window.__saves")
    before = page.locator("#progress-text").text_content()
    page.keyboard.press(key)
    expect(page.locator(f".choice[data-key='{key}']")).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press("Enter")
    page.wait_for_function("(n) => window.__saves > n", arg=saves)
    seen = page.evaluate("() => window.__cues[window.__cues.length - 1]")
    assert seen == {"opacity": 1, "onScreen": True}, f"the Saved cue was not seen: {seen}"
    page.wait_for_function(
        "(b) => document.getElementById('progress-text').textContent !== b", arg=before
    )


def close_instructions_by_keyboard(page: Page) -> None:
    """Shift+Tab back to the instructions' toggle (the focus is on the new item), Enter."""
    toggle = page.locator("#instructions summary")
    for _ in range(6):
        page.keyboard.press("Shift+Tab")
        if toggle.evaluate("(node) => node === document.activeElement"):
            break
    expect(toggle).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#instructions-text")).to_be_hidden()


@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["wide", "phone"])
@pytest.mark.parametrize("kind", ["absolute", "pairwise", "similarity"])
def test_nasty_items_by_keyboard_only(browser, live_server, artifacts, kind, viewport):
    where_to = artifacts / "nasty"
    where_to.mkdir(exist_ok=True)
    size = "wide" if viewport is WIDE else "phone"
    batch = make_nasty_study(kind, slug=f"nasty-{kind}-{size}")
    n_items = len(NASTY_TEXTS) if kind == "absolute" else len(PAIRS)
    keys = [key if kind != "similarity" or key != "5" else "4" for key in KEYS[:n_items]]

    with watched_page(browser, viewport, 8_000) as (page, errors):
        page.goto(
            f"{live_server.url}/work/{batch.slug}/?PROLIFIC_PID=newcomer&STUDY_ID=s&SESSION_ID=x"
        )
        expect(page.locator("#start")).to_be_focused()
        assert page.evaluate("() => window.scrollY") == 0
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(rf"/work/{batch.slug}/task$"))
        expect(page.locator("#rating")).to_be_visible()
        page.evaluate(COUNT_SAVES)

        # Open the instructions from the keyboard: the first Tab reaches their toggle.
        page.keyboard.press("Tab")
        expect(page.locator("#instructions summary")).to_be_focused()
        page.keyboard.press("Enter")
        expect(page.locator("#instructions-text")).to_be_visible()
        expect(page.locator("#instructions-text")).to_contain_text("every")
        page.screenshot(path=where_to / f"{kind}-{size}-instructions.png")

        for number, key in enumerate(keys):
            shown = " + ".join(re.findall(r"END-OF-(\S+)", page.locator("#item").text_content()))
            where = f"{kind} at {size}, item {number + 1} ({shown})"
            assert_layout(page, kind, viewport, where)
            name = shown.replace(" + ", "-vs-")
            page.screenshot(path=where_to / f"{kind}-{size}-{number + 1}-{name}.png")
            rate(page, key)
            expect(page.locator("#progress-text")).to_contain_text(f"{number + 1} / {n_items}")
            if number == 0:
                close_instructions_by_keyboard(page)
        expect(page.locator("#done")).to_be_visible()
        expect(page.locator("#completion-code")).to_have_text("NASTY-DONE")
        expect(page.locator("#completion-link")).to_be_focused()
        expect(page.locator("#keys-button")).to_be_hidden()
        page.screenshot(path=where_to / f"{kind}-{size}-done.png")
        assert page.evaluate("() => window.__saves") == n_items
        assert not errors, errors

    annotator = Annotator.objects.get(platform="prolific", platform_id="newcomer")
    labels = list(Label.objects.filter(annotator=annotator).order_by("submitted_at", "pk"))
    assert len(labels) == n_items
    assert {label.item.item_id for label in labels} == set(
        batch.items.values_list("item_id", flat=True)
    )
    for label, key in zip(labels, keys, strict=True):
        shown_value = VALUE_OF_KEY[kind][key]
        if kind == "pairwise" and label.shown_order == "ba":
            shown_value = -shown_value  # stored relative to the imported A and B
        assert label.value == shown_value, (label.item.item_id, key, label.value)
