"""Creating batches, changing their settings and moving them through their states.

The rules a batch's settings obey live here (``validate_settings``), so the pages, the
API, Django's admin and the command line accept and refuse exactly the same values.
"""

import contextlib
import copy
import re
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from annotation import setting_rules as rules
from annotation import settings_spec
from annotation.kinds import get_kind
from annotation.models import (
    DEFAULT_ANNOTATIONS_PER_ITEM,
    DEFAULT_LEASE_SECONDS,
    Batch,
    BatchState,
)
from annotation.services import bundles, languages, questionnaire, slots
from core import audit
from core.audit import Actor
from core.errors import Conflict, InvalidInput
from core.jobs.study_types import study_types

SLUG_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,99}$")
# Staff pages of other parts of the site live beside the batches under /manage/ and are
# matched first: the corpora's, and every study type's (census, genie, lengths, …).
OTHER_PAGES = {"corpora", "corpus"}


def reserved_slugs() -> set[str]:
    """The slugs a batch may not take: its page would be another's."""
    return OTHER_PAGES | {study.slug for study in study_types()}


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
    **design,
) -> Batch:
    """Create a draft batch. ``design`` holds the study-design and quality settings
    (``DESIGN_SETTINGS``: attention checks, flags, admission, heartbeat cap,
    questionnaire, repeats); every value is checked here, whatever the interface."""
    unknown = sorted(set(design) - set(DESIGN_SETTINGS))
    if unknown:
        raise InvalidInput(unknown[0], "is not a batch setting")
    if not isinstance(slug, str) or not SLUG_PATTERN.match(slug):
        raise InvalidInput(
            "slug", f"{slug!r} must be lower-case letters, digits and hyphens (at most 100)"
        )
    if slug in reserved_slugs():
        raise InvalidInput("slug", f"{slug!r} is taken by a page of the site; choose another")
    task_kind = get_kind(kind)
    with _named_in_kind_settings():
        kind_settings = task_kind.clean_settings(kind_settings)
    validate_settings(
        {
            "title": title,
            "annotations_per_item": annotations_per_item,
            "instructions": instructions,
            "consent_text": consent_text,
            "lease_seconds": lease_seconds,
            "quota_per_annotator": quota_per_annotator,
            "completion_code": completion_code,
            "completion_url": completion_url,
            "scale_labels": scale_labels or {},
        },
        task_kind,
    )
    design = clean_design(
        {**copy.deepcopy(DESIGN_DEFAULTS), **design}, lease_seconds=lease_seconds, kind=task_kind
    )
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
        **design,
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


def state_change_summary(batch: Batch, previous_state: str) -> str:
    """What the page and ``manage.py batch_state`` say after ``change_state``."""
    if batch.state == previous_state:
        return f"Batch {batch.slug} is already {batch.get_state_display()}; nothing changed."
    return f"Batch {batch.slug} is now {batch.get_state_display()}."


def set_annotations_per_item(
    batch: Batch, annotations_per_item: int, *, actor: Actor | None = None
) -> Batch:
    """Change N alone (``update_batch`` changes it together with other settings)."""
    return update_batch(batch, {"annotations_per_item": annotations_per_item}, actor=actor)


def _set_annotations_per_item(batch: Batch, annotations_per_item: int) -> Batch:
    """Change N; never below what an item already holds (counted labels + open leases)."""
    rules.positive("annotations_per_item", annotations_per_item)
    with transaction.atomic():
        batch = Batch.objects.select_for_update().get(pk=batch.pk)
        slots.change_target(batch, annotations_per_item)
        batch.annotations_per_item = annotations_per_item
        batch.save(update_fields=["annotations_per_item"])
    return batch


def _check_scale_labels(kind, value) -> None:
    """``{"<label value>": "button text"}`` for the kind's own label values."""
    if not isinstance(value, dict):
        raise InvalidInput("scale_labels", "must be an object mapping label value to text")
    defaults = kind.default_texts() if hasattr(kind, "default_texts") else {}
    for key, text in value.items():
        field = f"scale_labels.{key}"
        if not str(key).lstrip("+-").isdigit() or int(key) not in defaults:
            allowed = ", ".join(str(label) for label in defaults) or "none for this kind"
            raise InvalidInput(field, f"is not a label value of this kind ({allowed})")
        rules.line(field, text, rules.MAX_BUTTON_TEXT_CHARS)


SETTING_RULES = {
    "title": lambda field, value: rules.line(field, value, rules.MAX_TITLE_CHARS),
    "annotations_per_item": rules.positive,
    "lease_seconds": rules.positive,
    "quota_per_annotator": rules.optional_positive,
    "instructions": rules.markdown,
    "consent_text": rules.markdown,
    "completion_code": rules.code,
    "completion_url": rules.url,
}


