"""Job files past ``JOB_FILES_RETENTION_DAYS`` are deleted by the periodic task; the files
of unfinished jobs and the newest result of each kind per subject stay (the report a
page shows). Real files in the test's own jobs folder, real ``Job`` rows."""

import os
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from core.jobs.execution import job_files_dir
from core.jobs.retention import delete_old_job_files
from core.models import Job
from core.tasks import delete_old_job_files as delete_old_job_files_task
from tests.factories import make_batch
from tests.staff import staff_client

pytestmark = pytest.mark.django_db

DAY_S = 24 * 3600


def job_file(name: str, age_days: float, content: bytes = b"x" * 100) -> str:
    path = job_files_dir() / name
    path.write_bytes(content)
    written = time.time() - age_days * DAY_S
    os.utime(path, (written, written))
    return name


def finished_job(kind: str, subject, result_path: str, finished_days_ago: float) -> Job:
    finished = timezone.now() - timedelta(days=finished_days_ago)
    job = Job.objects.create(kind=kind, subject=subject, state=Job.State.SUCCEEDED)
    Job.objects.filter(pk=job.pk).update(result_path=result_path, finished_at=finished)
    job.refresh_from_db()
    return job


def remaining() -> set[str]:
    return {path.name for path in job_files_dir().iterdir()}


def test_old_files_go_and_what_pages_show_or_jobs_wait_for_stays(settings):
    settings.JOB_FILES_RETENTION_DAYS = 30
    batch, other = make_batch(n_items=1), make_batch(n_items=1)
    # two exports of one batch: the older one goes, the newest stays however old it is
    old_export = finished_job("export", batch, job_file("a-long.csv", 60), 60)
    newest_export = finished_job("export", batch, job_file("b-long.csv", 45), 45)
    # two analyses of the batch: the report its page shows stays
    old_report = finished_job("analysis", batch, job_file("c-report.json", 50), 50)
    shown_report = finished_job("analysis", batch, job_file("d-report.json", 40), 40)
    # another batch's only export, recent
    recent = finished_job("export", other, job_file("e-long.csv", 2), 2)
    # a pending import's stored upload (an old file: it waits for its worker)
    Job.objects.create(
        kind="import", subject=batch, params={"stored_file": job_file("upload-1.csv", 90)}
    )
    # files no job names: an upload whose job is gone, a crash's leftover, a fresh one
    job_file("upload-orphan.jsonl", 31)
    job_file("f-long.parquet.partial", 31)
    job_file("upload-fresh.csv", 29)
    os.mkdir(job_files_dir() / "folder")  # not a job file: left alone

    outcome = delete_old_job_files()

    assert remaining() == {
        "b-long.csv",
        "d-report.json",
        "e-long.csv",
        "upload-1.csv",
        "upload-fresh.csv",
        "folder",
    }
    assert (outcome.deleted_files, outcome.freed_bytes, outcome.jobs_without_file) == (4, 400, 2)
    for job in (old_export, old_report):
        job.refresh_from_db()
        assert job.result_path == "" and job.state == Job.State.SUCCEEDED
        assert "deleted after 30 days" in job.message
    for job in (newest_export, shown_report, recent):
        job.refresh_from_db()
        assert job.result_path and not job.message
    assert delete_old_job_files().deleted_files == 0  # nothing more to do


def test_the_periodic_task_is_scheduled_and_a_deleted_export_is_no_download(settings):
    settings.JOB_FILES_RETENTION_DAYS = 7
    scheduled = {
        entry["task"]: entry["schedule"] for entry in settings.CELERY_BEAT_SCHEDULE.values()
    }
    assert scheduled["core.tasks.delete_old_job_files"] <= 24 * 3600
    batch = make_batch(n_items=1)
    old = finished_job("export", batch, job_file("old-long.csv", 8), 8)
    finished_job("export", batch, job_file("new-long.csv", 1), 1)
    assert delete_old_job_files_task() == 1
    assert remaining() == {"new-long.csv"}

    client = staff_client("researcher")
    status = client.get(f"/api/v1/jobs/{old.pk}").json()
    assert status["download_url"] is None
    assert "deleted after 7 days" in status["message"]
    assert client.get(f"/api/v1/jobs/{old.pk}/download").status_code == 409


def test_zero_days_keeps_everything(settings):
    settings.JOB_FILES_RETENTION_DAYS = 0
    job_file("upload-orphan.csv", 3650)
    assert delete_old_job_files().deleted_files == 0
    assert remaining() == {"upload-orphan.csv"}
