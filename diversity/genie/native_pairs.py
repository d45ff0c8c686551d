"""GENIE's answers and questions files: the pairs to be judged, and the features.

``answer_pairs`` forms what GENIE's ``make_pairs`` (``src/novelty_calculation/
make_pairs.py``) forms from a target and a population answers file: every (target answer,
population answer) pair of the same prompt and question, where a target document that is
also in the population (the same ``Prompt``, ``Model``, ``DocID``) is left out. The pairs carry
no similarity yet — they are what people (a ``similarity`` batch) or a judge will score.
``question_features`` reads GENIE's questions file (``configs/questions.json``). Pure
Python, no Django.
"""

import os
from collections.abc import Mapping
from typing import IO

from core.tabular import MISSING_COLUMN
from diversity.genie import native
from diversity.genie.rows import FileRows, file_name_of, read_rows

__all__ = ["answer_pairs", "missing_columns", "question_features"]

Models = Mapping[str, tuple[str, str | None]]


def missing_columns(found: FileRows, required, name: str, problems: list[str]) -> bool:
    """Whether a CSV header lacks a required column (each one a problem of line 1)."""
    if found.columns is None:
        return False
    missing = [column for column in required if column not in found.columns]
    problems.extend(f"{name}:1: {column}: {MISSING_COLUMN}" for column in missing)
    return bool(missing)


def _answers(found: FileRows, name: str, problems: list[str]) -> list[native.GenieAnswer]:
    if missing_columns(found, native.ANSWER_COLUMNS, name, problems):
        return []
    answers = []
    for line, row in found.rows:
        answer = native.genie_answer(row, f"{name}:{line}", problems)
        if answer is not None:
            answers.append(answer)
    return answers


def answer_pairs(
    found: FileRows,
    name: str,
    population: tuple[str | os.PathLike | IO, str | None],
    problems: list[str],
    left_out: dict[str, int],
    models: Models | None,
    features: dict[tuple[str, str], str] | None,
) -> list[tuple[str, dict]]:
    """(place, ``Judgment`` fields) of every pair, the place being the target's row. A
    target's feature is its own ``Feature``, else the questions file's."""
    targets = _answers(found, name, problems)
    population_file, population_name = population
    population_name = file_name_of(population_file, population_name)
    population_rows = read_rows(population_file, population_name, problems)
    if population_rows is None:
        return []
    members = _answers(population_rows, population_name, problems)
    in_population = {(a.prompt, a.model, a.document_id) for a in members}
    by_question: dict[tuple[str, str], list[native.GenieAnswer]] = {}
    for member in members:
        by_question.setdefault((member.prompt, member.question), []).append(member)
    placed = []
    for target in targets:
        if (target.prompt, target.model, target.document_id) in in_population:
            left_out["target_in_population"] = left_out.get("target_in_population", 0) + 1
            continue
        feature = target.feature
        if feature is None and features is not None:
            feature = features.get((target.prompt, target.question))
        if feature is None:
            problems.append(
                f"{target.place}: Feature: none given, and no questions file names this question"
            )
            continue
        model, method = native.model_and_method(target.model, models)
        for member in by_question.get((target.prompt, target.question), []):
            if target.answer is None or member.answer is None:
                left_out["no_answer"] = left_out.get("no_answer", 0) + 1
            fields = {
                "prompt_id": native.prompt_id_of(target.prompt),
                "question_id": native.question_id_of(target.question),
                "feature": feature,
                "document_id": native.document_key(target.model, target.document_id),
                "population_id": native.document_key(member.model, member.document_id),
                "target_answer": target.answer,
                "population_answer": member.answer,
                "similarity": None,
                "source": "llm",
                "question": target.question,
                "prompt": target.prompt,
                "model": model,
                "method": method,
                "source_model": target.model,
                "source_document_id": target.document_id,
            }
            placed.append((target.place, fields))
    return placed


def question_features(
    questions: tuple[str | os.PathLike | IO, str | None], problems: list[str]
) -> dict[tuple[str, str], str]:
    """(prompt, question) -> feature, from GENIE's questions file."""
    file, name = questions
    name = file_name_of(file, name)
    found = read_rows(file, name, problems)
    if found is None:
        return {}
    if missing_columns(found, native.QUESTION_COLUMNS, name, problems):
        return {}
    features: dict[tuple[str, str], str] = {}
    for line, row in found.rows:
        place = f"{name}:{line}"
        entry = native.genie_question(row, place, problems)
        if entry is None:
            continue
        prompt, question, feature = entry
        if features.setdefault((prompt, question), feature) != feature:
            problems.append(
                f"{place}: Feature: {feature!r} differs from {features[(prompt, question)]!r} "
                "given before for this question"
            )
    return features
