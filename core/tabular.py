"""Reading JSONL/CSV import files line by line, with one wording for each problem.

The kind-independent machinery shared by the all-or-nothing importers (items in
``annotation.services.importing``, model scores in ``analysis.services.scores``):

* ``open_source`` opens a path or takes a file object (e.g. an upload) and yields it
  with the name that problems use and its format (``jsonl``/``csv``, from ``format_of``).
* ``Problems`` collects every problem as ``FILE:LINE: field: message`` and lists the
  first ``MAX_LISTED_PROBLEMS`` by line number, then "... and K more problems";
  ``ImportRejected`` carries that list.
* ``decoded_lines`` reads a binary (or text) file one physical line at a time, so that
  a bad byte is reported with its line number; ``jsonl_rows`` and ``csv_rows`` turn the
  lines into (line number, row) pairs, a row being ``None`` where the record is broken
  (its problem is already collected). ``json_object`` parses one JSONL line,
  ``json_document`` a whole JSON file or cell; ``required_value`` reports a required key
  that a row lacks or leaves empty. Readers that take a whole decoded text (census, Genie)
  use ``jsonl_text_rows`` and ``csv_text_rows`` and collect into a ``ProblemList``; each
  problem has one wording (``not_an_object``, ``field_count_problem``, ``MISSING_COLUMN``)
  whichever reader finds it.
Writing the rows (``chunks``, ``RowInserter``) is ``core.row_writing``.
"""

import csv
import dataclasses
import hashlib
import heapq
import io
import json
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

from core import json_text
from core.errors import InvalidInput, ServiceError
from core.problem_lists import MAX_LISTED_PROBLEMS, more_problems
from core.text_files import not_utf8

__all__ = [
    "Fingerprint",
    "MAX_LISTED_PROBLEMS",
    "NOT_JSON",
    "SUPPORTED_FORMATS",
    "Collector",
    "CsvTable",
    "MISSING_COLUMN",
    "ImportRejected",
    "ProblemList",
    "Problems",
    "csv_rows",
    "csv_text_rows",
    "decoded_lines",
    "field_count_problem",
    "fingerprint",
    "format_of",
    "json_document",
    "json_object",
    "json_type",
    "jsonl_rows",
    "jsonl_text_rows",
    "not_an_object",
    "open_source",
    "reject_json_constant",
    "required_value",
]

UTF8_BOM = b"\xef\xbb\xbf"
SUPPORTED_FORMATS = {".jsonl": "jsonl", ".csv": "csv"}

# Response texts can be long; the csv module's default limit (128 KiB) is too small.
csv.field_size_limit(max(csv.field_size_limit(), 64 * 1024 * 1024))


class ImportRejected(ServiceError):
    """The file was rejected whole; ``problems`` lists ``FILE:LINE: field: message``."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems

    @classmethod
    def concurrent_write(cls, name: str, error: Exception) -> "ImportRejected":
        """The insert hit a unique constraint: another import wrote the same rows meanwhile."""
        return cls(
            [
                f"{name}:1: file: conflicts with data written by a concurrent import "
                f"(nothing was imported; check the file again and retry): {error}"
            ]
        )


# --------------------------------------------------------------------------- sources


def unsupported_file_type(name: str, extensions) -> str:
    """The problem of a file whose type is none of ``extensions`` (".jsonl", ".csv", …), in
    the one wording every import uses."""
    extension = os.path.splitext(name)[1].lower()
    found = f"{extension!r}" if extension else "no extension"
    *others, last = extensions
    allowed = f"{', '.join(others)} or {last}" if others else last
    return f"{name}:1: file: unsupported file type ({found}); use {allowed}"


def format_of(name: str, formats=SUPPORTED_FORMATS) -> str:
    """The format of the file ``name`` by its extension (``formats``: extension → format;
    ``jsonl`` or ``csv`` by default); ``ImportRejected`` otherwise."""
    fmt = formats.get(os.path.splitext(name)[1].lower())
    if fmt is None:
        raise ImportRejected([unsupported_file_type(name, formats)])
    return fmt


@contextmanager
def open_source(path_or_file, filename: str | None = None) -> Iterator[tuple[IO, str, str]]:
    """Yield (handle, name, format) for a path or a binary file object.

    ``filename`` names the file in problems and decides the format; without it, a path
    names itself and a file object its base name (or ``upload``). An unsupported
    extension is ``ImportRejected`` (checked before opening); a path that cannot be
    opened is ``InvalidInput``. A path is closed on exit, a file object is left open.
    """
    if isinstance(path_or_file, str | os.PathLike):
        path = os.fspath(path_or_file)
        name = filename or path
        fmt = format_of(name)
        try:
            handle = open(path, "rb")
        except OSError as error:
            raise InvalidInput("file", f"cannot open {path}: {error.strerror}") from error
        with handle:
            yield handle, name, fmt
    else:
        name = filename or os.path.basename(str(getattr(path_or_file, "name", "") or "upload"))
        yield path_or_file, name, format_of(name)


@dataclass(frozen=True)
class Fingerprint:
    """Size and SHA-256 of an imported file, recorded in the audit trail."""

    bytes: int
    sha256: str


def import_changes(name: str, file: Fingerprint | None, summary) -> dict:
    """What the audit trail keeps of an import: the file's name, its size and hash when
    known, and the counts of the import's summary (a dataclass)."""
    changes = {"file": os.path.basename(name)}
    if file is not None:
        changes.update(dataclasses.asdict(file))
    return changes | dataclasses.asdict(summary)


