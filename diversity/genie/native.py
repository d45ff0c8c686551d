"""GENIE's own record layouts, read as they come out of its pipeline.

The GENIE repository (Namuduri et al., github.com/AlliteraryAlligator/GENIE) writes pandas
frames as JSON lines. Three layouts are read here, each recognised by its columns:

* the **similarity** file (``src/novelty_calculation/similarity.py``): ``Prompt``,
  ``Question``, ``Feature``, ``DocID_1``, ``Model_1``, ``Answer_1``, ``DocID_2``, ``Model_2``,
  ``Answer_2``, ``Similarity`` and optionally ``SimilarityJudgment`` (the judge's text,
  ignored) — one row per (target answer, population answer) pair;
* an **answers** file (``src/novelty_calculation/answer.py``): ``Prompt``, ``DocID``,
  ``Model``, ``Question``, ``Answer`` and optionally ``Feature``;
* the **questions** file (``configs/questions.json``): ``Prompt``, ``Question``, ``Feature``.

How a similarity row becomes a ``Judgment`` (FORMATS.md, "GENIE's own files"):

* a document is (``Prompt``, ``Model``, ``DocID``): DocIDs repeat across models. The
  platform's ids are derived, stably, from the texts: ``prompt_id`` = ``p-`` + the first 16
  hex digits of SHA-256 of the prompt, ``question_id`` likewise with ``q-`` from the
  question, ``document_id`` = ``MODEL|DOCID`` (``d-`` + a digest when longer than 200
  characters), ``population_id`` from ``Model_2`` and ``DocID_2`` the same way. The prompt
  text is kept, and ``Model_1``/``DocID_1`` as ``source_model``/``source_document_id``;
* ``Similarity`` counts only when it is 1, 2, 3 or 4 (a JSON number, or text of one), as
  ``compute_genie`` keeps ``Similarity.isin([1, 2, 3, 4])``: 0 (the judge's "unspecified"),
  any other number, an empty/``null``/missing value and unparsable text make a pair that is
  **left out** — counted per reason, never a problem;
* an answer GENIE's pipeline excludes (``EXCLUDED_ANSWERS``, its judge step's list:
  ``None``, ``None.``, ``Unspecified``, ``Unspecified.``, ``Not specified``,
  ``Not applicable``, ``Not applicable.``, ``N/A``, compared with the answer as written,
  case- and space-sensitive, like GENIE's) or an empty one is no answer: such a pair is left
  out (GENIE's judge never scores it). Any other text — ``N/A.``, `` None`` — reaches
  GENIE's judge, and its pair counts when the judge scored it 1-4, as in ``compute_genie``.

Pure Python, no Django.
"""

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ANSWER_COLUMNS",
    "EXCLUDED_ANSWERS",
    "LEFT_OUT_REASONS",
    "QUESTION_COLUMNS",
    "SIMILARITY_COLUMNS",
    "GenieAnswer",
    "answer_of",
    "document_key",
    "genie_similarity",
    "layout_of",
    "model_and_method",
    "prompt_id_of",
    "question_id_of",
]

SIMILARITY_COLUMNS = (
    "Prompt",
    "Question",
    "Feature",
    "DocID_1",
    "Model_1",
    "Answer_1",
    "DocID_2",
    "Model_2",
    "Answer_2",
    "Similarity",
)
ANSWER_COLUMNS = ("Prompt", "DocID", "Model", "Question", "Answer")
QUESTION_COLUMNS = ("Prompt", "Question", "Feature")
# exactly the list of GENIE's judge step (src/novelty_calculation/similarity.py,
# ``exclude_ans``), compared with the answer as written: "N/A." or " None" reach its judge
EXCLUDED_ANSWERS = frozenset(
    {
        "None",
        "None.",
        "Unspecified",
        "Unspecified.",
        "Not specified",
        "Not applicable",
        "N/A",
        "Not applicable.",
    }
)
GENIE_SIMILARITIES = (1.0, 2.0, 3.0, 4.0)
# why a pair with both answers was left out of the scores (or ``no_answer``)
LEFT_OUT_REASONS = ("no_answer", "zero", "other_number", "empty", "unparsable")
MAX_ID_CHARS = 200


