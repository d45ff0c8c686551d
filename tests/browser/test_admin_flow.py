"""The project admin's flow in a real Chromium: log in, create a batch, upload a bad and a
good item file, publish, watch the live figures move while a worker rates in another
browser context, exclude (and re-include) that worker, download a Parquet export.

Screenshots of the batch page and the annotator table go to ``test-artifacts/``.
"""

import json
import re

import pandas
import pytest
from playwright.sync_api import Page, expect

from annotation.models import Annotator, Batch, Label, LabelStatus
from tests.browser.conftest import PHONE, WIDE
from tests.browser.staff_login import log_in
from tests.staff import staff_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXPECT_TIMEOUT_MS = 5_000

SLUG = "browser-study"


def item_line(number: int, response: str) -> dict:
    return {
        "item_id": f"it-{number}",
        "query_id": "bq-1",
        "query": "Write a haiku about **rain**.",
        "response_id": f"br-{number}",
        "model": "model-x",
        "response": response,
    }


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


GOOD_FILE = jsonl(
    [item_line(n, f"Answer {n}: drops on the tin roof, *slow*.") for n in range(1, 4)]
)
BAD_FILE = jsonl([item_line(1, "fine"), {**item_line(2, ""), "gold": 9}]) + b"{broken\n"


@pytest.fixture
def admin_user(db):
    return staff_user("admin", "ada")


def create_batch(page: Page) -> None:
    page.locator(".page-head").get_by_role("link", name="New batch").click()
    page.get_by_label("Slug").fill(SLUG)
    page.get_by_label("Kind").select_option("absolute")
    page.get_by_label("Title").fill("Rain haiku")
    page.get_by_label("Labels per item (N)").fill("2")
    page.get_by_label("Instructions").fill("Rate each haiku from **1** to **5**.")
    page.get_by_role("button", name="Create batch").click()
    expect(page).to_have_url(re.compile(rf"/manage/{SLUG}/$"))
    expect(page.locator(".messages")).to_contain_text(f"Created batch {SLUG}")
    expect(page.locator(".batch-head .badge")).to_have_text("Draft")


def upload(page: Page, name: str, content: bytes) -> None:
    page.locator("#upload-file").set_input_files(
        files=[{"name": name, "mimeType": "application/octet-stream", "buffer": content}]
    )
    page.get_by_role("button", name="Upload").click()


def accept_next_dialog(page: Page) -> list[str]:
    """Accept the next confirm() dialog; the returned list receives its message."""
    seen: list[str] = []

    def accept(dialog):
        seen.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    return seen


def rate_by_keyboard(worker: Page, key: str) -> None:
    before = worker.locator("#progress-text").text_content()
    worker.keyboard.press(key)
    expect(worker.locator(f".choice[data-key='{key}']")).to_have_class(re.compile(r"\bselected\b"))
    worker.keyboard.press("Enter")
    worker.wait_for_function(
        "(before) => document.getElementById('progress-text').textContent !== before",
        arg=before,
    )


