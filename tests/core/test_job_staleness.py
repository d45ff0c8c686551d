"""A running job is stale when it has reported no progress for
``JOB_RUNNING_TIMEOUT_SECONDS``, not when it started that long ago; and a job failed as
stale is never turned into a succeeded one by its worker finishing later."""

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
