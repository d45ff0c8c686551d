"""A Celery worker child killed under a running job (kill -9, the OOM killer) fails the
job within seconds and releases the corpus's embeddings lock (core.tasks); a worker
killed whole (main process and child: a lost machine) fails it once its heartbeat has
been silent for ``JOB_HEARTBEAT_TIMEOUT_SECONDS`` (core.jobs.heartbeat).

A real ``celery worker`` (prefork, one child) against a redis-server of the test's own on
a free port; its embeddings jobs sleep (``slow_embeddings_worker``), so the child can be
killed while one runs.
"""

import os
import shutil
import signal
import time

import numpy as np
import pytest

from core.errors import Conflict
from core.models import Job
from diversity.corpora.services.embedding_jobs import start_embeddings_import
from tests.celery_workers import celery_worker, sending_to
from tests.corpora.analysis_corpora import make_corpus
from tests.corpora.pools import npy_upload
from tests.faults.stack import RedisServer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server"),
]


HEARTBEAT_SECONDS = 0.5


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


@pytest.fixture
def prefork_worker(tmp_path):
    redis = RedisServer().start()
    environment = {"REDIS_URL": redis.url, "JOB_HEARTBEAT_SECONDS": str(HEARTBEAT_SECONDS)}
    arguments = ["--pool", "prefork", "--concurrency", "1",
                 "--include", "tests.core.slow_embeddings_worker", "--loglevel", "INFO",
                 "--without-heartbeat", "--without-gossip", "--without-mingle"]  # fmt: skip
    # a warm shutdown waits for a running task (the slow job outlives the test): a few
    # seconds for a clean exit, then the kill
    try:
        with (
            celery_worker(tmp_path / "worker.log", arguments, environment, 5) as worker,
            sending_to(broker_url=redis.url, task_always_eager=False),
        ):
            yield worker
    finally:
        redis.stop()


def _npy(rows: int):
    """An embeddings file for a corpus of ``rows`` responses."""
    return npy_upload(np.ones((rows, 4)))


def _wait(condition, timeout: float, what: str, worker):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        assert worker.poll() is None, "the worker's main process died"
        time.sleep(0.2)
    raise AssertionError(f"{what} not within {timeout} s")


def test_a_killed_child_fails_its_job_and_releases_the_corpus(prefork_worker):
    corpus = make_corpus("lost", embeddings=False)
    rows = corpus.responses.count()
    job = start_embeddings_import(corpus, _npy(rows))
    _wait(lambda: Job.objects.get(pk=job.pk).state == "running", 60, "the job", prefork_worker)
    with pytest.raises(Conflict):  # the corpus is busy while it runs
        start_embeddings_import(corpus, _npy(rows))
    [child] = _children(prefork_worker.pid)
    os.kill(child, signal.SIGKILL)
    killed = time.monotonic()
    _wait(lambda: Job.objects.get(pk=job.pk).state == "failed", 60, "failed", prefork_worker)
    seconds = time.monotonic() - killed
    print(f"\n[lost worker] the job failed {seconds:.1f} s after its child was killed")
    assert seconds < 10
    failed = Job.objects.get(pk=job.pk)
    assert "worker process running this job died" in failed.message
    assert failed.finished_at is not None
    # the lock is released: the next embeddings job of the corpus is accepted and runs
    again = start_embeddings_import(corpus, _npy(rows))
    assert again.state == "pending"


def test_a_worker_killed_whole_fails_its_job_once_its_heartbeat_stops(prefork_worker, settings):
    settings.JOB_HEARTBEAT_TIMEOUT_SECONDS = 3
    corpus = make_corpus("gone", embeddings=False)
    rows = corpus.responses.count()
    job = start_embeddings_import(corpus, _npy(rows))
    _wait(lambda: Job.objects.get(pk=job.pk).state == "running", 60, "the job", prefork_worker)
    started = Job.objects.get(pk=job.pk).alive_at
    _wait(lambda: Job.objects.get(pk=job.pk).alive_at > started, 10, "a heartbeat", prefork_worker)
    # the main process first, so nobody is left to report the child's death
    [child] = _children(prefork_worker.pid)
    prefork_worker.kill()
    prefork_worker.wait(timeout=10)
    os.kill(child, signal.SIGKILL)
    killed = time.monotonic()
    deadline = killed + 30
    while True:  # a new job of the corpus is refused until the dead one is failed
        try:
            again = start_embeddings_import(corpus, _npy(rows))
            break
        except Conflict:
            assert time.monotonic() < deadline, "the dead worker's job still holds the corpus"
            time.sleep(0.2)
    seconds = time.monotonic() - killed
    print(f"\n[lost worker] the corpus was released {seconds:.1f} s after the worker died")
    assert seconds < settings.JOB_HEARTBEAT_TIMEOUT_SECONDS + 5
    failed = Job.objects.get(pk=job.pk)
    assert failed.state == "failed" and "no sign of life" in failed.message
    assert again.state == "pending"
