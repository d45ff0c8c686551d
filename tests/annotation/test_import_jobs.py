"""Items uploaded as a background job: imported, or failed with the problem lines."""

import pytest

from annotation.models import Item
from core.jobs.execution import job_files_dir
from tests.factories import make_batch
from tests.files import named_upload as upload
from tests.staff import token_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client():
    return token_client("admin", "importer")


def start(client, batch, file, capture):
    with capture(execute=True):
        response = client.post(f"/api/v1/batches/{batch.slug}/import-jobs", {"file": file})
    assert response.status_code == 202, response.content
    return client.get(response.json()["status_url"]).json()


def test_import_job_imports_and_cleans_up(admin_client, django_capture_on_commit_callbacks):
    batch = make_batch(n_items=0, live=False)
    rows = [
        {"item_id": f"j{i}", "query_id": "jq", "query": "Q?", "response_id": f"jr{i}",
         "response": f"R{i}"}
        for i in range(5)
    ]  # fmt: skip
    job = start(admin_client, batch, upload("big.jsonl", rows), django_capture_on_commit_callbacks)
    assert job["state"] == "succeeded"
    assert job["result"]["items_created"] == 5
    assert job["message"] == ""  # not "importing big.jsonl" still: it is done
    assert Item.objects.filter(batch=batch).count() == 5
    assert not list(job_files_dir().glob("upload-*"))


def test_rejected_import_job_lists_problems_and_writes_nothing(
    admin_client, django_capture_on_commit_callbacks
):
    batch = make_batch(n_items=0, live=False)
    file = upload("bad.jsonl", '{"item_id": "x"}\nnot json\n')
    job = start(admin_client, batch, file, django_capture_on_commit_callbacks)
    assert job["state"] == "failed"
    assert any(p.startswith("bad.jsonl:2: row:") for p in job["result"]["problems"])
    assert Item.objects.filter(batch=batch).count() == 0
    assert not list(job_files_dir().glob("upload-*"))


def test_unsupported_type_is_refused_before_anything_is_stored(admin_client):
    batch = make_batch(n_items=0, live=False)
    response = admin_client.post(
        f"/api/v1/batches/{batch.slug}/import-jobs", {"file": upload("items.xlsx", "x")}
    )
    assert response.status_code == 400 and "items.xlsx:1: file:" in response.json()["detail"]
