"""Importing items into a batch from JSONL or CSV, all or nothing (FORMATS.md, "Items").

The file is read once, as a stream of lines (bytes, decoded one line at a time so that
a bad byte can be reported with its line number). Every row is validated and every
problem is collected as ``FILE:LINE: field: message``; only the parsed rows needed for
the insert are kept: each query and response text once per id, and one small tuple per
item. The ids are then checked against the database in chunks (queries and responses
are project-wide: the same id with the same text is reused, a different text is an
error; item ids must be new to the batch). If anything is wrong, ``ImportRejected``
lists the problems and nothing is written. Otherwise queries, responses and items are
inserted a thousand rows at a time (``tabular.RowInserter``) in one transaction that
holds the batch row's lock. Reading the file, collecting the problems and the insert
itself are shared with the score importer, in ``core.tabular``; the checks of single values
(ids, labels, texts) with the response-pool importer, in ``core.row_fields``. The required
columns are the kind's ``import_columns``.

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

import dataclasses
import os
from dataclasses import dataclass
from typing import IO

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Max

from annotation import selectors
from annotation.kinds.base import ResponseSlot, TaskKind
from annotation.models import Batch, BatchState, Item, Query, Response
from annotation.services import bundles, slots
from core import audit, json_text
from core.audit import Actor
from core.errors import Conflict, NotFound
from core.locking import lock_rows
from core.row_fields import RowFields, unstorable, unstorable_json
from core.tabular import (
    BULK_BATCH_SIZE,
    Fingerprint,
    ImportRejected,
    Problems,
    RowInserter,
    chunks,
    csv_rows,
    fingerprint,
    jsonl_rows,
    open_source,
    reject_json_constant,
)


@dataclass(frozen=True)
class ImportSummary:
    items_created: int
    queries_created: int
    responses_created: int


# A query's place in the study's taxonomy, in the order a sub-category depends on.
TAXONOMY_FIELDS = ("category", "subcategory")


@dataclass(frozen=True)
class _Layout:
    """The keys of a kind's items file: required, known, and the response slots."""

    slots: tuple[ResponseSlot, ...]
    contents: tuple[str, ...]
    required: tuple[str, ...]
    known: frozenset[str]

    @classmethod
    def of(cls, kind: TaskKind) -> "_Layout":
        # the required columns are the kind's declaration, the one the batch page lists
        required = tuple(kind.import_columns)
        contents = tuple(content.key for content in kind.content_texts)
        known = {*required, *contents, *TAXONOMY_FIELDS, "gold", "check"}
        for slot in kind.response_slots:
            known.update((slot.id_key, slot.text_key, slot.model_key))
        return cls(kind.response_slots, contents, required, frozenset(known))


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
        plan = _validate(batch, handle, name, fmt)
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


# --------------------------------------------------------------------------- validating


@dataclass(slots=True)
class _QueryEntry:
    text: str
    line: int
    # taxonomy field -> (value, the line that gave it); absent until a line gives one
    taxonomy: dict[str, tuple[str, int]] = dataclasses.field(default_factory=dict)
    pk: int | None = None
    # taxonomy fields the stored query lacks and this file gives (filled in on write)
    fill_in: tuple[str, ...] = ()

    def value(self, field: str) -> str:
        return self.taxonomy.get(field, ("", 0))[0]


@dataclass(slots=True)
class _ResponseEntry:
    text: str
    model: str
    query_id: str
    line: int
    field: str  # the key it first appeared under, for problems
    pk: int | None = None


@dataclass
class _Plan:
    name: str
    queries: dict[str, _QueryEntry]
    responses: dict[str, _ResponseEntry]
    # (item_id, query_id, response ids, content, gold, is_check, metadata), in file order
    items: list[tuple[str, str, tuple[str, ...], dict, list | None, bool, dict]]


