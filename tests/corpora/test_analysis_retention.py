"""Old job files are deleted (``core.jobs.retention``) with a corpus analysis's files in
mind: its report, per-query table and typicality array are kept or deleted together, so
the corpus page keeps every table it offers and an old analysis names no missing file."""

import os
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from core.jobs.execution import job_files_dir
from core.jobs.retention import delete_old_job_files
from core.models import Job
from diversity.corpora.services.analyses import analyse_now, analysis_params, job_file
from tests.corpora.analysis_corpora import make_corpus
from tests.staff import staff_client

pytestmark = pytest.mark.django_db

DAY_S = 24 * 3600


def analysis_finished_days_ago(corpus, days: float) -> Job:
    job = analyse_now(corpus, analysis_params(bootstrap=20))
    assert job.state == Job.State.SUCCEEDED, job.message
    Job.objects.filter(pk=job.pk).update(finished_at=timezone.now() - timedelta(days=days))
    job.refresh_from_db()
    return job


def file_names(job: Job) -> set[str]:
    return set(job.result["files"].values())


def test_the_newest_analysis_keeps_all_its_files_and_an_older_one_loses_all(settings):
    settings.JOB_FILES_RETENTION_DAYS = 30
    corpus = make_corpus("kept")
    older = analysis_finished_days_ago(corpus, 50)
    newest = analysis_finished_days_ago(corpus, 40)
    assert len(file_names(newest)) == 3 and newest.result_path in file_names(newest)
    written = time.time() - 45 * DAY_S
    for entry in job_files_dir().iterdir():
        os.utime(entry, (written, written))

    outcome = delete_old_job_files()

    remaining = {entry.name for entry in job_files_dir().iterdir()}
    assert remaining == file_names(newest)
    assert (outcome.deleted_files, outcome.jobs_without_file) == (3, 1)
    older.refresh_from_db()
    assert older.result_path == "" and "files" not in older.result
    assert older.result["n_queries"] == 2  # the summary stays
    assert "deleted after 30 days" in older.message
    assert all(job_file(older, key) is None for key in ("report", "queries", "typicality"))

    client = staff_client("researcher")
    assert client.get("/manage/corpora/kept/").status_code == 200
    table = client.get("/manage/corpora/kept/queries.csv")
    assert table.status_code == 200
    content = b"".join(table.streaming_content) if table.streaming else table.content
    assert content.decode().splitlines()[0].startswith("query_id,")
    assert delete_old_job_files().deleted_files == 0  # nothing more to do


def test_a_job_that_lost_one_file_loses_the_others_it_lists(settings):
    settings.JOB_FILES_RETENTION_DAYS = 30
    corpus = make_corpus("partly")
    older = analysis_finished_days_ago(corpus, 50)
    analysis_finished_days_ago(corpus, 1)
    # only the older analysis's per-query table is past the retention
    aged = job_files_dir() / older.result["files"]["queries"]
    written = time.time() - 45 * DAY_S
    os.utime(aged, (written, written))

    outcome = delete_old_job_files()

    assert outcome.deleted_files == 3
    assert not any((job_files_dir() / name).exists() for name in file_names(older))
    older.refresh_from_db()
    assert older.result_path == "" and "files" not in older.result
