"""Celery tasks; each calls one service. Without REDIS_URL they run in-process."""

from celery import shared_task

from annotation.services.leasing import expire_leases


@shared_task(name="annotation.tasks.expire_stale_leases")
def expire_stale_leases() -> int:
    """Periodic safety net: leasing also expires a batch's stale leases on demand."""
    return expire_leases()