def fingerprint(handle: IO) -> Fingerprint:
    """Read the whole (seekable) file once for its size and hash, then rewind it."""
    digest = hashlib.sha256()
    size = 0
    start = handle.tell()
    while chunk := handle.read(1024 * 1024):
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8")
        digest.update(chunk)
        size += len(chunk)
    handle.seek(start)
    return Fingerprint(size, digest.hexdigest())


# --------------------------------------------------------------------------- problems


class Problems:
    """Counts every problem, keeps the first ``MAX_LISTED_PROBLEMS`` by line number."""

    def __init__(self, name: str):
        self.name = name
        self.count = 0
        self._heap: list[tuple[int, int, str]] = []  # max-heap on (line, seq), negated

    def add(self, line: int, field: str, message: str) -> None:
        self.count += 1
        entry = (-line, -self.count, f"{self.name}:{line}: {field}: {message}")
        if len(self._heap) < MAX_LISTED_PROBLEMS:
            heapq.heappush(self._heap, entry)
        elif entry > self._heap[0]:
            heapq.heapreplace(self._heap, entry)

    def lines(self) -> list[str]:
        listed = [text for _, _, text in sorted(self._heap, reverse=True)]
        if self.count > len(listed):
            listed.append(more_problems(self.count - len(listed)))
        return listed


# --------------------------------------------------------------------------- reading


def _raw_lines(handle: IO) -> Iterator[bytes | str]:
    """Physical lines, split on ``\\n`` only (a ``\\r`` inside a CSV field stays put)."""
    readline = handle.readline
    while True:
        line = readline()
        if not line:
            return
        yield line


def decoded_lines(handle: IO, problems: Problems) -> Iterator[tuple[int, str, bool]]:
    """(line number, text, decoded cleanly) for each physical line.

    A leading UTF-8 byte order mark is dropped; a line that is not valid UTF-8 is a
    problem at ``encoding`` and comes with its bad bytes replaced.
    """
    for number, raw in enumerate(_raw_lines(handle), 1):
        if isinstance(raw, str):  # a text-mode file object: already decoded
            yield number, (raw[1:] if number == 1 and raw.startswith("\ufeff") else raw), True
            continue
        if number == 1 and raw.startswith(UTF8_BOM):
            raw = raw[len(UTF8_BOM) :]
        try:
            yield number, raw.decode("utf-8"), True
        except UnicodeDecodeError as error:
            problems.add(number, "encoding", not_utf8(raw, error))
            yield number, raw.decode("utf-8", "replace"), False


def reject_json_constant(name: str):
    """A ``parse_constant`` for ``json.loads`` that refuses ``NaN`` and ``Infinity``."""
    raise ValueError(f"{name} is not allowed")


