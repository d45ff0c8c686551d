"""Identifying annotators and their membership of a batch."""

from contextlib import nullcontext

from django.db import IntegrityError, connection, transaction

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
from annotation.services.leasing import LEASE_FIELDS, release_leases
from core import audit
from core.audit import Actor
from core.errors import InvalidInput, NotFound
from core.locking import lock_rows
from core.text import check_text

MAX_PLATFORM_ID_LENGTH = 200


def identify_annotator(platform: str, platform_id: str) -> Annotator:
    """The annotator with this platform id, created on first sight (race-safe)."""
    platform_id = (platform_id or "").strip()
    if not platform_id:
        raise InvalidInput("platform_id", "is empty")
    check_text("platform_id", platform_id)  # PostgreSQL cannot store NUL; ids hold no controls
    if len(platform_id) > MAX_PLATFORM_ID_LENGTH:
        raise InvalidInput("platform_id", f"is longer than {MAX_PLATFORM_ID_LENGTH} characters")
    if platform not in Annotator.Platform.values:
        raise InvalidInput("platform", f"{platform!r} is not a known platform")
    existing = Annotator.objects.filter(platform=platform, platform_id=platform_id).first()
    if existing:
        return existing
    return _created_or_found(Annotator, {"platform": platform, "platform_id": platform_id})


def _created_or_found(model, key: dict, **fields):
    """A new row of ``model`` with ``key`` and ``fields`` (one INSERT: a newcomer is the
    common case), or — when a twin request created it first and the unique constraint
    refused this one — the row found by ``key``."""
    try:
        with transaction.atomic() if connection.in_atomic_block else nullcontext():
            return model.objects.create(**key, **fields)
    except IntegrityError:
        return model.objects.get(**key)


def join_batch(
    batch: Batch,
    annotator: Annotator,
    entry_params: dict | None = None,
    *,
    client_ip: str | None = None,
    device_id: str = "",
    browser_key: str = "",
    language: str = "",
) -> Participation:
    """Record that the annotator entered the batch (idempotent); keeps the first entry's
    params, client address and device cookie (the annotators page flags ids that share
    an address or a device), and the browser it is bound to and the language chosen for
    it, when the caller knows them (``entry.enter``).

    Raises ``InvalidInput`` naming an entry parameter (``STUDY_ID``, ``assignmentId``...)
    that holds a control character.
    """
    for name, value in (entry_params or {}).items():
        check_text("entry parameter name", str(name))
        check_text(str(name), value)
    return _created_or_found(
        Participation,
        {"batch": batch, "annotator": annotator},
        entry_params=entry_params or {},
        entry_ip=client_ip or None,
        device_id=(device_id or "")[:64],
        browser_key=browser_key,
        language=language,
    )


def exclude_annotator(
    batch: Batch,
    annotator: Annotator,
    *,
    actor: Actor | None = None,
    reason: str = "",
    automatic: bool = False,
) -> int:
    """Exclude an annotator from a batch; returns how many of their labels it affected.

    Their counted labels become ``excluded`` (kept, not counted) and give their slots
    back, their open lease is expired, and they get no more work in this batch — so the
    batch still ends with exactly N counted labels per item, from other annotators.
    """
    with transaction.atomic():
        participation = _locked_participation(batch, annotator)
        if participation.status == Participation.Status.EXCLUDED:
            return 0  # already: nothing changes, and nothing more is recorded
        participation.status = Participation.Status.EXCLUDED
        participation.excluded_automatically = automatic
        participation.exclusion_reason = reason
        participation.save(update_fields=["status", "excluded_automatically", "exclusion_reason"])
        open_leases = list(
            lock_rows(
                Assignment.objects.filter(
                    batch=batch, annotator=annotator, state=AssignmentState.OPEN
                )
            ).values_list(*LEASE_FIELDS)
        )
        if open_leases:
            release_leases(open_leases)
        counted = list(
            lock_rows(
                Label.objects.filter(batch=batch, annotator=annotator, status=LabelStatus.COUNTED)
            ).values_list("pk", "item_id", "shown_order")
        )
        Label.objects.filter(pk__in=[row[0] for row in counted]).update(status=LabelStatus.EXCLUDED)
        slots.uncount((item_id, order) for _, item_id, order in counted)
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
        if participation.status != Participation.Status.EXCLUDED:
            return outcome  # not excluded: nothing to undo, nothing recorded
        participation.status = Participation.Status.ACTIVE
        participation.excluded_automatically = False
        participation.exclusion_reason = ""
        participation.save(update_fields=["status", "excluded_automatically", "exclusion_reason"])
        excluded = lock_rows(
            Label.objects.filter(batch=batch, annotator=annotator, status=LabelStatus.EXCLUDED)
        ).order_by("item_id")
        for label_pk, item_id, order in excluded.values_list("pk", "item_id", "shown_order"):
            counts = slots.count_if_room(item_id, order)
            status = LabelStatus.COUNTED if counts else LabelStatus.SURPLUS
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


def exclude_group(
    batch: Batch, pseudonyms: list[str], *, actor: Actor | None = None, reason: str = ""
) -> dict[str, int]:
    """Exclude several annotators at once (e.g. ids that share an address or a device);
    returns how many labels each lost. Those already excluded are left as they are."""
    affected = {}
    annotators = Annotator.objects.filter(
        pseudonym__in=pseudonyms,
        participations__batch=batch,
        participations__status=Participation.Status.ACTIVE,
    )
    for annotator in annotators.order_by("pk"):
        affected[annotator.pseudonym] = exclude_annotator(
            batch, annotator, actor=actor, reason=reason
        )
    return affected