def test_admin_runs_a_batch_end_to_end(page: Page, browser, live_server, admin_user, artifacts):
    script_errors: list[str] = []
    page.on("pageerror", lambda error: script_errors.append(str(error)))
    log_in(page, live_server, admin_user)
    expect(page.get_by_role("heading", name="Batches")).to_be_visible()
    create_batch(page)

    # A bad file: nothing imported, every problem listed with file and line.
    upload(page, "bad-items.jsonl", BAD_FILE)
    problems = page.locator("#upload-problems")
    expect(problems).to_be_visible()
    expect(problems).to_contain_text("bad-items.jsonl was rejected; nothing was imported")
    expect(problems).to_contain_text("bad-items.jsonl:2: response: must not be empty")
    expect(problems).to_contain_text("bad-items.jsonl:2: gold: 9 is not in the label set 1..5")
    expect(problems).to_contain_text("bad-items.jsonl:3: row: not valid JSON")
    page.screenshot(path=artifacts / "admin-upload-rejected.png", full_page=True)
    assert Batch.objects.get(slug=SLUG).items.count() == 0

    upload(page, "items.jsonl", GOOD_FILE)
    expect(page.locator(".messages")).to_contain_text("Imported 3 items from items.jsonl")
    expect(page.locator("[data-figure='items.total']")).to_have_text("3")
    expect(page.locator("#upload-problems")).to_have_count(0)

    # The preview shows the first item the way a worker sees it.
    page.get_by_role("link", name="Preview as a worker").click()
    expect(page.locator("#query")).to_contain_text("Write a haiku about rain.")
    expect(page.locator("#response")).to_contain_text("Answer 1")
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_contain_text("Nothing was stored")
    page.screenshot(path=artifacts / "admin-preview.png", full_page=True)
    page.get_by_role("link", name=f"Back to {SLUG}").click()

    dialogs = accept_next_dialog(page)
    page.locator("#state-live").click()
    expect(page.locator(".messages")).to_contain_text("is now Live")
    expect(page.locator(".batch-head .badge")).to_have_text("Live")
    assert dialogs and dialogs[0].startswith("Publish this batch?")
    assert Batch.objects.get(slug=SLUG).state == "live"

    # A worker opens the invitation link in another browser and rates two items.
    expect(page.locator("#figure-counted")).to_have_text("0")
    page.evaluate("() => { window.__adminMarker = 1; }")
    link = page.locator("[data-link='invitation']").input_value() + "w-browser"
    worker_context = browser.new_context(viewport=WIDE)
    worker_context.set_default_timeout(5_000)
    try:
        worker = worker_context.new_page()
        worker.goto(link)
        worker.locator("#start").click()
        worker.wait_for_url(re.compile(rf"/work/{SLUG}/task$"))
        expect(worker.locator("#rating")).to_be_visible()
        rate_by_keyboard(worker, "4")
        expect(page.locator("#figure-counted")).to_have_text("1", timeout=10_000)
        rate_by_keyboard(worker, "2")
    finally:
        worker_context.close()

    # The admin page followed by itself, without a reload.
    expect(page.locator("#figure-counted")).to_have_text("2", timeout=10_000)
    expect(page.locator("[data-figure='active_annotators']")).to_have_text("1")
    expect(page.locator("[data-figure='items.in_progress']")).not_to_have_text("0")
    expect(page.locator("#live-status")).to_contain_text("Live: workers get items · figures of")
    assert page.evaluate("() => window.__adminMarker") == 1, "the admin page was reloaded"
    page.screenshot(path=artifacts / "admin-batch.png", full_page=True)
    page.set_viewport_size(PHONE)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    page.screenshot(path=artifacts / "admin-batch-phone.png", full_page=True)
    page.set_viewport_size(WIDE)

    # Exclude the worker, then undo it.
    annotator = Annotator.objects.get(platform="generic", platform_id="w-browser")
    page.get_by_role("link", name="Annotators").click()
    row = page.locator(f"tr[data-annotator='{annotator.pseudonym}']")
    expect(row).to_contain_text("w-browser")
    expect(row).to_contain_text("2 counted")
    dialogs = accept_next_dialog(page)
    row.get_by_role("button", name="Exclude").click()
    expect(page.locator(".messages")).to_contain_text(f"Excluded {annotator.pseudonym}: 2 labels")
    assert dialogs and dialogs[0].startswith(f"Exclude {annotator.pseudonym}")
    expect(row.locator(".badge")).to_have_text("excluded")
    labels = Label.objects.filter(annotator=annotator)
    assert set(labels.values_list("status", flat=True)) == {LabelStatus.EXCLUDED}
    page.screenshot(path=artifacts / "admin-annotators.png", full_page=True)
    page.set_viewport_size(PHONE)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    page.screenshot(path=artifacts / "admin-annotators-phone.png", full_page=True)
    page.set_viewport_size(WIDE)

    accept_next_dialog(page)
    row.get_by_role("button", name="Undo").click()
    expect(page.locator(".messages")).to_contain_text("2 labels count again")
    expect(row.locator(".badge")).to_have_text("active")
    assert set(labels.values_list("status", flat=True)) == {LabelStatus.COUNTED}

    # The dense Parquet export: one row per item, the worker's two labels in it.
    page.get_by_role("link", name="Overview").click()
    with page.expect_download() as download_info:
        page.locator("[data-export='dense-parquet']").click()
    download = download_info.value
    target = artifacts / "admin-dense.parquet"
    download.save_as(target)
    frame = pandas.read_parquet(target)
    assert len(frame) == 3
    assert sorted(frame["item_id"]) == ["it-1", "it-2", "it-3"]
    assert sorted(value for labels in frame["labels"] for value in labels) == [2, 4]
    assert int(frame["n"].sum()) == 2

    # The same export prepared as a background job (in-process here), then downloaded.
    job_form = page.locator("#export-job")
    job_form.locator("select[name=layout]").select_option("dense")
    job_form.get_by_role("button", name="Prepare").click()
    expect(page.locator("#export-job-download")).to_contain_text("3 rows")
    with page.expect_download() as job_download_info:
        page.locator("#export-job-download").click()
    job_target = artifacts / "admin-dense-job.parquet"
    job_download_info.value.save_as(job_target)
    assert pandas.read_parquet(job_target).equals(frame)

    page.get_by_role("link", name="Batches").first.click()
    expect(page.locator("table.batches")).to_contain_text("2 / 6 labels")
    page.screenshot(path=artifacts / "admin-batch-list.png", full_page=True)
    assert script_errors == []
