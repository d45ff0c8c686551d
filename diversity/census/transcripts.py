"""Reading census replies into one list of ``CensusRecord`` (model, category, run, reply).

Two input formats, one result:

* **Transcript JSON** (``.json``, one file per model), as the census runner writes it::

      {"model": "claude-3-haiku",
       "scenes": {"color": {"runs": [[{"u": "Name a color. ...", "reply": "Blue."}], ...]},
                  ...}}

  The reply of a run is the ``reply`` of its **first** turn; an empty run, or a first turn
  without a reply (or with ``null``), gives ``reply=None`` (a failed cell, not an error). The
  run number is the run's index in ``runs``. Other keys are ignored.
* **Flat JSONL/CSV** (``.jsonl``/``.csv``), one row per cell, keys/columns ``model``,
  ``category``, ``run`` (an integer >= 0), ``reply`` (may be empty or ``null``: a failed cell,
  but the key/column must be present). UTF-8, JSONL blank lines ignored, CSV with a header row.

Names and replies must be storable: a model or category name has at most ``MAX_NAME_CHARS``
characters, and no text holds a NUL character.

Reading is all-or-nothing: every problem is collected and the file (or directory) is rejected
with ``CensusInputError``, whose message lists them one a line, as ``FILE:LINE: field: message``
for flat files and ``FILE: json.path: message`` for transcripts (e.g.
``claude.json: scenes.color.runs[2]: must be a list of turns``). The same (model, category,
run) twice, in one file or across the files of a directory, is a problem too.

Pure: takes paths and file objects (binary or text), never the database.
"""

import os
from collections.abc import Iterable
from typing import IO, Any

from core.tabular import (
    NOT_JSON,
    SUPPORTED_FORMATS,
    ProblemList,
    csv_text_rows,
    json_document,
    jsonl_text_rows,
    unsupported_file_type,
)
from diversity.census.core.records import CensusRecord
from diversity.census.sources import CensusInputError, read_text, source_name

__all__ = [
    "FLAT_COLUMNS",
    "MAX_NAME_CHARS",
    "CensusInputError",
    "CensusRecord",
    "census_file_kind",
    "read_census",
    "read_each_file",
    "read_files",
    "read_flat",
    "read_transcript",
]

FLAT_COLUMNS = ("model", "category", "run", "reply")
# the longest reply kept unless the caller says otherwise (the imports pass TEXT_MAX_CHARS)
DEFAULT_TEXT_MAX = 200_000
MAX_NAME_CHARS = 200
_TRANSCRIPT_EXTENSIONS = (".json",)
_FLAT_EXTENSIONS = (".jsonl", ".csv")


# A record with the place it came from, so that duplicates can name both places.
_Located = tuple[str, CensusRecord]


# --------------------------------------------------------------------------- public readers


def read_census(source: str | os.PathLike) -> list[CensusRecord]:
    """Every record of a transcript/flat file, or of every such file in a directory.

    A directory is read file by file in sorted name order (``.json`` as transcripts,
    ``.jsonl``/``.csv`` as flat files; other files are ignored); problems of all files are
    reported together.
    """
    path = os.fspath(source)
    if os.path.isdir(path):
        names = sorted(name for name in os.listdir(path) if census_file_kind(name) is not None)
        if not names:
            raise CensusInputError([f"{path}: directory: no .json, .jsonl or .csv file"])
        files = [os.path.join(path, name) for name in names]
    else:
        files = [path]
    return read_files([(file, os.path.basename(file)) for file in files])


def census_file_kind(name: str) -> str | None:
    """``"transcript"`` (``.json``), ``"flat"`` (``.jsonl``/``.csv``) or ``None``."""
    lowered = name.lower()
    if lowered.endswith(_TRANSCRIPT_EXTENSIONS):
        return "transcript"
    if lowered.endswith(_FLAT_EXTENSIONS):
        return "flat"
    return None


def read_files(files: Iterable[tuple[str | os.PathLike | IO, str]]) -> list[CensusRecord]:
    """Every record of several files, each a path or an open file with the name problems use.

    The format follows each name's extension; problems of all files, and any (model,
    category, run) read twice across them, are reported together.
    """
    return [record for records in read_each_file(files) for record in records]


