"""Label exports (FORMATS.md, "Labels (export)"), streamed with bounded memory.

Layouts (``LAYOUTS``):

* ``long`` — one row per label (counted only unless ``all_statuses``);
* ``dense`` — one row per item in import order, items without a counted label included,
  with ``labels`` (counted values in submission order), ``annotators`` (their pseudonyms,
  same order) and ``n``;
* ``annotators`` — one row per annotator who contributed a label to the batch;
* ``card`` — a Markdown data card (format ``md`` only).

Formats: ``jsonl``, ``csv``, ``parquet`` for the three tables, ``md`` for the card.
Entry points: ``export_to_file`` (command, jobs) and ``stream_export`` (HTTP).

Memory: rows are read with ``QuerySet.iterator(chunk_size=CHUNK_SIZE)`` (a server-side
cursor on PostgreSQL, ``fetchmany`` on SQLite) and written as they arrive. The long and
dense layouts merge two such iterators — items (with their texts) ordered by position,
labels (only their own columns) ordered by their item's position — so each makes two
queries in all, never one per item, holds one item's labels at a time, and fetches and
encodes an item's texts once rather than once per label. Parquet is written in row groups
of at most ``PARQUET_ROW_GROUP`` rows (or about ``PARQUET_GROUP_CHARS`` characters of
text, whichever comes first). Only the annotators table (one row per annotator, built by
``selectors.annotator_rows``) and the card's aggregates are computed whole.

Types: integers stay integers (``int64`` in Parquet, null where a value is missing, e.g.
``duration_ms``); lists stay lists (``list<int64>`` / ``list<string>`` in Parquet, JSON
arrays in JSONL, and JSON array text such as ``[4, 5]`` in a CSV cell). Timestamps are
ISO 8601 strings in UTC ending in ``Z`` in every format (also in Parquet, where they are
``string`` columns, not Arrow timestamps).

CSV cells that begin with ``=``, ``+``, ``-`` or ``@`` get a leading apostrophe, the
usual guard against spreadsheet formula injection; integer columns (``value`` may be
negative) are numbers, not text, and are left alone.
"""

import csv
import io
import json
import os
import tempfile
import weakref
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime

from django.db.models import Count, Max, Min, Q
from django.utils import timezone

from annotation.models import Batch, BatchKind, Item, Label, LabelStatus, Participation
from core.errors import InvalidInput

LAYOUTS = ("long", "dense", "annotators", "card")
EXPORT_FORMATS = ("jsonl", "csv", "parquet")
CARD_FORMAT = "md"
CHUNK_SIZE = 2000
PARQUET_ROW_GROUP = 10_000
PARQUET_GROUP_CHARS = 8_000_000
STREAM_CHUNK_CHARS = 64 * 1024
PROGRESS_EVERY = 5000
FORMULA_PREFIXES = ("=", "+", "-", "@")

CONTENT_TYPES = {
    "jsonl": "application/x-ndjson; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
    "parquet": "application/vnd.apache.parquet",
    "md": "text/markdown; charset=utf-8",
}

Progress = Callable[[int, int | None], None]

ITEM_COLUMNS = ["batch", "kind", "item_id", "query_id", "query", "category"]
ABSOLUTE_COLUMNS = ["response_id", "model", "response"]
PAIRWISE_COLUMNS = [
    "response_a_id",
    "model_a",
    "response_a",
    "response_b_id",
    "model_b",
    "response_b",
]
LABEL_COLUMNS = ["annotator", "value", "status", "duration_ms", "submitted_at"]
DENSE_COLUMNS = ["labels", "annotators", "n"]
ANNOTATOR_COLUMNS = [
    "annotator",
    "n_labels",
    "median_duration_ms",
    "attention_checks_passed",
    "attention_checks_failed",
    "status",
]
INTEGER_COLUMNS = {
    "value",
    "duration_ms",
    "n",
    "n_labels",
    "median_duration_ms",
    "attention_checks_passed",
    "attention_checks_failed",
}
INTEGER_LIST_COLUMNS = {"labels"}
STRING_LIST_COLUMNS = {"annotators"}

