"""Label exports (FORMATS.md, "Labels (export)"), streamed with bounded memory.

Rows are read with ``QuerySet.iterator(chunk_size=...)`` (a server-side cursor on
PostgreSQL) and written as they arrive, so memory does not grow with the number of
labels. Parquet is written in row groups of ``PARQUET_ROW_GROUP`` rows.

CSV cells that begin with ``=``, ``+``, ``-`` or ``@`` get a leading apostrophe, the
usual guard against spreadsheet formula injection; integer columns (``value`` may be
negative) are numbers, not text, and are left alone.
"""

import csv
import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime

from annotation.models import Batch, BatchKind, Label, LabelStatus
from annotation.services.errors import InvalidInput

EXPORT_FORMATS = ("jsonl", "csv", "parquet")
CHUNK_SIZE = 2000
PARQUET_ROW_GROUP = 10_000
FORMULA_PREFIXES = ("=", "+", "-", "@")

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
INTEGER_COLUMNS = {"value", "duration_ms"}

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


def long_columns(kind: str) -> list[str]:
    middle = PAIRWISE_COLUMNS if kind == BatchKind.PAIRWISE else ABSOLUTE_COLUMNS
    return ITEM_COLUMNS + middle + LABEL_COLUMNS


def iter_long_rows(batch: Batch, *, all_statuses: bool = False) -> Iterator[dict]:
    """One dict per label in the long layout: items in import order, labels as submitted."""
    labels = Label.objects.filter(batch=batch)
    if not all_statuses:
        labels = labels.filter(status=LabelStatus.COUNTED)
    columns = long_columns(batch.kind)
    source_columns = [column for column in columns if column in _SOURCE_FIELDS]
    rows = labels.order_by("item__position", "submitted_at", "pk").values_list(
        *[_SOURCE_FIELDS[column] for column in source_columns]
    )
    for values in rows.iterator(chunk_size=CHUNK_SIZE):
        row = {"batch": batch.slug, "kind": batch.kind}
        row.update(zip(source_columns, values, strict=True))
        row["submitted_at"] = _iso_utc(row["submitted_at"])
        yield {column: row[column] for column in columns}


def _iso_utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def write_jsonl(rows: Iterable[dict], stream) -> int:
    count = 0
    for row in rows:
        stream.write(json.dumps(row, ensure_ascii=False) + "\n")
        count += 1
    return count


def neutralise_formula(cell):
    if isinstance(cell, str) and cell.startswith(FORMULA_PREFIXES):
        return "'" + cell
    return cell


def write_csv(rows: Iterable[dict], stream, columns: list[str]) -> int:
    writer = csv.writer(stream, lineterminator="\r\n")
    writer.writerow(columns)
    count = 0
    for row in rows:
        writer.writerow(
            ["" if row[column] is None else neutralise_formula(row[column]) for column in columns]
        )
        count += 1
    return count


def write_parquet(rows: Iterable[dict], path, columns: list[str]) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [(column, pa.int64() if column in INTEGER_COLUMNS else pa.string()) for column in columns]
    )
    count = 0
    with pq.ParquetWriter(path, schema) as writer:
        group: list[dict] = []
        for row in rows:
            group.append(row)
            if len(group) >= PARQUET_ROW_GROUP:
                writer.write_table(pa.Table.from_pylist(group, schema=schema))
                count += len(group)
                group = []
        if group or count == 0:
            writer.write_table(pa.Table.from_pylist(group, schema=schema))
            count += len(group)
    return count


def export_long(batch: Batch, fmt: str, path, *, all_statuses: bool = False) -> int:
    """Write the long export of a batch to ``path``; returns the number of rows."""
    if fmt not in EXPORT_FORMATS:
        raise InvalidInput("format", f"{fmt!r} is not one of {', '.join(EXPORT_FORMATS)}")
    rows = iter_long_rows(batch, all_statuses=all_statuses)
    columns = long_columns(batch.kind)
    if fmt == "parquet":
        return write_parquet(rows, path, columns)
    with open(path, "w", encoding="utf-8", newline="") as stream:
        if fmt == "jsonl":
            return write_jsonl(rows, stream)
        return write_csv(rows, stream, columns)
