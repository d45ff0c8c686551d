"""Reads with non-trivial queries, shared by pages, API and commands."""

import hashlib
import json
import statistics
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.db import connection
from django.db.models import Count, F, Max, Min, Q, Sum
from django.utils import timezone, translation

from annotation.models import (
    REGULAR_STATUSES,
    Assignment,
    AssignmentState,
    Batch,
    BatchState,
    Item,
    Label,
    LabelStatus,
    Participation,
    Purpose,
    Query,
)
from annotation.rendering import ByteBoundedCache
from annotation.services import sql
from core.errors import InvalidInput

ACTIVE_WINDOW = timedelta(minutes=10)
RATE_WINDOW = timedelta(hours=1)


# --------------------------------------------------------------------------- taxonomy

TAXONOMY_PARAMETERS = ("category", "subcategory")
TAXONOMY_VALUE_MAX = Query._meta.get_field("category").max_length


@dataclass(frozen=True)
class CategoryFilter:
    """Which items a page, an API answer or an export covers: those whose query has this
    ``category`` and this ``subcategory`` (``None``: any). The one rule every staff page,
    API endpoint and export applies (``?category=X&subcategory=Y``); a sub-category alone
    matches it under any category. A value no item has simply matches nothing."""

    category: str | None = None
    subcategory: str | None = None

    @classmethod
    def from_params(cls, params: Mapping) -> "CategoryFilter":
        """The filter a request (query string, form or JSON body) or a job asks for;
        missing or empty values filter nothing. ``InvalidInput`` names a value that is not
        text or is longer than a category can be."""
        values = {}
        for name in TAXONOMY_PARAMETERS:
            raw = params.get(name)
            if raw is None:
                continue
            if not isinstance(raw, str):
                raise InvalidInput(name, "must be a text")
            value = raw.strip()
            if len(value) > TAXONOMY_VALUE_MAX:
                raise InvalidInput(
                    name, f"is {len(value):,} characters long; a {name} has at most "
                    f"{TAXONOMY_VALUE_MAX}",
                )  # fmt: skip
            values[name] = value or None
        return cls(**values)

    @property
    def active(self) -> bool:
        return self.category is not None or self.subcategory is not None

    def params(self) -> dict[str, str]:
        """The filter as query parameters (only those set)."""
        return {
            name: getattr(self, name)
            for name in TAXONOMY_PARAMETERS
            if getattr(self, name) is not None
        }

    def query_string(self, **more: str) -> str:
        """``?category=…&subcategory=…`` (with ``more`` first), or ``""`` with nothing."""
        params = {**more, **self.params()}
        return f"?{urlencode(params)}" if params else ""

    def describe(self) -> str:
        """The filter in words, e.g. ``category “Creative”, sub-category “Poetry”``."""
        parts = []
        if self.category is not None:
            parts.append(f"category “{self.category}”")
        if self.subcategory is not None:
            parts.append(f"sub-category “{self.subcategory}”")
        return ", ".join(parts) or "every category"

    def q(self, item_path: str = "") -> Q:
        """The condition on rows that reach an item through ``item_path`` (``""`` for
        items themselves, ``"item__"`` for labels and assignments)."""
        condition = Q()
        if self.category is not None:
            condition &= Q(**{f"{item_path}query__category": self.category})
        if self.subcategory is not None:
            condition &= Q(**{f"{item_path}query__subcategory": self.subcategory})
        return condition

    def matches(self, category: str, subcategory: str) -> bool:
        """The same rule for an item already in memory (e.g. a report's item entry)."""
        return (self.category is None or category == self.category) and (
            self.subcategory is None or subcategory == self.subcategory
        )


NO_FILTER = CategoryFilter()