# export column -> ORM path from Label
_SOURCE_FIELDS = {
    "item_id": "item__item_id",
    "query_id": "item__query__query_id",
    "query": "item__query__text",
    "category": "item__query__category",
    "response_id": "item__response__response_id",
    "model": "item__response__model",
    "response": "item__response__text",
    "response_a_id": "item__response_a__response_id",
    "model_a": "item__response_a__model",
    "response_a": "item__response_a__text",
    "response_b_id": "item__response_b__response_id",
    "model_b": "item__response_b__model",
    "response_b": "item__response_b__text",
    "annotator": "annotator__pseudonym",
    "value": "value",
    "status": "status",
    "duration_ms": "duration_ms",
    "submitted_at": "submitted_at",
}


# --- columns ----------------------------------------------------------------------------


def item_columns(kind: str) -> list[str]:
    middle = PAIRWISE_COLUMNS if kind == BatchKind.PAIRWISE else ABSOLUTE_COLUMNS
    return ITEM_COLUMNS + middle


def long_columns(kind: str) -> list[str]:
    return item_columns(kind) + LABEL_COLUMNS


def dense_columns(kind: str) -> list[str]:
    return item_columns(kind) + DENSE_COLUMNS


def layout_columns(layout: str, kind: str) -> list[str]:
    if layout == "long":
        return long_columns(kind)
    if layout == "dense":
        return dense_columns(kind)
    if layout == "annotators":
        return list(ANNOTATOR_COLUMNS)
    raise InvalidInput("layout", f"{layout!r} has no columns (it is not a table)")


# --- rows -------------------------------------------------------------------------------


def _item_parts(batch: Batch) -> Iterator[tuple[tuple[int, int], dict]]:
    """``((position, pk), item columns)`` for every item of the batch in import order."""
    columns = item_columns(batch.kind)
    source_columns = [column for column in columns if column in _SOURCE_FIELDS]
    items = (
        Item.objects.filter(batch=batch)
        .order_by("position", "pk")
        .values_list(
            "position",
            "pk",
            *[_SOURCE_FIELDS[column].removeprefix("item__") for column in source_columns],
        )
    )
    for position, item_pk, *values in items.iterator(chunk_size=CHUNK_SIZE):
        part = {"batch": batch.slug, "kind": batch.kind}
        part.update(zip(source_columns, values, strict=True))
        yield (position, item_pk), {column: part[column] for column in columns}


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


def _label_query(batch: Batch, statuses, *fields: str):
    labels = Label.objects.filter(batch=batch)
    if statuses is not None:
        labels = labels.filter(status__in=statuses)
    return (
        labels.order_by("item__position", "item_id", "submitted_at", "pk")
        .values_list("item__position", "item_id", *fields)
        .iterator(chunk_size=CHUNK_SIZE)
    )


def iter_long_groups(
    batch: Batch, *, all_statuses: bool = False
) -> Iterator[tuple[dict, list[dict]]]:
    """The long layout grouped by item: ``(item columns, [label columns, ...])`` for every
    item with at least one exported label, items in import order, labels as submitted.

    Two queries (items with their texts; labels with only their own columns), merged
    here: the texts travel from the database once per item, not once per label, and the
    writers serialise them once per item.
    """
    statuses = None if all_statuses else [LabelStatus.COUNTED]
    fields = ["annotator__pseudonym", "value", "status", "duration_ms", "submitted_at"]
    labels = (
        (
            (position, item_pk),
            {
                "annotator": annotator,
                "value": value,
                "status": status,
                "duration_ms": duration_ms,
                "submitted_at": _iso_utc(submitted_at),
            },
        )
        for position, item_pk, annotator, value, status, duration_ms, submitted_at in (
            _label_query(batch, statuses, *fields)
        )
    )
    for part, group in _merge_by_item(_item_parts(batch), labels):
        if group:
            yield part, group


def iter_long_rows(batch: Batch, *, all_statuses: bool = False) -> Iterator[dict]:
    """One dict per label in the long layout: items in import order, labels as submitted."""
    for part, group in iter_long_groups(batch, all_statuses=all_statuses):
        for label in group:
            yield part | label


