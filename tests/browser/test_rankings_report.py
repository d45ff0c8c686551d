"""The report's rankings, competence and calibration in a real Chromium, for a pairwise batch
in two categories whose pairs name their models, with a judge's distributions and a
competence review list: the category tables and the review list are shown and axe-clean at
desktop and phone sizes (a phone scrolls no wider than its screen). Screenshots:
``test-artifacts/rankings-report-<width>.png``."""

import numpy as np
import pytest
from playwright.sync_api import expect

from analysis.services.scores import import_scores
from annotation.models import Batch, Item
from tests.analysis.test_category_rankings import TAXONOMY, by_category
from tests.analysis.test_competence_end_to_end import label_canonically
from tests.analysis.test_rankings_end_to_end import name_models
from tests.analysis.test_report_page import run_job_now
from tests.browser.accessibility import assert_no_axe_violations
from tests.browser.conftest import JOB_PAGE_MARKS, PHONE, WIDE
from tests.browser.pages import assert_fits_a_phone, watched_page
from tests.browser.staff_login import log_in
from tests.factories import make_categorised_batch
from tests.files import write_jsonl
from tests.staff import staff_user

pytestmark = JOB_PAGE_MARKS


@pytest.fixture
def analysed(db, tmp_path):
    batch = make_categorised_batch(TAXONOMY, kind="pairwise", per_item=5, slug="ranked")
    Batch.objects.filter(pk=batch.pk).update(review_lowest_competence=2)
    name_models(batch)
    label_canonically(batch, 5, by_category)
    rng = np.random.default_rng(1)
    rows = []
    for item in Item.objects.filter(batch=batch):
        p = rng.dirichlet(np.ones(5)).round(6)
        p[-1] = round(1 - p[:-1].sum(), 6)
        rows.append({"source": "judge-p", "kind": "judge", "item_id": item.item_id,
                     "score_distribution": p.tolist()})  # fmt: skip
    import_scores(write_jsonl(tmp_path / "judge.jsonl", rows), batch=batch)
    run_job_now(batch, bootstrap=40, seed=1)
    return batch


@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["desktop", "phone"])
def test_rankings_by_category_and_the_review_list_read_well(
    browser, live_server, analysed, artifacts, viewport
):
    researcher = staff_user("researcher", f"rankings-{viewport['width']}")
    with watched_page(browser, viewport) as (page, script_errors):
        log_in(page, live_server, researcher, "/manage/ranked/report")
        table = page.locator("#category-rankings")
        expect(table.locator("tbody tr")).to_have_count(2)  # chat, code
        expect(table.locator("thead th code")).to_have_count(3)  # one column per model
        expect(page.locator("#category-calibration tbody tr")).to_have_count(2)
        expect(page.locator("#competence-review code")).to_have_count(2)
        expect(page.locator("#competence tr[data-review='1']")).to_have_count(2)
        assert_no_axe_violations(page, name=f"rankings report {viewport['width']}")
        if viewport is PHONE:
            assert_fits_a_phone(page, "the report")
        page.screenshot(path=artifacts / f"rankings-report-{viewport['width']}.png", full_page=True)
    assert script_errors == []