def category_counts(items) -> list[dict]:
    """Regular items of ``items`` (an ``Item`` queryset) and their counted labels per
    category, each category with its sub-categories: ``[{"category", "items",
    "labels_counted", "subcategories": [{"subcategory", "items", "labels_counted"}]}]``,
    sorted by name (an empty category or sub-category is "none")."""
    rows = (
        items.filter(is_check=False)
        .order_by()
        .values_list("query__category", "query__subcategory")
        .annotate(n=Count("pk"), counted=Sum("counted_count"))
    )
    categories: dict[str, dict] = {}
    for category, subcategory, n, counted in rows:
        entry = categories.setdefault(
            category,
            {"category": category, "items": 0, "labels_counted": 0, "subcategories": []},
        )
        entry["items"] += n
        entry["labels_counted"] += counted or 0
        entry["subcategories"].append(
            {"subcategory": subcategory, "items": n, "labels_counted": counted or 0}
        )
    for entry in categories.values():
        entry["subcategories"].sort(key=lambda sub: sub["subcategory"])
        if [sub["subcategory"] for sub in entry["subcategories"]] == [""]:
            entry["subcategories"] = []  # no sub-categories at all: nothing to list
    return [categories[name] for name in sorted(categories)]


def batch_items(batch: Batch, categories: CategoryFilter = NO_FILTER):
    """The batch's items (attention checks too) that ``categories`` covers."""
    return Item.objects.filter(categories.q(), batch=batch)


def batch_labels(batch: Batch, categories: CategoryFilter = NO_FILTER):
    """The batch's labels (every status) of the items ``categories`` covers."""
    return Label.objects.filter(categories.q("item__"), batch=batch)


def item_payload(item: Item, batch: Batch, assignment: Assignment | None = None) -> dict:
    """What a worker is shown for an item (its kind decides: ``TaskKind.payload``), as
    the lease presents it (e.g. the order of a pair)."""
    presentation = {"shown_order": assignment.shown_order} if assignment is not None else {}
    return batch.task_kind.payload(item, batch, presentation)


# Regular items per batch, for the worker's progress bar: counted at most every
# ITEM_COUNT_SECONDS per process instead of on every request for work. Items are only
# added by imports (which forget the importing process's count at once); other processes
# show a new import's items within that time. Bounded: a few batches are live at once,
# and the map is emptied when it grows past ITEM_COUNT_BATCHES.
ITEM_COUNT_SECONDS = 30.0
ITEM_COUNT_BATCHES = 1000
_item_counts: dict[tuple, tuple[int, float]] = {}


def _count_key(batch: Batch) -> tuple:
    # the creation time too: a test database may give a new batch a deleted one's pk
    return (batch.pk, batch.created_at)


def regular_item_count(batch: Batch) -> int:
    """The batch's items other than attention checks (possibly ITEM_COUNT_SECONDS old)."""
    now = time.monotonic()
    key = _count_key(batch)
    known = _item_counts.get(key)
    if known is not None and known[1] > now:
        return known[0]
    count = batch.items.filter(is_check=False).count()
    if len(_item_counts) >= ITEM_COUNT_BATCHES:
        _item_counts.clear()
    _item_counts[key] = (count, now + ITEM_COUNT_SECONDS)
    return count


def forget_item_count(batch: Batch) -> None:
    """Items were added to the batch: count them again at the next request."""
    _item_counts.pop(_count_key(batch), None)


# What a worker is shown for an item, kept per process by (batch, item, order), bounded
# in bytes (ITEM_PAYLOAD_CACHE_BYTES): an item is leased N times, so most requests for
# work find its Markdown rendered and its display built. Items never change once imported
# (their texts, like every query and response, are fixed by their ids), and the key
# carries the batch settings a kind may show, so an entry is never stale.
_payloads = ByteBoundedCache(lambda: settings.ITEM_PAYLOAD_CACHE_BYTES)


def lease_payload(batch: Batch, assignment: Assignment) -> dict:
    """``item_payload`` of the assignment's item as this lease presents it, from the
    per-process cache when it is there (no query), else loaded and rendered."""
    settings_digest = hashlib.blake2b(
        json.dumps([batch.kind_settings, batch.scale_labels], sort_keys=True).encode(),
        digest_size=8,
    ).hexdigest()
    batch_key = (*_count_key(batch), batch.kind, settings_digest)
    # the item's headings ("Prompt", "Response 1") are in the participant's language
    language = translation.get_language()
    key = repr((batch_key, language, assignment.item_id, assignment.shown_order)).encode()
    cached = _payloads.get(key)
    if cached is not None:
        return json.loads(cached)
    payload = item_payload(load_item_for_display(assignment.item_id), batch, assignment)
    _payloads.put(key, json.dumps(payload))
    return payload