class _Validator:
    def __init__(self, batch: Batch, problems: Problems, *, csv_header: bool):
        self.batch = batch
        self.kind = batch.task_kind
        self.layout = _Layout.of(self.kind)
        self.problems = problems
        self.csv_header = csv_header  # missing CSV columns are reported once, at the header
        self.queries: dict[str, _QueryEntry] = {}
        self.responses: dict[str, _ResponseEntry] = {}
        self.item_lines: dict[str, int] = {}
        self.items: list = []
        self.records = 0
        self.fields = RowFields(
            problems,
            csv_header=csv_header,
            id_max=Item._meta.get_field("item_id").max_length,
            label_max=Query._meta.get_field("category").max_length,
            text_max=settings.TEXT_MAX_CHARS,
            # an id may be a JSON number (1 or 1.0, kept as "1" or "1.0")
            number_ids=(int, float),
            # only what no database can store is refused; items files carry what they carry
            control_characters=True,
        )

    def add(self, line: int, row: dict | None) -> None:
        self.records += 1
        if row is None:
            return
        problems, fields = self.problems, self.fields

        item_id = fields.identifier(line, row, "item_id")
        query_id = fields.identifier(line, row, "query_id")
        query_text = fields.text(line, row, "query")
        taxonomy = {field: fields.label(line, row, field) for field in TAXONOMY_FIELDS}
        fields.check_taxonomy(line, taxonomy["category"], taxonomy["subcategory"])
        slots = [
            (
                slot.id_key,
                fields.identifier(line, row, slot.id_key),
                fields.text(line, row, slot.text_key),
                fields.label(line, row, slot.model_key),
            )
            for slot in self.layout.slots
        ]
        content = {key: fields.text(line, row, key) for key in self.layout.contents}
        gold = self._gold(line, row)
        is_check = self._check(line, row)
        if is_check and row.get("gold") in (None, ""):
            problems.add(line, "gold", "an attention check (check: true) needs its gold answer")
        metadata = {key: value for key, value in row.items() if key not in self.layout.known}
        for key, value in metadata.items():
            problem = unstorable(key) or unstorable_json(value)
            if problem:
                problems.add(line, key, problem)

        if item_id is not None:
            first = self.item_lines.get(item_id)
            if first is not None:
                problems.add(line, "item_id", f"{item_id!r} already appears on line {first}")
            else:
                self.item_lines[item_id] = line

        if query_id is not None and query_text is not None:
            entry = self.queries.get(query_id)
            if entry is None:
                entry = self.queries[query_id] = _QueryEntry(query_text, line)
            elif entry.text != query_text:
                problems.add(
                    line,
                    "query_id",
                    f"{query_id!r} has a different query text on line {entry.line}",
                )
            for field, value in taxonomy.items():
                if not value:  # empty (nothing said) or refused above
                    continue
                given = entry.taxonomy.get(field)
                if given is None:
                    entry.taxonomy[field] = (value, line)
                elif given[0] != value:
                    problems.add(
                        line,
                        field,
                        f"query {query_id!r} has {field} {given[0]!r} on line {given[1]}, "
                        f"not {value!r}",
                    )

        if len(slots) == 2 and slots[0][1] is not None and slots[0][1] == slots[1][1]:
            problems.add(line, slots[1][0], f"{slots[1][1]!r} is the same as {slots[0][0]}")
        for id_key, response_id, text, model in slots:
            if response_id is None or text is None:
                continue
            entry = self.responses.get(response_id)
            if entry is None:
                if query_id is not None:
                    self.responses[response_id] = _ResponseEntry(
                        text, model or "", query_id, line, id_key
                    )
                continue
            if entry.text != text:
                problems.add(
                    line,
                    id_key,
                    f"{response_id!r} has a different response text on line {entry.line}",
                )
            if query_id is not None and entry.query_id != query_id:
                problems.add(
                    line,
                    id_key,
                    f"{response_id!r} answers query {entry.query_id!r} on line {entry.line}, "
                    f"not {query_id!r}",
                )

        if problems.count == 0:
            response_ids = tuple(slot[1] for slot in slots)
            self.items.append(
                (item_id, query_id, response_ids, content, gold, bool(is_check), metadata)
            )
        elif self.items:
            self.items = []  # the import is rejected: stop holding rows for the insert

    # -- single values

    def _check(self, line: int, row: dict) -> bool | None:
        """The ``check`` flag: true/false (JSON), or true/false/1/0/yes/no/empty (CSV)."""
        value = row.get("check")
        if value is None or isinstance(value, bool):
            return bool(value)
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str):
            word = value.strip().lower()
            if word in ("", "false", "0", "no"):
                return False
            if word in ("true", "1", "yes"):
                return True
        self.problems.add(line, "check", f"{value!r} is not true or false")
        return None

    def _gold(self, line: int, row: dict) -> list | None:
        """The accepted answers of an attention check, checked by the batch's kind."""
        value = row.get("gold")
        if isinstance(value, str):
            if not value.strip():
                return None
            try:
                value = json_text.loads(value, parse_constant=reject_json_constant)
            except (ValueError, RecursionError):
                value = value.strip()  # a text kind's single answer, or refused by the kind
        if value is None:
            return None
        try:
            return self.kind.clean_gold(self.batch, value)
        except ValueError as refused:
            self.problems.add(line, "gold", str(refused))
            return None


