"""Importing model scores from JSONL or CSV, all or nothing (FORMATS.md, "Model scores").

Same approach as the item importer (``annotation.services.importing``), with the same
reading helpers and problem collector (``core.tabular``): the file is
read once, line by line; every row is validated and every problem is collected as
``FILE:LINE: field: message`` (the first 50 are listed, then "... and K more
problems"); only one small entry per distinct (source, response/item) is kept. Sources,
response ids, item ids and stored scores are then looked up in chunks. If anything is
wrong, ``ImportRejected`` lists the problems and nothing is written; otherwise, in one
transaction, the new sources are written with ``bulk_create`` and the new scores with
``tabular.RowInserter``'s multi-row ``INSERT``.

Rules:

* ``source`` (a name), ``kind`` (``lm``, ``reward_model``, ``judge``, ``other``) and
  ``score`` (a finite number; a CSV cell is parsed as one) are required, and exactly one
  of ``response_id`` (project-wide) or ``item_id`` (needs ``batch``: item ids are only
  unique within a batch). An empty value or JSON ``null`` counts as absent.
* ``score_distribution`` (beside or instead of ``score``): the source's probabilities over
  the kind's labels, in label order — a response's over the absolute labels 1…5, an item's
  over its batch's labels (pairwise −2…2); a JSON list (in a CSV cell: its JSON text) of
  finite, non-negative numbers summing to 1 within 1e-6 (:data:`DISTRIBUTION_TOLERANCE`).
  Without ``score`` the score stored is the distribution's expected label. A pairwise
  distribution belongs to an item: on a response it is an error.
* ``higher_is_better`` (``true``/``false``/``1``/``0``, default true): when false the
  score is stored negated, so that higher always means better.
* A source has one kind: two kinds in the file, or a kind other than the stored one, is
  an error. The same (source, response/item) twice with different scores is an error,
  in the file or against the stored score; the identical score again is accepted (a
  row repeated in the file counts once; one already stored counts as unchanged).
* Other keys are ignored.
"""

import dataclasses
import json
import math
import os
from dataclasses import dataclass, field
from typing import IO, Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from analysis.models import Score, ScoreKind, ScoreSource
from annotation.kinds import get_kind
from annotation.models import Batch, Item, Response
from core import audit, tabular
from core.audit import Actor
from core.errors import InvalidInput
from core.tabular import BULK_BATCH_SIZE, ImportRejected, Problems

__all__ = ["ScoreImportSummary", "import_scores"]

REQUIRED = ("source", "kind")  # and score or score_distribution
DISTRIBUTION = "score_distribution"
DISTRIBUTION_TOLERANCE = 1e-6
# A response's distribution is over the labels of the kind that rates single responses
# (a response keeps its scores across batches, so no batch's kind can say which labels).
RESPONSE_KIND = "absolute"
KINDS = tuple(ScoreKind.values)
TARGET_KEYS = ("response_id", "item_id")
TRUE_WORDS = {"true", "1", "yes"}
FALSE_WORDS = {"false", "0", "no"}
RESPONSE, ITEM = "response_id", "item_id"


@dataclass(frozen=True)
class ScoreImportSummary:
    sources_created: int
    sources_updated: int  # existing sources that received new scores
    scores_created: int
    scores_unchanged: int  # already stored with the identical value


def import_scores(
    path_or_file,
    *,
    filename: str | None = None,
    batch: Batch | str | None = None,
    actor: Actor | None = None,
) -> ScoreImportSummary:
    """Validate the whole file, then store its sources and scores at once.

    ``path_or_file`` is a path or a binary file object (e.g. an uploaded file);
    ``filename`` names it in problems and decides the format (``.jsonl``/``.csv``).
    ``batch`` (a ``Batch`` or its slug) is where ``item_id`` values are looked up, and
    the batch whose history records the import (a project-wide import records none).
    """
    batch = _resolve_batch(batch)
    with tabular.open_source(path_or_file, filename) as (handle, name, fmt):
        file = tabular.fingerprint(handle)
        plan = _validate(handle, name, fmt, batch)
    return _write(plan, file, batch, actor)


def _resolve_batch(batch: Batch | str | None) -> Batch | None:
    if batch is None or batch == "":
        return None
    slug = batch.slug if isinstance(batch, Batch) else str(batch)
    found = Batch.objects.filter(slug=slug).first()
    if found is None:
        raise InvalidInput("batch", f"batch {slug!r} does not exist")
    return found


