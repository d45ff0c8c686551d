"""Importing items into a batch from JSONL or CSV, all or nothing (FORMATS.md, "Items").

The file is read once, as a stream of lines (bytes, decoded one line at a time so that
a bad byte can be reported with its line number). Every row is validated and every
problem is collected as ``FILE:LINE: field: message``; only the parsed rows needed for
the insert are kept: each query and response text once per id, and one small tuple per
item. The ids are then checked against the database in chunks (queries and responses
are project-wide: the same id with the same text is reused, a different text is an
error; item ids must be new to the batch). If anything is wrong, ``ImportRejected``
lists the problems and nothing is written. Otherwise queries, responses and items are
inserted a thousand rows at a time (``row_writing.RowInserter``) in one transaction that
holds the batch row's lock. Reading the file, collecting the problems and the insert
itself are shared with the score importer, in ``core.tabular``; the checks of single values
(ids, labels, texts) with the response-pool importer, in ``core.row_fields``. The required
columns are the kind's ``import_columns``. Checking the file is ``item_validation``'s part;
writing what it planned is this module's.

Normalisation: ids, ``category``, ``subcategory`` and ``model`` are stripped of
surrounding whitespace (numbers are accepted as ids and turned into strings); query and
response texts are stored as given, each at most ``settings.TEXT_MAX_CHARS`` characters.

Taxonomy: a query's ``category`` and ``subcategory`` are fixed by the first line (or the
stored query) that gives them; a line that leaves one empty says nothing about it, a line
that gives another value is an error (against another line or the stored query alike),
and a line with a sub-category must give its category. A stored query without a category
(or sub-category) gets the one the file gives.

``gold`` is stored as a list of distinct integers in file order (``4`` becomes ``[4]``).
Keys that are not part of the batch kind's format go into ``Item.metadata`` unchanged
(CSV cells stay strings).
"""

from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction
from django.db.models import Max

from annotation import selectors
from annotation.models import Batch, BatchState, Item, Query, Response
from annotation.services import bundles, slots
from annotation.services.item_validation import TAXONOMY_FIELDS, Plan, validate
from core import audit
from core.audit import Actor
from core.errors import Conflict, NotFound
from core.locking import lock_rows
from core.row_writing import BULK_BATCH_SIZE, RowInserter, chunks
from core.tabular import Fingerprint, ImportRejected, fingerprint, import_changes, open_source

# the concurrency tests validate a file, change the database, then write the plan
_validate = validate


@dataclass(frozen=True)
class ImportSummary:
    items_created: int
    queries_created: int
    responses_created: int


def import_items(
    batch: Batch, path_or_file, *, filename: str | None = None, actor: Actor | None = None
) -> ImportSummary:
    """Validate the whole file, then create its items (and new queries/responses) at once.

    ``path_or_file`` is a path or a binary file object (e.g. an uploaded file);
    ``filename`` names it in problems and decides the format (``.jsonl``/``.csv``).
    """
    current_state = Batch.objects.filter(pk=batch.pk).values_list("state", flat=True).first()
    if current_state is None:
        raise NotFound(f"batch {batch.slug!r} does not exist")
    if current_state == BatchState.CLOSED:
        raise Conflict(f"state: batch {batch.slug!r} is closed and accepts no more items")

    with open_source(path_or_file, filename) as (handle, name, fmt):
        file = fingerprint(handle)
        plan = validate(batch, handle, name, fmt)
    summary = _write(batch, plan, file, actor)
    selectors.forget_item_count(batch)
    _refresh_planner_statistics(summary.items_created)
    return summary


# Below this many new rows PostgreSQL's autovacuum keeps the statistics close enough.
ANALYZE_AFTER_ROWS = 1000


def _refresh_planner_statistics(items_created: int) -> None:
    """After a big import, tell PostgreSQL's planner how big the tables now are.

    Until autovacuum gets to it, a freshly filled table still looks empty, and the
    leasing query is planned as a sort of the whole batch (measured: 57 ms per lease on
    26k items, 8 ms after ANALYZE; bench/leasing.py).
    """
    if items_created < ANALYZE_AFTER_ROWS or connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_item, annotation_query, annotation_response")


# --------------------------------------------------------------------------- writing


def _write(
    batch: Batch, plan: Plan, file: Fingerprint | None = None, actor: Actor | None = None
) -> ImportSummary:
    try:
        with transaction.atomic():
            locked = lock_rows(Batch.objects.filter(pk=batch.pk)).get()
            if locked.state == BatchState.CLOSED:
                raise Conflict(f"state: batch {batch.slug!r} is closed and accepts no more items")
            queries_created = _create_queries(plan)
            _fill_in_taxonomy(plan)
            responses_created = _create_responses(plan)
            items_created = _create_items(locked, plan)
            summary = ImportSummary(
                items_created=items_created,
                queries_created=queries_created,
                responses_created=responses_created,
            )
            audit.record(
                "items.import",
                subject=locked,
                actor=actor,
                changes=import_changes(plan.name, file, summary),
            )
    except IntegrityError as error:
        raise ImportRejected.concurrent_write(plan.name, error) from error
    return summary