# the related rows an item's display reads (``TaskKind.texts``), each loaded with it
DISPLAYED_RELATIONS = ("query", "response", "response_a", "response_b")


def load_item_for_display(item_pk: int) -> Item:
    """The item with its query and response(s) loaded, in one hand-written statement
    (``annotation.services.sql``): a first lease of an item in a process renders it, and
    putting the same query together with the ORM cost that lease more CPU than
    rendering the item's Markdown (``bench/crowd``)."""
    with sql.cursor() as cursor:
        cursor.execute(_display_sql(), {"item": item_pk})
        row = cursor.fetchone()
    if row is None:
        raise Item.DoesNotExist(f"No item {item_pk}.")
    width = len(sql.columns(Item))
    item = sql.instance(Item, row[:width])
    for name in DISPLAYED_RELATIONS:
        related = Item._meta.get_field(name).related_model
        values = row[width : width + len(sql.columns(related))]
        width += len(values)
        setattr(item, name, None if values[0] is None else sql.instance(related, values))
    return item


@sql.statement
def _display_sql() -> str:
    joins, selected = [], [sql.select_list(Item, "i")]
    for number, name in enumerate(DISPLAYED_RELATIONS):
        field, alias = Item._meta.get_field(name), f"r{number}"
        joins.append(
            f"LEFT JOIN {sql.table(field.related_model)} {alias} "
            f"ON {alias}.id = i.{connection.ops.quote_name(field.column)}"
        )
        selected.append(sql.select_list(field.related_model, alias))
    return f"""
        SELECT {", ".join(selected)}
        FROM {sql.table(Item)} i {" ".join(joins)}
        WHERE i.id = %(item)s
    """


def batch_progress(batch: Batch, categories: CategoryFilter = NO_FILTER) -> dict:
    """Counts of items by completion and of labels by status (of the items ``categories``
    covers)."""
    n = batch.annotations_per_item
    items = (
        batch_items(batch, categories)
        .filter(is_check=False)
        .aggregate(
            total=Count("pk"),
            complete=Count("pk", filter=Q(counted_count__gte=n)),
            untouched=Count("pk", filter=Q(reserved_count=0, counted_count=0)),
        )
    )
    labels = batch_labels(batch, categories).aggregate(
        **{status: Count("pk", filter=Q(status=status)) for status in LabelStatus.values}
    )
    items["in_progress"] = items["total"] - items["complete"] - items["untouched"]
    return {"items": items, "labels": labels, "target_labels": items["total"] * n}


def batch_dashboard(batch: Batch, categories: CategoryFilter = NO_FILTER) -> dict:
    """The live figures of the batch page and the progress endpoint, over the items
    ``categories`` covers (every figure: items, labels, leases, annotators, pace).

    ``leases`` counts the open regular leases (each holds one of an item's N slots):
    ``open`` ones still running, ``expired`` ones past their expiry whose slot goes back at
    the next request for work. Of ``labels_remaining``, ``labels_held`` are held by those
    leases and ``labels_unreserved`` by none. ``projected_finish_at`` is ``None`` whenever
    no honest projection exists, and ``projection_note`` says why (or, with a projection,
    what it rests on).
    """
    now = timezone.now()
    figures = batch_progress(batch, categories)
    counted = figures["labels"]["counted"]
    since = now - ACTIVE_WINDOW
    active = (
        Assignment.objects.filter(categories.q("item__"), batch=batch)
        .filter(Q(leased_at__gte=since) | Q(submitted_at__gte=since))
        .values("annotator_id")
        .distinct()
        .count()
    )
    labels = batch_labels(batch, categories)
    durations = list(
        labels.filter(status=LabelStatus.COUNTED, duration_ms__isnull=False)
        .order_by("-submitted_at")
        .values_list("duration_ms", flat=True)[:5000]
    )
    last_activity = labels.aggregate(last=Max("submitted_at"))["last"]
    remaining = max(figures["target_labels"] - counted, 0)
    leases = _open_leases(batch, now, categories)
    free = (
        batch_items(batch, categories)
        .filter(is_check=False)
        .aggregate(free=Sum(F("target") - F("reserved_count")))["free"]
    )
    unreserved = min(max(free or 0, 0), remaining)
    finish_at, note = _projection(batch, remaining, unreserved, leases, now, labels)
    figures.update(
        {
            "batch": batch.slug,
            **categories.params(),
            "state": batch.state,
            "annotations_per_item": batch.annotations_per_item,
            "active_annotators": active,
            "median_seconds_per_label": (
                round(statistics.median(durations) / 1000, 1) if durations else None
            ),
            "last_activity_at": last_activity,
            "labels_remaining": remaining,
            "labels_unreserved": unreserved,
            "labels_held": remaining - unreserved,
            "leases": leases,
            "projected_finish_at": finish_at,
            "projection_note": note,
            "share_done": round(counted / figures["target_labels"], 4)
            if figures["target_labels"]
            else 0.0,
        }
    )
    return figures


