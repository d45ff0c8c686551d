"""JSONL, CSV and Parquet writers over rows, with the column types of ``schema``.

CSV cells that begin with ``=``, ``+``, ``-`` or ``@`` get a leading apostrophe, the
usual guard against spreadsheet formula injection; integer columns (``value`` may be
negative) are numbers, not text, and are left alone. Parquet is written in row groups of
at most ``PARQUET_ROW_GROUP`` rows (or about ``PARQUET_GROUP_CHARS`` characters of text,
whichever comes first).
"""

import io
import json
from collections.abc import Iterable, Iterator

from annotation.kinds.base import ExportColumn
from core.csv_files import (  # noqa: F401 - the exports' CSV is the platform's
    FORMULA_PREFIXES,
    STREAM_CHUNK_CHARS,
    csv_cell,
    csv_chunks,
    neutralise_formula,
    take_text,
)
from core.csv_files import writer as csv_writer

PARQUET_ROW_GROUP = 10_000
PARQUET_GROUP_CHARS = 8_000_000


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


def long_csv_chunks(
    groups: Iterable[tuple[dict, list[dict]]], columns: list[str], label_names: list[str]
) -> Iterator[str]:
    """The long layout's CSV from ``iter_long_groups``; each item's cells are encoded once
    (CSV quotes cell by cell, so the joined line equals the row written whole).
    ``label_names`` are the label's own columns, the last of ``columns``."""
    item_part = columns[: -len(label_names)]
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(columns)
    scratch = io.StringIO()
    item_writer = csv_writer(scratch)
    for part, labels in groups:
        scratch.seek(0)
        scratch.truncate()
        item_writer.writerow([csv_cell(part[column]) for column in item_part])
        prefix = scratch.getvalue()[:-2] + ","
        for label in labels:
            buffer.write(prefix)
            writer.writerow([csv_cell(label[column]) for column in label_names])
            if buffer.tell() >= STREAM_CHUNK_CHARS:
                yield take_text(buffer)
    if buffer.tell():
        yield buffer.getvalue()


def _arrow_type(column_type: str):
    import pyarrow as pa

    return {
        "int": pa.int64(),
        "bool": pa.bool_(),
        "float": pa.float64(),
        "int_list": pa.list_(pa.int64()),
        "string_list": pa.list_(pa.string()),
        "string": pa.string(),
    }[column_type]


def parquet_schema(columns: list[ExportColumn]):
    import pyarrow as pa

    return pa.schema([(column.name, _arrow_type(column.type)) for column in columns])


def write_parquet(rows: Iterable[dict], path, export_columns: list[ExportColumn]) -> int:
    """Write rows to a Parquet file in row groups; returns the number of rows.

    A row group is flushed after ``PARQUET_ROW_GROUP`` rows or about
    ``PARQUET_GROUP_CHARS`` characters of text, so long responses do not inflate it.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = parquet_schema(export_columns)
    columns = [column.name for column in export_columns]
    text_columns = [column.name for column in export_columns if column.type == "string"]
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


def write_parquet_from_csv(
    chunks: Iterable[bytes], path, export_columns: list[ExportColumn]
) -> int:
    """Write a Parquet file from CSV text (UTF-8) in chunks of whole lines (no header;
    columns in ``export_columns`` order; a present text quoted, an empty unquoted cell
    null — the database's ``arrow`` lines). Each chunk is parsed by Arrow as it comes, and
    the parsed pieces, compact in Arrow's memory, are written as a row group once they
    hold ``PARQUET_ROW_GROUP`` rows or about ``PARQUET_GROUP_CHARS`` bytes, as
    ``write_parquet`` does. Returns the number of rows."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pq

    schema = parquet_schema(export_columns)
    # one thread: the chunks are small, and threads' blocks would stay in Arrow's pool
    read = pa_csv.ReadOptions(column_names=schema.names, use_threads=False)
    parse = pa_csv.ParseOptions(newlines_in_values=True)
    convert = pa_csv.ConvertOptions(
        column_types=dict(zip(schema.names, schema.types, strict=True)),
        null_values=[""],
        strings_can_be_null=True,
        quoted_strings_can_be_null=False,
        true_values=["true"],
        false_values=["false"],
    )
    count = 0
    with pq.ParquetWriter(path, schema) as writer:
        pieces: list = []
        rows = chars = 0
        for chunk in chunks:
            if not chunk:
                continue
            piece = pa_csv.read_csv(
                pa.py_buffer(chunk),
                read_options=read,
                parse_options=parse,
                convert_options=convert,
            ).cast(schema)
            pieces.append(piece)
            rows += piece.num_rows
            chars += len(chunk)
            if rows >= PARQUET_ROW_GROUP or chars >= PARQUET_GROUP_CHARS:
                writer.write_table(pa.concat_tables(pieces), row_group_size=rows)
                count += rows
                pieces, rows, chars = [], 0, 0
        if pieces or count == 0:
            writer.write_table(pa.concat_tables(pieces) if pieces else schema.empty_table())
            count += rows
    return count
