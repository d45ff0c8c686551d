"""Creating batches, changing their settings and moving them through their states."""

import re

from django.db import transaction
from django.utils import timezone

from annotation.kinds import get_kind
from annotation.models import (
    DEFAULT_ANNOTATIONS_PER_ITEM,
    DEFAULT_LEASE_SECONDS,
    Batch,
    BatchState,
)
from annotation.services import slots
from core import audit
from core.audit import Actor
from core.errors import Conflict, InvalidInput

SLUG_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,99}$")

# state -> states it may move to
TRANSITIONS: dict[str, set[str]] = {
    BatchState.DRAFT: {BatchState.LIVE, BatchState.CLOSED},
    BatchState.LIVE: {BatchState.PAUSED, BatchState.CLOSED},
    BatchState.PAUSED: {BatchState.LIVE, BatchState.CLOSED},
    BatchState.CLOSED: set(),
}


def create_batch(
    *,
    slug: str,
    kind: str,
    title: str = "",
    annotations_per_item: int = DEFAULT_ANNOTATIONS_PER_ITEM,
    instructions: str = "",
    consent_text: str = "",
    lease_seconds: int = DEFAULT_LEASE_SECONDS,
    quota_per_annotator: int | None = None,
    completion_code: str = "",
    completion_url: str = "",
    scale_labels: dict | None = None,
    kind_settings: dict | None = None,
    actor: Actor | None = None,
) -> Batch:
    if not SLUG_PATTERN.match(slug or ""):
        raise InvalidInput(
            "slug", f"{slug!r} must be lower-case letters, digits and hyphens (at most 100)"
        )
    task_kind = get_kind(kind)
    kind_settings = task_kind.clean_settings(kind_settings)
    _check_positive("annotations_per_item", annotations_per_item)
    _check_positive("lease_seconds", lease_seconds)
    if quota_per_annotator is not None:
        _check_positive("quota_per_annotator", quota_per_annotator)
    if Batch.objects.filter(slug=slug).exists():
        raise Conflict(f"slug: a batch {slug!r} already exists")
    batch = Batch(
        slug=slug,
        kind=kind,
        title=title or slug,
        annotations_per_item=annotations_per_item,
        instructions=instructions,
        consent_text=consent_text,
        lease_seconds=lease_seconds,
        quota_per_annotator=quota_per_annotator,
        completion_url=completion_url,
        scale_labels=scale_labels or {},
        kind_settings=kind_settings,
    )
    if completion_code:
        batch.completion_code = completion_code
    with transaction.atomic():
        batch.save()
        audit.record(
            "batch.create",
            subject=batch,
            actor=actor,
            changes={name: getattr(batch, name) for name in AUDITED_SETTINGS},
        )
    return batch


STATE_ACTIONS = {
    BatchState.LIVE: "batch.publish",
    BatchState.PAUSED: "batch.pause",
    BatchState.CLOSED: "batch.close",
}


def change_state(batch: Batch, new_state: str, *, actor: Actor | None = None) -> Batch:
    """Publish, pause, resume or close a batch. Publishing needs at least one item."""
    if new_state not in BatchState.values:
        raise InvalidInput("state", f"{new_state!r} is not one of {', '.join(BatchState.values)}")
    with transaction.atomic():
        batch = Batch.objects.select_for_update().get(pk=batch.pk)
        if new_state == batch.state:
            return batch
        if new_state not in TRANSITIONS[batch.state]:
            raise Conflict(f"state: a {batch.state} batch cannot become {new_state}")
        if new_state == BatchState.LIVE and not batch.items.exists():
            raise Conflict("state: a batch without items cannot be published; import items first")
        now = timezone.now()
        if new_state == BatchState.LIVE and batch.published_at is None:
            batch.published_at = now
        if new_state == BatchState.CLOSED:
            batch.closed_at = now
        old_state = batch.state
        batch.state = new_state
        batch.save(update_fields=["state", "published_at", "closed_at"])
        action = STATE_ACTIONS[new_state]
        if old_state == BatchState.PAUSED and new_state == BatchState.LIVE:
            action = "batch.resume"
        audit.record(action, subject=batch, actor=actor, changes={"state": [old_state, new_state]})
    return batch


