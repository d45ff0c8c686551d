"""Human category norms: what people name first for a category, and how concentrated that is.

A norm is the modal answer, its share of first responses, and the number of answers given by at
least 5 % of people. Two ways in:

* ``human_norms`` computes them from human answers the platform collected (answers as counted,
  i.e. already normalised; the mode's ties go to the answer that occurs first);
* ``read_norms_file`` reads a published table in the shape of ``humannorms.json``::

      {"source": "...", "per_category": [{"category": "tree", "human_modal": "oak",
        "human_modal_first": 0.31, "human_n_ge5": 5, "model_modal": "oak",
        "model_modal_share": 0.937, "model_n_ge5": 1, "wording_mismatch": false}, ...]}

  The ``model_*`` columns are the model field *as published* with the norms (some categories
  were run with the norms' exact wording, flagged ``wording_mismatch``); they are kept apart
  from the human norms so that the platform can show them next to the field it computes.
"""

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from core.tabular import NOT_JSON, ProblemList, json_document
from diversity.census.core.categories import (
    FREQUENT_SHARE,
    frequent_answer_count,
    modal_answer,
    modal_share,
)
from diversity.census.sources import CensusInputError, read_text, source_name

__all__ = ["MAX_TEXT_CHARS", "CategoryNorm", "PublishedNorms", "human_norms", "read_norms_file"]

MAX_TEXT_CHARS = 200  # a category or answer, as stored


@dataclass(frozen=True)
class CategoryNorm:
    """How concentrated one population's answers to a category are."""

    category: str
    modal: str
    modal_share: float  # share of (first) responses that are the modal answer
    n_ge5: int  # answers given by at least 5 % of the population


@dataclass(frozen=True)
class PublishedNorms:
    """A norms file: the human norms and, apart, the model field published with them."""

    source: str
    human: dict[str, CategoryNorm]
    published_model: dict[str, CategoryNorm]
    wording_mismatch: frozenset[str]  # categories whose model run used the norms' wording


def human_norms(
    answers_by_category: Mapping[str, Sequence[str]], share: float = FREQUENT_SHARE
) -> dict[str, CategoryNorm]:
    """Norms from each person's (first) answer per category; empty categories are left out.

    modal = most frequent answer (ties: first to occur); modal_share = its count / answers;
    n_ge5 = number of distinct answers with count / answers >= ``share``.
    """
    return {
        category: CategoryNorm(
            category=category,
            modal=modal_answer(answers),
            modal_share=modal_share(answers),
            n_ge5=frequent_answer_count(answers, share),
        )
        for category, answers in answers_by_category.items()
        if len(answers) > 0
    }


def read_norms_file(source: str | os.PathLike | IO, name: str | None = None) -> PublishedNorms:
    """Read a norms JSON file; ``CensusInputError`` lists every problem as ``FILE: path: ...``."""
    name = name or source_name(source)
    problems: list[str] = []
    text = read_text(source, name, problems)
    if text is None:
        raise CensusInputError(problems)
    document = json_document(text, ProblemList(name, problems), allow_constants=True)
    if document is NOT_JSON:
        raise CensusInputError(problems)
    rows = document.get("per_category") if isinstance(document, dict) else None
    if not isinstance(rows, list):
        raise CensusInputError([f"{name}: per_category: missing or not a list"])

    human: dict[str, CategoryNorm] = {}
    model: dict[str, CategoryNorm] = {}
    mismatched = set()
    for index, row in enumerate(rows):
        place = f"{name}: per_category[{index}]"
        if not isinstance(row, dict):
            problems.append(f"{place}: must be an object")
            continue
        before = len(problems)
        category = _text(row, "category", place, problems)
        if category in human:
            problems.append(f"{place}.category: {category!r} appears twice")
        human_norm = _norm(row, category, "human", "human_modal_first", place, problems)
        model_norm = _norm(row, category, "model", "model_modal_share", place, problems)
        if human_norm is None or model_norm is None or len(problems) > before:
            continue
        human[category] = human_norm
        model[category] = model_norm
        if row.get("wording_mismatch") is True:
            mismatched.add(category)
    if problems:
        raise CensusInputError(problems)
    return PublishedNorms(
        source=str(document.get("source") or name),
        human=human,
        published_model=model,
        wording_mismatch=frozenset(mismatched),
    )


def _text(row: dict, key: str, place: str, problems: list[str]) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{place}.{key}: must be a non-empty string")
        return ""
    if len(value) > MAX_TEXT_CHARS or "\x00" in value:
        problems.append(f"{place}.{key}: must be at most {MAX_TEXT_CHARS} characters, no NUL")
        return ""
    return value


def _norm(
    row: dict, category: str, prefix: str, share_key: str, place: str, problems: list[str]
) -> CategoryNorm | None:
    """The norm in the row's ``{prefix}_modal``, share and ``{prefix}_n_ge5`` columns, or
    ``None`` with the problems recorded."""
    before = len(problems)
    modal = _text(row, f"{prefix}_modal", place, problems)
    share: Any = row.get(share_key)
    if (
        not isinstance(share, int | float)
        or isinstance(share, bool)
        or not math.isfinite(share)
        or not 0 <= share <= 1
    ):
        problems.append(f"{place}.{share_key}: must be a number in [0, 1], not {share!r}")
    count: Any = row.get(f"{prefix}_n_ge5")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        problems.append(f"{place}.{prefix}_n_ge5: must be an integer >= 0, not {count!r}")
    if len(problems) > before:
        return None
    return CategoryNorm(category, modal, float(share), count)
