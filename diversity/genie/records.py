"""Genie similarity judgments: the record shape and the JSONL/CSV file that carries them.

Genie probes each generated document with short questions, each tied to one *feature* (Plot,
Agent, Setting, Style, Perspective, Structure, ...), and asks how similar a *target*
document's short answer is to the answer of each document of a *population* sample.

File format
-----------
UTF-8; ``.jsonl`` (one JSON object per line, blank lines ignored) or ``.csv`` (RFC 4180, header
row required, columns named as the JSONL keys, in any order; an empty cell is ``null``).
Extra columns/keys are ignored. One row per judgment of one (target answer, population
answer) pair:

=====================  ========  ==========================================================
key                    required  meaning
=====================  ========  ==========================================================
``prompt_id``          yes       the prompt the documents answer
``question_id``        yes       the probing question (unique within the prompt)
``feature``            yes       the feature the question probes, e.g. ``Plot``
``document_id``        yes       the target document
``population_id``      yes       the population document it is compared with
``target_answer``      key       the target's short answer; empty/``null``: no answer
``population_answer``  key       the population document's answer; empty/``null``: none
``similarity``         see note  a number in [1, 4] (1 = least, 4 = most similar)
``source``             yes       ``llm`` (a model judge) or ``human`` (one human label)
``question``           no        the question's text (needed to ask people the question)
=====================  ========  ==========================================================

Notes:

* "key": the key (column) must be present, its value may be empty or ``null``; an answer
  of only whitespace counts as no answer. Ids are text (a JSON integer is taken as its
  digits); surrounding whitespace is dropped.
* ``similarity`` is required when both answers are given; when either answer is missing the
  pair is not scored, and a similarity, if given, is ignored (it must still be valid).
* ``llm``: at most one row per (prompt_id, question_id, document_id, population_id).
  ``human``: one row per label, so a pair may have several rows; scoring uses their mean (a
  file may also carry an already averaged, non-integer value in one row).
* The same (prompt_id, question_id) must always name the same feature (and, in the rows
  that give one, the same question text), the same (prompt_id, question_id, document_id)
  the same target answer, and the same (prompt_id, question_id, population_id) the same
  population answer.
* Ids and the feature have at most ``MAX_ID_CHARS`` characters; no text holds a NUL
  character (neither can be stored).

A file is read all or nothing: every problem is reported as ``FILE:LINE: field: message``
(the first 50 listed) in one ``JudgmentFileError``.

Example (JSONL)::

    {"prompt_id": "p1", "question_id": "q3", "feature": "Setting", "document_id": "d07",
     "population_id": "d12", "target_answer": "a lighthouse", "population_answer":
     "a harbour town", "similarity": 2, "source": "llm"}
"""

import csv
import io
import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO, Any

from core import json_text

__all__ = [
    "COLUMNS",
    "MAX_ID_CHARS",
    "MAX_LISTED_PROBLEMS",
    "SIMILARITY_RANGE",
    "SOURCES",
    "Judgment",
    "JudgmentFileError",
    "read_judgments",
]

COLUMNS = (
    "prompt_id",
    "question_id",
    "feature",
    "document_id",
    "population_id",
    "target_answer",
    "population_answer",
    "similarity",
    "source",
)
_REQUIRED_TEXT = ("prompt_id", "question_id", "feature", "document_id", "population_id")
SOURCES = ("llm", "human")
SIMILARITY_RANGE = (1.0, 4.0)
MAX_LISTED_PROBLEMS = 50
MAX_ID_CHARS = 200
# the longest answer or question kept unless the caller says otherwise
DEFAULT_TEXT_MAX = 200_000


@dataclass(frozen=True)
class Judgment:
    """One similarity judgment between a target's answer and a population answer.

    An answer is ``None`` when the document gave none; ``similarity`` is ``None`` only when
    an answer is missing (such a pair is never scored). ``question`` is the question's text
    when the row gave one.
    """

    prompt_id: str
    question_id: str
    feature: str
    document_id: str
    population_id: str
    target_answer: str | None
    population_answer: str | None
    similarity: float | None
    source: str
    question: str | None = None

    @property
    def usable(self) -> bool:
        """Both answers present and judged: the pair counts in the scores."""
        return (
            self.target_answer is not None
            and self.population_answer is not None
            and self.similarity is not None
        )