def _concurrent_change(plan: Plan, line: int, field: str, value: str) -> ImportRejected:
    return ImportRejected(
        [
            f"{plan.name}:{line}: {field}: {value!r} was just created by a concurrent import "
            "with a different text; nothing was imported"
        ]
    )


def _create_queries(plan: Plan) -> int:
    new = sorted(query_id for query_id, entry in plan.queries.items() if entry.pk is None)
    # a query created meanwhile by another import is fine if its text is the same
    inserter = RowInserter(Query, ["query_id", "text", *TAXONOMY_FIELDS], ignore_conflicts=True)
    for chunk in chunks(new):
        entries = [plan.queries[query_id] for query_id in chunk]
        inserted = inserter.insert(
            [
                [query_id, entry.text, *(entry.value(field) for field in TAXONOMY_FIELDS)]
                for query_id, entry in zip(chunk, entries, strict=True)
            ]
        )
        if inserted != len(chunk):  # some existed after all: compare their texts
            for query_id, text in Query.objects.filter(query_id__in=chunk).values_list(
                "query_id", "text"
            ):
                entry = plan.queries[query_id]
                if text != entry.text:
                    raise _concurrent_change(plan, entry.line, "query_id", query_id)
        for query_id, pk in Query.objects.filter(query_id__in=chunk).values_list("query_id", "pk"):
            plan.queries[query_id].pk = pk
    return len(new)


def _fill_in_taxonomy(plan: Plan) -> None:
    """Stored queries without a category (or sub-category) get the one the file gives:
    one UPDATE per field and value, only where the stored value is still empty."""
    wanted: dict[tuple[str, str], list[int]] = {}
    for entry in plan.queries.values():
        for field in entry.fill_in:
            wanted.setdefault((field, entry.value(field)), []).append(entry.pk)
    for (field, value), pks in sorted(wanted.items()):
        for chunk in chunks(pks):
            Query.objects.filter(pk__in=chunk, **{field: ""}).update(**{field: value})


def _create_responses(plan: Plan) -> int:
    new = sorted(rid for rid, entry in plan.responses.items() if entry.pk is None)
    inserter = RowInserter(
        Response, ["response_id", "query", "model", "text"], ignore_conflicts=True
    )
    for chunk in chunks(new):
        entries = [plan.responses[response_id] for response_id in chunk]
        inserted = inserter.insert(
            [
                [response_id, plan.queries[entry.query_id].pk, entry.model, entry.text]
                for response_id, entry in zip(chunk, entries, strict=True)
            ]
        )
        check_texts = inserted != len(chunk)
        fields = (
            ("response_id", "pk", "query_id", "text")
            if check_texts
            else ("response_id", "pk", "query_id")
        )
        for row in Response.objects.filter(response_id__in=chunk).values_list(*fields):
            entry = plan.responses[row[0]]
            if row[2] != plan.queries[entry.query_id].pk or (check_texts and row[3] != entry.text):
                raise _concurrent_change(plan, entry.line, entry.field, row[0])
            entry.pk = row[1]
    return len(new)


def _create_items(batch: Batch, plan: Plan) -> int:
    highest = Item.objects.filter(batch=batch).aggregate(highest=Max("position"))["highest"]
    position = 0 if highest is None else highest + 1
    queries, responses = plan.queries, plan.responses
    link_fields = [slot.field for slot in batch.task_kind.response_slots]
    inserter = RowInserter(
        Item,
        [
            "batch",
            "item_id",
            "position",
            "query",
            *link_fields,
            "content",
            "gold",
            "is_check",
            "metadata",
            "bundle",
            *slots.NEW_ITEM_COUNTER_COLUMNS,
        ],
    )
    for start in range(0, len(plan.items), BULK_BATCH_SIZE):
        rows = []
        for item_id, query_id, response_ids, content, gold, is_check, metadata in plan.items[
            start : start + BULK_BATCH_SIZE
        ]:
            rows.append(
                [
                    batch.pk,
                    item_id,
                    position,
                    queries[query_id].pk,
                    *[responses[response_id].pk for response_id in response_ids],
                    content,
                    gold,
                    is_check,
                    metadata,
                    bundles.bundle_of(
                        batch.bundle_by,
                        query_id=query_id,
                        item_id=item_id,
                        metadata=metadata,
                        is_check=is_check,
                    ),
                    *slots.new_item_counters(batch, is_check=is_check),
                ]
            )
            position += 1
        inserter.insert(rows)
    return len(plan.items)
