"""The rows of a model-score file, checked one at a time (the rules are those of
``analysis.services.scores``, FORMATS.md "Model scores").

:class:`RowValidator` takes each row as ``core.tabular`` reads it, records every problem
with its line, and keeps one small entry per source (:class:`SourceEntry`) and per distinct
(source, response/item) (:class:`ScoreEntry`): what the database look-ups and the write of
``analysis.services.scores`` need, without holding the file. Nothing here queries the
database.
"""

import json
import math
from dataclasses import dataclass, field
from typing import Any

from analysis.models import ScoreKind, ScoreSource
from annotation.kinds import get_kind
from annotation.models import Batch, Item
from core import tabular
from core.tabular import Problems

REQUIRED = ("source", "kind")  # and score or score_distribution
DISTRIBUTION = "score_distribution"
# Scores further from 0 than this are refused: the analysis squares and sums them (Pearson's
# r, standardising), and at about 1e154 a square overflows to infinity — the statistics of
# the whole source then come out undefined, or the job fails. No real score (a reward, a
# log-probability, a perplexity) comes near it.
MAX_SCORE_MAGNITUDE = 1e100
DISTRIBUTION_TOLERANCE = 1e-6
# A response's distribution is over the labels of the kind that rates single responses
# (a response keeps its scores across batches, so no batch's kind can say which labels).
RESPONSE_KIND = "absolute"
KINDS = tuple(ScoreKind.values)
TARGET_KEYS = ("response_id", "item_id")
TRUE_WORDS = {"true", "1", "yes"}
FALSE_WORDS = {"false", "0", "no"}
RESPONSE, ITEM = "response_id", "item_id"


@dataclass
class SourceEntry:
    kind: str
    line: int
    pk: int | None = None
    stored_kind: str | None = None
    new_scores: int = 0


@dataclass
class ScoreEntry:
    value: float
    line: int
    distribution: list[float] | None = None
    target_pk: int | None = None
    stored: bool = False  # the identical value is already stored


@dataclass
class ScorePlan:
    name: str
    sources: dict[str, SourceEntry]
    # (source name, "response_id" | "item_id", id) -> entry
    scores: dict[tuple[str, str, str], ScoreEntry]
    counts: dict[str, int] = field(default_factory=dict)