class ProblemList:
    """``Problems``' ``add`` for the readers that keep every problem in a plain list, in the
    order found, and reject the input at the end (the census and Genie readers)."""

    def __init__(self, name: str, problems: list[str]):
        self.name = name
        self.problems = problems

    def add(self, line: int, field: str, message: str) -> None:
        self.problems.append(f"{self.name}:{line}: {field}: {message}")


# Anything with Problems.add: a Problems, or a ProblemList.
Collector = Problems | ProblemList

# json_document's answer when the text is not a JSON document (``None`` is a valid one).
NOT_JSON = object()


def not_an_object(value: Any) -> str:
    """The one wording of a row (a JSONL line, a JSON array's element) that is no object."""
    return f"not a JSON object (found {json_type(value)})"


def json_document(
    text: str,
    problems: Collector,
    *,
    field: str = "file",
    line: int | None = None,
    allow_constants: bool = False,
) -> Any:
    """The JSON value of ``text``, or ``NOT_JSON`` with the problem collected.

    The problem, ``not valid JSON: REASON at column N``, is at ``line`` when given (one
    JSONL line: its text ends in the newline, where a cut-off record fails), else at the
    line of the error within ``text``. ``NaN``, ``Infinity`` and ``-Infinity`` are invalid
    JSON unless ``allow_constants``; so is nesting deeper than ``JSON_MAX_DEPTH``.
    """
    try:
        return json_text.loads(
            text, parse_constant=None if allow_constants else reject_json_constant
        )
    except json.JSONDecodeError as error:
        # some of Python's messages end in "at" ("Invalid control character at")
        reason = error.msg.removesuffix(" at")
        at = error.lineno if line is None else line
        problems.add(at, field, f"not valid JSON: {reason} at column {error.colno}")
    except (ValueError, RecursionError) as error:
        problems.add(1 if line is None else line, field, f"not valid JSON: {error}")
    return NOT_JSON


def json_object(
    number: int, text: str, problems: Collector, *, allow_constants: bool = False
) -> dict | None:
    """The JSON object on line ``number``, or ``None`` with the problem collected.

    ``NaN``, ``Infinity`` and ``-Infinity`` are invalid JSON unless ``allow_constants``.
    """
    row = json_document(text, problems, field="row", line=number, allow_constants=allow_constants)
    if row is NOT_JSON:
        return None
    if not isinstance(row, dict):
        problems.add(number, "row", not_an_object(row))
        return None
    return row


def jsonl_rows(
    handle: IO, problems: Problems, *, allow_constants: bool = False, undecodable: bool = True
) -> Iterator[tuple[int, dict | None]]:
    """(line number, object) for each non-blank line; ``None`` for a broken one.

    A line that is not valid UTF-8 (already a problem) comes as ``None`` too, unless
    ``undecodable`` is false: then it is no record at all (the score importer counts
    records, and such a line never was one).
    """
    for number, text, clean in decoded_lines(handle, problems):
        if not clean:
            if undecodable:
                yield number, None  # reported by decoded_lines
            continue
        if not text.strip():
            continue
        yield number, json_object(number, text, problems, allow_constants=allow_constants)


def jsonl_text_rows(
    text: str, problems: Collector, *, allow_constants: bool = False
) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a whole decoded text; a broken
    line is left out, its problem collected (as ``jsonl_rows`` words it)."""
    # Split on "\n" only: str.splitlines() also breaks at U+2028 etc., valid inside JSON strings.
    for number, content in enumerate(text.split("\n"), start=1):
        if content.strip():
            row = json_object(number, content, problems, allow_constants=allow_constants)
            if row is not None:
                yield number, row


def field_count_problem(expected: int, found: int) -> str:
    """The one wording of a CSV record with another number of fields than the header."""
    return f"expected {expected} fields as in the header, found {found}"


def _csv_records(handle: IO, problems: Collector) -> Iterator[tuple[int, list[str] | None]]:
    """(first line number, fields) for each CSV record, the header included; blank lines
    are skipped and a record that is not valid CSV comes as ``None`` (problem collected)."""
    lines = decoded_lines(handle, problems)
    reader = csv.reader(text for _, text, _ in lines)
    consumed = 0  # physical lines the reader had consumed before the current record
    while True:
        start = consumed + 1
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            consumed = reader.line_num
            problems.add(start, "row", f"not valid CSV: {_csv_error_text(error)}")
            yield start, None
            continue
        consumed = reader.line_num
        if fields:  # else a blank line
            yield start, fields


def _csv_error_text(error: csv.Error) -> str:
    """Python's csv message, or what it means where it speaks of Python's own file modes."""
    if "new-line character seen in unquoted field" in str(error):
        # lines ending in a bare CR (classic Mac files) read as one line holding CRs
        return (
            "a line break (CR) inside an unquoted cell; save the file with LF or CRLF "
            "line endings, or quote the cell"
        )
    return str(error)


def _csv_row(start: int, fields: list[str], header: list[str], problems: Collector) -> dict | None:
    """One record as {column: cell}, or ``None`` when its field count is not the header's."""
    if len(fields) != len(header):
        problems.add(start, "row", field_count_problem(len(header), len(fields)))
        return None
    return {column: value for column, value in zip(header, fields, strict=True) if column}


