"""Celery with a real Redis broker and a real worker process: an export job runs there.

The worker is started as a subprocess with the test database in its DATABASE_URL; the
test process switches its Celery app from in-process execution to the broker.
"""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test import Client
from kombu import pools as kombu_pools
from rest_framework.authtoken.models import Token

from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from config.celery import app as celery_app
from core.jobs.queue import start_job
from core.models import Job
from tests.factories import make_batch, make_participant

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/14")
REPO = Path(__file__).resolve().parents[1]

# slow, yet also run in CI's SQLite pass: a real worker on the embedded database
pytestmark = [
    pytest.mark.slow,
    pytest.mark.both_databases,
    pytest.mark.django_db(transaction=True),
]


def _redis_available() -> bool:
    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def _test_database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def _reset_connections() -> None:
    """Forget pooled broker connections so the next send uses the current broker_url."""
    if celery_app._pool is not None:
        celery_app._pool.force_close_all()
        celery_app._pool = None
    celery_app.amqp._producer_pool = None
    kombu_pools.reset()  # kombu's global producer pools would keep the closed connections
    # the result backend is cached per thread once used (e.g. by an eager task earlier)
    celery_app._backend_cache = None
    celery_app._local.__dict__.pop("backend", None)


@pytest.fixture
def broker_worker(tmp_path):
    if not _redis_available():
        pytest.skip(f"no Redis at {REDIS_URL}")
    queue = f"test-{uuid.uuid4().hex[:8]}"
    environment = {
        **os.environ,
        "REDIS_URL": REDIS_URL,
        "DATABASE_URL": _test_database_url(),
        "DATA_DIR": str(settings.DATA_DIR),
    }
    log = open(tmp_path / "worker.log", "w+")
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "solo",
         "--queues", queue, "--loglevel", "INFO", "--without-heartbeat", "--without-gossip"],
        cwd=REPO, env=environment, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    saved = {
        key: celery_app.conf[key]
        for key in ("broker_url", "result_backend", "task_always_eager", "task_default_queue")
    }
    celery_app.conf.update(
        broker_url=REDIS_URL,
        result_backend=REDIS_URL,
        task_always_eager=False,
        task_default_queue=queue,
    )
    _reset_connections()
    try:
        yield worker
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
        celery_app.conf.update(saved)
        _reset_connections()
        log.seek(0)
        print(log.read()[-3000:])


def test_export_job_runs_on_the_worker_with_visible_progress(broker_worker):
    batch = make_batch(n_items=3, per_item=2)
    for _ in range(2):
        person = make_participant(batch)
        for _ in range(3):
            outcome = lease_next_item(batch, person)
            submit_label(person.annotator, outcome.assignment.pk, 4, 10)
    researcher = User.objects.create_user("r", password="pw", is_staff=True)
    researcher.groups.add(Group.objects.get(name="researcher"))
    client = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")

    job = start_job("export", batch, {"layout": "long", "format": "jsonl"}, researcher)
    states = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        payload = client.get(f"/api/v1/jobs/{job.pk}").json()
        states.append(payload["state"])
        if payload["state"] in ("succeeded", "failed"):
            break
        assert broker_worker.poll() is None, "the worker process died"
        time.sleep(0.2)
    assert payload["state"] == "succeeded", payload
    assert states[0] in ("pending", "running")  # not run in-process: the worker took it
    assert payload["total"] == 6 and payload["progress"] == 6
    download = client.get(payload["download_url"])
    lines = b"".join(download.streaming_content).decode().splitlines()
    assert len(lines) == 6
    assert Job.objects.get(pk=job.pk).finished_at is not None


def test_periodic_task_runs_on_the_worker(broker_worker):
    from annotation.tasks import expire_stale_leases

    result = expire_stale_leases.delay()
    assert result.get(timeout=60) == 0