# --------------------------------------------------------------------------- validating


@dataclass
class _SourceEntry:
    kind: str
    line: int
    pk: int | None = None
    stored_kind: str | None = None
    new_scores: int = 0


@dataclass
class _ScoreEntry:
    value: float
    line: int
    distribution: list[float] | None = None
    target_pk: int | None = None
    stored: bool = False  # the identical value is already stored


@dataclass
class _Plan:
    name: str
    sources: dict[str, _SourceEntry]
    # (source name, "response_id" | "item_id", id) -> entry
    scores: dict[tuple[str, str, str], _ScoreEntry]
    counts: dict[str, int] = field(default_factory=dict)


class _Validator:
    def __init__(self, problems: Problems, batch: Batch | None, *, csv_header: bool):
        self.problems = problems
        self.batch = batch
        self.csv_header = csv_header
        self.sources: dict[str, _SourceEntry] = {}
        self.scores: dict[tuple[str, str, str], _ScoreEntry] = {}
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
                self.sources[source] = _SourceEntry(kind, line)
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
            self.scores[key] = _ScoreEntry(value, line, distribution)
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
                f"{_shown(value)} differs from the score {_shown(entry.value)} that source "
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
                self.problems.add(line, DISTRIBUTION, f"entry {position + 1} is {_shown(number)}")
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
            self.problems.add(line, "score", f"must be a finite number, not {_shown(number)}")
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


