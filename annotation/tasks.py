"""Periodic Celery tasks of the annotation app; each calls one service."""

from celery import shared_task

from annotation.services.batches import record_snapshots
from annotation.services.leasing import expire_leases


@shared_task(name="annotation.tasks.expire_stale_leases")
def expire_stale_leases() -> int:
    """Periodic safety net: leasing also expires a batch's stale leases on demand."""
    return expire_leases()


@shared_task(name="annotation.tasks.record_batch_statistics")
def record_batch_statistics() -> int:
    return record_snapshots()
