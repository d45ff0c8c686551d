"""Importing model scores from JSONL or CSV, all or nothing (FORMATS.md, "Model scores").

Same approach as the item importer (``annotation.services.importing``), with the same
reading helpers and problem collector (``core.tabular``): the file is read once, line by
line; every row is validated (``analysis.services.score_rows``) and every problem is
collected as ``FILE:LINE: field: message`` (the first 50 are listed, then "... and K more
problems"); only one small entry per distinct (source, response/item) is kept. Sources,
response ids, item ids and stored scores are then looked up in chunks. If anything is
wrong, ``ImportRejected`` lists the problems and nothing is written; otherwise, in one
transaction, the new sources are written with ``bulk_create`` and the new scores with
``row_writing.RowInserter``'s multi-row ``INSERT``.

Rules:

* ``source`` (a name), ``kind`` (``lm``, ``reward_model``, ``judge``, ``other``) and
  ``score`` (a finite number; a CSV cell is parsed as one) are required, and exactly one
  of ``response_id`` (project-wide) or ``item_id`` (needs ``batch``: item ids are only
  unique within a batch). An empty value or JSON ``null`` counts as absent.
* ``score_distribution`` (beside or instead of ``score``): the source's probabilities over
  the kind's labels, in label order — a response's over the absolute labels 1…5, an item's
  over its batch's labels (pairwise −2…2); a JSON list (in a CSV cell: its JSON text) of
  finite, non-negative numbers summing to 1 within 1e-6 (``score_rows.DISTRIBUTION_TOLERANCE``).
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

from dataclasses import dataclass
from typing import IO

from django.db import IntegrityError, transaction
from django.utils import timezone

from analysis.models import Score, ScoreSource
from analysis.services.score_rows import (
    DISTRIBUTION,
    ITEM,
    REQUIRED,
    RESPONSE,
    RowValidator,
    ScoreEntry,
    ScorePlan,
    SourceEntry,
    shown,
)
from annotation.models import Batch, Item, Response
from core import audit, row_writing, tabular
from core.audit import Actor
from core.errors import InvalidInput
from core.row_writing import BULK_BATCH_SIZE
from core.tabular import ImportRejected, Problems, import_changes

__all__ = ["ScoreImportSummary", "import_scores"]


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


def _validate(handle: IO, name: str, fmt: str, batch: Batch | None) -> ScorePlan:
    problems = Problems(name)
    validator = RowValidator(problems, batch, csv_header=fmt == "csv")
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
    return ScorePlan(name=name, sources=sources, scores=scores)


def _check_sources(sources: dict[str, SourceEntry], problems: Problems) -> None:
    for chunk in row_writing.chunks(sources):
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
    scores: dict[tuple[str, str, str], ScoreEntry], batch: Batch | None, problems: Problems
) -> dict[tuple[str, str], int]:
    """(key, id) -> pk for every response and item id; unknown ones are problems."""
    first_line: dict[tuple[str, str], int] = {}
    for (_, key, value), entry in scores.items():
        target = (key, value)
        if target not in first_line or entry.line < first_line[target]:
            first_line[target] = entry.line
    found: dict[tuple[str, str], int] = {}
    response_ids = [value for key, value in first_line if key == RESPONSE]
    for chunk in row_writing.chunks(response_ids):
        for response_id, pk in Response.objects.filter(response_id__in=chunk).values_list(
            "response_id", "pk"
        ):
            found[(RESPONSE, response_id)] = pk
    item_ids = [value for key, value in first_line if key == ITEM]
    if batch is not None:
        for chunk in row_writing.chunks(item_ids):
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
    sources: dict[str, SourceEntry],
    scores: dict[tuple[str, str, str], ScoreEntry],
    targets: dict[tuple[str, str], int],
    problems: Problems,
) -> None:
    """Compare with the scores the file's existing sources already gave its targets."""
    by_pk = {entry.pk: name for name, entry in sources.items() if entry.pk is not None}
    if not by_pk:
        return
    for key, column in ((RESPONSE, "response_id"), (ITEM, "item_id")):
        ids_by_pk = {pk: value for (kind, value), pk in targets.items() if kind == key}
        for chunk in row_writing.chunks(ids_by_pk):
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
                        f"{shown(entry.value)} differs from the score {shown(value)} "
                        f"already stored for source {name!r} and {key} "
                        f"{ids_by_pk[target_pk]!r}",
                    )


# --------------------------------------------------------------------------- writing


def _write(
    plan: ScorePlan,
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
            for chunk in row_writing.chunks(new_sources):
                for name, pk in ScoreSource.objects.filter(name__in=chunk).values_list(
                    "name", "pk"
                ):
                    sources[name].pk = pk
            for chunk in row_writing.chunks(updated):
                ScoreSource.objects.filter(pk__in=chunk).update(updated_at=timezone.now())
            # a plain multi-row INSERT: bulk_create without building 100,000 model
            # instances; a concurrent duplicate fails the unique constraints
            inserter = row_writing.RowInserter(
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
                    changes=import_changes(plan.name, file, summary),
                )
    except IntegrityError as error:
        raise ImportRejected.concurrent_write(plan.name, error) from error
    return summary
