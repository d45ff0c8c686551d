"""What the staff's per-item review page shows: one item as workers see it, its counts,
every label it received (annotator pseudonym, time, status, the order it was shown in,
the value as stored and as chosen, the comment) and the leases open on it now.

Researchers see pseudonyms only, like everywhere on the staff pages.
"""

from dataclasses import dataclass

from django.utils import timezone

from annotation import selectors
from annotation.models import Assignment, AssignmentState, Batch, Item, Label


@dataclass(frozen=True)
class LabelRow:
    pseudonym: str
    submitted_at: object
    status: str
    shown_order: str
    position_in_bundle: int | None
    stored: str  # in the kind's canonical terms (a pair: relative to the imported A and B)
    as_chosen: str  # as the worker gave it, relative to what they were shown
    check_passed: bool | None
    flags: list[str]
    seconds: float | None
    comment: str


def item_review(batch: Batch, item: Item) -> dict:
    kind = batch.task_kind
    labels = (
        Label.objects.filter(item=item).select_related("annotator").order_by("submitted_at", "pk")
    )
    rows = [_row(kind, label) for label in labels]
    leases = (
        Assignment.objects.filter(item=item, state=AssignmentState.OPEN)
        .select_related("annotator")
        .order_by("leased_at")
    )
    now = timezone.now()
    return {
        "item": item,
        "html": selectors.item_payload(selectors.load_item_for_display(item.pk), batch)["html"],
        "rows": rows,
        "by_status": _by_status(rows),
        "with_comments": sum(1 for row in rows if row.comment),
        # the pair's order matters for reading a value: show it only where it exists
        "shows_order": any(row.shown_order for row in rows),
        "shows_as_chosen": any(row.as_chosen != row.stored for row in rows),
        "leases": [
            {
                "pseudonym": lease.annotator.pseudonym,
                "leased_at": lease.leased_at,
                "expires_at": lease.expires_at,
                "expired": lease.expires_at < now,
                "purpose": lease.purpose,
            }
            for lease in leases
        ],
    }


def _row(kind, label: Label) -> LabelRow:
    passed = label.status == "cant_judge"
    stored = "" if passed else _stored(label)
    return LabelRow(
        pseudonym=label.annotator.pseudonym,
        submitted_at=label.submitted_at,
        status=label.status,
        shown_order=label.shown_order,
        position_in_bundle=label.position_in_bundle,
        stored=stored,
        as_chosen="" if passed else kind.shown(label),
        check_passed=label.check_passed,
        flags=[
            name
            for name, on in (("too fast", label.too_fast), ("straight-lined", label.straightlined))
            if on
        ],
        seconds=None if label.duration_ms is None else round(label.duration_ms / 1000, 1),
        comment=label.comment,
    )


def _stored(label: Label) -> str:
    if label.value is not None:
        return str(label.value)
    if label.answer and label.answer != label.text:
        return f"{label.text!r} (counted as {label.answer!r})"
    return repr(label.text) if label.text is not None else ""


def _by_status(rows: list[LabelRow]) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    return sorted(counts.items())
