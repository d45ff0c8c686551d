"""What the staff pages claim must be true: a refused upload is the first thing on the
page, the live panel states the batch's real state, times are written one way (UTC), the
projected finish never rests on slots that leases hold, headings keep symbols' case, and
``/favicon.ico`` exists."""

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from annotation.models import Assignment, AssignmentState
from annotation.selectors import batch_dashboard
from annotation.services.batches import change_state
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.factories import make_batch, make_participant
from tests.staff import staff_client

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
UTC_MINUTE = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC"


@pytest.fixture
def admin() -> Client:
    return staff_client("admin", "trust-admin")


def main_content(page: str) -> str:
    """The page below the header, messages and tabs: where the page's own content starts."""
    return page.split('<nav class="tabs"', 1)[-1].split("</nav>", 1)[-1]


# --------------------------------------------------------------------------- uploads


def test_a_refused_item_upload_comes_first_announced_and_focused(admin):
    batch = make_batch(live=False, n_items=0)
    response = admin.post(
        f"/manage/{batch.slug}/items",
        {"file": SimpleUploadedFile("bad.jsonl", b'{"item_id": "x"}\n{oops\n')},
    )
    assert response.status_code == 400
    content = main_content(response.content.decode())
    first_box = re.search(r'<(div|section)[^>]*class="[^"]*(status|card)[^"]*"[^>]*>', content)
    assert first_box and 'id="upload-problems"' in first_box.group(0)
    assert 'role="alert"' in first_box.group(0) and "data-focus-on-load" in first_box.group(0)
    assert "bad.jsonl was rejected; nothing was imported." in content
    assert "The items file has" in content
    assert "bad.jsonl:2: row: not valid JSON" in content


def test_a_refused_score_upload_comes_first_too(admin):
    batch = make_batch()
    response = admin.post(
        f"/manage/{batch.slug}/scores",
        {"file": SimpleUploadedFile("scores.jsonl", b'{"source": "m"}\n')},
    )
    assert response.status_code == 400
    content = main_content(response.content.decode())
    assert content.index('id="upload-problems"') < content.index('class="card summary"')
    assert "scores.jsonl was rejected; nothing was imported." in content
    assert "model scores file" in content
    assert content.count("scores.jsonl:1:") >= 1


def test_an_accepted_upload_s_message_takes_the_focus(admin):
    batch = make_batch(live=False, n_items=0)
    line = (
        b'{"item_id": "a", "query_id": "q", "query": "Q?", "response_id": "trust-r", '
        b'"response": "A"}\n'
    )
    response = admin.post(
        f"/manage/{batch.slug}/items",
        {"file": SimpleUploadedFile("ok.jsonl", line)},
        follow=True,
    )
    page = response.content.decode()
    messages = re.search(r"<div class=\"messages\"[^>]*>", page).group(0)
    assert "data-focus-on-load" in messages and 'tabindex="-1"' in messages
    assert "Imported 1 items from ok.jsonl" in page


def test_file_inputs_have_visible_labels(admin):
    batch = make_batch(live=False)
    page = admin.get(f"/manage/{batch.slug}/").content.decode()
    for input_id, text in [("upload-file", "Items file"), ("score-file", "Scores file")]:
        assert re.search(rf'<label for="{input_id}">{text}\b', page), input_id


# --------------------------------------------------------------------------- live panel


@pytest.mark.parametrize(
    ("state", "wanted"),
    [
        ("draft", "Draft: not published"),
        ("paused", "Paused: workers get no new items"),
        ("closed", "Closed: workers get no more items"),
        ("live", "Live: workers get items"),
    ],
)
def test_the_live_panel_states_the_batch_state(admin, state, wanted):
    batch = make_batch(live=state != "draft")
    if state in ("paused", "closed"):
        batch = change_state(batch, state)
    page = admin.get(f"/manage/{batch.slug}/").content.decode()
    status = re.search(r'<span class="small live-status" id="live-status">(.*?)</span>', page)
    assert status and status.group(1).startswith(wanted), status
    assert re.search(UTC_MINUTE, status.group(1))
    if state != "live":
        assert "Live" not in status.group(1)
    script = (ROOT / "static/annotation/staff.js").read_text()
    assert "Live · updated" not in script and "toLocale" not in script


def test_times_are_written_as_utc_minutes(admin):
    batch = make_batch()
    worker = make_participant(batch, "utc-worker")
    outcome = lease_next_item(batch, worker)
    submit_label(worker.annotator, outcome.assignment.pk, 3, 2_000)
    for path in ("", "annotators", "history"):
        page = admin.get(f"/manage/{batch.slug}/{path}").content.decode()
        assert re.search(UTC_MINUTE, page), path
        assert not re.search(r"\d{1,2}:\d{2}\s?(AM|PM|a\.m\.|p\.m\.)", page), path


def test_no_style_sheet_upper_cases_text():
    for sheet in ("static/annotation/staff.css", "static/analysis/report.css"):
        rules = re.sub(r"/\*.*?\*/", "", (ROOT / sheet).read_text(), flags=re.DOTALL)
        assert "uppercase" not in rules, sheet