def read_each_file(
    files: Iterable[tuple[str | os.PathLike | IO, str]],
    *,
    text_max: int = DEFAULT_TEXT_MAX,
) -> list[list[CensusRecord]]:
    """As ``read_files``, but the records of each file apart, in the order of ``files``;
    a reply longer than ``text_max`` characters is a problem (the import's
    ``TEXT_MAX_CHARS``)."""
    problems: list[str] = []
    per_file: list[list[_Located]] = []
    for file, name in files:
        kind = census_file_kind(name)
        if kind == "transcript":
            per_file.append(_transcript_records(file, name, problems))
        elif kind == "flat":
            per_file.append(_flat_records(file, name, problems))
        else:
            problems.append(unsupported_file_type(name, (".json", ".jsonl", ".csv")))
            per_file.append([])
    located = [entry for entries in per_file for entry in entries]
    _too_long_replies(located, problems, text_max)
    _unique_records(located, problems)
    return [[record for _, record in entries] for entries in per_file]


def read_transcript(file: str | os.PathLike | IO, name: str | None = None) -> list[CensusRecord]:
    """The records of one model's transcript JSON (a path or an open file).

    ``name`` names the file in problems (default: the path's base name, or the file object's).
    """
    name = name or source_name(file)
    problems: list[str] = []
    return _unique_records(_transcript_records(file, name, problems), problems)


def read_flat(file: str | os.PathLike | IO, name: str | None = None) -> list[CensusRecord]:
    """The records of a flat JSONL or CSV file (format from ``name``'s extension)."""
    name = name or source_name(file)
    problems: list[str] = []
    return _unique_records(_flat_records(file, name, problems), problems)


# --------------------------------------------------------------------------- shared steps


def _too_long_replies(located: list[_Located], problems: list[str], text_max: int) -> None:
    for place, record in located:
        if record.reply is not None and len(record.reply) > text_max:
            problems.append(
                f"{place}: reply: the text is {len(record.reply):,} characters; at most "
                f"TEXT_MAX_CHARS ({text_max:,}) are accepted"
            )


def _unique_records(located: list[_Located], problems: list[str]) -> list[CensusRecord]:
    """The records, or ``CensusInputError`` if there is any problem or a repeated cell."""
    first_place: dict[tuple[str, str, int], str] = {}
    for place, record in located:
        key = (record.model, record.category, record.run)
        if key in first_place:
            problems.append(
                f"{place}: run: model {record.model!r}, category {record.category!r}, "
                f"run {record.run} already read at {first_place[key]}"
            )
        else:
            first_place[key] = place
    if problems:
        raise CensusInputError(problems)
    return [record for _, record in located]


def _unstorable_name(value: str) -> str | None:
    """Why a model or category name cannot be stored, or ``None``."""
    if len(value) > MAX_NAME_CHARS:
        return f"longer than {MAX_NAME_CHARS} characters"
    if "\x00" in value:
        return "contains a NUL character"
    return None


def _type_name(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", type(None): "null"}.get(
        type(value), type(value).__name__
    )


# --------------------------------------------------------------------------- transcript JSON


def _transcript_records(
    file: str | os.PathLike | IO, name: str, problems: list[str]
) -> list[_Located]:
    text = read_text(file, name, problems)
    if text is None:
        return []
    transcript = json_document(text, ProblemList(name, problems), allow_constants=True)
    if transcript is NOT_JSON:
        return []
    if not isinstance(transcript, dict):
        problems.append(f"{name}: (top level): must be an object, not {_type_name(transcript)}")
        return []

    model = transcript.get("model")
    if not isinstance(model, str) or not model.strip():
        problems.append(f"{name}: model: missing or not a non-empty string")
    elif (reason := _unstorable_name(model)) is not None:
        problems.append(f"{name}: model: {reason}")
        model = None
    scenes = transcript.get("scenes")
    if scenes is None:
        problems.append(f"{name}: scenes: missing")
        return []
    if not isinstance(scenes, dict):
        problems.append(f"{name}: scenes: must be an object, not {_type_name(scenes)}")
        return []

    located: list[_Located] = []
    for category, scene in scenes.items():
        place = f"scenes.{category}"
        if not category.strip():
            problems.append(f"{name}: {place}: category name is empty")
            continue
        if (reason := _unstorable_name(category)) is not None:
            problems.append(f"{name}: {place}: category name {reason}")
            continue
        if not isinstance(scene, dict):
            problems.append(f"{name}: {place}: must be an object, not {_type_name(scene)}")
            continue
        runs = scene.get("runs")
        if not isinstance(runs, list):
            found = "missing" if runs is None else f"not {_type_name(runs)}"
            problems.append(f"{name}: {place}.runs: must be a list of runs ({found})")
            continue
        for run, turns in enumerate(runs):
            run_place = f"{name}: {place}.runs[{run}]"
            before = len(problems)
            reply = _first_reply(turns, run_place, problems)
            if len(problems) == before and isinstance(model, str) and model.strip():
                located.append((run_place, CensusRecord(model, category, run, reply)))
    return located


