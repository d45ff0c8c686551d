"""A participant's crowd-platform status, and leaving the study through the platform.

When the platform says a person is gone (Prolific: ``RETURNED``, ``TIMED-OUT``,
``REJECTED``), the slot their open lease holds is given back at once rather than when
the lease expires; their labels stay as they are (counted labels stay counted). The
status is kept on the participation (``platform_status``) for the pages and the
annotators export.
"""

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from annotation.models import Assignment, AssignmentState, Participation
from annotation.services.leasing import LEASE_FIELDS, release_leases
from core import audit
from core.audit import Actor
from core.locking import lock_rows

MAX_STATUS_LENGTH = 32


def record_platform_status(
    participation: Participation,
    status: str,
    *,
    departed: bool,
    actor: Actor | None = None,
    at: datetime | None = None,
) -> int:
    """Store the platform's status of the participant's submission; with ``departed``,
    also release their open lease in this batch. Returns how many leases were released.

    Idempotent: the same status again changes nothing and records nothing.
    """
    status = (status or "")[:MAX_STATUS_LENGTH]
    with transaction.atomic():
        locked = lock_rows(Participation.objects.filter(pk=participation.pk)).get()
        released = 0
        if departed:
            open_leases = list(
                lock_rows(
                    Assignment.objects.filter(
                        batch_id=locked.batch_id,
                        annotator_id=locked.annotator_id,
                        state=AssignmentState.OPEN,
                    )
                ).values_list(*LEASE_FIELDS)
            )
            if open_leases:
                released = release_leases(open_leases)
        if locked.platform_status == status and not released:
            return 0
        previous = locked.platform_status
        locked.platform_status = status
        locked.platform_status_at = at or timezone.now()
        # the platform is the one to say who takes part: a departure stops new items
        # (``leasing``), a later status that is not one lets them go on
        if departed and locked.departed_at is None:
            locked.departed_at = locked.platform_status_at
        elif not departed:
            locked.departed_at = None
        locked.save(update_fields=["platform_status", "platform_status_at", "departed_at"])
        audit.record(
            "annotator.platform_status",
            subject=locked.batch,
            actor=actor,
            changes={
                "annotator": locked.annotator.pseudonym,
                "platform_status": [previous, status],
                "leases_released": released,
            },
        )
    return released