def _open_leases(batch: Batch, now, categories: CategoryFilter = NO_FILTER) -> dict:
    """Open regular leases (the ones holding a slot), running and past their expiry."""
    return Assignment.objects.filter(
        categories.q("item__"),
        batch=batch,
        state=AssignmentState.OPEN,
        purpose=Purpose.REGULAR,
    ).aggregate(
        open=Count("pk", filter=Q(expires_at__gte=now)),
        expired=Count("pk", filter=Q(expires_at__lt=now)),
    )


def _projection(
    batch: Batch, remaining: int, unreserved: int, leases: dict, now, labels
) -> tuple[datetime | None, str | None]:
    """When the batch will have all its labels, at the counted-label rate of the last hour.

    No projection (``None``, with the reason) when nothing remains, when the batch hands
    out no work (draft, paused, closed), when every remaining slot is held by a lease —
    the finish then depends on those leases being answered or given back, which no rate
    predicts — or when fewer than 2 labels were counted in the last hour.
    """
    if remaining == 0 and not labels.exists() and not batch_items(batch).exists():
        return None, "No items yet: upload an items file to start."
    if remaining == 0:
        return None, "Every item has all its labels."
    if batch.state != BatchState.LIVE:
        return None, {
            BatchState.DRAFT: "Not published yet: no projection.",
            BatchState.PAUSED: "Paused: no projection while workers get no new items.",
            BatchState.CLOSED: "Closed: no more items are handed out.",
        }.get(batch.state, "No projection.")
    expired = leases["expired"]
    expired_note = (
        f" ({expired} of them expired; their slots go back at the next request for work)"
        if expired
        else ""
    )
    if unreserved == 0:
        return None, (
            f"No projection: the remaining {_labels(remaining)} are all held by open leases"
            f"{expired_note}, so the finish depends on those being answered or given back."
        )
    recent = labels.filter(
        status=LabelStatus.COUNTED, submitted_at__gte=now - RATE_WINDOW
    ).aggregate(n=Count("pk"), first=Min("submitted_at"))
    if recent["n"] < 2:
        return None, "No projection: fewer than 2 labels were counted in the last hour."
    span = max((now - recent["first"]).total_seconds(), 1.0)
    per_hour = recent["n"] * 3600 / span
    held = remaining - unreserved
    basis = f"At the last hour's pace ({per_hour:,.0f} labels an hour)"
    if held:
        basis += f"; {_labels(held)} held by open leases{expired_note}"
    return now + timedelta(seconds=remaining * span / recent["n"]), basis + "."


def _labels(count: int) -> str:
    return f"{count} label" if count == 1 else f"{count} labels"


def _empty_stats() -> dict:
    return {
        "durations": [],
        **{status: 0 for status in LabelStatus.values},
        "checks_passed": 0,
        "checks_failed": 0,
        "too_fast": 0,
        "straightlined": 0,
        "last": None,
    }