def _validate(batch: Batch, handle: IO, name: str, fmt: str) -> _Plan:
    problems = Problems(name)
    validator = _Validator(batch, problems, csv_header=fmt == "csv")
    rows = (
        jsonl_rows(handle, problems)
        if fmt == "jsonl"
        else csv_rows(handle, problems, validator.layout.required)
    )
    for line, row in rows:
        validator.add(line, row)
    if validator.records == 0:
        problems.add(1, "file", "contains no items")

    queries, responses = validator.queries, validator.responses
    for chunk in chunks(queries):
        for query_id, pk, text, *stored in Query.objects.filter(query_id__in=chunk).values_list(
            "query_id", "pk", "text", *TAXONOMY_FIELDS
        ):
            entry = queries[query_id]
            if text != entry.text:
                problems.add(
                    entry.line,
                    "query_id",
                    f"{query_id!r} already exists in the database with a different text",
                )
            fill_in = []
            for field, kept in zip(TAXONOMY_FIELDS, stored, strict=True):
                value, line = entry.taxonomy.get(field, ("", entry.line))
                if not value:
                    continue
                if not kept:
                    fill_in.append(field)
                elif kept != value:
                    problems.add(
                        line,
                        field,
                        f"query {query_id!r} already exists in the database with {field} "
                        f"{kept!r}, not {value!r}",
                    )
            entry.pk, entry.fill_in = pk, tuple(fill_in)
    for chunk in chunks(responses):
        existing = Response.objects.filter(response_id__in=chunk).values_list(
            "response_id", "pk", "text", "query__query_id"
        )
        for response_id, pk, text, query_id in existing:
            entry = responses[response_id]
            field = entry.field
            if text != entry.text:
                problems.add(
                    entry.line,
                    field,
                    f"{response_id!r} already exists in the database with a different text",
                )
            if query_id != entry.query_id:
                problems.add(
                    entry.line,
                    field,
                    f"{response_id!r} already exists in the database as an answer to query "
                    f"{query_id!r}, not {entry.query_id!r}",
                )
            entry.pk = pk
    item_lines = validator.item_lines
    for chunk in chunks(item_lines):
        for item_id in Item.objects.filter(batch=batch, item_id__in=chunk).values_list(
            "item_id", flat=True
        ):
            problems.add(
                item_lines[item_id], "item_id", f"{item_id!r} already exists in batch {batch.slug}"
            )

    if problems.count:
        raise ImportRejected(problems.lines())
    return _Plan(name=name, queries=queries, responses=responses, items=validator.items)


# --------------------------------------------------------------------------- writing


def _write(
    batch: Batch, plan: _Plan, file: Fingerprint | None = None, actor: Actor | None = None
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
                changes={
                    "file": os.path.basename(plan.name),
                    **(dataclasses.asdict(file) if file else {}),
                    **dataclasses.asdict(summary),
                },
            )
    except IntegrityError as error:
        raise ImportRejected.concurrent_write(plan.name, error) from error
    return summary


def _concurrent_change(plan: _Plan, line: int, field: str, value: str) -> ImportRejected:
    return ImportRejected(
        [
            f"{plan.name}:{line}: {field}: {value!r} was just created by a concurrent import "
            "with a different text; nothing was imported"
        ]
    )


def _create_queries(plan: _Plan) -> int:
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


def _fill_in_taxonomy(plan: _Plan) -> None:
    """Stored queries without a category (or sub-category) get the one the file gives:
    one UPDATE per field and value, only where the stored value is still empty."""
    wanted: dict[tuple[str, str], list[int]] = {}
    for entry in plan.queries.values():
        for field in entry.fill_in:
            wanted.setdefault((field, entry.value(field)), []).append(entry.pk)
    for (field, value), pks in sorted(wanted.items()):
        for chunk in chunks(pks):
            Query.objects.filter(pk__in=chunk, **{field: ""}).update(**{field: value})


def _create_responses(plan: _Plan) -> int:
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


def _create_items(batch: Batch, plan: _Plan) -> int:
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
