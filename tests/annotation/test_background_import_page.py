"""The batch page imports an items file too big for one request as a background job
(``SYNC_IMPORT_MAX_BYTES``): the same all-or-nothing import, its outcome told on the page,
never a request that runs into the server's timeout."""

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from annotation.models import Item
from core.models import Job
from tests.factories import make_batch
from tests.staff import staff_client

pytestmark = pytest.mark.django_db

LIMIT = 2_000


def _items(n: int, bad_line: int | None = None) -> bytes:
    lines = []
    for index in range(1, n + 1):
        response = "" if index == bad_line else f"Answer number {index}, " + "x" * 40
        lines.append(
            f'{{"item_id": "i{index}", "query_id": "q{index % 3}", '
            f'"query": "Question {index % 3}?", '
            f'"response_id": "r{index}", "response": "{response}"}}\n'
        )
    return "".join(lines).encode()


@pytest.fixture
def admin(settings):
    settings.SYNC_IMPORT_MAX_BYTES = LIMIT
    return staff_client("admin")


@pytest.mark.django_db(transaction=True)  # the job is queued when the upload commits
def test_a_big_file_is_imported_as_a_job_and_the_page_tells_the_outcome(admin):
    batch = make_batch(live=False, n_items=0)
    body = _items(60)
    assert len(body) > LIMIT
    answer = admin.post(
        f"/manage/{batch.slug}/items",
        {"file": SimpleUploadedFile("big.jsonl", body)},
        follow=True,
    )
    assert answer.status_code == 200
    page = answer.content.decode()
    # without a broker the job ran at once: the same message as a small upload
    assert "Imported 60 items from big.jsonl (3 new queries, 60 new responses)." in page
    assert batch.items.count() == 60
    [job] = batch.jobs.filter(kind="import")
    assert job.state == "succeeded" and job.created_by.username.startswith("admin")
    # later visits of the page say how the background import ended
    again = admin.get(f"/manage/{batch.slug}/").content.decode()
    assert "Imported 60 items from big.jsonl in the background" in again


@pytest.mark.django_db(transaction=True)
def test_a_big_file_with_a_problem_imports_nothing_and_lists_the_problem(admin):
    batch = make_batch(live=False, n_items=0)
    answer = admin.post(
        f"/manage/{batch.slug}/items",
        {"file": SimpleUploadedFile("big-bad.jsonl", _items(60, bad_line=41))},
    )
    assert answer.status_code == 400
    page = answer.content.decode()
    assert "big-bad.jsonl was rejected; nothing was imported" in page
    assert "big-bad.jsonl:41: response: must not be empty" in page
    assert not Item.objects.filter(batch=batch).exists()
    # the page keeps telling of it (once, not twice) until a day after it ended
    later = admin.get(f"/manage/{batch.slug}/").content.decode()
    assert later.count("big-bad.jsonl:41: response: must not be empty") == 1
    Job.objects.filter(kind="import").update(finished_at=timezone.now() - timedelta(days=2))
    assert "big-bad.jsonl" not in admin.get(f"/manage/{batch.slug}/").content.decode()


def test_a_big_file_of_an_unknown_type_is_refused_before_any_job(admin):
    batch = make_batch(live=False, n_items=0)
    answer = admin.post(
        f"/manage/{batch.slug}/items",
        {"file": SimpleUploadedFile("big.txt", _items(60))},
    )
    assert answer.status_code == 400
    assert "big.txt:1: file: unsupported file type" in answer.content.decode()
    assert not batch.jobs.exists()


def test_an_import_still_running_is_announced_on_the_page(admin):
    batch = make_batch(live=False, n_items=0)
    Job.objects.create(
        kind="import",
        subject=batch,
        params={"stored_file": "upload-x.jsonl", "filename": "huge.jsonl"},
        state=Job.State.RUNNING,
        started_at=timezone.now(),
    )
    page = admin.get(f"/manage/{batch.slug}/").content.decode()
    assert "huge.jsonl is being imported in the background" in page


def test_a_big_file_waiting_for_a_worker_is_announced_when_it_is_sent(admin):
    # in the test's transaction the job is never queued: it stays pending, as with a
    # busy worker
    batch = make_batch(live=False, n_items=0)
    answer = admin.post(
        f"/manage/{batch.slug}/items",
        {"file": SimpleUploadedFile("big.jsonl", _items(60))},
        follow=True,
    )
    page = answer.content.decode()
    assert "big.jsonl (0.0 MB) is being imported in the background, all or nothing" in page
    assert "big.jsonl is being imported in the background" in page  # and in the panel
    assert batch.jobs.get(kind="import").state == "pending"


def test_a_small_file_is_still_imported_in_the_request(admin):
    batch = make_batch(live=False, n_items=0)
    body = _items(3)
    assert len(body) < LIMIT
    admin.post(f"/manage/{batch.slug}/items", {"file": SimpleUploadedFile("small.jsonl", body)})
    assert batch.items.count() == 3 and not batch.jobs.exists()
