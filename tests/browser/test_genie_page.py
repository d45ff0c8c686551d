"""A Genie set in a real Chromium: a researcher imports the hand-scored set through the
upload form, its similarity batch has been labelled by three people, and the analysis run
from the page shows the novelty profiles of both judgment sources, the per-feature summary
and the human-versus-LLM agreement. Screenshot: ``test-artifacts/genie-page.png``."""

from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from analysis.presentation import fmt
from annotation.services.batches import change_state
from core.models import Job
from diversity.genie.models import GenieSet
from diversity.genie.services.batches import create_similarity_batch
from tests.browser.accessibility import assert_no_axe_violations
from tests.browser.conftest import JOB_PAGE_MARKS, PHONE, WIDE
from tests.browser.pages import assert_charts_drawn, assert_fits_a_phone, watched_page
from tests.browser.staff_login import log_in
from tests.diversity import genie_native_set as genie_native
from tests.diversity import genie_set as hand
from tests.diversity.genie_set import label_as_the_people_did
from tests.staff import staff_user

pytestmark = JOB_PAGE_MARKS

EXPECT_TIMEOUT_MS = 20_000


@pytest.fixture
def researcher(db):
    return staff_user("researcher", "gina")


def label_the_set_batch() -> None:
    batch = create_similarity_batch(GenieSet.objects.get(name="hand"), "hand-people", per_item=3)
    label_as_the_people_did(change_state(batch, "live"))


def test_researcher_imports_and_reads_a_genie_set(
    page: Page, live_server, researcher, artifacts, tmp_path
):
    script_errors: list[str] = []
    page.on("pageerror", lambda error: script_errors.append(str(error)))
    log_in(page, live_server, researcher, "/manage/genie/")
    file = Path(tmp_path) / "judgments.jsonl"
    file.write_bytes(hand.jsonl())
    page.get_by_label("Name").fill("hand")
    page.locator("#genie-file").set_input_files(file)
    page.get_by_role("button", name="Import set").click()
    expect(page).to_have_url(f"{live_server.url}/manage/genie/hand/")
    expect(page.get_by_role("heading", name="No analysis yet")).to_be_visible()

    label_the_set_batch()
    page.reload()
    expect(page.locator("#linked-batch")).to_have_text("hand-people")
    page.get_by_label("Bootstrap draws").fill("500")
    page.get_by_role("button", name="Run analysis").click()
    expect(page.locator("#agreement-table")).to_be_visible()
    job = GenieSet.objects.get(name="hand").jobs.get()
    assert job.state == Job.State.SUCCEEDED and job.params["bootstrap"] == 500

    expect(page.locator("#human-source")).to_contain_text("batch hand-people")
    assert_charts_drawn(page, 3, min_height=150)
    expect(page.locator("#chart-profiles-llm svg text", has_text="p1/d1")).to_have_count(1)
    expect(page.locator("#chart-features svg text", has_text="human judgments")).to_have_count(1)
    plot = page.locator("#features-table tr[data-source='llm'][data-feature='Plot']")
    expect(plot.locator("td[data-field='mean']")).to_have_text("0.556")
    overall = page.locator("#agreement-table tr[data-feature='(all features)']")
    expect(overall.locator("td").first).to_have_text("12")
    expect(page.locator("#documents-table tbody tr")).to_have_count(4)  # 2 documents × 2 sources

    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=artifacts / "genie-page.png", full_page=True)
    assert script_errors == []


@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["desktop", "phone"])
def test_researcher_picks_two_methods_to_compare(
    browser, live_server, researcher, artifacts, tmp_path, viewport
):
    """GENIE's file for two models and three methods; on the set page the researcher picks
    "persona" against the baseline and reads the difference per feature, axe-clean, without
    sideways scrolling on a phone."""
    records = genie_native.rows(
        seed=8, prompts=genie_native.METHODS_PROMPTS, models=genie_native.METHODS_MODELS
    )
    path = Path(tmp_path) / "similarity.jsonl"
    path.write_text(genie_native.jsonl(records), "utf-8")
    call_command("import_genie", "methods", str(path))
    call_command("analyze_genie", "methods", "--bootstrap", "200")
    with watched_page(browser, viewport, EXPECT_TIMEOUT_MS) as (page, script_errors):
        log_in(page, live_server, researcher, "/manage/genie/methods/")
        form = page.locator("#compare form")
        form.get_by_label("Judgments").select_option("llm")
        form.get_by_label("First").select_option("method:persona")
        form.get_by_label("Second (subtracted)").select_option("method:(none)")
        form.get_by_role("button", name="Compare").click()
        table = page.locator("#chosen-comparison")
        expect(table).to_be_visible()
        expect(table.locator("caption")).to_contain_text("persona − (none)")
        expect(table.locator("tbody tr")).to_have_count(3)  # Plot, Setting, (all features)
        expected = chosen_comparison_of(researcher, "persona", "(none)")
        for feature, difference in expected.items():
            row = table.locator(f"tr[data-feature='{feature}']")
            expect(row.locator("td[data-field='difference']")).to_have_text(difference)
        expect(page.locator("#chosen-chart svg")).to_have_count(1)
        assert_no_axe_violations(page, name="genie compare")
        if viewport is PHONE:
            assert_fits_a_phone(page, "the Genie page")

        form = page.locator("#compare form")
        form.get_by_label("First").select_option("model:llama-3")
        form.get_by_label("Second (subtracted)").select_option("method:hot")
        form.get_by_role("button", name="Compare").click()
        expect(page.locator("#compare-errors")).to_contain_text("Choose two models, or two methods")
        expect(page.locator("#chosen-comparison")).to_have_count(0)
        assert_no_axe_violations(page, name="genie compare refused")
        page.screenshot(path=artifacts / f"genie-compare-{viewport['width']}.png", full_page=True)
    assert script_errors == []


def chosen_comparison_of(user, first: str, second: str) -> dict[str, str]:
    """The differences the API gives for the same choice, as the page prints them."""
    from tests.staff import with_token

    answer = with_token(user).get(
        "/api/v1/genie/methods/comparison", {"by": "method", "first": first, "second": second}
    )
    assert answer.status_code == 200
    return {
        row["feature"]: fmt(row["difference"]["difference"]) for row in answer.json()["per_feature"]
    }