def layout_of(columns: Iterable[str]) -> str:
    """``genie-similarity``, ``genie-answers``, ``genie-questions`` or ``platform``, by the
    columns (a CSV header, or the keys of a JSON file's first row)."""
    columns = set(columns)
    if {"DocID_1", "DocID_2", "Answer_1", "Answer_2"} <= columns:
        return "genie-similarity"
    if {"DocID", "Answer", "Prompt"} <= columns:
        return "genie-answers"
    if {"Prompt", "Question", "Feature"} <= columns and "prompt_id" not in columns:
        return "genie-questions"
    return "platform"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def prompt_id_of(prompt: str) -> str:
    return f"p-{_digest(prompt)}"


def question_id_of(question: str) -> str:
    return f"q-{_digest(question)}"


def document_key(model: str, document: str) -> str:
    """The platform id of GENIE's document (``Model``, ``DocID``) within its prompt:
    ``MODEL|DOCID``, with a ``|`` or ``\\`` in the model's name escaped by a ``\\`` so that
    two documents never share one (model ``a|b`` with DocID ``c``, model ``a`` with DocID
    ``b|c``)."""
    escaped = model.replace("\\", "\\\\").replace("|", "\\|")
    key = f"{escaped}|{document}"
    return key if len(key) <= MAX_ID_CHARS else f"d-{_digest(key)}"


def answer_of(value: Any) -> str | None:
    """An answer's text as written, or ``None`` for no answer: empty (or only spaces),
    ``null``, or one of GENIE's ``EXCLUDED_ANSWERS`` (GENIE compares the text as written)."""
    if not isinstance(value, str) or value in EXCLUDED_ANSWERS or not value.strip():
        return None
    return value


