"""Length statistics, the study type declared in one package, in a real Chromium: the
navigation leads to its list, the list's button and the page's Run form start the job (the
page's script follows it and reloads), the report's table and downloads show, and both
pages pass axe. Screenshots go to ``test-artifacts/lengths-*.png``."""

import pytest
from playwright.sync_api import Page, expect

from core.models import Job
from diversity.corpora.services.imports import import_corpus
from tests.browser.accessibility import assert_no_axe_violations
from tests.browser.conftest import JOB_PAGE_MARKS
from tests.browser.staff_login import log_in
from tests.files import write_jsonl
from tests.staff import staff_user

pytestmark = JOB_PAGE_MARKS


@pytest.fixture
def corpus(db, tmp_path):
    rows = [
        {
            "query_id": f"q{query}",
            "query": f"Question {query}?",
            "model": model,
            "sample": 1,
            "response_id": f"q{query}-{model}",
            "response": "word " * (query + 1) * (2 if model == "long-winded" else 1),
        }
        for query in range(4)
        for model in ("brief", "long-winded")
    ]
    return import_corpus("pool", write_jsonl(tmp_path / "pool.jsonl", rows))


def test_a_researcher_runs_and_reads_the_length_statistics(
    page: Page, live_server, corpus, artifacts
):
    script_errors: list[str] = []
    page.on("pageerror", lambda error: script_errors.append(str(error)))
    log_in(page, live_server, staff_user("researcher", "rosa"), "/manage/census/")
    page.get_by_role("navigation").get_by_role("link", name="Lengths").click()
    expect(page.get_by_role("heading", name="Length statistics")).to_be_visible()
    expect(page.locator("#lengths-table tr[data-subject='pool']")).to_contain_text("not yet")
    assert_no_axe_violations(page, name="lengths list")
    page.screenshot(path=artifacts / "lengths-list.png", full_page=True)

    page.get_by_role("link", name="pool").click()
    expect(page.get_by_role("heading", name="No analysis yet")).to_be_visible()
    page.get_by_label("Tail percentile").fill("75")
    page.get_by_role("button", name="Run analysis").click()
    expect(page.locator("#models-table")).to_be_visible()
    assert Job.objects.get(kind="length_statistics").params == {"tail": 75}
    long_winded = page.locator("#models-table tr[data-model='long-winded'] td")
    expect(long_winded.nth(1)).to_have_text("4")
    expect(long_winded.nth(2)).to_have_text("25.0")  # 10, 20, 30, 40 characters
    expect(page.locator("#models-table thead")).to_contain_text("p75 characters")
    expect(page.get_by_role("link", name="Queries CSV")).to_be_visible()
    assert_no_axe_violations(page, name="lengths page")
    page.screenshot(path=artifacts / "lengths-page.png", full_page=True)
    assert script_errors == []
