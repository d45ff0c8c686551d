"""A lease's life: created (one Assignment row; leasing, checks and repeats all make them
here), extended by the rating page's heartbeat, and expired, its slot given back.

``annotation.services.leasing`` decides who gets which item; what happens to a lease after
that is here, so that the departure and entry services can give leases back without the
leasing path.
"""

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from annotation.models import Annotator, Assignment, AssignmentState, Batch, Participation, Purpose
from annotation.services import slots
from core.errors import Conflict, NotFound
from core.locking import lock_rows

# what a participant whose participation another browser took over reads (the worker
# API's detail of a refused request for work or label), in their language
TAKEN_OVER = gettext_lazy(
    "This study was opened in another browser, which goes on with it; please continue there."
)

EXPIRY_CHUNK = 1000


def no_such_assignment() -> NotFound:
    """The answer to a lease that is not the caller's, or not there (the two look the
    same), in the participant's language."""
    return NotFound(gettext("No such assignment."))


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


def extend_lease(annotator: Annotator, assignment_id, now: datetime | None = None) -> Assignment:
    """The heartbeat: push an open lease's expiry to ``now + lease time``, capped at
    ``leased_at + batch.lease_cap_seconds``.

    Never revives anything: an expired or submitted lease, or one whose annotator was
    excluded, is a ``Conflict`` (the page then carries on; a submission is still judged
    by the usual rules). Someone else's lease is ``NotFound``, like a missing one.
    """
    now = now or timezone.now()
    with transaction.atomic():
        assignment = (
            lock_rows(Assignment.objects.filter(pk=assignment_id, annotator=annotator))
            .select_related("batch")
            .first()
        )
        if assignment is None:
            raise no_such_assignment()
        if assignment.state != AssignmentState.OPEN or assignment.expires_at <= now:
            raise Conflict(
                "assignment: " + gettext("this lease is no longer open; it cannot be extended")
            )
        excluded = Participation.objects.filter(
            batch_id=assignment.batch_id,
            annotator=annotator,
            status=Participation.Status.EXCLUDED,
        ).exists()
        if excluded:
            raise Conflict("assignment: " + gettext("you no longer take part in this batch"))
        batch = assignment.batch
        cap = assignment.leased_at + timedelta(seconds=batch.lease_cap_seconds)
        extended = min(now + timedelta(seconds=batch.lease_seconds), cap)
        if extended > assignment.expires_at:
            assignment.expires_at = extended
            assignment.save(update_fields=["expires_at"])
            if assignment.position_in_bundle is not None:
                # a bundle's leases were taken together and live together
                Assignment.objects.filter(
                    batch_id=assignment.batch_id,
                    annotator=annotator,
                    state=AssignmentState.OPEN,
                    leased_at=assignment.leased_at,
                ).update(expires_at=extended)
    return assignment


def expire_leases(batch: Batch | None = None, now: datetime | None = None) -> int:
    """Give back the slots of open leases past their expiry; returns how many expired.

    Leases being submitted at this moment are locked by the submitter and skipped: the
    submission wins, and the lease is not expired under it.
    """
    now = now or timezone.now()
    stale = Assignment.objects.filter(state=AssignmentState.OPEN, expires_at__lte=now)
    if batch is not None:
        stale = stale.filter(batch=batch)
    if not stale.exists():  # the common case, without taking any lock
        return 0
    total = 0
    while True:
        with transaction.atomic():
            rows = list(
                lock_rows(stale.order_by("pk"), skip_locked=True).values_list(*LEASE_FIELDS)[
                    :EXPIRY_CHUNK
                ]
            )
            if rows:
                total += release_leases(rows)
        if len(rows) < EXPIRY_CHUNK:
            return total


LEASE_FIELDS = ("pk", "item_id", "purpose", "shown_order")


def lease_row(assignment: Assignment) -> tuple:
    """An assignment as ``release_leases`` takes it (``LEASE_FIELDS``)."""
    return tuple(getattr(assignment, field) for field in LEASE_FIELDS)


def release_leases(rows: list[tuple]) -> int:
    """Mark open leases expired and give their slots back; caller holds their row locks.

    ``rows`` are (assignment pk, item pk, purpose, shown order) as ``LEASE_FIELDS``.
    Only regular leases hold a slot. Returns how many leases expired.
    """
    expired = Assignment.objects.filter(
        pk__in=[row[0] for row in rows], state=AssignmentState.OPEN
    ).update(state=AssignmentState.EXPIRED)
    if expired != len(rows):  # a lease was submitted meanwhile; recount what really expired
        still = Assignment.objects.filter(
            pk__in=[row[0] for row in rows], state=AssignmentState.EXPIRED
        )
        rows = list(still.values_list(*LEASE_FIELDS))
    slots.release_slots(
        (item_pk, order) for _, item_pk, purpose, order in rows if purpose == Purpose.REGULAR
    )
    return len(rows)
