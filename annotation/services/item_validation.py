"""Checking an items file row by row, then against the database (``importing``'s first half).

``validate`` reads the whole file and collects every problem as ``FILE:LINE: field:
message``; it writes nothing. What it keeps for the insert is a ``Plan``: each query and
response text once per id, and one small tuple per item. The rules it applies (ids,
taxonomy, gold, metadata) are described in ``annotation.services.importing``, which
writes the plan.
"""

import dataclasses
from dataclasses import dataclass
from typing import IO

from django.conf import settings

from annotation.kinds.base import ResponseSlot, TaskKind
from annotation.models import Batch, Item, Query, Response
from core import json_text
from core.row_fields import RowFields, unstorable, unstorable_json
from core.row_writing import chunks
from core.tabular import (
    ImportRejected,
    Problems,
    csv_rows,
    jsonl_rows,
    reject_json_constant,
)

__all__ = ["TAXONOMY_FIELDS", "Layout", "Plan", "QueryEntry", "ResponseEntry", "validate"]

# A query's place in the study's taxonomy, in the order a sub-category depends on.
TAXONOMY_FIELDS = ("category", "subcategory")


@dataclass(frozen=True)
class Layout:
    """The keys of a kind's items file: required, known, and the response slots."""

    slots: tuple[ResponseSlot, ...]
    contents: tuple[str, ...]
    required: tuple[str, ...]
    known: frozenset[str]

    @classmethod
    def of(cls, kind: TaskKind) -> "Layout":
        # the required columns are the kind's declaration, the one the batch page lists
        required = tuple(kind.import_columns)
        contents = tuple(content.key for content in kind.content_texts)
        known = {*required, *contents, *TAXONOMY_FIELDS, "gold", "check"}
        for slot in kind.response_slots:
            known.update((slot.id_key, slot.text_key, slot.model_key))
        return cls(kind.response_slots, contents, required, frozenset(known))


@dataclass(slots=True)
class QueryEntry:
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
class ResponseEntry:
    text: str
    model: str
    query_id: str
    line: int
    field: str  # the key it first appeared under, for problems
    pk: int | None = None


@dataclass
class Plan:
    name: str
    queries: dict[str, QueryEntry]
    responses: dict[str, ResponseEntry]
    # (item_id, query_id, response ids, content, gold, is_check, metadata), in file order
    items: list[tuple[str, str, tuple[str, ...], dict, list | None, bool, dict]]


class Validator:
    def __init__(self, batch: Batch, problems: Problems, *, csv_header: bool):
        self.batch = batch
        self.kind = batch.task_kind
        self.layout = Layout.of(self.kind)
        self.problems = problems
        self.csv_header = csv_header  # missing CSV columns are reported once, at the header
        self.queries: dict[str, QueryEntry] = {}
        self.responses: dict[str, ResponseEntry] = {}
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
                entry = self.queries[query_id] = QueryEntry(query_text, line)
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
                    self.responses[response_id] = ResponseEntry(
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


def validate(batch: Batch, handle: IO, name: str, fmt: str) -> Plan:
    problems = Problems(name)
    validator = Validator(batch, problems, csv_header=fmt == "csv")
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
    return Plan(name=name, queries=queries, responses=responses, items=validator.items)
