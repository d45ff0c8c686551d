"""One embeddings run of a corpus at a time: a second job is refused (409) while one is
pending or running, and a local-model run that another run took over (a restart, or a
second run at the same time) stops and installs nothing, so rows the other run reset are
never installed as zero vectors; the run after it continues the file as usual."""

import threading

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from core.errors import Conflict
from core.jobs import queue
from core.jobs.execution import job_files_dir
from core.models import AuditEvent, Job
from diversity.corpora.models import Corpus
from diversity.corpora.services import embedding_jobs, local_embedding
from diversity.corpora.services.embedding_jobs import JOB_KIND
from diversity.corpora.services.imports import import_corpus
from diversity.corpora.services.local_embedding import Embedder, embed_corpus
from diversity.corpora.storage import open_embeddings
from tests.corpora.pools import imported_pool, jsonl_pool, npy_upload, pool_rows
from tests.staff import token_client

pytestmark = pytest.mark.django_db


class Stopped(Exception):
    """Stands for a run that stopped (its process was killed)."""


@pytest.fixture
def corpus(tmp_path):
    # 16 responses
    return imported_pool(tmp_path, n_queries=4, models=("alpha", "beta"), samples=2)


ONES = np.ones((16, 3))  # an embedding for each of the corpus's responses


def lengths(texts: list[str]) -> np.ndarray:
    return np.array([[1.0, len(text) % 7 + 1.0, 2.0] for text in texts])


@pytest.mark.parametrize("state", ["pending", "running"])
def test_a_second_embeddings_job_is_refused_while_one_is_pending_or_running(
    corpus, state, monkeypatch
):
    monkeypatch.setattr(local_embedding, "local_model_available", lambda: True)
    now = timezone.now()
    first = Job.objects.create(
        kind=JOB_KIND, subject=corpus, params={}, state=state, started_at=now,
        last_progress_at=now,
    )  # fmt: skip
    researcher = token_client("researcher")
    events = AuditEvent.objects.count()
    answers = [
        researcher.post("/api/v1/corpora/pool/embeddings/import-jobs", {"file": npy_upload(ONES)}),
        researcher.post(
            "/api/v1/corpora/pool/embeddings/compute-jobs",
            {"restart": True},
            content_type="application/json",
        ),
    ]
    for answer in answers:
        assert answer.status_code == 409, answer.content
        assert f"is {state} (job {first.pk})" in answer.json()["detail"]
    assert list(Job.objects.values_list("pk", flat=True)) == [first.pk]  # nothing recorded
    assert AuditEvent.objects.count() == events
    assert not list(job_files_dir().glob("upload-*"))  # the upload was not kept
    corpus.refresh_from_db()
    assert not corpus.has_embeddings and corpus.local_rows_done == 0


def test_once_the_job_has_finished_another_may_start(corpus):
    first = embedding_jobs.start_embeddings_import(corpus, npy_upload(ONES))
    with pytest.raises(Conflict):
        embedding_jobs.start_embeddings_import(corpus, npy_upload(ONES))
    Job.objects.filter(pk=first.pk).update(state=Job.State.SUCCEEDED)
    second = embedding_jobs.start_embeddings_import(corpus, npy_upload(ONES))
    assert second.state == "pending" and second.pk != first.pk


def test_a_run_taken_over_by_a_restart_installs_nothing_and_the_next_run_finishes(corpus):
    calls = []

    def first_run(texts):
        calls.append(texts)
        if len(calls) == 3:  # this run is at its third chunk when a restart begins
            restart_calls = []

            def restarted(texts):
                if restart_calls:
                    raise Stopped  # the restart stops after its first chunk
                restart_calls.append(texts)
                return lengths(texts)

            with pytest.raises(Stopped):
                embed_corpus(
                    Corpus.objects.get(pk=corpus.pk),
                    embedder=Embedder("m", 3, restarted),
                    chunk_rows=4,
                    restart=True,
                )
        return lengths(texts)

    with pytest.raises(Conflict, match="another run took over"):
        embed_corpus(corpus, embedder=Embedder("m", 3, first_run), chunk_rows=4)
    corpus.refresh_from_db()
    assert not corpus.has_embeddings  # no zero rows were installed
    assert corpus.local_rows_done == 4  # the restart's first chunk

    resumed = []

    def next_run(texts):
        resumed.append(texts)
        return lengths(texts)

    corpus = embed_corpus(corpus, embedder=Embedder("m", 3, next_run), chunk_rows=4)
    assert len(resumed) == 3  # it continued from row 4
    stored = np.asarray(open_embeddings(corpus))
    texts = list(corpus.responses.order_by("row_index").values_list("text", flat=True))
    expected = lengths(texts) / np.linalg.norm(lengths(texts), axis=1, keepdims=True)
    np.testing.assert_allclose(stored, expected, atol=1e-6)


def test_a_run_is_refused_while_another_embeddings_job_runs(corpus):
    now = timezone.now()
    running = Job.objects.create(
        kind=JOB_KIND, subject=corpus, params={}, state="running", started_at=now,
        last_progress_at=now,
    )  # fmt: skip
    with pytest.raises(Conflict, match=f"embeddings job {running.pk} of corpus 'pool'"):
        embed_corpus(corpus, embedder=Embedder("m", 3, lengths), chunk_rows=4)
    corpus = embed_corpus(corpus, embedder=Embedder("m", 3, lengths), chunk_rows=4, job=running)
    assert corpus.has_embeddings


@pytest.mark.django_db(transaction=True)
def test_of_two_requests_at_once_one_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(queue, "_enqueue", lambda job, refused: None)  # both stay pending
    rows = pool_rows(n_queries=4, models=("alpha", "beta"), samples=2)
    corpus = import_corpus("pool", jsonl_pool(tmp_path / "pool.jsonl", rows))
    ready = threading.Barrier(2)
    outcomes = []

    def request():
        try:
            ready.wait()
            embedding_jobs.start_embeddings_import(corpus, npy_upload(ONES))
            outcomes.append("started")
        except Conflict:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=request) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["refused", "started"]
    assert Job.objects.filter(kind=JOB_KIND).count() == 1
    assert len(list(job_files_dir().glob("upload-*"))) == 1