def iter_dense_rows(batch: Batch) -> Iterator[dict]:
    """One dict per item in import order, with its counted labels in submission order.

    Two queries, both ordered by (item position, item pk) and read in chunks, are merged
    here: memory holds one item's labels at a time, whatever the size of the batch. Items
    with no counted label get ``labels == []`` and ``n == 0``.
    """
    labels = (
        ((position, item_pk), (value, annotator))
        for position, item_pk, value, annotator in _label_query(
            batch, [LabelStatus.COUNTED], "value", "annotator__pseudonym"
        )
    )
    for part, group in _merge_by_item(_item_parts(batch), labels):
        row = dict(part)
        row["labels"] = [value for value, _ in group]
        row["annotators"] = [annotator for _, annotator in group]
        row["n"] = len(group)
        yield row


def iter_annotator_rows(batch: Batch) -> Iterator[dict]:
    """One dict per annotator who contributed at least one label (any status).

    ``status`` is the annotator's standing in the batch (``active`` or ``excluded``);
    ``n_labels`` counts their labels of every status; ``median_duration_ms`` is the
    median over those labels (null when none has a duration); attention checks are their
    labels of items with a ``gold`` answer, passed when the value is one of the answers.

    Demographic answers: the spec asks for "any demographic answers the batch collected",
    but the project stores none yet (no questionnaire model), so there are no extra
    columns; when such answers are stored they belong after ``status``.
    """
    from annotation.selectors import annotator_rows

    for row in annotator_rows(batch):
        if row["n_labels"]:
            yield {column: row[column] for column in ANNOTATOR_COLUMNS}