class RowValidator:
    def __init__(self, problems: Problems, batch: Batch | None, *, csv_header: bool):
        self.problems = problems
        self.batch = batch
        self.csv_header = csv_header
        self.sources: dict[str, SourceEntry] = {}
        self.scores: dict[tuple[str, str, str], ScoreEntry] = {}
        # (source, other kind) -> [first line, further lines]
        self.kind_conflicts: dict[tuple[str, str], list[int]] = {}
        self.target_header_checked = False
        self.score_header_checked = False
        self.records = 0
        self.name_max = ScoreSource._meta.get_field("name").max_length
        self.id_max = Item._meta.get_field("item_id").max_length

    def add(self, line: int, row: dict | None) -> None:
        self.records += 1
        if row is None:
            return
        source = self._name(line, row)
        kind = self._kind(line, row)
        target = self._target(line, row)
        has_distribution = self._given(row, DISTRIBUTION)
        distribution, labels = self._distribution(line, row, target)
        if has_distribution and not self._given(row, "score"):
            value = None  # the distribution's expected label, below
        elif not has_distribution and self.csv_header and "score" not in row:
            self.problems.add(line, "score", "one of score or score_distribution is required")
            value = None
        else:
            value = self._score(line, row)
        higher_is_better = self._higher_is_better(line, row)
        if value is not None and higher_is_better is False:
            value = -value
        if has_distribution:
            if distribution is None:
                value = None  # its problem is reported
            elif value is None:
                value = math.fsum(p * label for p, label in zip(distribution, labels, strict=True))

        if source is not None and kind is not None:
            entry = self.sources.get(source)
            if entry is None:
                self.sources[source] = SourceEntry(kind, line)
            elif entry.kind != kind:
                seen = self.kind_conflicts.get((source, kind))
                if seen is None:
                    self.kind_conflicts[(source, kind)] = [line, 0]
                else:
                    seen[1] += 1

        if source is None or target is None or value is None:
            return
        key = (source, *target)
        entry = self.scores.get(key)
        if entry is None:
            self.scores[key] = ScoreEntry(value, line, distribution)
        elif entry.distribution != distribution:
            self.problems.add(
                line,
                DISTRIBUTION,
                f"differs from the distribution that source {source!r} gives {target[0]} "
                f"{target[1]!r} on line {entry.line}",
            )
        elif entry.value != value:
            self.problems.add(
                line,
                "score",
                f"{shown(value)} differs from the score {shown(entry.value)} that source "
                f"{source!r} gives {target[0]} {target[1]!r} on line {entry.line}",
            )

    def finish(self) -> None:
        for (source, kind), (line, more) in self.kind_conflicts.items():
            entry = self.sources[source]
            also = f" (and on {more} more line{'s' if more != 1 else ''})" if more else ""
            self.problems.add(
                line,
                "kind",
                f"source {source!r} is {kind!r} here{also} but {entry.kind!r} on line "
                f"{entry.line}; a source has one kind",
            )

    # -- single values

    def _present(self, line: int, row: dict, key: str) -> Any:
        return tabular.required_value(self.problems, line, row, key, csv_header=self.csv_header)

    def _name(self, line: int, row: dict) -> str | None:
        value = self._present(line, row, "source")
        if value is None:
            return None
        if not isinstance(value, str):
            self.problems.add(line, "source", f"must be a string, not {tabular.json_type(value)}")
            return None
        return self._checked_string(line, "source", value.strip(), self.name_max)

    def _kind(self, line: int, row: dict) -> str | None:
        value = self._present(line, row, "kind")
        if value is None:
            return None
        kind = value.strip() if isinstance(value, str) else value
        if kind not in KINDS:
            self.problems.add(line, "kind", f"{kind!r} is not one of {', '.join(KINDS)}")
            return None
        return kind

    def _target(self, line: int, row: dict) -> tuple[str, str] | None:
        if self.csv_header and not self.target_header_checked:
            self.target_header_checked = True
            if not any(key in row for key in TARGET_KEYS):
                self.problems.add(1, "header", "needs a response_id or an item_id column")
        given = {
            key: row[key]
            for key in TARGET_KEYS
            if row.get(key) is not None and not (isinstance(row[key], str) and not row[key].strip())
        }
        if not given:
            if not self.csv_header or any(key in row for key in TARGET_KEYS):
                self.problems.add(line, RESPONSE, "one of response_id or item_id is required")
            return None
        if len(given) > 1:
            self.problems.add(
                line, ITEM, "give either response_id or item_id, not both (one score per row)"
            )
            return None
        key, value = next(iter(given.items()))
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.problems.add(line, key, f"must be a string, not {tabular.json_type(value)}")
            return None
        value = self._checked_string(line, key, str(value).strip(), self.id_max)
        if value is None:
            return None
        if key == ITEM and self.batch is None:
            self.problems.add(
                line,
                ITEM,
                "item_id needs --batch (the batch field of an upload): item ids are "
                "unique per batch only",
            )
            return None
        return key, value

    @staticmethod
    def _given(row: dict, key: str) -> bool:
        value = row.get(key)
        return value is not None and not (isinstance(value, str) and not value.strip())

    def _labels_of(self, line: int, target: tuple[str, str] | None) -> list[int] | None:
        """The labels a distribution for ``target`` is over (None, reported, if none)."""
        if target is None:
            return None
        if target[0] == RESPONSE:
            if self.batch is not None and self.batch.task_kind.comparison:
                self.problems.add(
                    line,
                    DISTRIBUTION,
                    "a pairwise distribution is over a pair's five choices: give it with the "
                    "pair's item_id, not a response_id",
                )
                return None
            return list(get_kind(RESPONSE_KIND).label_set)
        kind = get_kind(self.batch.kind)
        labels = getattr(kind, "label_set", None)
        if not labels:
            self.problems.add(
                line, DISTRIBUTION, f"{self.batch.kind} batches have no label set to give one over"
            )
            return None
        return list(labels)

    def _distribution(
        self, line: int, row: dict, target: tuple[str, str] | None
    ) -> tuple[list[float] | None, list[int] | None]:
        """The checked ``score_distribution`` and the labels it is over, or ``(None, ...)``."""
        if self.csv_header and not self.score_header_checked:
            self.score_header_checked = True
            if "score" not in row and DISTRIBUTION not in row:
                self.problems.add(1, "header", "needs a score or a score_distribution column")
        if not self._given(row, DISTRIBUTION):
            return None, None
        value = row[DISTRIBUTION]
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                self.problems.add(line, DISTRIBUTION, "must be a JSON list of probabilities")
                return None, None
        if not isinstance(value, list):
            self.problems.add(
                line,
                DISTRIBUTION,
                f"must be a list of probabilities, not {tabular.json_type(value)}",
            )
            return None, None
        labels = self._labels_of(line, target)
        if labels is None:
            return None, None
        if len(value) != len(labels):
            shown = ", ".join(str(label) for label in labels)
            self.problems.add(
                line,
                DISTRIBUTION,
                f"has {len(value)} probabilities; it needs {len(labels)}, one per label ({shown})",
            )
            return None, None
        numbers = []
        for position, entry in enumerate(value):
            if isinstance(entry, bool) or not isinstance(entry, int | float):
                self.problems.add(
                    line,
                    DISTRIBUTION,
                    f"entry {position + 1} is {tabular.json_type(entry)}, not a number",
                )
                return None, None
            number = float(entry)
            if not math.isfinite(number):
                self.problems.add(line, DISTRIBUTION, f"entry {position + 1} is {shown(number)}")
                return None, None
            if number < 0:
                self.problems.add(
                    line, DISTRIBUTION, f"entry {position + 1} is negative ({number!r})"
                )
                return None, None
            numbers.append(number)
        total = math.fsum(numbers)
        if abs(total - 1.0) > DISTRIBUTION_TOLERANCE:
            self.problems.add(
                line,
                DISTRIBUTION,
                f"sums to {total!r}, not 1 (within {DISTRIBUTION_TOLERANCE:g})",
            )
            return None, None
        return numbers, labels

    def _score(self, line: int, row: dict) -> float | None:
        value = self._present(line, row, "score")
        if value is None:
            return None
        if isinstance(value, str) and self.csv_header:
            try:
                number = float(value.strip())
            except ValueError:
                self.problems.add(line, "score", f"{value.strip()!r} is not a number")
                return None
        elif isinstance(value, bool) or not isinstance(value, int | float):
            self.problems.add(line, "score", f"must be a number, not {tabular.json_type(value)}")
            return None
        else:
            try:
                number = float(value)
            except OverflowError:  # an integer too large for a float
                number = math.inf
        if not math.isfinite(number):
            self.problems.add(line, "score", f"must be a finite number, not {shown(number)}")
            return None
        if abs(number) > MAX_SCORE_MAGNITUDE:
            self.problems.add(
                line,
                "score",
                f"{number:g} is beyond ±{MAX_SCORE_MAGNITUDE:g}, too large to analyse "
                "(rescale the source, e.g. log-perplexity for perplexity)",
            )
            return None
        return number

    def _higher_is_better(self, line: int, row: dict) -> bool | None:
        value = row.get("higher_is_better")
        if value is None or (isinstance(value, str) and not value.strip()):
            return True
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str):
            word = value.strip().lower()
            if word in TRUE_WORDS:
                return True
            if word in FALSE_WORDS:
                return False
        self.problems.add(line, "higher_is_better", f"{value!r} is not true or false (or 1 or 0)")
        return None

    def _checked_string(self, line: int, key: str, value: str, max_length: int) -> str | None:
        if len(value) > max_length:
            self.problems.add(line, key, f"is longer than {max_length} characters")
            return None
        if "\x00" in value:
            self.problems.add(line, key, "contains a NUL character")
            return None
        return value


def shown(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)
