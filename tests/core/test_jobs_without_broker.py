"""A broker outage: jobs fail fast with a message, the request answers 503 JSON, no job
stays pending past its bound, and the health endpoints say which part is down."""

import socket
import time
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from core.jobs.staleness import fail_stale_jobs
from core.models import Job
from core.tasks import clear_expired_sessions
from tests.celery_workers import sending_to
from tests.factories import make_batch


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens there once the probe is closed


@pytest.fixture
def dead_broker():
    url = f"redis://127.0.0.1:{_closed_port()}/0"
    with sending_to(broker_url=url, task_always_eager=False):
        yield url


@pytest.fixture
def researcher_client(db):
    user = User.objects.create_user("r", password="pw", is_staff=True)
    user.groups.add(Group.objects.get(name="researcher"))
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")


@pytest.mark.django_db(transaction=True)
def test_export_job_with_the_broker_down_is_503_and_failed(dead_broker, researcher_client):
    batch = make_batch(n_items=1)
    started = time.monotonic()
    response = researcher_client.post(
        f"/api/v1/batches/{batch.slug}/export-jobs", {"layout": "long", "format": "csv"}
    )
    elapsed = time.monotonic() - started
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    assert response["Retry-After"] == "30"
    assert "job queue (Redis) did not answer" in response.json()["detail"]
    assert elapsed < 8, f"the request took {elapsed:.1f} s"
    job = Job.objects.get()
    assert job.state == Job.State.FAILED and "try again" in job.message
    assert job.finished_at is not None


@pytest.mark.django_db(transaction=True)
def test_health_reports_the_broker_separately(dead_broker):
    ready = Client().get("/readyz")  # asks the broker
    assert ready.status_code == 503 and ready.json()["broker"].startswith("unavailable")
    # /healthz says what this process last saw, without asking
    health = Client().get("/healthz")
    assert health.status_code == 200
    assert health.json() == {"database": "ok", "broker": "unavailable: ConnectionError"}


@pytest.mark.django_db
def test_without_a_broker_jobs_run_in_process_and_the_site_is_ready():
    assert Client().get("/readyz").json() == {"database": "ok", "broker": "in-process"}


@pytest.mark.django_db
def test_a_lost_pending_job_fails_when_read_and_by_the_sweep(researcher_client, settings):
    settings.JOB_PENDING_TIMEOUT_SECONDS = 60
    batch = make_batch(n_items=1)
    old = timezone.now() - timedelta(seconds=120)
    lost = Job.objects.create(kind="export", subject=batch, params={})
    waiting = Job.objects.create(kind="export", subject=batch, params={})
    stuck = Job.objects.create(kind="export", subject=batch, state="running", started_at=old)
    Job.objects.filter(pk=lost.pk).update(created_at=old)
    payload = researcher_client.get(f"/api/v1/jobs/{lost.pk}").json()
    assert payload["state"] == "failed" and "no worker picked this job up" in payload["message"]
    settings.JOB_RUNNING_TIMEOUT_SECONDS = 60
    assert fail_stale_jobs() == 1  # the running one; the recent pending one waits on
    assert Job.objects.get(pk=stuck.pk).state == "failed"
    assert Job.objects.get(pk=waiting.pk).state == "pending"


@pytest.mark.django_db
def test_a_job_failed_as_stale_is_not_run_later():
    from core.jobs.execution import run_job

    batch = make_batch(n_items=1)
    job = Job.objects.create(kind="export", subject=batch, params={}, state="failed")
    assert run_job(str(job.pk)).state == "failed"


@pytest.mark.django_db
def test_expired_sessions_are_cleared_by_the_periodic_task(settings):
    from django.contrib.sessions.backends.db import SessionStore
    from django.contrib.sessions.models import Session

    fresh = SessionStore()
    fresh["x"] = 1
    fresh.create()
    expired = SessionStore()
    expired["x"] = 2
    expired.create()
    Session.objects.filter(session_key=expired.session_key).update(
        expire_date=timezone.now() - timedelta(days=1)
    )
    clear_expired_sessions()
    assert list(Session.objects.values_list("session_key", flat=True)) == [fresh.session_key]
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {"core.tasks.clear_expired_sessions", "core.tasks.fail_stale_jobs"} <= scheduled
