"""The one CSV writer of the platform: every CSV it produces (the exports, analysis and
corpus tables, the figures zip, invitation links) is written here.

RFC 4180 with CRLF line ends; empty for a missing value; and the usual guard against
spreadsheet formula injection: a text cell that starts like a formula (``=``, ``+``,
``-``, ``@``) gets a leading ``'``, so that a spreadsheet shows it as text instead of
running it (a model named ``=HYPERLINK(...)`` stays a name). Numbers are written as they
are, so negative numbers stay numbers.
"""

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any

FORMULA_PREFIXES = ("=", "+", "-", "@")
STREAM_CHUNK_CHARS = 64 * 1024


def neutralise_formula(cell: Any) -> Any:
    """``cell`` with a leading ``'`` when it is text that starts like a formula."""
    if isinstance(cell, str) and cell.startswith(FORMULA_PREFIXES):
        return "'" + cell
    return cell


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell: ``""`` for None, a list as JSON, formulas neutralised."""
    if value is None:
        return ""
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)  # starts with "[": never a formula
    return neutralise_formula(value)


def writer(stream: IO[str]):
    """A ``csv.writer`` with the platform's dialect (write cells through ``csv_cell``)."""
    return csv.writer(stream, lineterminator="\r\n")


def write_table(stream: IO[str], columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """The header and the rows, every cell through ``csv_cell``."""
    table = writer(stream)
    table.writerow([csv_cell(column) for column in columns])
    table.writerows([csv_cell(value) for value in row] for row in rows)


def table_text(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """``write_table`` into a string."""
    text = io.StringIO()
    write_table(text, columns, rows)
    return text.getvalue()


def rewritten_text(columns: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Some rows of a table this module wrote, read back and written again as they are.

    Their cells are written already (formulas neutralised); read back, a number is text
    ("-0.5") that ``csv_cell`` would take for a formula and quote."""
    text = io.StringIO()
    table = writer(text)
    table.writerow(columns)
    table.writerows(rows)
    return text.getvalue()


def take_text(buffer: io.StringIO) -> str:
    """What ``buffer`` holds, leaving it empty for the next chunk of a stream."""
    text = buffer.getvalue()
    buffer.seek(0)
    buffer.truncate()
    return text


def csv_chunks(rows: Iterable[dict], columns: list[str]) -> Iterator[str]:
    """CSV text of dict rows (header first) in chunks of about ``STREAM_CHUNK_CHARS``."""
    buffer = io.StringIO()
    table = writer(buffer)
    table.writerow(columns)
    for row in rows:
        table.writerow([csv_cell(row[column]) for column in columns])
        if buffer.tell() >= STREAM_CHUNK_CHARS:
            yield take_text(buffer)
    if buffer.tell():
        yield buffer.getvalue()
