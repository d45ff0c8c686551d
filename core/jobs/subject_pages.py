"""What every page of an analysed subject (a batch's report, a census, a Genie set, a
corpus) asks of its jobs, in one place: the jobs of one kind, the one running now, the
newest one if it failed, the newest report or a 404, and the report's charts drawn once
per finished job and cached.

A study type's page keeps only what is its own: its forms, its report's sections and the
drawing of its charts (``render``)."""

from collections.abc import Callable

from django.core.cache import cache
from django.db.models import QuerySet
from django.http import Http404
from django.utils.safestring import mark_safe

from core.models import Job

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


def report_or_404(found: tuple[Job, dict] | None, what: str) -> tuple[Job, dict]:
    """``(job, report)`` as the subject's ``latest_report`` found it, or a 404 naming
    ``what`` ("Census one-word-census")."""
    if found is None:
        raise Http404(f"{what} has no finished analysis yet.")
    return found


def cached_charts(prefix: str, job: Job, render: Callable[[], list[dict]]) -> list[dict]:
    """The charts of a finished job's report, each a dict with its ``svg`` (safe HTML):
    ``render()`` draws them the first time, the cache keeps them."""
    key = f"{prefix}-report-charts:{job.pk}"
    charts = cache.get(key)
    if charts is None:
        charts = render()
        cache.set(key, charts, CHART_CACHE_SECONDS)
    return [{**chart, "svg": mark_safe(chart["svg"])} for chart in charts]  # noqa: S308
