"""Genie similarity judgments: the record shape and the files that carry them.

Genie probes each generated document with short questions, each tied to one *feature* (Plot,
Agent, Setting, Style, Perspective, Structure, ...), and asks how similar a *target*
document's short answer is to the answer of each document of a *population* sample.

File format
-----------
UTF-8; ``.jsonl``, ``.json`` or ``.csv`` (``diversity.genie.rows``; in CSV an empty cell is
``null``). The layout is recognised by its columns: GENIE's own similarity file, or a GENIE
answers file with its population's (``diversity.genie.native``), else the platform's own
layout below. Extra columns/keys are ignored. One row per judgment of one (target answer,
population answer) pair:

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
``prompt``             no        the prompt's text
``model``              no        the model that wrote the target document
``method``             no        how it was prompted or decoded (else from the model name)
=====================  ========  ==========================================================

Notes:

* "key": the key (column) must be present, its value may be empty or ``null``; an answer
  of only whitespace counts as no answer. Ids are text (a JSON integer is taken as its
  digits); surrounding whitespace is dropped.
* ``similarity`` is required when both answers are given; when either answer is missing the
  pair is not scored, and a similarity, if given, is ignored (it must still be valid).
* ``llm``: at most one row per (prompt_id, question_id, document_id, population_id) in
  this layout (GENIE's similarity file may repeat a pair: each row is kept and counted,
  ``JudgmentFile.repeated_pairs``, as ``compute_genie`` averages over rows).
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

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any

from core.problem_lists import MAX_LISTED_PROBLEMS, RejectedWhole
from diversity.genie import native, native_pairs
from diversity.genie.core.judgments import Judgment
from diversity.genie.rows import file_name_of, read_rows

__all__ = [
    "COLUMNS",
    "MAX_ID_CHARS",
    "MAX_LISTED_PROBLEMS",
    "SIMILARITY_RANGE",
    "SOURCES",
    "Judgment",
    "JudgmentFile",
    "JudgmentFileError",
    "read_judgment_file",
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
MAX_ID_CHARS = 200
# the longest answer or question kept unless the caller says otherwise
DEFAULT_TEXT_MAX = 200_000


class JudgmentFileError(RejectedWhole):
    """The file was rejected whole; ``problems`` lists ``FILE:LINE: field: message``."""


@dataclass
class JudgmentFile:
    """What a file holds: its judgments in file order, its layout, and how many pairs were
    left out of the scores, by reason (``native.LEFT_OUT_REASONS``; GENIE layouts only)."""

    judgments: list[Judgment]
    layout: str
    left_out: dict[str, int] = dataclasses.field(default_factory=dict)
    # rows of GENIE's similarity file that judge a pair an earlier row judged (k rows of one
    # pair count k - 1): kept, each judgment one term of the pair's question mean, as
    # compute_genie's mean over rows
    repeated_pairs: int = 0


Models = Mapping[str, tuple[str, str | None]]


def read_judgments(
    file: str | os.PathLike | IO, name: str | None = None, *, text_max: int = DEFAULT_TEXT_MAX
) -> list[Judgment]:
    """Every judgment of a file (a path or an open file), in file order.

    ``name`` names the file in problems and decides the format by its extension (default:
    the path's base name, or the file object's ``name``). An answer, question or prompt
    longer than ``text_max`` characters is a problem (the import passes ``TEXT_MAX_CHARS``).
    """
    return read_judgment_file(file, name, text_max=text_max).judgments


def read_judgment_file(
    file: str | os.PathLike | IO,
    name: str | None = None,
    *,
    text_max: int = DEFAULT_TEXT_MAX,
    models: Models | None = None,
    population: tuple[str | os.PathLike | IO, str | None] | None = None,
    questions: tuple[str | os.PathLike | IO, str | None] | None = None,
) -> JudgmentFile:
    """The judgments of a file in any layout, all or nothing (``JudgmentFileError``).

    ``models`` maps a model name to (model, method) (``native.model_and_method``);
    ``population`` (file, name) is the population's GENIE answers file, required when
    ``file`` is a GENIE answers file (its documents are the targets); ``questions`` (file,
    name) is GENIE's questions file: it gives the feature of answers that carry none and
    must agree with every feature given.
    """
    name = file_name_of(file, name)
    problems: list[str] = []
    found = read_rows(file, name, problems)
    if found is None:
        raise JudgmentFileError(problems)
    columns = (
        found.columns if found.columns is not None else list(found.rows[0][1]) if found.rows else []
    )
    layout = native.layout_of(columns)
    features = (
        native_pairs.question_features(questions, problems) if questions is not None else None
    )
    left_out: dict[str, int] = {}
    placed: list[tuple[str, Judgment]] = []
    if layout == "platform":
        placed = _platform(found, name, problems, models)
    elif layout == "genie-similarity":
        placed = _genie_similarities(found, name, problems, left_out, models)
    elif layout == "genie-answers":
        if population is None:
            problems.append(
                f"{name}:1: file: a GENIE answers file holds the target documents; give the "
                "population's answers file too"
            )
        else:
            placed = [
                (place, Judgment(**fields))
                for place, fields in native_pairs.answer_pairs(
                    found, name, population, problems, left_out, models, features
                )
            ]
    else:
        problems.append(
            f"{name}:1: file: a GENIE questions file goes with a similarity or answers file"
        )
    if features is not None:
        _check_features(placed, features, problems)
    consistency = _Consistency(repeats_allowed=layout == "genie-similarity")
    for place, judgment in placed:
        _check_lengths(judgment, place, problems, text_max)
        consistency.check(judgment, place, problems)
    if problems:
        raise JudgmentFileError(_by_line(problems))
    return JudgmentFile(
        [judgment for _, judgment in placed], layout, left_out, consistency.repeated_pairs
    )


def _by_line(problems: list[str]) -> list[str]:
    """Problems by file (in first-seen order), then line; stable within a line."""
    files: dict[str, int] = {}

    def key(problem: str) -> tuple[int, int]:
        file, _, rest = problem.partition(":")
        line = rest.partition(":")[0]
        return files.setdefault(file, len(files)), int(line) if line.isdigit() else 0

    return sorted(problems, key=key)


def _platform(found, name, problems, models) -> list[tuple[str, Judgment]]:
    if native_pairs.missing_columns(found, COLUMNS, name, problems):
        return []
    placed = []
    for line, row in found.rows:
        place = f"{name}:{line}"
        judgment = _judgment(row, place, problems, models)
        if judgment is not None:
            placed.append((place, judgment))
    return placed


def _genie_similarities(found, name, problems, left_out, models) -> list[tuple[str, Judgment]]:
    if native_pairs.missing_columns(found, native.SIMILARITY_COLUMNS, name, problems):
        return []
    placed = []
    for line, row in found.rows:
        place = f"{name}:{line}"
        fields = native.genie_similarity(row, place, problems, left_out, models)
        if fields is not None:
            placed.append((place, Judgment(**fields)))
    return placed


def _check_features(placed, features: dict[tuple[str, str], str], problems: list[str]) -> None:
    for place, judgment in placed:
        if judgment.prompt is None or judgment.question is None:
            continue
        known = features.get((judgment.prompt, judgment.question))
        if known is not None and known != judgment.feature:
            problems.append(
                f"{place}: Feature: {judgment.feature!r}, but the questions file says {known!r}"
            )


# --------------------------------------------------------------------------- validation


def _optional_text(row: dict, field: str, place: str, problems: list[str]) -> str | None:
    """The field's text, stripped; ``None`` when absent, null, empty or refused."""
    value = native.text_or_none(row.get(field), field, place, problems)
    return (value.strip() or None) if value is not None else None