def csv_rows(
    handle: IO, problems: Problems, required: Iterable[str]
) -> Iterator[tuple[int, dict | None]]:
    """(first line number, {column: cell}) for each CSV record after the header.

    The header's columns are stripped; a repeated column, or a column of ``required``
    that is missing, is a problem on line 1. Blank lines are skipped; a record that is
    not valid CSV or has another number of fields than the header gives ``None``.
    """
    header: list[str] | None = None
    for start, fields in _csv_records(handle, problems):
        if fields is None:
            yield start, None
        elif header is None:
            header = [column.strip() for column in fields]
            _check_header(header, required, problems)
        else:
            yield start, _csv_row(start, fields, header, problems)


@dataclass(frozen=True)
class CsvTable:
    """A whole CSV text read by ``csv_text_rows``: its header and its usable records."""

    columns: list[str]
    rows: list[tuple[int, dict]]


def csv_text_rows(text: str, problems: Collector, required: Iterable[str] = ()) -> CsvTable | None:
    """The records of a whole decoded CSV text (the census and Genie readers), worded as
    ``csv_rows`` words them; ``None`` when the text has no header or the header lacks a
    ``required`` column or repeats one (each a problem on line 1). A broken record, and
    one whose cells are all blank (a spreadsheet's trailing ``,,,``), is left out."""
    header: list[str] | None = None
    rows: list[tuple[int, dict]] = []
    # split on "\n" only, as a binary file is: a "\r" inside a quoted cell stays put
    for start, fields in _csv_records(io.StringIO(text, newline="\n"), problems):
        if fields is None:
            continue
        if header is None:
            header = [column.strip() for column in fields]
            if not _check_header(header, required, problems):
                return None
        elif any(field.strip() for field in fields):
            row = _csv_row(start, fields, header, problems)
            if row is not None:
                rows.append((start, row))
    if header is None:
        problems.add(1, "file", "empty (a header row is required)")
        return None
    return CsvTable(header, rows)


#: The one wording of a required CSV column that the header lacks.
MISSING_COLUMN = "required column is missing from the header"


def _check_header(header: list[str], required: Iterable[str], problems: Collector) -> bool:
    """Whether the header names each ``required`` column once (else problems on line 1)."""
    problems_seen = 0
    seen: set[str] = set()
    for column in header:
        if column and column in seen:
            problems.add(1, "header", f"column {column!r} appears more than once")
            problems_seen += 1
        seen.add(column)
    for key in required:
        if key not in seen:
            problems.add(1, key, MISSING_COLUMN)
            problems_seen += 1
    return problems_seen == 0


def required_value(problems: Problems, line: int, row: dict, key: str, *, csv_header: bool) -> Any:
    """``row[key]``, or None after reporting that this required key is missing or empty.

    An empty value is JSON ``null`` or a blank string. With ``csv_header`` (the row comes
    from ``csv_rows``) a missing key is not reported: its column was, once, at the header.
    """
    if key not in row:
        if not csv_header:
            problems.add(line, key, "required key is missing")
        return None
    value = row[key]
    if value is None or (isinstance(value, str) and not value.strip()):
        problems.add(line, key, "must not be empty")
        return None
    return value


def json_type(value: Any) -> str:
    """How a problem names the JSON type of ``value``: "null", "a list", "a number", ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, int | float):
        return "a number"
    return "a string"
