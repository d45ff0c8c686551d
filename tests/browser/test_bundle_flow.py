"""A participant rates a whole bundle by keyboard and sees where they are in it
(SPEC.md, "Bundles"), in Chromium; the page stays axe-clean with the cue shown."""

import re

import pytest
from playwright.sync_api import Page, expect

from annotation.models import Label
from tests.annotation.bundled import bundled_batch
from tests.browser.accessibility import assert_no_axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_whole_bundle_by_keyboard_with_the_position_cue(page: Page, live_server):
    batch = bundled_batch(
        "browser-bundle",
        n_queries=2,
        per_query=4,
        per_item=1,
        bundles_per_participant=1,
        completion_url="https://x.org/done",
    )
    page.goto(f"{live_server.url}/work/{batch.slug}/?PROLIFIC_PID=bundler&STUDY_ID=s")
    page.locator("#start").click()
    page.wait_for_url(re.compile(rf"/work/{batch.slug}/task$"))
    queries = set()
    for position in range(1, 5):
        expect(page.locator("#bundle-cue")).to_have_text(
            f"Response {position} of 4 for this prompt"
        )
        queries.add(page.locator("#item").inner_text().splitlines()[0])
        if position == 1:
            assert_no_axe_violations(page, name="bundle cue")
        page.keyboard.press("4")
        page.keyboard.press("Enter")
        if position < 4:
            expect(page.locator("#bundle-cue")).to_have_text(
                f"Response {position + 1} of 4 for this prompt"
            )
    expect(page.locator("#done")).to_be_visible()
    expect(page.locator("#completion-code")).to_have_text(batch.completion_code)
    labels = Label.objects.filter(batch=batch)
    assert sorted(labels.values_list("position_in_bundle", flat=True)) == [0, 1, 2, 3]
    assert labels.values("item__query").distinct().count() == 1 and len(queries) == 1
