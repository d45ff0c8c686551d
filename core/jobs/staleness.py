"""Jobs that can no longer finish are failed, so none shows ``pending`` or ``running``
for ever: a pending job nobody picked up within ``JOB_PENDING_TIMEOUT_SECONDS`` (its
message was lost with the broker), a running one that has reported no progress for
``JOB_RUNNING_TIMEOUT_SECONDS`` (its worker died). A running job is judged by its last
progress (``Job.last_progress_at``, written with every progress update), not by when it
started: a long job that keeps reporting progress runs as long as it needs. A job run by a
Celery worker also has a heartbeat (``Job.alive_at``, ``core.jobs.heartbeat``): silent for
``JOB_HEARTBEAT_TIMEOUT_SECONDS``, its worker is gone, machine and all, and it fails. Run by the
periodic task ``core.tasks.fail_stale_jobs``, and for one job whenever its status is read,
so the bound holds even while the scheduler is down.
"""

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from core.models import Job

LOST_PENDING = (
    "no worker picked this job up within {seconds} s (the job queue was unavailable or "
    "lost it); nothing was done, start it again"
)
LOST_RUNNING = "this job's worker stopped answering for more than {seconds} s; start it again"
LOST_HEARTBEAT = (
    "this job's worker (its process or its machine) stopped: no sign of life for more than "
    "{seconds} s; nothing it did was kept, start it again"
)


def _stale(now) -> dict[str, Q]:
    pending = settings.JOB_PENDING_TIMEOUT_SECONDS
    running = settings.JOB_RUNNING_TIMEOUT_SECONDS
    alive = settings.JOB_HEARTBEAT_TIMEOUT_SECONDS
    return {
        # first: a job with a heartbeat that stopped is told it lost its worker
        LOST_HEARTBEAT.format(seconds=alive): Q(
            state=Job.State.RUNNING, alive_at__lt=now - timedelta(seconds=alive)
        ),
        LOST_PENDING.format(seconds=pending): Q(
            state=Job.State.PENDING, created_at__lt=now - timedelta(seconds=pending)
        ),
        LOST_RUNNING.format(seconds=running): Q(state=Job.State.RUNNING)
        & (
            Q(last_progress_at__lt=now - timedelta(seconds=running))
            | Q(last_progress_at__isnull=True, started_at__lt=now - timedelta(seconds=running))
        ),
    }


def fail_stale_jobs(jobs=None) -> int:
    """Fail the stale jobs among ``jobs`` (default: all); returns how many."""
    now = timezone.now()
    queryset = Job.objects.all() if jobs is None else jobs
    failed = 0
    for message, condition in _stale(now).items():
        # one conditional UPDATE: a worker that starts the job meanwhile wins or loses whole
        failed += queryset.filter(condition).update(
            state=Job.State.FAILED, message=message, finished_at=now
        )
    return failed
