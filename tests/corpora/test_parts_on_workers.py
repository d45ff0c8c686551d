"""Corpus jobs in parts on real Celery workers (``core.jobs.chunks``): two worker processes
embed a corpus and analyse it with the same bits as one process, a part whose worker is
killed is done again and the job still finishes, and a worker killed whole (no one left to
report it) loses its part only until its heartbeat is missed.

A ``celery worker`` (prefork, two processes) on ``TEST_REDIS_URL`` with a queue of its own,
its database the test's. Without the optional local model its embeddings jobs use a
deterministic stand-in (``tests.corpora.standin_embedder``); with it, the model itself is
compared too.
"""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid

import numpy as np
import pytest
from django.conf import settings

from config.celery import app as celery_app
from core.jobs.execution import job_files_dir
from core.jobs.queue import start_job
from core.models import Job, JobChunk
from diversity.corpora.services import analyses, embedding_jobs, local_embedding
from diversity.corpora.services.analyses import analyse, analyse_now, analysis_params, job_file
from diversity.corpora.services.imports import import_corpus
from diversity.corpora.services.local_embedding import embed_corpus
from diversity.corpora.storage import embedding_path
from tests.celery_workers import (
    REDIS_URL,
    REPO,
    redis_available,
    reset_connections,
    worker_database_url,
)
from tests.corpora.analysis_corpora import make_corpus, random_rows
from tests.corpora.pools import jsonl_pool, pool_rows
from tests.corpora.standin_embedder import standin_embedder
from tests.staff import token_client

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

MODELS = ["stand-in"]
if local_embedding.local_model_available():
    MODELS.append("local model")


class Workers:
    """A Celery worker with two processes, started with ``environment`` added."""

    def __init__(self, log_path, environment: dict, processes: int = 2):
        self.queue = f"test-parts-{uuid.uuid4().hex[:8]}"
        self.log = open(log_path, "w+")
        self.environment = {
            **os.environ,
            "REDIS_URL": REDIS_URL,
            "DATABASE_URL": worker_database_url(),
            "DATA_DIR": str(settings.DATA_DIR),
            "CELERY_DEFAULT_QUEUE": self.queue,
            "JOB_HEARTBEAT_SECONDS": "0.5",
            "EMBEDDING_THREADS": "1",
            **environment,
        }
        self.processes = processes
        self.started: list[subprocess.Popen] = []

    def start(self, pool: str = "prefork") -> subprocess.Popen:
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", pool,
             "--concurrency", str(self.processes), "--queues", self.queue,
             "--hostname", f"{uuid.uuid4().hex[:6]}@%h", "--include",
             "tests.corpora.standin_embedder", "--loglevel", "INFO", "--without-heartbeat",
             "--without-gossip", "--without-mingle"],
            cwd=REPO, env=self.environment, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.started.append(worker)
        return worker

    def stop(self) -> None:
        for worker in self.started:
            if worker.poll() is None:
                worker.terminate()
        for worker in self.started:
            try:
                worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait(timeout=10)
        self.log.seek(0)
        print(self.log.read()[-4000:])
        self.log.close()


@pytest.fixture
def workers(tmp_path, settings, monkeypatch, request):
    """``workers(model, **environment)`` starts them; the test process sends to them."""
    if not redis_available():
        pytest.skip(f"no Redis at {REDIS_URL}")
    settings.JOB_HEARTBEAT_TIMEOUT_SECONDS = 3
    started: list[Workers] = []

    def start(model: str = "stand-in", **environment) -> Workers:
        if model == "stand-in":
            environment["STANDIN_EMBEDDER"] = "1"
            monkeypatch.setattr(local_embedding, "job_embedder", standin_embedder)
            monkeypatch.setattr(local_embedding, "local_model_available", lambda: True)
        group = Workers(tmp_path / f"worker-{len(started)}.log", environment)
        started.append(group)
        celery_app.conf.update(
            broker_url=REDIS_URL,
            result_backend=REDIS_URL,
            task_always_eager=False,
            task_default_queue=group.queue,
        )
        reset_connections()
        return group

    saved = {
        key: celery_app.conf[key]
        for key in ("broker_url", "result_backend", "task_always_eager", "task_default_queue")
    }
    try:
        yield start
    finally:
        for group in started:
            group.stop()
        celery_app.conf.update(saved)
        reset_connections()


def wait_for(job: Job, group: Workers, timeout: float = 120) -> dict:
    """Poll the job's status over the API (which also gives lost parts to other workers)."""
    client = token_client("admin")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        payload = client.get(f"/api/v1/jobs/{job.pk}").json()
        if payload["state"] in ("succeeded", "failed"):
            return payload
        assert any(w.poll() is None for w in group.started), "every worker died"
        time.sleep(0.2)
    raise AssertionError(f"job {job.pk} did not finish within {timeout} s: {payload}")


def embeddings_job(corpus, chunk_rows: int) -> Job:
    params = {"source": "local_model", "dtype": "float32", "restart": False}
    return start_job(embedding_jobs.JOB_KIND, corpus, {**params, "chunk_rows": chunk_rows})


def file_digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_process_embeddings(rows, tmp_path):
    """The same responses embedded by one process, in one chunk (``embed_corpus``)."""
    alone = import_corpus("alone", jsonl_pool(tmp_path / "alone.jsonl", rows))
    return embedding_path(embed_corpus(alone, embedder=local_embedding.job_embedder()))


