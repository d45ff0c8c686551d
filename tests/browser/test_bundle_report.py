"""The report page of a bundled batch in Chromium, through axe-core at a desktop
(1280×900) and a phone (390×844) size, as the staff pages are (``test_accessibility``):
its four bundle sections with their charts and tables, nothing wider than the phone, and
a table sorted by keyboard. Screenshots go to ``test-artifacts/a11y-bundle-report-*.png``."""

import pytest
from playwright.sync_api import expect

from tests.analysis.test_bundle_report_page import rate_bundles
from tests.analysis.test_report_page import run_job_now
from tests.annotation.bundled import bundled_batch
from tests.browser.conftest import PHONE, WIDE
from tests.browser.pages import watched_page
from tests.browser.staff_login import log_in
from tests.browser.test_accessibility import check
from tests.staff import staff_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXPECT_TIMEOUT_MS = 10_000
SECTIONS = {  # landmark (its heading) -> id
    "Bundles: position within the set": "bundle-positions",
    "Bundles: agreement on the ranking (Kendall's W)": "bundle-concordance",
    "Bundles: individual-specific preferences": "bundle-decomposition",
    "Bundles: idiosyncrasy per participant": "bundle-idiosyncrasy",
}


@pytest.fixture
def bundled_study(db):
    """Six queries × five responses, N = 4, one bundle a person, some leaving halfway."""
    batch = bundled_batch("a11y-bundles", n_queries=6, per_query=5, per_item=4,
                          bundles_per_participant=1, bundle_order="balanced")  # fmt: skip
    rate_bundles(batch, 60, seed=2)
    run_job_now(batch, bootstrap=100)
    return batch


@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["desktop", "phone"])
def test_a_bundled_report_page_has_no_axe_violations(
    browser, live_server, bundled_study, artifacts, viewport
):  # fmt: skip
    with watched_page(browser, viewport) as (page, script_errors):
        log_in(page, live_server, staff_user("researcher", "rhea"))
        page.goto(f"{live_server.url}/manage/{bundled_study.slug}/report")
        for name, section in SECTIONS.items():
            region = page.get_by_role("region", name=name, exact=True)
            expect(region).to_have_attribute("id", section)
            expect(region.locator("svg.chart").first).to_be_visible()
            expect(region.get_by_role("table")).to_be_visible()
        expect(page.locator("#bundle-positions-table tbody tr")).to_have_count(5)
        check(page, artifacts, "bundle-report", viewport)

        # the W table sorts by keyboard: highest W first, bundles without one last
        sort = page.locator("#bundle-concordance-table").get_by_role("button", name="Kendall's W")
        sort.focus()
        page.keyboard.press("Enter")
        cells = page.locator("#bundle-concordance-table tbody tr td:nth-child(5)")
        values = [cell.get_attribute("data-value") for cell in cells.all()]
        known = [float(value) for value in values if value]
        assert known == sorted(known, reverse=True) and len(known) >= 2
        assert all(values[: len(known)]) and not any(values[len(known) :])
        check(page, artifacts, "bundle-report-sorted", viewport)
    assert script_errors == []
