"""Creating a lease: one Assignment row (leasing, checks and repeats all make them here)."""

from datetime import datetime, timedelta

from annotation.models import Assignment, Batch, Purpose


def new_lease(
    batch: Batch,
    annotator_id: int,
    item_pk: int,
    now: datetime,
    *,
    purpose: str = Purpose.REGULAR,
    shown_order: str = "",
) -> Assignment:
    """A lease of ``batch.lease_seconds``; a regular one's slot is already taken."""
    return Assignment.objects.create(
        batch=batch,
        item_id=item_pk,
        annotator_id=annotator_id,
        purpose=purpose,
        shown_order=shown_order,
        leased_at=now,
        expires_at=now + timedelta(seconds=batch.lease_seconds),
    )