class JudgmentFileError(ValueError):
    """The file was rejected whole; ``problems`` lists ``FILE:LINE: field: message``."""

    def __init__(self, problems: list[str]):
        listed = problems[:MAX_LISTED_PROBLEMS]
        if len(problems) > len(listed):
            listed = [*listed, f"... and {len(problems) - len(listed)} more problems"]
        super().__init__("\n".join(listed))
        self.problems = problems


def read_judgments(
    file: str | os.PathLike | IO, name: str | None = None, *, text_max: int = DEFAULT_TEXT_MAX
) -> list[Judgment]:
    """Every judgment of a JSONL/CSV file (a path or an open file), in file order.

    ``name`` names the file in problems and decides the format by its extension (default:
    the path's base name, or the file object's ``name``). An answer or question longer
    than ``text_max`` characters is a problem (the import passes ``TEXT_MAX_CHARS``).
    """
    if name is None:
        if isinstance(file, str | os.PathLike):
            name = os.path.basename(os.fspath(file))
        else:
            name = os.path.basename(str(getattr(file, "name", "") or "upload"))
    if name.lower().endswith(".jsonl"):
        rows_of = _jsonl_rows
    elif name.lower().endswith(".csv"):
        rows_of = _csv_rows
    else:
        raise JudgmentFileError([f"{name}:1: file: unsupported file type; use .jsonl or .csv"])
    problems: list[str] = []
    text = _text_of(file, name, problems)
    if text is None:
        raise JudgmentFileError(problems)
    judgments: list[Judgment] = []
    consistency = _Consistency()
    for line, row in rows_of(text, name, problems):
        place = f"{name}:{line}"
        judgment = _judgment(row, place, problems)
        if judgment is not None:
            _check_lengths(judgment, place, problems, text_max)
            consistency.check(judgment, place, problems)
            judgments.append(judgment)
    if problems:
        raise JudgmentFileError(problems)
    return judgments


# --------------------------------------------------------------------------- rows


def _text_of(file: str | os.PathLike | IO, name: str, problems: list[str]) -> str | None:
    try:
        if isinstance(file, str | os.PathLike):
            with open(file, "rb") as handle:
                content = handle.read()
        else:
            content = file.read()
    except OSError as error:
        problems.append(f"{name}:1: file: cannot be read: {error.strerror or error}")
        return None
    if isinstance(content, str):
        return content.removeprefix("\ufeff")
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = content[: error.start].count(b"\n") + 1
        problems.append(f"{name}:{line}: file: not UTF-8 text (byte {error.start})")
        return None


def _jsonl_rows(text: str, name: str, problems: list[str]) -> Iterable[tuple[int, dict]]:
    # Split on "\n" only: str.splitlines() also breaks at U+2028 etc., valid inside JSON strings.
    for line, content in enumerate(text.split("\n"), start=1):
        if not content.strip():
            continue
        try:
            row = json_text.loads(content)
        except json.JSONDecodeError as error:
            problems.append(f"{name}:{line}: row: not valid JSON: {error.msg}")
            continue
        if not isinstance(row, dict):
            problems.append(f"{name}:{line}: row: must be a JSON object")
            continue
        yield line, row


