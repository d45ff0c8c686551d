"""Identifying annotators and their membership of a batch."""

from django.db import IntegrityError, transaction

from annotation.models import (
    Annotator,
    Assignment,
    AssignmentState,
    Batch,
    Label,
    LabelStatus,
    Participation,
)
from annotation.services import slots
from annotation.services.leasing import release_leases
from core import audit
from core.audit import Actor
from core.errors import InvalidInput, NotFound
from core.locking import lock_rows

MAX_PLATFORM_ID_LENGTH = 200


def identify_annotator(platform: str, platform_id: str) -> Annotator:
    """The annotator with this platform id, created on first sight (race-safe)."""
    platform_id = (platform_id or "").strip()
    if not platform_id:
        raise InvalidInput("platform_id", "is empty")
    if len(platform_id) > MAX_PLATFORM_ID_LENGTH:
        raise InvalidInput("platform_id", f"is longer than {MAX_PLATFORM_ID_LENGTH} characters")
    if platform not in Annotator.Platform.values:
        raise InvalidInput("platform", f"{platform!r} is not a known platform")
    existing = Annotator.objects.filter(platform=platform, platform_id=platform_id).first()
    if existing:
        return existing
    try:
        with transaction.atomic():
            return Annotator.objects.create(platform=platform, platform_id=platform_id)
    except IntegrityError:
        # Two first requests of the same person raced; the other one created the row.
        return Annotator.objects.get(platform=platform, platform_id=platform_id)


def join_batch(
    batch: Batch, annotator: Annotator, entry_params: dict | None = None
) -> Participation:
    """Record that the annotator entered the batch (idempotent); keeps the first entry's params."""
    participation = Participation.objects.filter(batch=batch, annotator=annotator).first()
    if participation:
        return participation
    try:
        with transaction.atomic():
            return Participation.objects.create(
                batch=batch, annotator=annotator, entry_params=entry_params or {}
            )
    except IntegrityError:
        return Participation.objects.get(batch=batch, annotator=annotator)


def exclude_annotator(
    batch: Batch, annotator: Annotator, *, actor: Actor | None = None, reason: str = ""
) -> int:
    """Exclude an annotator from a batch; returns how many of their labels it affected.

    Their counted labels become ``excluded`` (kept, not counted) and give their slots
    back, their open lease is expired, and they get no more work in this batch — so the
    batch still ends with exactly N counted labels per item, from other annotators.
    """
    with transaction.atomic():
        participation = _locked_participation(batch, annotator)
        participation.status = Participation.Status.EXCLUDED
        participation.save(update_fields=["status"])
        open_leases = list(
            lock_rows(
                Assignment.objects.filter(
                    batch=batch, annotator=annotator, state=AssignmentState.OPEN
                )
            ).values_list("pk", "item_id")
        )
        if open_leases:
            release_leases(open_leases)
        counted = list(
            lock_rows(
                Label.objects.filter(batch=batch, annotator=annotator, status=LabelStatus.COUNTED)
            ).values_list("pk", "item_id")
        )
        Label.objects.filter(pk__in=[pk for pk, _ in counted]).update(status=LabelStatus.EXCLUDED)
        slots.uncount(item_id for _, item_id in counted)
        audit.record(
            "annotator.exclude",
            subject=batch,
            actor=actor,
            changes={"annotator": annotator.pseudonym, "labels_excluded": len(counted)},
            reason=reason,
        )
    return len(counted)


def include_annotator(
    batch: Batch, annotator: Annotator, *, actor: Actor | None = None
) -> dict[str, int]:
    """Undo an exclusion. Each excluded label counts again where its item still has
    room; where the slot was refilled meanwhile it becomes ``surplus`` (never N + 1)."""
    outcome = {"counted": 0, "surplus": 0}
    with transaction.atomic():
        participation = _locked_participation(batch, annotator)
        participation.status = Participation.Status.ACTIVE
        participation.save(update_fields=["status"])
        excluded = lock_rows(
            Label.objects.filter(batch=batch, annotator=annotator, status=LabelStatus.EXCLUDED)
        ).order_by("item_id")
        for label_pk, item_id in excluded.values_list("pk", "item_id"):
            status = LabelStatus.COUNTED if slots.count_if_room(item_id) else LabelStatus.SURPLUS
            Label.objects.filter(pk=label_pk).update(status=status)
            outcome[status] += 1
        audit.record(
            "annotator.include",
            subject=batch,
            actor=actor,
            changes={"annotator": annotator.pseudonym, **outcome},
        )
    return outcome


def _locked_participation(batch: Batch, annotator: Annotator) -> Participation:
    participation = lock_rows(
        Participation.objects.filter(batch=batch, annotator=annotator)
    ).first()
    if participation is None:
        raise NotFound(f"annotator: {annotator.pseudonym} has not taken part in {batch.slug}")
    return participation
