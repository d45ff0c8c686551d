""" "Download figures" in a real Chromium when the stored figures must be drawn again (a
score import since the analysis): the page shows its progress while the server draws them,
then the zip downloads, and later downloads are plain links to the stored file."""

import zipfile

from playwright.sync_api import Page, expect

from tests.analysis.test_report_page import add_sources, analysed_batch
from tests.browser.accessibility import assert_no_axe_violations
from tests.browser.conftest import JOB_PAGE_MARKS
from tests.browser.staff_login import log_in
from tests.staff import staff_user

pytestmark = JOB_PAGE_MARKS


def test_drawing_the_figures_again_shows_progress_then_downloads(page: Page, live_server):
    researcher = staff_user("researcher", "fiona")
    batch = analysed_batch(sources=[("rm-alpha", "reward_model")])
    add_sources(batch, [("judge-late", "judge")])  # the stored scatter is out of date
    log_in(page, live_server, researcher, f"/manage/{batch.slug}/report")
    link = page.locator("#download-figures")
    expect(link).to_have_attribute("data-figures", "draw")
    progress = page.locator("#figures-progress")
    expect(progress).to_be_hidden()

    with page.expect_download(timeout=120_000) as download:
        link.click()
        expect(progress).to_be_visible()
        expect(progress).to_contain_text("Drawing the figures")
    saved = download.value.path()
    assert download.value.suggested_filename == f"{batch.slug}-figures.zip"
    names = zipfile.ZipFile(saved).namelist()
    assert f"{batch.slug}-scatter.svg" in names and "captions.txt" in names
    expect(progress).to_contain_text("Figures drawn and downloaded.")
    expect(link).to_have_attribute("data-figures", "ready")
    assert_no_axe_violations(page, name="report page, figures drawn")

    page.reload()  # stored now: a plain link
    expect(page.locator("#download-figures")).to_have_attribute("data-figures", "ready")
