"""Starting a job: record it, then hand it to Celery once the transaction commits."""

from django.db import transaction

from core import audit
from core.audit import Actor
from core.jobs.kinds import job_kind
from core.models import Job
from core.tasks import run_job


def start_job(kind: str, subject, params: dict | None = None, user=None) -> Job:
    """Record a job of ``kind`` about ``subject`` (a model instance, or None) and queue it.

    The request is recorded in the subject's audit trail (``"<kind>.requested"``).
    """
    if job_kind(kind) is None:
        raise ValueError(f"no runner registered for job kind {kind!r}")
    with transaction.atomic():
        job = Job.objects.create(
            kind=kind,
            subject=subject,
            params=params or {},
            created_by=user if user is not None and user.is_authenticated else None,
        )
        audit.record(
            f"{kind}.requested",
            subject=subject,
            actor=Actor.of(user),
            changes={"job": str(job.pk), **_public(params or {})},
        )
    transaction.on_commit(lambda: run_job.delay(str(job.pk)))
    job.refresh_from_db()
    return job


def _public(params: dict) -> dict:
    """Job parameters worth recording (internal file names of stored uploads are not)."""
    return {name: value for name, value in params.items() if name != "stored_file"}