def _iso_utc(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


# --- writers ----------------------------------------------------------------------------


def _chunked(lines: Iterable[str]) -> Iterator[str]:
    """Lines joined into chunks of about ``STREAM_CHUNK_CHARS`` characters."""
    buffer: list[str] = []
    size = 0
    for line in lines:
        buffer.append(line)
        size += len(line)
        if size >= STREAM_CHUNK_CHARS:
            yield "".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield "".join(buffer)


def jsonl_chunks(rows: Iterable[dict]) -> Iterator[str]:
    """JSONL text in chunks of about ``STREAM_CHUNK_CHARS`` characters."""
    return _chunked(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def long_jsonl_chunks(groups: Iterable[tuple[dict, list[dict]]]) -> Iterator[str]:
    """The long layout's JSONL from ``iter_long_groups``: each item's columns are encoded
    once and shared by its labels' lines (the same text ``json.dumps`` of the whole row
    gives, as both use ", " between members)."""

    def lines():
        for part, labels in groups:
            prefix = json.dumps(part, ensure_ascii=False)[:-1] + ", "
            for label in labels:
                yield prefix + json.dumps(label, ensure_ascii=False)[1:] + "\n"

    return _chunked(lines())


def neutralise_formula(cell):
    if isinstance(cell, str) and cell.startswith(FORMULA_PREFIXES):
        return "'" + cell
    return cell


def _csv_cell(value):
    if value is None:
        return ""
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)  # starts with "[": never a formula
    return neutralise_formula(value)


def csv_chunks(rows: Iterable[dict], columns: list[str]) -> Iterator[str]:
    """CSV text (header first, CRLF line ends) in chunks of about ``STREAM_CHUNK_CHARS``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_csv_cell(row[column]) for column in columns])
        if buffer.tell() >= STREAM_CHUNK_CHARS:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue()


def long_csv_chunks(groups: Iterable[tuple[dict, list[dict]]], columns: list[str]) -> Iterator[str]:
    """The long layout's CSV from ``iter_long_groups``; each item's cells are encoded once
    (CSV quotes cell by cell, so the joined line equals the row written whole)."""
    item_part = columns[: -len(LABEL_COLUMNS)]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(columns)
    scratch = io.StringIO()
    item_writer = csv.writer(scratch, lineterminator="\r\n")
    for part, labels in groups:
        scratch.seek(0)
        scratch.truncate()
        item_writer.writerow([_csv_cell(part[column]) for column in item_part])
        prefix = scratch.getvalue()[:-2] + ","
        for label in labels:
            buffer.write(prefix)
            writer.writerow([_csv_cell(label[column]) for column in LABEL_COLUMNS])
            if buffer.tell() >= STREAM_CHUNK_CHARS:
                yield buffer.getvalue()
                buffer.seek(0)
                buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue()


def write_jsonl(rows: Iterable[dict], stream) -> int:
    counted = _Counted(rows)
    for chunk in jsonl_chunks(counted):
        stream.write(chunk)
    return counted.count


def write_csv(rows: Iterable[dict], stream, columns: list[str]) -> int:
    counted = _Counted(rows)
    for chunk in csv_chunks(counted, columns):
        stream.write(chunk)
    return counted.count


def _arrow_type(column: str):
    import pyarrow as pa

    if column in INTEGER_COLUMNS:
        return pa.int64()
    if column in INTEGER_LIST_COLUMNS:
        return pa.list_(pa.int64())
    if column in STRING_LIST_COLUMNS:
        return pa.list_(pa.string())
    return pa.string()


def parquet_schema(columns: list[str]):
    import pyarrow as pa

    return pa.schema([(column, _arrow_type(column)) for column in columns])


def write_parquet(rows: Iterable[dict], path, columns: list[str]) -> int:
    """Write rows to a Parquet file in row groups; returns the number of rows.

    A row group is flushed after ``PARQUET_ROW_GROUP`` rows or about
    ``PARQUET_GROUP_CHARS`` characters of text, so long responses do not inflate it.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = parquet_schema(columns)
    text_columns = [column for column in columns if _arrow_type(column) == pa.string()]
    count = 0
    with pq.ParquetWriter(path, schema) as writer:
        group = {column: [] for column in columns}
        group_rows = group_chars = 0
        for row in rows:
            for column in columns:
                group[column].append(row[column])
            group_rows += 1
            group_chars += sum(len(row[column] or "") for column in text_columns)
            if group_rows >= PARQUET_ROW_GROUP or group_chars >= PARQUET_GROUP_CHARS:
                writer.write_table(pa.Table.from_pydict(group, schema=schema))
                count += group_rows
                group = {column: [] for column in columns}
                group_rows = group_chars = 0
        if group_rows or count == 0:
            writer.write_table(pa.Table.from_pydict(group, schema=schema))
            count += group_rows
    return count


class _Counted:
    """Wraps an iterator of rows (or of ``(item, [labels])`` groups, ``grouped=True``):
    counts rows and calls ``progress(done, total)`` at the start, about every
    ``PROGRESS_EVERY`` rows and at the end (with ``total = done``)."""

    def __init__(
        self, rows: Iterable, progress: Progress | None = None, total=None, *, grouped=False
    ):
        self.rows = rows
        self.progress = progress
        self.total = total
        self.grouped = grouped
        self.count = 0

    def __iter__(self) -> Iterator:
        reported = 0
        if self.progress is not None:
            self.progress(0, self.total)
        for entry in self.rows:
            yield entry
            self.count += len(entry[1]) if self.grouped else 1
            if self.progress is not None and self.count - reported >= PROGRESS_EVERY:
                reported = self.count
                self.progress(self.count, max(self.total or 0, self.count))
        if self.progress is not None:
            self.progress(self.count, self.count)


def _flatten(groups: Iterable[tuple[dict, list[dict]]]) -> Iterator[dict]:
    for part, labels in groups:
        for label in labels:
            yield part | label


def _table(batch: Batch, layout: str, all_statuses: bool, progress=None, total=None):
    """(counter, rows): the counting wrapper (its ``count`` is final once consumed) and
    the rows; for the long layout the counter wraps the item groups."""
    if layout == "long":
        counter = _Counted(
            iter_long_groups(batch, all_statuses=all_statuses), progress, total, grouped=True
        )
        return counter, _flatten(counter)
    rows = iter_dense_rows(batch) if layout == "dense" else iter_annotator_rows(batch)
    counter = _Counted(rows, progress, total)
    return counter, counter


def _text_chunks(batch, layout, fmt, all_statuses, progress=None, total=None):
    """(counter, str chunks) of a JSONL or CSV table."""
    columns = layout_columns(layout, batch.kind)
    if layout == "long":
        groups = _Counted(
            iter_long_groups(batch, all_statuses=all_statuses), progress, total, grouped=True
        )
        chunks = long_jsonl_chunks(groups) if fmt == "jsonl" else long_csv_chunks(groups, columns)
        return groups, chunks
    counter, rows = _table(batch, layout, all_statuses, progress, total)
    chunks = jsonl_chunks(rows) if fmt == "jsonl" else csv_chunks(rows, columns)
    return counter, chunks


# --- data card --------------------------------------------------------------------------

EXCLUSION_RULE = "labels of excluded annotators are kept with status excluded and not counted"


def data_card(batch: Batch) -> str:
    """The Markdown data card of a batch: what it is, how much it holds, how it was cleaned."""
    n = batch.annotations_per_item
    items = Item.objects.filter(batch=batch).aggregate(
        total=Count("pk"),
        complete=Count("pk", filter=Q(counted_count__gte=n)),
        empty=Count("pk", filter=Q(counted_count=0)),
        checks=Count("pk", filter=Q(gold__isnull=False)),
    )
    labels = Label.objects.filter(batch=batch).aggregate(
        counted=Count("pk", filter=Q(status=LabelStatus.COUNTED)),
        surplus=Count("pk", filter=Q(status=LabelStatus.SURPLUS)),
        excluded=Count("pk", filter=Q(status=LabelStatus.EXCLUDED)),
        first=Min("submitted_at"),
        last=Max("submitted_at"),
    )
    people = Participation.objects.filter(batch=batch).aggregate(
        total=Count("pk"),
        excluded=Count("pk", filter=Q(status=Participation.Status.EXCLUDED)),
    )
    contributors = Label.objects.filter(batch=batch).values("annotator_id").distinct().count()
    counted_contributors = (
        Label.objects.filter(batch=batch, status=LabelStatus.COUNTED)
        .values("annotator_id")
        .distinct()
        .count()
    )
    distribution = dict(
        Label.objects.filter(batch=batch, status=LabelStatus.COUNTED)
        .order_by()
        .values("value")
        .annotate(count=Count("pk"))
        .values_list("value", "count")
    )
    texts = dict(batch.scale())
    labels_total = labels["counted"] + labels["surplus"] + labels["excluded"]

    def when(moment) -> str:
        return _iso_utc(moment) or "—"

    lines = [
        f"# Data card: {batch.title or batch.slug}",
        "",
        f"- Batch: `{batch.slug}`",
        f"- Kind: `{batch.kind}` ({BatchKind(batch.kind).label})",
        f"- Labels per item (N): {n}",
        f"- State: {batch.state}",
        f"- Label set: {', '.join(str(value) for value in batch.label_set)}",
        "",
        "## Dates (UTC)",
        "",
        f"- Created: {when(batch.created_at)}",
        f"- Published: {when(batch.published_at)}",
        f"- Closed: {when(batch.closed_at)}",
        f"- First label: {when(labels['first'])}",
        f"- Last label: {when(labels['last'])}",
        f"- Card written: {when(timezone.now())}",
        "",
        "## Instructions shown to annotators",
        "",
    ]
    instructions = (batch.instructions or "").strip()
    if instructions:
        lines += [("> " + line).rstrip() for line in instructions.splitlines()]
    else:
        lines.append("_None._")
    lines += [
        "",
        "## Counts",
        "",
        "| what | count |",
        "|---|---:|",
        f"| items | {items['total']} |",
        f"| items with N counted labels | {items['complete']} |",
        f"| items with no counted label | {items['empty']} |",
        f"| attention-check items (with a gold answer) | {items['checks']} |",
        f"| labels, all statuses | {labels_total} |",
        f"| labels counted | {labels['counted']} |",
        f"| labels surplus | {labels['surplus']} |",
        f"| labels excluded | {labels['excluded']} |",
        f"| annotators who entered the batch | {people['total']} |",
        f"| annotators who contributed a label | {contributors} |",
        f"| annotators with a counted label | {counted_contributors} |",
        f"| annotators excluded | {people['excluded']} |",
        "",
        "## Label distribution (counted labels)",
        "",
        "| value | meaning | labels | share |",
        "|---:|---|---:|---:|",
    ]
    for value in batch.label_set:
        count = distribution.get(value, 0)
        share = f"{count / labels['counted']:.1%}" if labels["counted"] else "—"
        lines.append(f"| {value} | {_markdown_cell(texts.get(value, ''))} | {count} | {share} |")
    lines += [
        "",
        "## Rules applied",
        "",
        f"- Exclusion: {EXCLUSION_RULE}. An excluded annotator's slots were given back and "
        "filled by other annotators, so complete items still hold exactly N counted labels.",
        "- Surplus: a label that arrived after its item already held N counted labels (a late "
        "answer to an expired lease) is kept with status surplus and not counted.",
        "- No annotator labels an item twice; every label is one independent judgment.",
        "- Attention checks are reported per annotator (annotators table); they do not "
        "exclude anyone by themselves.",
        "",
        "## Files",
        "",
        "- long: one row per label (counted only unless all statuses were requested), with "
        "`annotator` (pseudonym), `value`, `status`, `duration_ms`, `submitted_at`.",
        "- dense: one row per item in import order, with `labels` (counted values in "
        "submission order), `annotators` (pseudonyms, same order) and `n`.",
        "- annotators: one row per annotator who contributed, with `n_labels`, "
        "`median_duration_ms`, `attention_checks_passed`, `attention_checks_failed`, `status`.",
        "",
    ]
    return "\n".join(lines)


def _markdown_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


# --- entry points -----------------------------------------------------------------------


def export_params(layout=None, fmt=None, all_statuses=None) -> tuple[str, str, bool]:
    """Validate and normalise (layout, format, all_statuses) as given by a user.

    ``layout`` defaults to ``long``; ``format`` to ``jsonl`` (``md`` for the card);
    ``all_statuses`` accepts booleans and 0/1/true/false/yes/no. It only changes the long
    layout: dense lists counted labels only, and the annotators table and card always
    cover every status.
    """
    if isinstance(layout, str):
        layout = layout.strip().lower()
    layout = layout or "long"
    if layout not in LAYOUTS:
        raise InvalidInput("layout", f"{layout!r} is not one of {', '.join(LAYOUTS)}")
    if isinstance(fmt, str):
        fmt = fmt.strip().lower()
    if not fmt:
        fmt = CARD_FORMAT if layout == "card" else "jsonl"
    if fmt == "markdown":
        fmt = CARD_FORMAT
    if layout == "card":
        if fmt != CARD_FORMAT:
            raise InvalidInput("format", f"the card is Markdown only (md); got {fmt!r}")
    elif fmt not in EXPORT_FORMATS:
        raise InvalidInput("format", f"{fmt!r} is not one of {', '.join(EXPORT_FORMATS)}")
    return layout, fmt, _flag(all_statuses)


def _flag(raw) -> bool:
    if raw is None or isinstance(raw, bool):
        return bool(raw)
    if isinstance(raw, int):
        if raw in (0, 1):
            return bool(raw)
    elif isinstance(raw, str):
        text = raw.strip().lower()
        if text in ("", "0", "false", "no", "off"):
            return False
        if text in ("1", "true", "yes", "on"):
            return True
    raise InvalidInput("all_statuses", f"{raw!r} is not 0 or 1")


def export_filename(batch: Batch, layout: str, fmt: str, all_statuses: bool = False) -> str:
    suffix = "-all-statuses" if all_statuses and layout == "long" else ""
    return f"{batch.slug}-{layout}{suffix}.{fmt}"


def _total(batch: Batch, layout: str, all_statuses: bool) -> int:
    """The number of rows to expect (one COUNT query), for progress reports."""
    if layout == "long":
        labels = Label.objects.filter(batch=batch)
        if not all_statuses:
            labels = labels.filter(status=LabelStatus.COUNTED)
        return labels.count()
    if layout == "dense":
        return Item.objects.filter(batch=batch).count()
    return Label.objects.filter(batch=batch).values("annotator_id").distinct().count()


def export_to_file(
    batch: Batch,
    layout: str,
    fmt: str,
    path,
    *,
    all_statuses: bool = False,
    progress: Progress | None = None,
) -> int:
    """Write one export of ``batch`` to ``path``; returns the number of rows written
    (for the card: the number of Markdown lines). ``progress(done, total)`` is called
    every ``PROGRESS_EVERY`` rows and at the end."""
    layout, fmt, all_statuses = export_params(layout, fmt, all_statuses)
    if layout == "card":
        text = data_card(batch)
        with open(path, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        if progress is not None:
            progress(1, 1)
        return text.count("\n")
    total = _total(batch, layout, all_statuses) if progress is not None else None
    if fmt == "parquet":
        counter, rows = _table(batch, layout, all_statuses, progress, total)
        write_parquet(rows, path, layout_columns(layout, batch.kind))
        return counter.count
    counter, chunks = _text_chunks(batch, layout, fmt, all_statuses, progress, total)
    with open(path, "w", encoding="utf-8", newline="") as stream:
        for chunk in chunks:
            stream.write(chunk)
    return counter.count


def export_long(batch: Batch, fmt: str, path, *, all_statuses: bool = False) -> int:
    """Write the long export of a batch to ``path``; returns the number of rows."""
    return export_to_file(batch, "long", fmt, path, all_statuses=all_statuses)


def _discard(stream, path: str) -> None:
    stream.close()
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


class TemporaryExportFile:
    """A finished export in a temporary file, read once: ``close()`` deletes the file.

    Iterating yields byte chunks; ``read``/``seek``/``tell`` let ``FileResponse`` stream
    it and set ``Content-Length``. The response closes it when it is done (or when the
    client goes away), which removes the file; should nobody close it, the file goes
    when the object is garbage-collected.
    """

    block_size = 64 * 1024

    def __init__(self, path: str):
        self.path = path
        self._file = open(path, "rb")  # closed (and the file removed) by close()
        self._discard = weakref.finalize(self, _discard, self._file, path)

    def read(self, size: int = -1) -> bytes:
        return self._file.read(size)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def seekable(self) -> bool:
        return True

    def __iter__(self) -> Iterator[bytes]:
        try:
            while chunk := self._file.read(self.block_size):
                yield chunk
        finally:
            self.close()

    def close(self) -> None:
        self._discard()  # runs once

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def stream_export(
    batch: Batch, layout: str, fmt: str, *, all_statuses: bool = False
) -> tuple[Iterable, str, str]:
    """An export for an HTTP response: ``(chunks, content_type, filename)``.

    JSONL and CSV are generated while the response is sent (``str`` chunks of about
    ``STREAM_CHUNK_CHARS`` characters); the card is one ``str``. Parquet cannot be written
    to a socket as it goes (its footer comes last), so it is written to a temporary file
    first and returned as a ``TemporaryExportFile`` (byte chunks; give it to
    ``FileResponse``), which deletes the file when closed.
    """
    layout, fmt, all_statuses = export_params(layout, fmt, all_statuses)
    filename = export_filename(batch, layout, fmt, all_statuses)
    content_type = CONTENT_TYPES[fmt]
    if layout == "card":
        return iter([data_card(batch)]), content_type, filename
    if fmt == "parquet":
        handle, path = tempfile.mkstemp(prefix=f"export-{batch.slug}-", suffix=".parquet")
        os.close(handle)
        try:
            export_to_file(batch, layout, fmt, path, all_statuses=all_statuses)
            return TemporaryExportFile(path), content_type, filename
        except BaseException:
            os.remove(path)
            raise
    _, chunks = _text_chunks(batch, layout, fmt, all_statuses)
    return chunks, content_type, filename