def test_wide_tables_scroll_in_a_focusable_labelled_region_with_the_action_in_view(admin):
    batch = make_batch()
    make_participant(batch, "table-worker")
    page = admin.get(f"/manage/{batch.slug}/annotators").content.decode()
    region = re.search(r'<div class="table-wrap[^"]*"([^>]*)>', page).group(1)
    assert 'role="region"' in region and 'tabindex="0"' in region
    assert 'aria-labelledby="annotators-title"' in region and 'id="annotators-title"' in page
    assert re.search(r"table\.data \.action \{[^}]*position: sticky; right: 0",
                     (ROOT / "static/annotation/staff.css").read_text())  # fmt: skip


# --------------------------------------------------------------------------- projection


def _lease(batch, worker_id: str) -> Assignment:
    outcome = lease_next_item(batch, make_participant(batch, worker_id))
    assert outcome.assignment is not None
    return outcome.assignment


def test_no_projection_while_every_remaining_slot_is_held_by_a_lease():
    batch = make_batch(n_items=2, per_item=1)
    first = _lease(batch, "holder-1")
    _lease(batch, "holder-2")
    figures = batch_dashboard(batch)
    assert figures["labels_remaining"] == 2
    assert (figures["labels_held"], figures["labels_unreserved"]) == (2, 0)
    assert figures["leases"] == {"open": 2, "expired": 0}
    assert figures["projected_finish_at"] is None
    assert "all held by open leases" in figures["projection_note"]

    # A lease past its expiry still holds its slot until the next request for work.
    Assignment.objects.filter(pk=first.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    figures = batch_dashboard(batch)
    assert figures["leases"] == {"open": 1, "expired": 1}
    assert figures["projected_finish_at"] is None
    assert "1 of them expired" in figures["projection_note"]


def test_projection_with_free_slots_names_its_pace_and_the_held_slots():
    batch = make_batch(n_items=4, per_item=1)
    worker = make_participant(batch, "fast-worker")
    for value in (2, 4):
        outcome = lease_next_item(batch, worker)
        submit_label(worker.annotator, outcome.assignment.pk, value, 1_000)
    figures = batch_dashboard(batch)
    assert (figures["labels_remaining"], figures["labels_unreserved"]) == (2, 2)
    assert figures["projected_finish_at"] is not None
    assert figures["projected_finish_at"] > timezone.now()
    assert figures["projection_note"].startswith("At the last hour's pace")

    _lease(batch, "slow-worker")
    figures = batch_dashboard(batch)
    assert (figures["labels_held"], figures["labels_unreserved"]) == (1, 1)
    assert figures["projected_finish_at"] is not None
    assert "1 label held by open leases" in figures["projection_note"]


def test_no_projection_unless_live_or_when_done():
    batch = make_batch(n_items=2, per_item=1)
    worker = make_participant(batch, "only-worker")
    outcome = lease_next_item(batch, worker)
    submit_label(worker.annotator, outcome.assignment.pk, 3, 1_000)
    batch = change_state(batch, "paused")
    figures = batch_dashboard(batch)
    assert figures["projected_finish_at"] is None
    assert figures["projection_note"].startswith("Paused")
    batch = change_state(batch, "closed")
    assert batch_dashboard(batch)["projection_note"].startswith("Closed")
    assert not Assignment.objects.filter(state=AssignmentState.OPEN).exists()

    done = make_batch(n_items=1, per_item=1)
    worker = make_participant(done, "finisher")
    outcome = lease_next_item(done, worker)
    submit_label(worker.annotator, outcome.assignment.pk, 5, 1_000)
    figures = batch_dashboard(done)
    assert figures["labels_remaining"] == 0 and figures["projected_finish_at"] is None
    assert figures["projection_note"] == "Every item has all its labels."

    empty = make_batch(n_items=0, live=False)  # a fresh draft: nothing to be complete
    assert batch_dashboard(empty)["projection_note"] == (
        "No items yet: upload an items file to start."
    )


def test_progress_endpoint_carries_the_lease_figures(admin):
    batch = make_batch(n_items=1, per_item=1)
    _lease(batch, "api-holder")
    body = admin.get(f"/api/v1/batches/{batch.slug}/progress").json()
    assert body["leases"] == {"open": 1, "expired": 0}
    assert body["labels_held"] == 1 and body["projected_finish_at"] is None
    assert "held by open leases" in body["projection_note"]


# --------------------------------------------------------------------------- favicon


def test_favicon_is_served_and_named_by_every_page(admin):
    icon = Client().get("/favicon.ico")
    assert icon.status_code == 200
    assert icon["Content-Type"] == "image/vnd.microsoft.icon"
    assert b"".join(icon.streaming_content)[:4] == b"\x00\x00\x01\x00"  # ICO header
    page = admin.get("/manage/").content.decode()
    assert re.search(r'<link rel="icon" href="/static/favicon\.svg" type="image/svg\+xml">', page)
    login = Client().get("/accounts/login/").content.decode()
    assert "favicon.svg" in login
