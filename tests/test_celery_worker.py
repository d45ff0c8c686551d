"""Celery with a real Redis broker and a real worker process: an export job runs there.

The worker is started as a subprocess with the test database in its DATABASE_URL; the
test process switches its Celery app from in-process execution to the broker.
"""

import time
import uuid

import pytest

from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from core.jobs.queue import start_job
from core.models import Job
from tests.celery_workers import REDIS_URL, celery_worker, redis_available, sending_to
from tests.factories import make_batch, make_participant
from tests.staff import staff_user, with_token

# slow, yet also run in CI's SQLite pass: a real worker on the embedded database
pytestmark = [
    pytest.mark.slow,
    pytest.mark.both_databases,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def broker_worker(tmp_path):
    if not redis_available():
        pytest.skip(f"no Redis at {REDIS_URL}")
    queue = f"test-{uuid.uuid4().hex[:8]}"
    arguments = ["--pool", "solo", "--queues", queue, "--loglevel", "INFO",
                 "--without-heartbeat", "--without-gossip"]  # fmt: skip
    with (
        celery_worker(tmp_path / "worker.log", arguments, {"REDIS_URL": REDIS_URL}, 20) as worker,
        sending_to(
            broker_url=REDIS_URL,
            result_backend=REDIS_URL,
            task_always_eager=False,
            task_default_queue=queue,
        ),
    ):
        yield worker


def test_export_job_runs_on_the_worker_with_visible_progress(broker_worker):
    batch = make_batch(n_items=3, per_item=2)
    for _ in range(2):
        person = make_participant(batch)
        for _ in range(3):
            outcome = lease_next_item(batch, person)
            submit_label(person.annotator, outcome.assignment.pk, 4, 10)
    researcher = staff_user("researcher", "r")
    client = with_token(researcher)

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
