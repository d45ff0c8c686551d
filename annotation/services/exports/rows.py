"""The rows of each table layout, read from the database in chunks.

Memory: rows are read with ``QuerySet.iterator(chunk_size=CHUNK_SIZE)`` (a server-side
cursor on PostgreSQL, ``fetchmany`` on SQLite) and yielded as they arrive. The long and
dense layouts merge two such iterators — items (with their texts) ordered by position,
labels (only their own columns) ordered by their item's position — so each makes two
queries in all, never one per item, holds one item's labels at a time, and fetches an
item's texts once rather than once per label. Only the annotators table (one row per
annotator, built by ``selectors.annotator_rows``) is computed whole.
"""

from collections.abc import Iterator
from datetime import UTC, datetime

from django.conf import settings
from django.db.models import OuterRef, Subquery

from annotation.kinds import get_kind
from annotation.models import Batch, Item, Label, LabelStatus, Participation
from annotation.selectors import NO_FILTER, CategoryFilter, annotator_rows
from annotation.services.exports.schema import (
    ANNOTATOR_COLUMNS,
    columns,
    item_columns,
    label_columns,
)

CHUNK_SIZE = 2000


def _streamed(queryset) -> Iterator:
    """The rows in chunks, on the connection that may hold a cursor across transactions
    (``settings.DIRECT_DATABASE``: PostgreSQL itself when a transaction pooler stands
    in front of the default connection)."""
    return queryset.using(settings.DIRECT_DATABASE).iterator(chunk_size=CHUNK_SIZE)


# label export column -> ORM path from Label, where the two differ
# the long layout's columns that are not a label's own field: where they are read from
LABEL_FIELDS = {"annotator": "annotator__pseudonym", "language": "participant_language"}


def _item_parts(
    batch: Batch, *, include_checks: bool = True, categories: CategoryFilter = NO_FILTER
) -> Iterator[tuple[tuple[int, int], dict]]:
    """``((position, pk), item columns)`` for every item of the batch in import order
    (attention checks too, unless ``include_checks`` is false) that ``categories`` covers.

    Each column is read from its ``source``: an ORM path from ``Item``, or a text kept in
    ``Item.content`` (``"content.<key>"``, read with the whole content once per item).
    """
    columns = item_columns(batch.kind)
    paths = [column.source for column in columns if column.source and "." not in column.source]
    from_content = [column for column in columns if column.source.startswith("content.")]
    fetched = [*paths, "content"] if from_content else paths
    items = Item.objects.filter(categories.q(), batch=batch)
    if not include_checks:
        items = items.filter(is_check=False)
    items = items.order_by("position", "pk").values_list("position", "pk", *fetched)
    by_path = {column.source: column.name for column in columns}
    for position, item_pk, *values in _streamed(items):
        part = {"batch": batch.slug, "kind": batch.kind}
        part.update((by_path[path], value) for path, value in zip(paths, values, strict=False))
        if from_content:
            content = values[-1] or {}
            for column in from_content:
                part[column.name] = content.get(column.source.removeprefix("content."))
        yield (position, item_pk), {column.name: part[column.name] for column in columns}


def _merge_by_item(items: Iterator, labels: Iterator) -> Iterator[tuple[dict, list]]:
    """Merge two iterators sorted by the same (item position, item pk) key: items as
    ``(key, item part)``, labels as ``(key, label)``. Yields ``(item part, [labels])`` for
    every item, holding one item's labels at a time; closes both iterators at the end."""
    try:
        pending = next(labels, None)
        for key, part in items:
            # A label of an item the item query did not see (imported meanwhile): skipped.
            while pending is not None and pending[0] < key:
                pending = next(labels, None)
            group = []
            while pending is not None and pending[0] == key:
                group.append(pending[1])
                pending = next(labels, None)
            yield part, group
    finally:  # ends both cursors, also when the consumer stops early
        items.close()
        labels.close()


def _label_query(batch: Batch, statuses, categories: CategoryFilter, *fields: str):
    labels = Label.objects.filter(categories.q("item__"), batch=batch)
    if "participant_language" in fields:
        # the language of the label's annotator in this batch (their participation's)
        labels = labels.annotate(
            participant_language=Subquery(
                Participation.objects.filter(
                    batch_id=OuterRef("batch_id"), annotator_id=OuterRef("annotator_id")
                ).values("language")[:1]
            )
        )
    if statuses is not None:
        labels = labels.filter(status__in=statuses)
    labels = labels.order_by("item__position", "item_id", "submitted_at", "pk").values_list(
        "item__position", "item_id", *fields
    )
    return _streamed(labels)


