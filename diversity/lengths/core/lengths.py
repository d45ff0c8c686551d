"""How long each model answers (ANALYSIS.md, "Length statistics").

A response's length is counted two ways: in characters (Unicode code points of the text as
stored, whitespace included) and in words (the runs of non-whitespace, ``str.split``). Per
model: how many responses, the mean, the median and the ``tail``-th percentile of each
(numpy's linear interpolation between order statistics). Per query: its responses' mean and
median length in characters, and which model answers it at the greatest mean length (the
first by name on a tie)."""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

DEFAULT_TAIL = 90


@dataclass(frozen=True)
class Response:
    query: str
    model: str
    text: str


def words(text: str) -> int:
    return len(text.split())


def _summary(values: list[int], tail: int) -> dict:
    array = np.asarray(values, dtype=np.float64)
    return {
        "mean": float(array.mean()),
        "median": float(np.median(array)),
        "tail": float(np.percentile(array, tail)),
    }


def length_report(responses: Iterable[Response], tail: int = DEFAULT_TAIL) -> dict:
    """The figures of the module doc for ``responses``; ``tail`` in 1–99."""
    if not 1 <= tail <= 99:
        raise ValueError(f"tail must be a percentile from 1 to 99, not {tail}")
    chars_by_model: dict[str, list[int]] = defaultdict(list)
    words_by_model: dict[str, list[int]] = defaultdict(list)
    chars_by_query: dict[str, list[int]] = defaultdict(list)
    chars_by_query_model: dict[tuple[str, str], list[int]] = defaultdict(list)
    for response in responses:
        length = len(response.text)
        chars_by_model[response.model].append(length)
        words_by_model[response.model].append(words(response.text))
        chars_by_query[response.query].append(length)
        chars_by_query_model[response.query, response.model].append(length)
    per_model = {
        model: {
            "n_responses": len(chars_by_model[model]),
            "characters": _summary(chars_by_model[model], tail),
            "words": _summary(words_by_model[model], tail),
        }
        for model in sorted(chars_by_model)
    }
    per_query = {}
    for query, lengths in chars_by_query.items():
        means = {
            model: float(np.mean(chars_by_query_model[query, model]))
            for model in sorted(chars_by_model)
            if (query, model) in chars_by_query_model
        }
        per_query[query] = {
            "n_responses": len(lengths),
            "mean_characters": float(np.mean(lengths)),
            "median_characters": float(np.median(lengths)),
            "longest_model": _longest(means),
        }
    all_chars = [length for lengths in chars_by_model.values() for length in lengths]
    return {
        "settings": {"tail": tail},
        "n_responses": len(all_chars),
        "n_models": len(per_model),
        "n_queries": len(per_query),
        "characters": _summary(all_chars, tail) if all_chars else None,
        "per_model": per_model,
        "per_query": per_query,
    }


def _longest(means: dict[str, float]) -> str:
    """The model of the greatest mean, the first by name among equal ones."""
    greatest = max(means.values())
    return next(model for model in sorted(means) if means[model] == greatest)