@contextlib.contextmanager
def _named_in_kind_settings():
    """A kind names its bad setting by its own name (``max_words``); the batch's callers
    see it where they sent it, ``kind_settings.max_words`` (as API.md names nested fields)."""
    try:
        yield
    except InvalidInput as bad:
        if bad.field == "kind_settings" or bad.field.startswith("kind_settings."):
            raise
        raise InvalidInput(f"kind_settings.{bad.field}", bad.message) from bad


def validate_settings(values: dict, kind) -> None:
    """Raise ``InvalidInput`` naming the first of ``values`` (batch settings by field
    name) that breaks its rule; ``kind`` (a ``TaskKind``) judges ``scale_labels``."""
    for field, value in values.items():
        rule = SETTING_RULES.get(field)
        if rule is not None:
            rule(field, value)
    if "scale_labels" in values:
        _check_scale_labels(kind, values["scale_labels"])


# The study-design and quality-control settings (SPEC.md, "Measurement validity", "Crowd
# platforms"), each with its rule and its default, from their declarations
# (``annotation.settings_spec``): the same names in the API, on the pages and as flags of
# ``create_batch``.
DESIGN_SETTINGS = {setting.name: setting.rule for setting in settings_spec.DESIGN}
DESIGN_DEFAULTS = {setting.name: setting.default for setting in settings_spec.DESIGN}


def clean_design(values: dict, *, lease_seconds: int, kind=None) -> dict:
    """The design settings in ``values``, checked; ``InvalidInput`` names the field.
    ``kind`` (a ``TaskKind``) judges the button texts of ``translations``."""
    cleaned = {}
    for field, value in values.items():
        if field == "questionnaire":
            cleaned[field] = questionnaire.clean_definition(value)
            continue
        if field == "translations":
            continue  # below: it is checked against the questionnaire
        DESIGN_SETTINGS[field](field, value)
        cleaned[field] = value
    cap = cleaned.get("max_lease_seconds")
    if cap is not None and cap < lease_seconds:
        raise InvalidInput(
            "max_lease_seconds", f"must be at least the lease time ({lease_seconds} s)"
        )
    if cleaned.get("reward_per_participant") is not None:
        cleaned["reward_per_participant"] = Decimal(str(cleaned["reward_per_participant"]))
        if not cleaned.get("reward_currency"):
            raise InvalidInput(
                "reward_currency", "is needed with reward_per_participant (e.g. GBP)"
            )
    # (accept_platforms means nothing without invitations_required: no study id needed then)
    admits_prolific = "prolific" in (cleaned.get("accept_platforms") or [])
    if (
        cleaned.get("invitations_required")
        and admits_prolific
        and not cleaned.get("prolific_study_id")
    ):
        raise InvalidInput(
            "prolific_study_id",
            "is needed when an invitation-only batch admits Prolific links (links must carry "
            "it as STUDY_ID)",
        )
    if "translations" in values:
        cleaned["translations"] = languages.clean_translations(
            values["translations"],
            questionnaire=cleaned.get("questionnaire") or [],
            label_values=list(kind.default_texts()) if hasattr(kind, "default_texts") else [],
        )
    offered = cleaned.get("languages") or []
    if offered and cleaned.get("language") and cleaned["language"] not in offered:
        raise InvalidInput(
            "language", f"{cleaned['language']!r} is not among the offered languages"
        )
    policy = cleaned.get("flag_policy")
    if policy == "exclude" and cleaned.get("flagged_share_to_exclude") is None:
        raise InvalidInput(
            "flagged_share_to_exclude", "is needed when flag_policy is exclude (e.g. 0.5)"
        )
    return cleaned


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
    *DESIGN_SETTINGS,
]

EDITABLE_FIELDS = {
    *DESIGN_SETTINGS,
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
    validate_settings(changes, batch.task_kind)
    design = {field: changes[field] for field in changes if field in DESIGN_SETTINGS}
    if design or "lease_seconds" in changes:
        current = {field: getattr(batch, field) for field in DESIGN_SETTINGS}
        lease = changes.get("lease_seconds", batch.lease_seconds)
        checked = clean_design({**current, **design}, lease_seconds=lease, kind=batch.task_kind)
        changes = {**changes, **{field: checked[field] for field in design}}
    if "title" in changes and not str(changes["title"]).strip():
        raise InvalidInput("title", "must not be empty")
    if "completion_code" in changes and not str(changes["completion_code"]).strip():
        raise InvalidInput("completion_code", "must not be empty")
    if "kind_settings" in changes:
        if not isinstance(changes["kind_settings"], dict):
            raise InvalidInput("kind_settings", "must be an object of the kind's settings")
        merged = {**(batch.kind_settings or {}), **changes["kind_settings"]}
        with _named_in_kind_settings():
            cleaned = batch.task_kind.clean_settings_change(batch, merged)
        changes = {**changes, "kind_settings": cleaned}
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
        if "bundle_by" in fields and before.bundle_by != batch.bundle_by:
            bundles.assign_bundles(batch)  # refused (Conflict) once the batch holds labels
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