def iter_long_groups(
    batch: Batch, *, all_statuses: bool = False, categories: CategoryFilter = NO_FILTER
) -> Iterator[tuple[dict, list[dict]]]:
    """The long layout grouped by item: ``(item columns, [label columns, ...])`` for every
    item with at least one exported label, items in import order, labels as submitted.

    Two queries (items with their texts; labels with only their own columns), merged
    here: the texts travel from the database once per item, not once per label, and the
    writers serialise them once per item.
    """
    statuses = None if all_statuses else [LabelStatus.COUNTED]
    names = [column.name for column in label_columns(batch.kind)]
    fields = [LABEL_FIELDS.get(name, name) for name in names]
    at = names.index("submitted_at")
    labels = (
        ((position, item_pk), _label_row(names, values, at))
        for position, item_pk, *values in _label_query(batch, statuses, categories, *fields)
    )
    for part, group in _merge_by_item(_item_parts(batch, categories=categories), labels):
        if group:
            yield part, group


def _label_row(names: list[str], values: list, at: int) -> dict:
    values[at] = iso_utc(values[at])
    row = dict(zip(names, values, strict=True))
    row["shown_order"] = row["shown_order"] or None  # "" for kinds without an order
    return row


def iter_dense_rows(batch: Batch, categories: CategoryFilter = NO_FILTER) -> Iterator[dict]:
    """One dict per regular item in import order, with its counted labels in submission
    order (attention checks, which never hold counted labels, are left out).

    Two queries, both ordered by (item position, item pk) and read in chunks, are merged
    here: memory holds one item's labels at a time, whatever the size of the batch. Items
    with no counted label get empty lists and ``n == 0``. The kind turns an item's labels
    into its own dense columns (``TaskKind.dense_values``).
    """
    kind = get_kind(batch.kind)
    names = [column.name for column in kind.value_columns] + ["shown_order"]
    labels = (
        ((position, item_pk), (dict(zip(names, values, strict=True)), annotator))
        for position, item_pk, annotator, *values in _label_query(
            batch, [LabelStatus.COUNTED], categories, "annotator__pseudonym", *names
        )
    )
    names_out = [column.name for column in columns("dense", batch)]
    items = _item_parts(batch, include_checks=False, categories=categories)
    for part, group in _merge_by_item(items, labels):
        row = dict(part)
        row.update(kind.dense_values([label for label, _ in group]))
        row["annotators"] = [annotator for _, annotator in group]
        row["n"] = len(group)
        yield {name: row[name] for name in names_out}


def iter_annotator_rows(batch: Batch, categories: CategoryFilter = NO_FILTER) -> Iterator[dict]:
    """One dict per annotator who contributed at least one label (any status).

    ``status`` is the annotator's standing in the batch (``active`` or ``excluded``, and
    whether a quality policy excluded them, with the reason); ``n_labels`` counts their
    labels of regular items and ``median_duration_ms`` is the median over those (null
    when none has a duration); attention checks are their ``check`` labels, passed when
    the answer is one of the gold answers; the flags count their regular labels that were
    too fast or straight-lined. The batch's questionnaire answers follow as ``q_<id>``.
    With a category filter, every figure counts the labels of the items it covers.
    """
    names = [column.name for column in ANNOTATOR_COLUMNS]
    questions = [question["id"] for question in batch.questionnaire or []]
    for row in annotator_rows(batch, categories):
        if row["n_labels"] or row["attention_checks_passed"] or row["attention_checks_failed"]:
            exported = {name: row[name] for name in names}
            for qid in questions:
                exported[f"q_{qid}"] = row["questionnaire"].get(qid)
            yield exported


def iso_utc(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def iter_bundle_rows(batch: Batch, categories: CategoryFilter = NO_FILTER) -> Iterator[dict]:
    """One dict per (annotator, bundle) with a counted label, bundles in their first
    item's order: the bundle's items (import order) and this person's counted label and
    position of each (``None`` where they have none). Two queries; one bundle's labels in
    memory at a time."""
    writes = not getattr(get_kind(batch.kind), "label_set", ())
    field = "answer" if writes else "value"
    items = (
        Item.objects.filter(categories.q(), batch=batch, is_check=False)
        .exclude(bundle="")
        .order_by("position", "pk")
        .values_list("bundle", "pk", "item_id")
    )
    members: dict[str, list[tuple[int, str]]] = {}
    for bundle, item_pk, item_id in _streamed(items):
        members.setdefault(bundle, []).append((item_pk, item_id))
    labels = (
        Label.objects.filter(categories.q("item__"), batch=batch, status=LabelStatus.COUNTED)
        .exclude(item__bundle="")
        .values_list("item__bundle", "annotator__pseudonym", "item_id", field, "position_in_bundle")
    )
    by_bundle: dict[str, dict[str, dict[int, tuple]]] = {}
    for bundle, annotator, item_pk, value, position in _streamed(labels):
        by_bundle.setdefault(bundle, {}).setdefault(annotator, {})[item_pk] = (value, position)
    out = "answers" if writes else "values"
    for bundle, items_of in members.items():
        for annotator, given in sorted(by_bundle.get(bundle, {}).items()):
            yield {
                "batch": batch.slug,
                "bundle_id": bundle,
                "annotator": annotator,
                "item_ids": [item_id for _, item_id in items_of],
                out: [given.get(pk, (None, None))[0] for pk, _ in items_of],
                "positions": [given.get(pk, (None, None))[1] for pk, _ in items_of],
                "n_labels": len(given),
            }
