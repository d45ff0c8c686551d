"""The rows of a Genie file, whatever its container: JSON lines, JSON or CSV.

* ``.jsonl``: one JSON object per line (blank lines ignored); a row's line is its line.
* ``.json``: a list of objects (pandas' ``orient="records"``; a row's line is the line its
  object starts on), or GENIE's column-oriented object (pandas' default ``to_json``:
  ``{"Prompt": {"0": ..., "1": ...}, "Question": {...}, ...}``), where a row is one index
  key, rows come in index order (numeric keys by value) and a row's "line" is its 1-based
  number in that order; a column that lacks an index key gives ``null`` there.
* ``.csv``: RFC 4180 with a header row; a row's line is the line its record starts on.

Every JSON document or line is parsed by ``core.tabular`` (one wording for every problem,
the nesting limit of ``core.json_text``). Problems
are appended as ``FILE:LINE: field: message``. Pure Python, no Django.
"""

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO

from core.tabular import (
    NOT_JSON,
    ProblemList,
    csv_text_rows,
    json_document,
    jsonl_text_rows,
    not_an_object,
    unsupported_file_type,
)
from core.text_files import read_text

__all__ = ["FileRows", "file_name_of", "read_rows"]

FORMATS = (".jsonl", ".json", ".csv")


@dataclass
class FileRows:
    """A file's rows as ``(line, dict)``; ``columns`` is the CSV header (``None`` for JSON,
    whose keys may differ from row to row)."""

    rows: list[tuple[int, dict]]
    columns: list[str] | None


def file_name_of(file: str | os.PathLike | IO, name: str | None) -> str:
    if name is not None:
        return name
    if isinstance(file, str | os.PathLike):
        return os.path.basename(os.fspath(file))
    return os.path.basename(str(getattr(file, "name", "") or "upload"))


def read_rows(file: str | os.PathLike | IO, name: str, problems: list[str]) -> FileRows | None:
    """The file's rows, or ``None`` when it cannot be read at all (problem recorded)."""
    lowered = name.lower()
    if not lowered.endswith(FORMATS):
        problems.append(unsupported_file_type(name, FORMATS))
        return None
    text = read_text(file, name, problems)
    if text is None:
        return None
    if lowered.endswith(".jsonl"):
        return FileRows(list(_jsonl_rows(text, name, problems)), None)
    if lowered.endswith(".json"):
        return FileRows(_json_rows(text, name, problems), None)
    return _csv_rows(text, name, problems)


def _jsonl_rows(text: str, name: str, problems: list[str]) -> Iterable[tuple[int, dict]]:
    # NaN/Infinity parse: the field checks name them where they are not allowed
    return jsonl_text_rows(text, ProblemList(name, problems), allow_constants=True)


def _json_rows(text: str, name: str, problems: list[str]) -> list[tuple[int, dict]]:
    document = json_document(text, ProblemList(name, problems), allow_constants=True)
    if document is NOT_JSON:
        return []
    if isinstance(document, list):
        rows = []
        for line, row in zip(_element_lines(text), document, strict=True):
            if isinstance(row, dict):
                rows.append((line, row))
            else:
                problems.append(f"{name}:{line}: row: {not_an_object(row)}")
        return rows
    if (
        isinstance(document, dict)
        and document
        and all(isinstance(v, dict) for v in document.values())
    ):
        return _column_rows(document)
    problems.append(
        f"{name}:1: file: must be a list of records or a column-oriented object "
        '({"Prompt": {"0": ...}, ...})'
    )
    return []


def _element_lines(text: str) -> list[int]:
    """The line each element of the (valid, depth-checked) top-level array starts on."""
    decoder = json.JSONDecoder()
    lines: list[int] = []
    position = text.index("[") + 1
    line = text.count("\n", 0, position) + 1
    while True:
        while text[position] in " \t\r\n,":
            line += text[position] == "\n"
            position += 1
        if text[position] == "]":
            return lines
        lines.append(line)
        _, end = decoder.raw_decode(text, position)
        line += text.count("\n", position, end)
        position = end


def _column_rows(columns: dict[str, dict]) -> list[tuple[int, dict]]:
    keys: dict[str, None] = {}
    for values in columns.values():
        keys.update(dict.fromkeys(values))
    ordered = list(keys)
    if all(key.lstrip("-").isdigit() for key in ordered):
        ordered.sort(key=int)
    return [
        (number, {column: values.get(key) for column, values in columns.items()})
        for number, key in enumerate(ordered, start=1)
    ]


def _csv_rows(text: str, name: str, problems: list[str]) -> FileRows | None:
    table = csv_text_rows(text, ProblemList(name, problems))
    return FileRows(table.rows, table.columns) if table is not None else None