def stored(corpus):
    """The corpus's embedding file as the database names it now."""
    corpus.refresh_from_db()
    return embedding_path(corpus)


def parts_of(job: Job):
    return JobChunk.objects.filter(job=job, final=False)


@pytest.mark.parametrize("model", MODELS)
def test_two_worker_processes_embed_a_corpus_with_the_bits_of_one_process(workers, tmp_path, model):
    group = workers(model, STANDIN_SECONDS_PER_TEXT="0.02")
    rows = pool_rows(n_queries=10, models=("alpha", "beta", "gamma"), samples=2)  # 60
    corpus = import_corpus("spread", jsonl_pool(tmp_path / "spread.jsonl", rows))
    group.start()
    job = embeddings_job(corpus, chunk_rows=8)
    payload = wait_for(job, group)
    assert payload["state"] == "succeeded", payload["message"]
    assert (payload["progress"], payload["total"]) == (8, 8)
    parts = parts_of(job)
    assert parts.count() == 8 and not parts.exclude(state="done").exists()
    assert len(set(parts.values_list("worker", flat=True))) == 2  # both processes embedded

    spread = stored(corpus)
    alone = one_process_embeddings(rows, tmp_path)
    assert np.array_equal(np.load(spread), np.load(alone))
    assert file_digest(spread) == file_digest(alone)  # header and every bit


@pytest.mark.parametrize("lexical", [False, True])
def test_two_worker_processes_analyse_a_corpus_into_the_report_of_one_process(workers, lexical):
    corpus = make_corpus("parts", random_rows(seed=5, queries=12, models=3, samples=3, dim=8))
    group = workers(CORPUS_ANALYSIS_PART_RESPONSES="10")  # two queries (18 responses) a part
    group.start()
    params = analysis_params(bootstrap=300, seed=4, lexical=lexical)
    spread = start_job(analyses.JOB_KIND, corpus, params)
    payload = wait_for(spread, group)
    assert payload["state"] == "succeeded", payload["message"]
    assert payload["result"]["parts"] == 6 and (payload["progress"], payload["total"]) == (6, 6)
    spread.refresh_from_db()
    assert len(set(parts_of(spread).values_list("worker", flat=True))) == 2
    assert not list(job_files_dir().glob(f"{spread.pk}-part-*"))  # the parts were removed

    alone = analyse_now(corpus, params)  # in this process, as one part
    assert alone.state == "succeeded" and alone.result["parts"] == 1
    for key in ("report", "queries", "typicality"):
        assert file_digest(job_file(spread, key)) == file_digest(job_file(alone, key)), key
    direct = analyse(corpus, bootstrap=300, seed=4, lexical=lexical)  # no parts at all
    with open(job_file(spread, "report"), encoding="utf-8") as stream:
        assert json.load(stream) == json.loads(json.dumps(direct.report))
    assert np.array_equal(np.load(job_file(spread, "typicality")), direct.typicality, True)


def _running_part(job: Job, group: Workers) -> JobChunk:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        running = parts_of(job).filter(state="running").first()
        if running is not None:
            return running
        assert any(w.poll() is None for w in group.started), "every worker died"
        time.sleep(0.05)
    raise AssertionError("no part started")


def test_a_part_whose_worker_process_is_killed_is_done_again(workers, tmp_path):
    group = workers(STANDIN_SECONDS_PER_TEXT="0.25")  # a part of 4 rows takes a second
    rows = pool_rows(n_queries=4, models=("alpha", "beta", "gamma"), samples=2)  # 24
    corpus = import_corpus("killed", jsonl_pool(tmp_path / "killed.jsonl", rows))
    group.start()
    job = embeddings_job(corpus, chunk_rows=4)
    victim = _running_part(job, group)
    os.kill(int(victim.worker.rsplit(":", 1)[1]), signal.SIGKILL)
    payload = wait_for(job, group)
    assert payload["state"] == "succeeded", payload["message"]
    victim.refresh_from_db()
    assert victim.state == "done" and victim.attempts == 2
    assert parts_of(job).exclude(pk=victim.pk).filter(attempts=1).count() == 5
    assert np.array_equal(np.load(stored(corpus)), np.load(one_process_embeddings(rows, tmp_path)))


def test_a_part_of_a_worker_killed_whole_goes_to_another_once_its_heartbeat_stops(
    workers, tmp_path
):
    group = workers(STANDIN_SECONDS_PER_TEXT="0.25", JOB_HEARTBEAT_TIMEOUT_SECONDS="3")
    group.processes = 1
    rows = pool_rows(n_queries=4, models=("alpha", "beta", "gamma"), samples=2)  # 24
    corpus = import_corpus("machine", jsonl_pool(tmp_path / "machine.jsonl", rows))
    first = group.start()
    job = embeddings_job(corpus, chunk_rows=4)
    victim = _running_part(job, group)
    child = int(victim.worker.rsplit(":", 1)[1])
    first.kill()  # the main process first: nobody is left to report the child's death
    first.wait(timeout=10)
    os.kill(child, signal.SIGKILL)
    killed = time.monotonic()
    group.start()  # another machine's worker
    payload = wait_for(job, group)
    assert payload["state"] == "succeeded", payload["message"]
    victim.refresh_from_db()
    assert victim.attempts == 2 and victim.worker.rsplit(":", 1)[1] != str(child)
    print(f"\n[parts] the job finished {time.monotonic() - killed:.1f} s after its worker died")
    assert np.array_equal(np.load(stored(corpus)), np.load(one_process_embeddings(rows, tmp_path)))