def _first_reply(turns: Any, place: str, problems: list[str]) -> str | None:
    """The reply of a run's first turn: ``None`` for an empty run or a missing reply.

    A run of the wrong shape also gives ``None``, with its problem recorded.
    """
    if not isinstance(turns, list):
        problems.append(f"{place}: must be a list of turns, not {_type_name(turns)}")
        return None
    if not turns:
        return None
    first = turns[0]
    if not isinstance(first, dict):
        problems.append(f"{place}[0]: a turn must be an object, not {_type_name(first)}")
        return None
    reply = first.get("reply")
    if reply is not None and not isinstance(reply, str):
        problems.append(f"{place}[0].reply: must be a string or null, not {_type_name(reply)}")
        return None
    if reply is not None and "\x00" in reply:
        problems.append(f"{place}[0].reply: contains a NUL character")
        return None
    return reply


# --------------------------------------------------------------------------- flat JSONL / CSV


def _flat_records(file: str | os.PathLike | IO, name: str, problems: list[str]) -> list[_Located]:
    if name.lower().endswith(".jsonl"):
        rows_of = _jsonl_rows
    elif name.lower().endswith(".csv"):
        rows_of = _csv_rows
    else:
        problems.append(unsupported_file_type(name, SUPPORTED_FORMATS))
        return []
    text = read_text(file, name, problems)
    if text is None:
        return []
    located: list[_Located] = []
    for line, row in rows_of(text, name, problems):
        record = _flat_record(row, f"{name}:{line}", problems)
        if record is not None:
            located.append((f"{name}:{line}", record))
    return located


def _jsonl_rows(text: str, name: str, problems: list[str]) -> Iterable[tuple[int, dict]]:
    # NaN/Infinity parse: the field checks name them where they are not allowed
    return jsonl_text_rows(text, ProblemList(name, problems), allow_constants=True)


def _csv_rows(text: str, name: str, problems: list[str]) -> Iterable[tuple[int, dict]]:
    table = csv_text_rows(text, ProblemList(name, problems), FLAT_COLUMNS)
    return table.rows if table is not None else []


def _flat_record(row: dict, place: str, problems: list[str]) -> CensusRecord | None:
    """One row as a record, or ``None`` with its problems recorded."""
    before = len(problems)
    texts = {}
    for field in ("model", "category"):
        value = row.get(field)
        if not isinstance(value, str) or not value.strip():
            found = (
                "missing or empty" if value is None or isinstance(value, str) else _type_name(value)
            )
            problems.append(f"{place}: {field}: must be a non-empty string ({found})")
        elif (reason := _unstorable_name(value.strip())) is not None:
            problems.append(f"{place}: {field}: {reason}")
        else:
            texts[field] = value.strip()
    run = _run_number(row.get("run"), place, problems)
    if "reply" not in row:
        problems.append(f"{place}: reply: missing (use null or an empty value for no reply)")
    reply = row.get("reply")
    if reply is not None and not isinstance(reply, str):
        problems.append(f"{place}: reply: must be a string or null, not {_type_name(reply)}")
    elif isinstance(reply, str) and "\x00" in reply:
        problems.append(f"{place}: reply: contains a NUL character")
    if len(problems) > before:
        return None
    return CensusRecord(texts["model"], texts["category"], run, reply or None)


# the largest run number the database column holds (a 32-bit integer on PostgreSQL)
MAX_RUN = 2**31 - 1


def _run_number(value: Any, place: str, problems: list[str]) -> int:
    """The run number: an integer from 0 to ``MAX_RUN`` (in CSV, its decimal text)."""
    number = None
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        number = int(value)
    # bool is an int subclass; true/false are not run numbers.
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    if number is not None and 0 <= number <= MAX_RUN:
        return number
    problems.append(f"{place}: run: must be an integer from 0 to {MAX_RUN:,}, not {value!r}")
    return -1
