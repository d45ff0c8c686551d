"""What every page of an analysed subject (a batch's report, a census, a Genie set, a
corpus) asks of its jobs, in one place: the jobs of one kind, the one running now, the
newest one if it failed, the newest report or a 404, and the report's charts drawn once
per finished job (by the job itself where its runner stores them) and cached.

A study type's page keeps only what is its own: its forms, its report's sections and the
drawing of its charts (``render``). The list pages ask when each subject was last analysed
(``analysed_at``); the downloads are the report's JSON file and its tables as CSV."""

import uuid
from collections.abc import Callable, Iterable

from django.contrib.contenttypes.models import ContentType
from django.core.cache import cache
from django.db.models import Model, QuerySet
from django.http import FileResponse, Http404, HttpResponse, StreamingHttpResponse
from django.utils.http import content_disposition_header
from django.utils.safestring import mark_safe

from core.csv_files import csv_chunks
from core.jobs.execution import job_files_dir
from core.jobs.pages import job_status
from core.jobs.stored_charts import stored_charts
from core.models import Job
from core.roles import ADMIN_GROUP, role_of

# a finished job's charts never change: drawn once, kept a day
CHART_CACHE_SECONDS = 24 * 3600
RUNNING_STATES = (Job.State.PENDING, Job.State.RUNNING)
FINISHED_STATES = (Job.State.SUCCEEDED, Job.State.FAILED)


def jobs_of(subject, kind: str) -> QuerySet:
    """The subject's jobs of ``kind`` (``subject.jobs``: a GenericRelation to ``Job``)."""
    return subject.jobs.filter(kind=kind)


def active_job(subject, kind: str) -> Job | None:
    """The newest pending or running job of ``kind``, if any."""
    return jobs_of(subject, kind).filter(state__in=RUNNING_STATES).order_by("-created_at").first()


def failed_job(subject, kind: str) -> Job | None:
    """The newest finished job of ``kind``, if it failed (an older report may still be
    shown beside the failure)."""
    newest = jobs_of(subject, kind).filter(state__in=FINISHED_STATES).order_by("-created_at")
    newest = newest.first()
    return newest if newest is not None and newest.state == Job.State.FAILED else None


def followed_job(job_id: str | None, kind: str, subject=None, user=None) -> Job | None:
    """The job of ``kind`` (about ``subject``, when given) that a page was sent to follow by
    its ``?job=`` parameter; None when the id is malformed or names another job. With
    ``user``, only a job that user started, unless the user is an admin (an import's job
    shows its file's name and problems to whoever follows it)."""
    try:
        pk = uuid.UUID(str(job_id))
    except ValueError:
        return None
    jobs = (subject.jobs if subject is not None else Job.objects).filter(pk=pk, kind=kind)
    if user is not None and role_of(user) != ADMIN_GROUP:
        jobs = jobs.filter(created_by=user)
    return jobs.first()


def job_problems(job: Job) -> list[str]:
    """A failed job's problems (every ``FILE:LINE: field: message`` of a refused file)."""
    return (job.result or {}).get("problems") or [job.message or "the job failed (no reason)"]


def with_job(url: str, job: Job) -> str:
    """``url`` with ``?job=``: the page then follows the job and shows how it ended."""
    return f"{url}?job={job.pk}"


def report_or_404(found: tuple[Job, dict] | None, what: str) -> tuple[Job, dict]:
    """``(job, report)`` as the subject's ``latest_report`` found it, or a 404 naming
    ``what`` ("Census one-word-census")."""
    if found is None:
        raise Http404(f"{what} has no finished analysis yet.")
    return found


def cached_charts(prefix: str, job: Job, render: Callable[[], list[dict]]) -> list[dict]:
    """The charts of a finished job's report, each a dict with its ``svg`` (safe HTML): the
    ones the job stored (``core.jobs.stored_charts``), else ``render()`` draws them; the
    cache keeps them."""
    key = f"{prefix}-report-charts:{job.pk}"
    charts = cache.get(key)
    if charts is None:
        charts = stored_charts(job)
        if charts is None:
            charts = render()
        cache.set(key, charts, CHART_CACHE_SECONDS)
    return [{**chart, "svg": mark_safe(chart["svg"])} for chart in charts]  # noqa: S308


def analysis_context(subject, kind: str, found: tuple[Job, dict] | None, form_class, defaults):
    """What a subject's page shows of its ``kind`` analyses: the newest report (``found``, as
    its ``latest_report`` gave it) and its job, the running job and its status, the newest
    failure, and the run form (``form_class``) set as the newest report was made, each field
    absent from its parameters at ``defaults[field]``."""
    job, report = found if found is not None else (None, None)
    active = active_job(subject, kind)
    params = (job.params or {}) if job is not None else {}
    return {
        "job": job,
        "report": report,
        "active_job": active,
        "active_status": job_status(active) if active else None,
        "failed_job": failed_job(subject, kind),
        "form": form_class(
            initial={
                field: default if params.get(field) is None else params[field]
                for field, default in defaults.items()
            }
        ),
    }


def analysed_at(model: type[Model], subjects: Iterable[Model], kind: str) -> dict:
    """When the newest succeeded ``kind`` job of each of ``subjects`` finished, by primary
    key (absent: never), in one query whatever their number."""
    jobs = Job.objects.filter(
        subject_type=ContentType.objects.get_for_model(model),
        subject_id__in=[subject.pk for subject in subjects],
        kind=kind,
        state=Job.State.SUCCEEDED,
    ).order_by("finished_at")
    finished = {}
    for subject_id, finished_at in jobs.values_list("subject_id", "finished_at"):
        finished[subject_id] = finished_at  # the newest wins
    return finished


def report_file(job: Job, filename: str) -> FileResponse:
    """The finished job's JSON report as a download named ``filename``."""
    return FileResponse(
        open(job_files_dir() / job.result_path, "rb"),  # FileResponse closes it
        as_attachment=True,
        filename=filename,
        content_type="application/json",
    )


def csv_download(columns: list[str], rows: Iterable[list], filename: str) -> StreamingHttpResponse:
    """A table of a report as a streamed CSV download named ``filename``."""
    response = StreamingHttpResponse(
        csv_chunks((dict(zip(columns, row, strict=True)) for row in rows), columns),
        content_type="text/csv; charset=utf-8",
    )
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


def text_csv_download(text: str, filename: str) -> HttpResponse:
    """CSV text written already (its cells neutralised when first written) as a download."""
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response