def _csv_rows(text: str, name: str, problems: list[str]) -> Iterable[tuple[int, dict]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None:
        problems.append(f"{name}:1: file: empty (a header row is required)")
        return
    header = [column.strip() for column in header]
    missing = [column for column in COLUMNS if column not in header]
    for column in missing:
        problems.append(f"{name}:1: {column}: missing column")
    if missing:
        return
    line = reader.line_num
    for fields in reader:
        # A quoted field may span lines: a record starts on the line after the previous one.
        start, line = line + 1, reader.line_num
        if not any(field.strip() for field in fields):
            continue
        if len(fields) != len(header):
            problems.append(
                f"{name}:{start}: row: {len(fields)} fields where the header has {len(header)}"
            )
            continue
        yield start, dict(zip(header, fields, strict=True))


# --------------------------------------------------------------------------- validation


def _judgment(row: dict, place: str, problems: list[str]) -> Judgment | None:
    """The row as a judgment, or ``None`` with every problem of the row recorded."""
    before = len(problems)
    ids = {}
    for field in _REQUIRED_TEXT:
        value = row.get(field)
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # numeric ids in JSONL are ids all the same
        if not isinstance(value, str) or not value.strip():
            problems.append(f"{place}: {field}: required, must be a non-empty string")
        elif len(value.strip()) > MAX_ID_CHARS or "\x00" in value:
            problems.append(f"{place}: {field}: at most {MAX_ID_CHARS} characters, no NUL")
        else:
            ids[field] = value.strip()
    answers = {}
    for field in ("target_answer", "population_answer"):
        value = row.get(field)
        if field not in row:
            problems.append(f"{place}: {field}: missing (use null or an empty value for none)")
        elif value is not None and not isinstance(value, str):
            problems.append(f"{place}: {field}: must be a string or null")
        elif isinstance(value, str) and "\x00" in value:
            problems.append(f"{place}: {field}: contains a NUL character")
        # An empty answer is no answer: the document did not answer the question.
        answers[field] = (value.strip() or None) if isinstance(value, str) else None
    question = row.get("question")
    if question is not None and not isinstance(question, str):
        problems.append(f"{place}: question: must be a string or null")
    elif isinstance(question, str) and "\x00" in question:
        problems.append(f"{place}: question: contains a NUL character")
    question = (question.strip() or None) if isinstance(question, str) else None
    source = row.get("source")
    if source not in SOURCES:
        problems.append(f"{place}: source: must be one of {', '.join(SOURCES)}, not {source!r}")
    raw_similarity = row.get("similarity")
    if raw_similarity is None or (isinstance(raw_similarity, str) and not raw_similarity.strip()):
        similarity = None
        if None not in answers.values():
            problems.append(f"{place}: similarity: required when both answers are given")
    else:
        similarity = _similarity(raw_similarity, place, problems)
    if len(problems) > before:
        return None
    return Judgment(
        **ids,
        target_answer=answers["target_answer"],
        population_answer=answers["population_answer"],
        similarity=similarity,
        source=source,
        question=question,
    )


def _check_lengths(judgment: Judgment, place: str, problems: list[str], text_max: int) -> None:
    for field in ("target_answer", "population_answer", "question"):
        text = getattr(judgment, field)
        if text is not None and len(text) > text_max:
            problems.append(
                f"{place}: {field}: the text is {len(text):,} characters; at most "
                f"TEXT_MAX_CHARS ({text_max:,}) are accepted"
            )


def _similarity(value: Any, place: str, problems: list[str]) -> float | None:
    """A given similarity as a number in [1, 4] (from a JSON number or CSV text), or ``None``
    with the problem recorded."""
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    elif isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    else:
        number = None
    low, high = SIMILARITY_RANGE
    if number is None or not math.isfinite(number) or not low <= number <= high:
        problems.append(f"{place}: similarity: must be a number in [1, 4], not {value!r}")
        return None
    return number


class _Consistency:
    """The cross-row rules: one feature per question, one answer per document and question,
    one ``llm`` row per pair. Remembers where each value was first seen."""

    def __init__(self) -> None:
        self.features: dict[tuple[str, str], tuple[str, str]] = {}
        self.questions: dict[tuple[str, str], tuple[str, str]] = {}
        self.targets: dict[tuple[str, str, str], tuple[str | None, str]] = {}
        self.population: dict[tuple[str, str, str], tuple[str | None, str]] = {}
        self.llm_pairs: dict[tuple[str, str, str, str], str] = {}

    @staticmethod
    def _same(
        seen: dict, key: tuple, value: Any, field: str, place: str, problems: list[str]
    ) -> None:
        if key not in seen:
            seen[key] = (value, place)
        elif seen[key][0] != value:
            first_value, first_place = seen[key]
            problems.append(
                f"{place}: {field}: {value!r} differs from {first_value!r} at {first_place}"
            )

    def check(self, judgment: Judgment, place: str, problems: list[str]) -> None:
        question = (judgment.prompt_id, judgment.question_id)
        self._same(self.features, question, judgment.feature, "feature", place, problems)
        if judgment.question is not None:  # rows may leave the text to other rows
            self._same(self.questions, question, judgment.question, "question", place, problems)
        self._same(
            self.targets,
            (*question, judgment.document_id),
            judgment.target_answer,
            "target_answer",
            place,
            problems,
        )
        self._same(
            self.population,
            (*question, judgment.population_id),
            judgment.population_answer,
            "population_answer",
            place,
            problems,
        )
        if judgment.source == "llm":
            pair = (*question, judgment.document_id, judgment.population_id)
            if pair in self.llm_pairs:
                problems.append(
                    f"{place}: source: a second llm judgment of this pair "
                    f"(first at {self.llm_pairs[pair]})"
                )
            else:
                self.llm_pairs[pair] = place