def _judgment(
    row: dict, place: str, problems: list[str], models: Models | None = None
) -> Judgment | None:
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
    question = _optional_text(row, "question", place, problems)
    prompt = _optional_text(row, "prompt", place, problems)
    source_model = _optional_text(row, "model", place, problems)
    method = _optional_text(row, "method", place, problems)
    model = None
    if source_model is not None:
        if len(source_model) > MAX_ID_CHARS:
            problems.append(f"{place}: model: at most {MAX_ID_CHARS} characters")
        model, mapped = native.model_and_method(source_model, models)
        method = method or mapped
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
        prompt=prompt,
        model=model,
        method=method,
        source_model=source_model,
    )


def _check_lengths(judgment: Judgment, place: str, problems: list[str], text_max: int) -> None:
    for field in ("target_answer", "population_answer", "question", "prompt"):
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
    one ``llm`` row per pair — except in GENIE's similarity file (``repeats_allowed``), where
    a repeated pair is counted (``repeated_pairs``) and kept, as ``compute_genie`` keeps it.
    Remembers where each value was first seen."""

    def __init__(self, *, repeats_allowed: bool = False) -> None:
        self.features: dict[tuple[str, str], tuple[str, str]] = {}
        self.questions: dict[tuple[str, str], tuple[str, str]] = {}
        self.targets: dict[tuple[str, str, str], tuple[str | None, str]] = {}
        self.population: dict[tuple[str, str, str], tuple[str | None, str]] = {}
        self.llm_pairs: dict[tuple[str, str, str, str], str] = {}
        self.repeats_allowed = repeats_allowed
        self.repeated_pairs = 0

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
            if pair in self.llm_pairs and self.repeats_allowed:
                self.repeated_pairs += 1
            elif pair in self.llm_pairs:
                problems.append(
                    f"{place}: source: a second llm judgment of this pair "
                    f"(first at {self.llm_pairs[pair]})"
                )
            else:
                self.llm_pairs[pair] = place
