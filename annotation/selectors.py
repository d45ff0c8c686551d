"""Reads with non-trivial queries, shared by pages, API and commands."""

import statistics
from datetime import timedelta

from django.db.models import Count, Max, Min, Q
from django.utils import timezone

from annotation.models import Assignment, Batch, Item, Label, LabelStatus, Participation

ACTIVE_WINDOW = timedelta(minutes=10)
RATE_WINDOW = timedelta(hours=1)


def item_payload(item: Item, batch: Batch) -> dict:
    """What a worker is shown for an item (its kind decides: ``TaskKind.payload``)."""
    return batch.task_kind.payload(item, batch)


def load_item_for_display(item_pk: int) -> Item:
    return Item.objects.select_related("query", "response", "response_a", "response_b").get(
        pk=item_pk
    )


def batch_progress(batch: Batch) -> dict:
    """Counts of items by completion and of labels by status."""
    n = batch.annotations_per_item
    items = batch.items.aggregate(
        total=Count("pk"),
        complete=Count("pk", filter=Q(counted_count__gte=n)),
        untouched=Count("pk", filter=Q(reserved_count=0, counted_count=0)),
    )
    labels = batch.labels.aggregate(
        counted=Count("pk", filter=Q(status="counted")),
        surplus=Count("pk", filter=Q(status="surplus")),
        excluded=Count("pk", filter=Q(status="excluded")),
    )
    items["in_progress"] = items["total"] - items["complete"] - items["untouched"]
    return {"items": items, "labels": labels, "target_labels": items["total"] * n}


def batch_dashboard(batch: Batch) -> dict:
    """The live figures of the batch page and the progress endpoint."""
    now = timezone.now()
    figures = batch_progress(batch)
    counted = figures["labels"]["counted"]
    since = now - ACTIVE_WINDOW
    active = (
        Assignment.objects.filter(batch=batch)
        .filter(Q(leased_at__gte=since) | Q(submitted_at__gte=since))
        .values("annotator_id")
        .distinct()
        .count()
    )
    durations = list(
        Label.objects.filter(batch=batch, status=LabelStatus.COUNTED, duration_ms__isnull=False)
        .order_by("-submitted_at")
        .values_list("duration_ms", flat=True)[:5000]
    )
    last_activity = batch.labels.aggregate(last=Max("submitted_at"))["last"]
    remaining = max(figures["target_labels"] - counted, 0)
    figures.update(
        {
            "batch": batch.slug,
            "state": batch.state,
            "annotations_per_item": batch.annotations_per_item,
            "active_annotators": active,
            "median_seconds_per_label": (
                round(statistics.median(durations) / 1000, 1) if durations else None
            ),
            "last_activity_at": last_activity,
            "labels_remaining": remaining,
            "projected_finish_at": _projected_finish(batch, remaining, now),
            "share_done": round(counted / figures["target_labels"], 4)
            if figures["target_labels"]
            else 0.0,
        }
    )
    return figures


def _projected_finish(batch: Batch, remaining: int, now):
    """Now + remaining labels at the counted-label rate of the last hour (None if idle)."""
    if remaining == 0:
        return None
    recent = batch.labels.filter(
        status=LabelStatus.COUNTED, submitted_at__gte=now - RATE_WINDOW
    ).aggregate(n=Count("pk"), first=Min("submitted_at"))
    if recent["n"] < 2:
        return None
    span = max((now - recent["first"]).total_seconds(), 1.0)
    return now + timedelta(seconds=remaining * span / recent["n"])


def _empty_stats() -> dict:
    return {
        "durations": [],
        LabelStatus.COUNTED: 0,
        LabelStatus.SURPLUS: 0,
        LabelStatus.EXCLUDED: 0,
        "checks_passed": 0,
        "checks_failed": 0,
        "last": None,
    }


def annotator_rows(batch: Batch) -> list[dict]:
    """One row per participant: labels by status, median time, attention checks, dates."""
    participations = list(
        Participation.objects.filter(batch=batch).select_related("annotator").order_by("pk")
    )
    per_annotator: dict[int, dict] = {p.annotator_id: _empty_stats() for p in participations}
    labels = Label.objects.filter(batch=batch).values_list(
        "annotator_id", "status", "duration_ms", "value", "item__gold", "submitted_at"
    )
    for annotator_id, status, duration, value, gold, submitted_at in labels.iterator(2000):
        row = per_annotator.setdefault(annotator_id, _empty_stats())
        row[status] += 1
        if duration is not None:
            row["durations"].append(duration)
        if gold is not None:
            accepted = gold if isinstance(gold, list) else [gold]
            row["checks_passed" if value in accepted else "checks_failed"] += 1
        if row["last"] is None or submitted_at > row["last"]:
            row["last"] = submitted_at
    rows = []
    for participation in participations:
        stats = per_annotator[participation.annotator_id]
        rows.append(
            {
                "annotator": participation.annotator.pseudonym,
                "platform": participation.annotator.platform,
                "platform_id": participation.annotator.platform_id,
                "status": participation.status,
                "n_labels": stats["counted"] + stats["surplus"] + stats["excluded"],
                "n_counted": stats["counted"],
                "n_surplus": stats["surplus"],
                "n_excluded": stats["excluded"],
                "median_duration_ms": (
                    int(statistics.median(stats["durations"])) if stats["durations"] else None
                ),
                "attention_checks_passed": stats["checks_passed"],
                "attention_checks_failed": stats["checks_failed"],
                "first_seen_at": participation.first_seen_at,
                "last_seen_at": max(
                    filter(None, [participation.last_seen_at, stats["last"]]),
                    default=None,
                ),
            }
        )
    return rows