def set_annotations_per_item(
    batch: Batch, annotations_per_item: int, *, actor: Actor | None = None
) -> Batch:
    """Change N alone (``update_batch`` changes it together with other settings)."""
    return update_batch(batch, {"annotations_per_item": annotations_per_item}, actor=actor)


def _set_annotations_per_item(batch: Batch, annotations_per_item: int) -> Batch:
    """Change N; never below what an item already holds (counted labels + open leases)."""
    _check_positive("annotations_per_item", annotations_per_item)
    with transaction.atomic():
        batch = Batch.objects.select_for_update().get(pk=batch.pk)
        slots.change_target(batch, annotations_per_item)
        batch.annotations_per_item = annotations_per_item
        batch.save(update_fields=["annotations_per_item"])
    return batch


def _check_positive(field: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidInput(field, f"must be a positive integer, got {value!r}")


# Settings whose values the audit trail records at creation and on every edit.
AUDITED_SETTINGS = [
    "title",
    "kind",
    "annotations_per_item",
    "lease_seconds",
    "quota_per_annotator",
    "instructions",
    "consent_text",
    "completion_code",
    "completion_url",
    "scale_labels",
    "kind_settings",
]

EDITABLE_FIELDS = {
    "title",
    "instructions",
    "consent_text",
    "lease_seconds",
    "quota_per_annotator",
    "completion_code",
    "completion_url",
    "scale_labels",
    "kind_settings",
}


def update_batch(batch: Batch, changes: dict, *, actor: Actor | None = None) -> Batch:
    """Edit a batch's settings. ``annotations_per_item`` (N) goes through its own rule."""
    unknown = set(changes) - EDITABLE_FIELDS - {"annotations_per_item"}
    if unknown:
        raise InvalidInput(sorted(unknown)[0], "cannot be changed here")
    if "lease_seconds" in changes:
        _check_positive("lease_seconds", changes["lease_seconds"])
    if changes.get("quota_per_annotator") is not None:
        _check_positive("quota_per_annotator", changes["quota_per_annotator"])
    if "title" in changes and not str(changes["title"]).strip():
        raise InvalidInput("title", "must not be empty")
    if "completion_code" in changes and not str(changes["completion_code"]).strip():
        raise InvalidInput("completion_code", "must not be empty")
    if "scale_labels" in changes and not isinstance(changes["scale_labels"], dict):
        raise InvalidInput("scale_labels", "must be an object mapping label value to text")
    if "kind_settings" in changes:
        if not isinstance(changes["kind_settings"], dict):
            raise InvalidInput("kind_settings", "must be an object of the kind's settings")
        merged = {**(batch.kind_settings or {}), **changes["kind_settings"]}
        changes = {**changes, "kind_settings": batch.task_kind.clean_settings(merged)}
    with transaction.atomic():
        before = Batch.objects.select_for_update().get(pk=batch.pk)
        before_values = {name: getattr(before, name) for name in AUDITED_SETTINGS}
        if "annotations_per_item" in changes:
            batch = _set_annotations_per_item(batch, changes["annotations_per_item"])
        batch = Batch.objects.select_for_update().get(pk=batch.pk)
        fields = sorted(set(changes) & EDITABLE_FIELDS)
        for field in fields:
            setattr(batch, field, changes[field])
        if fields:
            batch.full_clean(exclude=["slug", "kind", "state"])
            batch.save(update_fields=fields)
        changed = audit.diff(
            before_values, {name: getattr(batch, name) for name in AUDITED_SETTINGS}
        )
        if changed:
            audit.record("batch.edit", subject=batch, actor=actor, changes=changed)
    return batch


def record_snapshots() -> int:
    """Record the figures of every live or paused batch (called by the periodic task)."""
    from annotation.models import BatchSnapshot
    from annotation.selectors import batch_dashboard

    now = timezone.now()
    snapshots = []
    for batch in Batch.objects.filter(state__in=[BatchState.LIVE, BatchState.PAUSED]):
        figures = batch_dashboard(batch)
        snapshots.append(
            BatchSnapshot(
                batch=batch,
                taken_at=now,
                items_complete=figures["items"]["complete"],
                labels_counted=figures["labels"]["counted"],
                labels_surplus=figures["labels"]["surplus"],
                labels_excluded=figures["labels"]["excluded"],
                active_annotators=figures["active_annotators"],
            )
        )
    BatchSnapshot.objects.bulk_create(snapshots)
    return len(snapshots)