def sharing_groups(batch: Batch) -> dict[str, list[str]]:
    """Annotators who entered from the same client address or the same browser (device
    cookie): ``{group: [pseudonyms]}`` for groups of two or more, with neutral group
    names (``address 1``, ``device 2``) so that no address is shown. A group is a hint
    of one person posing as several, not proof (a lab or a household shares an address).
    """
    groups: dict[str, list[str]] = {}
    for field, label in (("entry_ip", "address"), ("device_id", "device")):
        members: dict[str, list[str]] = {}
        rows = (
            Participation.objects.filter(batch=batch)
            .exclude(**{f"{field}__isnull": True})
            .order_by("pk")
            .values_list(field, "annotator__pseudonym")
        )
        for value, pseudonym in rows:
            # Empty values are skipped here, not in SQL: on PostgreSQL, excluding
            # ``entry_ip = ''`` on the NULL-able address column left out every row.
            if value:
                members.setdefault(str(value), []).append(pseudonym)
        shared = [names for names in members.values() if len(names) > 1]
        for number, names in enumerate(shared, start=1):
            groups[f"{label} {number}"] = names
    return groups


def annotator_rows(batch: Batch, categories: CategoryFilter = NO_FILTER) -> list[dict]:
    """One row per participant: labels by status, median time, attention checks, quality
    flags, exclusion (and whether a policy did it), questionnaire answers, dates.

    ``n_labels`` and the median time cover the annotator's regular labels (counted,
    surplus, excluded); attention checks and repeats are reported apart. With a category
    filter every figure covers the labels of the items it covers, and only annotators
    with such a label are listed.
    """
    participations = list(
        Participation.objects.filter(batch=batch).select_related("annotator").order_by("pk")
    )
    per_annotator: dict[int, dict] = {p.annotator_id: _empty_stats() for p in participations}
    labels = batch_labels(batch, categories).values_list(
        "annotator_id", "status", "duration_ms", "check_passed", "too_fast", "straightlined",
        "submitted_at",
    )  # fmt: skip
    for annotator_id, status, duration, passed, fast, straight, submitted_at in labels.iterator(
        2000
    ):
        row = per_annotator.setdefault(annotator_id, _empty_stats())
        row[status] += 1
        if status == LabelStatus.CHECK:
            row["checks_passed" if passed else "checks_failed"] += 1
        elif status in REGULAR_STATUSES:
            if duration is not None:
                row["durations"].append(duration)
            row["too_fast"] += fast
            row["straightlined"] += straight
        if row["last"] is None or submitted_at > row["last"]:
            row["last"] = submitted_at
    shares: dict[str, list[str]] = {}
    for group, names in sharing_groups(batch).items():
        for name in names:
            shares.setdefault(name, []).append(group)
    rows = []
    for participation in participations:
        stats = per_annotator[participation.annotator_id]
        if categories.active and stats["last"] is None:
            continue  # no label of the items the filter covers
        rows.append(
            {
                "annotator": participation.annotator.pseudonym,
                "platform": participation.annotator.platform,
                "platform_id": participation.annotator.platform_id,
                "status": participation.status,
                "excluded_automatically": participation.excluded_automatically,
                "exclusion_reason": participation.exclusion_reason,
                "platform_status": participation.platform_status,
                "language": participation.language,
                "n_labels": stats["counted"] + stats["surplus"] + stats["excluded"],
                "n_counted": stats["counted"],
                "n_surplus": stats["surplus"],
                "n_excluded": stats["excluded"],
                "n_repeats": stats["repeat"],
                "median_duration_ms": (
                    int(statistics.median(stats["durations"])) if stats["durations"] else None
                ),
                "attention_checks_passed": stats["checks_passed"],
                "attention_checks_failed": stats["checks_failed"],
                "flagged_too_fast": stats["too_fast"],
                "flagged_straightlined": stats["straightlined"],
                "questionnaire": participation.questionnaire_answers or {},
                "shares": shares.get(participation.annotator.pseudonym, []),
                "browser_switches": participation.browser_switches,
                "first_seen_at": participation.first_seen_at,
                "last_seen_at": max(
                    filter(None, [participation.last_seen_at, stats["last"]]),
                    default=None,
                ),
            }
        )
    return rows
