"""A running job is stale when it has reported no progress for
``JOB_RUNNING_TIMEOUT_SECONDS``, not when it started that long ago; and a job failed as
stale is never turned into a succeeded one by its worker finishing later."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from core.jobs import execution, kinds
from core.jobs.execution import JobProgress, run_job
from core.jobs.staleness import fail_stale_jobs
from core.models import Job

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)


def running_job(started_ago: timedelta, progress_ago: timedelta | None) -> Job:
    now = timezone.now()
    return Job.objects.create(
        kind="export",
        params={},
        state=Job.State.RUNNING,
        started_at=now - started_ago,
        last_progress_at=None if progress_ago is None else now - progress_ago,
    )


def test_a_long_job_that_reports_progress_is_not_stale(settings):
    settings.JOB_RUNNING_TIMEOUT_SECONDS = 6 * 3600
    busy = running_job(started_ago=8 * HOUR, progress_ago=timedelta(seconds=30))
    silent = running_job(started_ago=8 * HOUR, progress_ago=7 * HOUR)
    never_reported = running_job(started_ago=8 * HOUR, progress_ago=None)
    recent = running_job(started_ago=HOUR, progress_ago=None)
    assert fail_stale_jobs() == 2
    states = {job.pk: Job.objects.get(pk=job.pk).state for job in (busy, silent, never_reported)}
    assert states == {busy.pk: "running", silent.pk: "failed", never_reported.pk: "failed"}
    assert Job.objects.get(pk=recent.pk).state == "running"


def test_progress_keeps_a_job_alive(settings, monkeypatch):
    settings.JOB_RUNNING_TIMEOUT_SECONDS = 6 * 3600
    monkeypatch.setattr(execution, "PROGRESS_WRITE_INTERVAL_S", 0)
    job = running_job(started_ago=7 * HOUR, progress_ago=7 * HOUR)
    JobProgress(job)(10, 100, "embedding")
    job.refresh_from_db()
    assert timezone.now() - job.last_progress_at < timedelta(minutes=1)
    assert fail_stale_jobs() == 0 and Job.objects.get(pk=job.pk).state == "running"


def test_a_job_failed_as_stale_stays_failed_when_its_worker_finishes(monkeypatch):
    def runner(job, progress):
        assert Job.objects.get(pk=job.pk).last_progress_at is not None  # set when it starts
        # the sweep fails it meanwhile (as if it had reported no progress for too long)
        Job.objects.filter(pk=job.pk).update(last_progress_at=timezone.now() - 7 * 24 * HOUR)
        assert fail_stale_jobs(Job.objects.filter(pk=job.pk)) == 1
        return {"done": True}, ""

    monkeypatch.setitem(kinds._KINDS, "export", kinds.JobKind("export", runner, lambda user: True))
    job = Job.objects.create(kind="export", params={})
    finished = run_job(str(job.pk))
    assert finished.state == "failed" and "stopped answering" in finished.message
    assert Job.objects.get(pk=job.pk).state == "failed"
    assert Job.objects.get(pk=job.pk).result is None


def test_a_running_job_whose_heartbeat_stopped_fails_without_waiting_for_the_progress_bound(
    settings,
):
    settings.JOB_RUNNING_TIMEOUT_SECONDS = 6 * 3600
    settings.JOB_HEARTBEAT_TIMEOUT_SECONDS = 60
    now = timezone.now()
    gone = running_job(started_ago=HOUR, progress_ago=timedelta(minutes=5))
    alive = running_job(started_ago=HOUR, progress_ago=timedelta(minutes=5))
    in_web_process = running_job(started_ago=HOUR, progress_ago=timedelta(minutes=5))
    Job.objects.filter(pk=gone.pk).update(alive_at=now - timedelta(seconds=61))
    Job.objects.filter(pk=alive.pk).update(alive_at=now - timedelta(seconds=5))
    assert fail_stale_jobs() == 1
    failed = Job.objects.get(pk=gone.pk)
    assert failed.state == "failed" and "no sign of life for more than 60 s" in failed.message
    assert Job.objects.get(pk=alive.pk).state == "running"
    # no heartbeat at all (a job run in the web process): only the progress bound applies
    assert Job.objects.get(pk=in_web_process.pk).state == "running"


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_beats_while_the_job_runs_and_stops_with_it(settings, monkeypatch):
    settings.JOB_HEARTBEAT_SECONDS = 0.05
    beats = []

    def runner(job, progress):
        first = Job.objects.get(pk=job.pk).alive_at
        if first is None:  # run without a heartbeat
            return {"done": True}, ""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            now = Job.objects.get(pk=job.pk).alive_at
            if now > first:
                beats.append(now)
                break
            time.sleep(0.02)
        return {"done": True}, ""

    monkeypatch.setitem(kinds._KINDS, "export", kinds.JobKind("export", runner, lambda user: True))
    job = Job.objects.create(kind="export", params={})
    finished = run_job(str(job.pk), heartbeat=True)
    assert finished.state == "succeeded" and beats, "no heartbeat while the job ran"
    last = Job.objects.get(pk=job.pk).alive_at
    time.sleep(0.2)
    assert Job.objects.get(pk=job.pk).alive_at == last  # it stopped with the job
    # without the heartbeat (in the web process) nothing is written
    other = Job.objects.create(kind="export", params={})
    assert run_job(str(other.pk)).state == "succeeded"
    assert Job.objects.get(pk=other.pk).alive_at is None
