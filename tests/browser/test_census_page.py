"""The census in a real Chromium: a researcher imports the shipped transcripts and norms
through the upload form (44 files at once), runs the analysis from the census page (the
script follows the job, then reloads once), and reads the charts and tables — the
published figures among them. Screenshots go to ``test-artifacts/census-*.png``."""

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from core.models import Job
from diversity.census.models import Census
from tests.browser.accessibility import assert_no_axe_violations
from tests.browser.conftest import JOB_PAGE_MARKS
from tests.browser.pages import assert_charts_drawn
from tests.browser.staff_login import log_in
from tests.staff import staff_user

pytestmark = JOB_PAGE_MARKS

EXPECT_TIMEOUT_MS = 20_000

SHIPPED = Path(__file__).resolve().parents[2] / "diversity/demo/one-word-census"


@pytest.fixture
def researcher(db):
    return staff_user("researcher", "rosa")


def test_researcher_imports_analyses_and_reads_the_census(
    page: Page, live_server, researcher, artifacts
):
    script_errors: list[str] = []
    page.on("pageerror", lambda error: script_errors.append(str(error)))
    log_in(page, live_server, researcher, "/manage/census/")
    expect(page.get_by_role("heading", name="One-Word Census")).to_be_visible()

    # Import: 44 transcripts in one file field, the norms in the other.
    page.get_by_label("Name").fill("one-word-census")
    page.locator("#census-files").set_input_files(sorted((SHIPPED / "transcripts").glob("*.json")))
    page.locator("#census-norms").set_input_files(SHIPPED / "humannorms.json")
    page.get_by_role("button", name="Import census").click()
    expect(page).to_have_url(f"{live_server.url}/manage/census/one-word-census/")
    expect(page.get_by_role("heading", name="No analysis yet")).to_be_visible()
    assert Census.objects.get(name="one-word-census").answers.count() == 5456

    # Run it from the page: the script follows the job and reloads once.
    page.get_by_role("button", name="Run analysis").click()
    expect(page.locator("#models-table")).to_be_visible()
    job = Census.objects.get(name="one-word-census").jobs.get()
    assert job.state == Job.State.SUCCEEDED
    assert job.params == {"bootstrap": 2000, "seed": 7, "human_batch": None}

    expect(page.locator("[data-summary='n_models']")).to_have_text("44")
    expect(page.locator("[data-summary='n_categories']")).to_have_text("31")
    # Both model fields against the norms, each saying which it is.
    published = page.locator("#comparison-table tr[data-comparison='published']")
    computed = page.locator("#comparison-table tr[data-comparison='computed']")
    expect(published.locator("td").nth(0)).to_have_text("18 of 20")
    expect(published.locator("td").nth(1)).to_have_text("0.661")
    expect(published.locator("td").nth(2)).to_have_text("0.358")
    expect(computed.locator("td").nth(0)).to_have_text("16 of 20")
    expect(computed.locator("td").nth(1)).to_have_text("0.618")

    # The charts: inline SVG with a real size, their words as text.
    assert_charts_drawn(page, 3)
    expect(page.locator("#chart-ranking svg text", has_text="claude-sonnet-5")).to_have_count(1)
    expect(page.locator("#chart-scatter svg text", has_text="self-distinctness")).not_to_have_count(
        0
    )
    expect(
        page.locator("#chart-modal-share svg text", has_text="People, imported norms")
    ).to_have_count(1)
    expect(page.locator("#chart-modal-share figcaption")).to_contain_text(
        "more concentrated in 16 of 20 shared categories"
    )

    # The tables: ranked by surprisal, highest first; oak takes 93.7 % of the trees.
    rows = page.locator("#models-table tbody tr")
    expect(rows).to_have_count(44)
    expect(rows.last.locator("td").nth(1)).to_have_text("claude-sonnet-5")
    expect(rows.last.locator("td[data-field='surprisal']")).to_have_text("1.054")
    expect(rows.first.locator("td[data-field='surprisal']")).to_have_text("3.213")
    tree = page.locator("#categories-table tr[data-category='tree']")
    expect(tree.locator("td[data-field='modal_share']")).to_have_text("93.7 %")
    heading = page.locator("#models-table thead th", has_text="Surprisal (bits)")
    heading.get_by_role("button").click()
    expect(heading).to_have_attribute("aria-sort", "descending")
    heading.get_by_role("button").click()
    expect(rows.first.locator("td").nth(1)).to_have_text("claude-sonnet-5")

    # the runner-up's share says of what
    expect(page.locator("#categories-table thead")).to_contain_text(
        "Runner-up's share of the non-modal answers"
    )
    page.evaluate("() => window.scrollTo(0, 0)")
    assert_no_axe_violations(page, name="census page")  # the type tags' contrast among them
    page.screenshot(path=artifacts / "census-page.png", full_page=True)
    page.goto(f"{live_server.url}/manage/census/")
    expect(page.locator("#census-table tr[data-census='one-word-census']")).to_contain_text("44")
    assert_no_axe_violations(page, name="census list")
    page.screenshot(path=artifacts / "census-list.png", full_page=True)
    assert script_errors == []