def similarity_of(value: Any) -> tuple[float | None, str | None]:
    """(similarity, None) when ``value`` is 1, 2, 3 or 4; else (None, the reason it is left
    out: ``zero``, ``other_number``, ``empty`` or ``unparsable``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None, "empty"
    if isinstance(value, bool):
        return None, "unparsable"
    if isinstance(value, str):
        if not value.strip():
            return None, "empty"
        try:
            value = float(value)
        except ValueError:
            return None, "unparsable"
        if math.isnan(value):
            return None, "unparsable"
    if not isinstance(value, int | float):
        return None, "unparsable"
    if value in GENIE_SIMILARITIES:
        return float(value), None
    return None, ("zero" if value == 0 else "other_number")


def model_and_method(
    name: str, table: Mapping[str, tuple[str, str | None]] | None = None
) -> tuple[str, str | None]:
    """A GENIE model name as (model, method): the table's entry when it has one, else the
    text before and after the first ``+`` (``gpt-4o+persona`` -> ``gpt-4o``, ``persona``),
    else the name itself with no method."""
    if table and name in table:
        return table[name]
    model, plus, method = name.partition("+")
    if plus and model.strip() and method.strip():
        return model.strip(), method.strip()
    return name, None


def text_field(
    row: dict, field: str, place: str, problems: list[str], *, number_ok: bool = False
) -> str | None:
    """A required non-empty text, kept as written (or, with ``number_ok``, a JSON integer: a
    DocID)."""
    if field not in row:
        problems.append(f"{place}: {field}: missing")
        return None
    value = row[field]
    if number_ok and isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    elif number_ok and isinstance(value, float) and value.is_integer():
        value = str(int(value))  # pandas writes an integer column with gaps as floats
    if not isinstance(value, str) or not value.strip():
        kind = "a non-empty string or a whole number" if number_ok else "a non-empty string"
        problems.append(f"{place}: {field}: required, must be {kind}")
        return None
    if "\x00" in value:
        problems.append(f"{place}: {field}: contains a NUL character")
        return None
    return value  # as written: GENIE groups by the exact texts (a trailing space included)


def text_or_none(value: Any, field: str, place: str, problems: list[str]) -> str | None:
    """``value`` when it is text without a NUL character; ``None`` for null, and for
    anything else with its problem recorded."""
    if value is None:
        return None
    if not isinstance(value, str):
        problems.append(f"{place}: {field}: must be a string or null")
        return None
    if "\x00" in value:
        problems.append(f"{place}: {field}: contains a NUL character")
        return None
    return value


def _answer_field(row: dict, field: str, place: str, problems: list[str]) -> str | None:
    if field not in row:
        problems.append(f"{place}: {field}: missing (use null or an empty value for none)")
        return None
    value = row[field]
    if isinstance(value, float) and math.isnan(value):
        return None  # pandas' empty cell
    return answer_of(text_or_none(value, field, place, problems))


def genie_similarity(
    row: dict,
    place: str,
    problems: list[str],
    left_out: dict[str, int],
    models: Mapping[str, tuple[str, str | None]] | None = None,
) -> dict | None:
    """The ``Judgment`` fields of one similarity row, or ``None`` with its problems recorded.
    A pair left out is counted in ``left_out`` under its reason."""
    before = len(problems)
    prompt = text_field(row, "Prompt", place, problems)
    question = text_field(row, "Question", place, problems)
    feature = text_field(row, "Feature", place, problems)
    ids = {
        field: text_field(row, field, place, problems, number_ok=field.startswith("DocID"))
        for field in ("DocID_1", "Model_1", "DocID_2", "Model_2")
    }
    target = _answer_field(row, "Answer_1", place, problems)
    member = _answer_field(row, "Answer_2", place, problems)
    method_column = row.get("Method_1")
    if method_column is not None and not isinstance(method_column, str):
        problems.append(f"{place}: Method_1: must be a string or null")
    if len(problems) > before:
        return None
    similarity, reason = similarity_of(row.get("Similarity"))
    if target is None or member is None:
        similarity, reason = None, "no_answer"
    if reason is not None:
        left_out[reason] = left_out.get(reason, 0) + 1
    model, method = model_and_method(ids["Model_1"], models)
    if isinstance(method_column, str) and method_column.strip():
        method = method_column.strip()
    return {
        "prompt_id": prompt_id_of(prompt),
        "question_id": question_id_of(question),
        "feature": feature,
        "document_id": document_key(ids["Model_1"], ids["DocID_1"]),
        "population_id": document_key(ids["Model_2"], ids["DocID_2"]),
        "target_answer": target,
        "population_answer": member,
        "similarity": similarity,
        "source": "llm",
        "question": question,
        "prompt": prompt,
        "model": model,
        "method": method,
        "source_model": ids["Model_1"],
        "source_document_id": ids["DocID_1"],
    }


@dataclass(frozen=True)
class GenieAnswer:
    """One row of a GENIE answers file: a document's answer to one question."""

    prompt: str
    document_id: str
    model: str
    question: str
    answer: str | None
    feature: str | None
    place: str


def genie_answer(row: dict, place: str, problems: list[str]) -> GenieAnswer | None:
    before = len(problems)
    values = {
        field: text_field(row, field, place, problems, number_ok=field == "DocID")
        for field in ("Prompt", "DocID", "Model", "Question")
    }
    answer = _answer_field(row, "Answer", place, problems)
    feature = row.get("Feature")
    if feature is not None and not isinstance(feature, str):
        problems.append(f"{place}: Feature: must be a string or null")
    if len(problems) > before:
        return None
    return GenieAnswer(
        values["Prompt"],
        values["DocID"],
        values["Model"],
        values["Question"],
        answer,
        feature if isinstance(feature, str) and feature.strip() else None,
        place,
    )


def genie_question(row: dict, place: str, problems: list[str]) -> tuple[str, str, str] | None:
    """(prompt, question, feature) of one row of GENIE's questions file."""
    before = len(problems)
    values = [text_field(row, field, place, problems) for field in QUESTION_COLUMNS]
    return None if len(problems) > before else tuple(values)