def _shown(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def _validate(handle: IO, name: str, fmt: str, batch: Batch | None) -> _Plan:
    problems = Problems(name)
    validator = _Validator(problems, batch, csv_header=fmt == "csv")
    rows = (
        # NaN/Infinity parse, to be named at ``score``; a line that is not valid UTF-8
        # (already a problem) is no record, so it does not hide "contains no scores"
        tabular.jsonl_rows(handle, problems, allow_constants=True, undecodable=False)
        if fmt == "jsonl"
        else tabular.csv_rows(handle, problems, REQUIRED)
    )
    for line, row in rows:
        validator.add(line, row)
    validator.finish()
    if validator.records == 0:
        problems.add(1, "file", "contains no scores")

    sources, scores = validator.sources, validator.scores
    _check_sources(sources, problems)
    targets = _resolve_targets(scores, batch, problems)
    _check_stored_scores(sources, scores, targets, problems)

    if problems.count:
        raise ImportRejected(problems.lines())
    return _Plan(name=name, sources=sources, scores=scores)


def _check_sources(sources: dict[str, _SourceEntry], problems: Problems) -> None:
    for chunk in tabular.chunks(sources):
        for name, pk, kind in ScoreSource.objects.filter(name__in=chunk).values_list(
            "name", "pk", "kind"
        ):
            entry = sources[name]
            entry.pk, entry.stored_kind = pk, kind
            if kind != entry.kind:
                problems.add(
                    entry.line,
                    "kind",
                    f"source {name!r} is already stored with kind {kind!r}, not "
                    f"{entry.kind!r}; a source has one kind",
                )


def _resolve_targets(
    scores: dict[tuple[str, str, str], _ScoreEntry], batch: Batch | None, problems: Problems
) -> dict[tuple[str, str], int]:
    """(key, id) -> pk for every response and item id; unknown ones are problems."""
    first_line: dict[tuple[str, str], int] = {}
    for (_, key, value), entry in scores.items():
        target = (key, value)
        if target not in first_line or entry.line < first_line[target]:
            first_line[target] = entry.line
    found: dict[tuple[str, str], int] = {}
    response_ids = [value for key, value in first_line if key == RESPONSE]
    for chunk in tabular.chunks(response_ids):
        for response_id, pk in Response.objects.filter(response_id__in=chunk).values_list(
            "response_id", "pk"
        ):
            found[(RESPONSE, response_id)] = pk
    item_ids = [value for key, value in first_line if key == ITEM]
    if batch is not None:
        for chunk in tabular.chunks(item_ids):
            for item_id, pk in Item.objects.filter(batch=batch, item_id__in=chunk).values_list(
                "item_id", "pk"
            ):
                found[(ITEM, item_id)] = pk
    for (key, value), line in first_line.items():
        if (key, value) in found:
            continue
        if key == RESPONSE:
            problems.add(line, key, f"{value!r} is not a known response")
        else:
            problems.add(line, key, f"{value!r} is not an item of batch {batch.slug}")
    for (_, key, value), entry in scores.items():
        entry.target_pk = found.get((key, value))
    return found


def _check_stored_scores(
    sources: dict[str, _SourceEntry],
    scores: dict[tuple[str, str, str], _ScoreEntry],
    targets: dict[tuple[str, str], int],
    problems: Problems,
) -> None:
    """Compare with the scores the file's existing sources already gave its targets."""
    by_pk = {entry.pk: name for name, entry in sources.items() if entry.pk is not None}
    if not by_pk:
        return
    for key, column in ((RESPONSE, "response_id"), (ITEM, "item_id")):
        ids_by_pk = {pk: value for (kind, value), pk in targets.items() if kind == key}
        for chunk in tabular.chunks(ids_by_pk):
            stored = Score.objects.filter(**{f"{column}__in": chunk}).values_list(
                "source_id", column, "value", "distribution"
            )
            for source_pk, target_pk, value, distribution in stored:
                name = by_pk.get(source_pk)
                if name is None:
                    continue
                entry = scores.get((name, key, ids_by_pk[target_pk]))
                if entry is None:
                    continue
                if entry.value == value and entry.distribution == distribution:
                    entry.stored = True
                elif entry.value == value:
                    problems.add(
                        entry.line,
                        DISTRIBUTION,
                        f"differs from the distribution already stored for source {name!r} "
                        f"and {key} {ids_by_pk[target_pk]!r}",
                    )
                else:
                    problems.add(
                        entry.line,
                        "score",
                        f"{_shown(entry.value)} differs from the score {_shown(value)} "
                        f"already stored for source {name!r} and {key} "
                        f"{ids_by_pk[target_pk]!r}",
                    )


# --------------------------------------------------------------------------- writing


def _write(
    plan: _Plan,
    file: tabular.Fingerprint | None = None,
    batch: Batch | None = None,
    actor: Actor | None = None,
) -> ScoreImportSummary:
    sources, scores = plan.sources, plan.scores
    new_scores = [(key, entry) for key, entry in scores.items() if not entry.stored]
    for (name, _, _), _entry in new_scores:
        sources[name].new_scores += 1
    new_sources = sorted(name for name, entry in sources.items() if entry.pk is None)
    updated = [entry.pk for entry in sources.values() if entry.pk is not None and entry.new_scores]
    try:
        with transaction.atomic():
            ScoreSource.objects.bulk_create(
                [ScoreSource(name=name, kind=sources[name].kind) for name in new_sources],
                batch_size=BULK_BATCH_SIZE,
            )
            for chunk in tabular.chunks(new_sources):
                for name, pk in ScoreSource.objects.filter(name__in=chunk).values_list(
                    "name", "pk"
                ):
                    sources[name].pk = pk
            for chunk in tabular.chunks(updated):
                ScoreSource.objects.filter(pk__in=chunk).update(updated_at=timezone.now())
            # a plain multi-row INSERT: bulk_create without building 100,000 model
            # instances; a concurrent duplicate fails the unique constraints
            inserter = tabular.RowInserter(
                Score, ["source", "response", "item", "value", "distribution"]
            )
            for start in range(0, len(new_scores), BULK_BATCH_SIZE):
                inserter.insert(
                    [
                        [
                            sources[name].pk,
                            entry.target_pk if key == RESPONSE else None,
                            entry.target_pk if key == ITEM else None,
                            entry.value,
                            entry.distribution,
                        ]
                        for (name, key, _), entry in new_scores[start : start + BULK_BATCH_SIZE]
                    ]
                )
            summary = ScoreImportSummary(
                sources_created=len(new_sources),
                sources_updated=len(updated),
                scores_created=len(new_scores),
                scores_unchanged=len(scores) - len(new_scores),
            )
            if batch is not None:
                audit.record(
                    "scores.import",
                    subject=batch,
                    actor=actor,
                    changes={
                        "file": os.path.basename(plan.name),
                        **(dataclasses.asdict(file) if file else {}),
                        **dataclasses.asdict(summary),
                    },
                )
    except IntegrityError as error:
        raise ImportRejected.concurrent_write(plan.name, error) from error
    return summary
