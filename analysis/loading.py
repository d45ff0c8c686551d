"""Database → arrays: a batch's counted labels and model scores in a few queries.

Nothing here computes statistics; ``analysis.stats`` takes the arrays. Items are in
import order (``Item.position``), annotators in order of first appearance.
"""

from dataclasses import dataclass, field, replace

import numpy as np
from django.db.models import Case, Count, IntegerField, Q, When
from django.db.models.functions import Coalesce

from analysis.key_positions import positions_of, unique_keys
from analysis.models import Score, ScoreSource
from annotation.models import (
    REGULAR_STATUSES,
    Annotator,
    Batch,
    Item,
    Label,
    LabelStatus,
    Participation,
    label_values,
)
from annotation.services.questionnaire import choice_questions
from core.beside import beside
from core.columns import fetch_columns


@dataclass
class BatchArrays:
    slug: str
    kind: str
    label_set: np.ndarray
    item_ids: list[str]
    item_pks: np.ndarray  # (n_items,) sorted by position
    response_pks: np.ndarray  # absolute: (n_items,); pairwise: (n_items, 2) for A and B
    item_index: np.ndarray  # (n_labels,) counted labels
    annotator_index: np.ndarray
    value: np.ndarray
    duration_ms: np.ndarray  # (n_labels,) float, NaN where unknown
    annotators: list[str] = field(default_factory=list)  # pseudonyms by annotator_index
    gold: list[list[int] | None] = field(default_factory=list)  # accepted answers per item
    # per counted label: the order a pair was shown in (0 none, 1 A first, 2 B first)
    shown_order: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int8))
    # per annotator (annotator_index): their attention checks passed / failed
    checks_passed: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    checks_failed: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    # test-retest pairs: annotator index, their first label and their repeat's label
    repeats: np.ndarray = field(default_factory=lambda: np.empty((0, 3), dtype=np.int64))
    # the questionnaire's choice questions, and each annotator's answer to each
    questions: list[dict] = field(default_factory=list)
    answers: dict[str, list[str | None]] = field(default_factory=dict)
    # per test-retest pair (row of ``repeats``): the item's index
    repeat_items: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    # per item: its query's category and sub-category ("" for none)
    categories: list[str] = field(default_factory=list)
    subcategories: list[str] = field(default_factory=list)
    # per item: the model that wrote its response (pairwise: response A's; "" for none)
    models: list[str] = field(default_factory=list)
    # per pairwise item: the model that wrote response B ("" for none; absolute: empty)
    models_b: list[str] = field(default_factory=list)
    # the kind's labels compare two responses (``TaskKind.comparison``): items are pairs,
    # values are signed, response_pks has two columns
    comparison: bool = False
    # per item: the counted labels it is to get (the batch's N); empty when not known
    targets: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    @property
    def n_annotators(self) -> int:
        return len(self.annotators)

    def restricted_to(self, keep: np.ndarray) -> "BatchArrays":
        """The same batch limited to the items where ``keep`` (a bool mask over the items)
        is true: those items in their order, their counted labels, the annotators who gave
        one of them (in the batch's order, with their batch-wide attention checks and
        answers) and the test–retest pairs of those items."""
        keep = np.asarray(keep, dtype=bool)
        item_number = np.cumsum(keep) - 1
        of_items = keep[self.item_index]
        present = np.unique(self.annotator_index[of_items])
        annotator_number = np.full(self.n_annotators, -1, dtype=np.int64)
        annotator_number[present] = np.arange(present.size)
        repeats = np.empty((0, 3), dtype=np.int64)
        repeat_items = np.empty(0, dtype=np.int64)
        if len(self.repeats) and len(self.repeat_items) == len(self.repeats):
            mine = keep[self.repeat_items] & (annotator_number[self.repeats[:, 0]] >= 0)
            repeats = self.repeats[mine].copy()
            repeats[:, 0] = annotator_number[repeats[:, 0]]
            repeat_items = item_number[self.repeat_items[mine]]
        kept = np.flatnonzero(keep).tolist()

        def per_item(values: list) -> list:
            return [values[i] for i in kept] if len(values) == len(keep) else []

        return replace(
            self,
            item_ids=[self.item_ids[i] for i in kept],
            item_pks=self.item_pks[keep],
            response_pks=self.response_pks[keep],
            item_index=item_number[self.item_index[of_items]],
            annotator_index=annotator_number[self.annotator_index[of_items]],
            value=self.value[of_items],
            duration_ms=self.duration_ms[of_items],
            annotators=[self.annotators[i] for i in present.tolist()],
            gold=per_item(self.gold),
            shown_order=self.shown_order[of_items] if self.shown_order.size else self.shown_order,
            checks_passed=self.checks_passed[present]
            if self.checks_passed.size
            else self.checks_passed,
            checks_failed=self.checks_failed[present]
            if self.checks_failed.size
            else self.checks_failed,
            repeats=repeats,
            repeat_items=repeat_items,
            answers={
                question: [answers[i] for i in present.tolist()]
                for question, answers in self.answers.items()
            },
            categories=per_item(self.categories),
            subcategories=per_item(self.subcategories),
            models=per_item(self.models),
            models_b=per_item(self.models_b),
            targets=self.targets[keep] if self.targets.size else self.targets,
        )


@dataclass
class SourceScores:
    name: str
    kind: str
    scores: np.ndarray  # (n_items,) float, NaN where the source does not score the item
    # (n_items, labels) the source's label distribution per item (NaN rows where it gave
    # none); None when it gave no distribution at all
    distributions: np.ndarray | None = None


def load_items(batch: Batch) -> BatchArrays:
    """One query: the batch's items and their responses, without labels.

    Enough for ``load_scores`` (and the item part of ``load_batch``); the label arrays
    are empty and there are no annotators.
    """
    item_rows = list(
        Item.objects.filter(batch=batch, is_check=False)
        .order_by("position")
        .values_list(
            "pk",
            "item_id",
            "response_id",
            "response_a_id",
            "response_b_id",
            "gold",
            "query__category",
            "query__subcategory",
            "response__model",
            "response_a__model",
            "response_b__model",
            "target",
        )
    )
    comparison = bool(batch.task_kind.comparison)
    if comparison:
        response_pks = np.array([(row[3], row[4]) for row in item_rows], dtype=np.int64)
        response_pks = response_pks.reshape(len(item_rows), 2)
    else:
        response_pks = np.array([row[2] for row in item_rows], dtype=np.int64)
    no_labels = np.empty(0, dtype=np.int64)
    return BatchArrays(
        slug=batch.slug,
        kind=batch.kind,
        label_set=np.array(label_values(batch.kind), dtype=np.int64),
        item_ids=[row[1] for row in item_rows],
        item_pks=np.array([row[0] for row in item_rows], dtype=np.int64),
        response_pks=response_pks,
        item_index=no_labels,
        annotator_index=no_labels,
        value=no_labels,
        duration_ms=np.empty(0),
        gold=[_accepted(row[5]) for row in item_rows],
        categories=[row[6] for row in item_rows],
        subcategories=[row[7] for row in item_rows],
        models=[(row[9] if comparison else row[8]) or "" for row in item_rows],
        models_b=[row[10] or "" for row in item_rows] if comparison else [],
        comparison=comparison,
        targets=np.array([row[11] for row in item_rows], dtype=np.int64),
    )


ORDER_CODES = {"": 0, "ab": 1, "ba": 2}


def load_batch(batch: Batch) -> BatchArrays:
    """The items (``load_items``), the counted labels (by submission), and what the
    validity figures need: attention-check outcomes, repeats and questionnaire answers."""
    return _with_labels(batch, load_items(batch), _label_columns(batch))


def load_batch_and_scores(batch: Batch) -> tuple[BatchArrays, list[SourceScores]]:
    """``load_batch`` and ``load_scores`` at once: on PostgreSQL, outside a transaction,
    the items and the scores are read on a second connection while this one reads the
    labels (``core.beside``), so the loading takes about as long as the labels alone."""
    items_and_scores = beside(_items_and_score_rows, batch)
    label_columns = _label_columns(batch)
    items, score_rows = items_and_scores.result()
    arrays = _with_labels(batch, items, label_columns)
    return arrays, _scores_from(score_rows, arrays)


def _items_and_score_rows(batch: Batch) -> tuple[BatchArrays, "ScoreRows"]:
    return load_items(batch), _score_rows(batch, bool(batch.task_kind.comparison))


def _label_columns(batch: Batch) -> list[np.ndarray]:
    """The batch's counted labels by submission: item, annotator, value, duration (-1:
    unknown) and the order shown (``ORDER_CODES``)."""
    return fetch_columns(
        Label.objects.filter(batch=batch, status=LabelStatus.COUNTED),
        [
            "item_id",
            "annotator_id",
            "value",
            Coalesce("duration_ms", -1),
            Case(
                When(shown_order="ab", then=1),
                When(shown_order="ba", then=2),
                default=0,
                output_field=IntegerField(),
            ),
        ],
        order_by=("submitted_at", "pk"),
        parts=LABEL_PARTS,
    )


# The labels are read in this many slices at once (``fetch_columns``): most of a large
# batch's loading is PostgreSQL packing its labels, which two server processes share.
LABEL_PARTS = 2


def _with_labels(batch: Batch, items: BatchArrays, columns: list[np.ndarray]) -> BatchArrays:
    """``items`` with the labels of ``_label_columns`` and the figures of their annotators.

    A label of an item that is not among ``items`` is left out: the items and the labels
    are read one after the other, or at once on two connections, so an item added to a
    live batch in between may have a label already; it is in the next analysis."""
    item_index = positions_of(items.item_pks, columns[0])
    if (item_index < 0).any():
        known = item_index >= 0
        item_index, columns = item_index[known], [column[known] for column in columns]
    annotator_pks, first_seen, annotator_index = unique_keys(columns[1])
    # Renumber annotators by first appearance so the order is stable and meaningful.
    appearance = np.argsort(first_seen, kind="stable")
    renumber = np.empty_like(appearance)
    renumber[appearance] = np.arange(appearance.size)
    annotator_index = renumber[annotator_index] if annotator_index.size else annotator_index
    pseudonym_of = dict(
        Annotator.objects.filter(pk__in=annotator_pks.tolist()).values_list("pk", "pseudonym")
    )
    annotators = [pseudonym_of[int(annotator_pks[old])] for old in appearance]
    durations = columns[3].astype(np.float64)
    durations[columns[3] < 0] = np.nan
    ordered_pks = [int(annotator_pks[old]) for old in appearance]
    position = {pk: index for index, pk in enumerate(ordered_pks)}
    passed, failed = _check_outcomes(batch, position)
    questions, answers = _answers(batch, ordered_pks)
    repeats, repeat_item_pks = _repeat_pairs(batch, position)
    repeat_items = positions_of(items.item_pks, repeat_item_pks)
    if (repeat_items < 0).any():  # the same for a repeat of an item read after the items
        repeats, repeat_items = repeats[repeat_items >= 0], repeat_items[repeat_items >= 0]
    return replace(
        items,
        item_index=item_index,
        annotator_index=np.asarray(annotator_index, dtype=np.int64),
        value=columns[2],
        duration_ms=durations,
        annotators=annotators,
        shown_order=columns[4].astype(np.int8),
        checks_passed=passed,
        checks_failed=failed,
        repeats=repeats,
        repeat_items=repeat_items,
        questions=questions,
        answers=answers,
    )


def _check_outcomes(batch: Batch, position: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Attention checks passed and failed per annotator (their stored outcome)."""
    passed = np.zeros(len(position), dtype=np.int64)
    failed = np.zeros(len(position), dtype=np.int64)
    outcomes = (
        Label.objects.filter(batch=batch, status=LabelStatus.CHECK)
        .values_list("annotator_id", "check_passed")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for annotator_pk, check_passed, n in outcomes:
        if annotator_pk in position:
            (passed if check_passed else failed)[position[annotator_pk]] += n
    return passed, failed


def _repeat_pairs(batch: Batch, position: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(annotator index, first label, repeat label) for every repeated item, and the
    repeated items' keys."""
    repeat_rows = list(
        Label.objects.filter(batch=batch, status=LabelStatus.REPEAT).values_list(
            "annotator_id", "item_id", "value"
        )
    )
    if not repeat_rows:
        return np.empty((0, 3), dtype=np.int64), np.empty(0, dtype=np.int64)
    firsts = {
        (annotator, item): value
        for annotator, item, value in Label.objects.filter(
            batch=batch,
            status__in=REGULAR_STATUSES,
            item_id__in={item for _, item, _ in repeat_rows},
        ).values_list("annotator_id", "item_id", "value")
    }
    rows = [
        (position[annotator], firsts[(annotator, item)], value, item)
        for annotator, item, value in repeat_rows
        if annotator in position and value is not None and firsts.get((annotator, item)) is not None
    ]
    table = np.array(rows, dtype=np.int64).reshape(len(rows), 4)
    return table[:, :3], table[:, 3]


def _answers(batch: Batch, ordered_pks: list[int]) -> tuple[list[dict], dict]:
    """The choice questions of the batch's questionnaire and each annotator's answer."""
    questions = choice_questions(batch.questionnaire)
    if not questions:
        return [], {}
    by_annotator = dict(
        Participation.objects.filter(batch=batch, annotator_id__in=ordered_pks).values_list(
            "annotator_id", "questionnaire_answers"
        )
    )
    answers = {}
    for question in questions:
        answers[question["id"]] = [
            (by_annotator.get(pk) or {}).get(question["id"]) for pk in ordered_pks
        ]
    return questions, answers


def _accepted(gold) -> list[int] | None:
    if gold is None:
        return None
    return [int(value) for value in (gold if isinstance(gold, list) else [gold])]


@dataclass
class ScoreRows:
    """A batch's scores as read (``_score_rows``), before they are put on its items."""

    by_response: list[np.ndarray]  # source, response, value
    by_item: list[np.ndarray]  # source, item, value
    described: dict[int, tuple[str, str]]  # source pk: (name, kind)
    # (source pk, response pk, item pk, distribution) of every score that has one
    distributions: list[tuple]


def load_scores(batch: Batch, arrays: BatchArrays) -> list[SourceScores]:
    """Two queries (scores by response, scores by item) plus one for the sources and one
    for the label distributions.

    Absolute items take their response's score; pairwise items score(A) − score(B), or
    the item's own score where the source scored the item directly (that one wins).
    """
    return _scores_from(_score_rows(batch, arrays.comparison), arrays)


def _score_rows(batch: Batch, comparison: bool) -> ScoreRows:
    # Subqueries, not a list of ids: a big batch's ids would pass SQLite's parameter limit.
    items = Item.objects.filter(batch=batch)
    shown = (
        Q(response_id__in=items.values("response_a_id"))
        | Q(response_id__in=items.values("response_b_id"))
        if comparison
        else Q(response_id__in=items.values("response_id"))
    )
    # Ids travel as float64 beside the values (exact below 2**53); each source scores a
    # response or item at most once, so the rows' order does not matter.
    by_response = fetch_columns(
        Score.objects.filter(shown), ["source_id", "response_id", "value"], np.float64
    )
    by_item = fetch_columns(
        Score.objects.filter(item__batch=batch), ["source_id", "item_id", "value"], np.float64
    )
    source_ids = np.unique(np.concatenate([by_response[0], by_item[0]])).astype(np.int64)
    described = {
        pk: (name, kind)
        for pk, name, kind in ScoreSource.objects.filter(pk__in=source_ids.tolist()).values_list(
            "pk", "name", "kind"
        )
    }
    # An absolute item takes its response's distribution (or its own), a pairwise item
    # only its own. None is loaded when no score of the batch carries one.
    target = Q(item__in=items)
    if not comparison:
        target |= shown
    distributions = list(
        Score.objects.filter(target, distribution__isnull=False)
        .order_by()
        .values_list("source_id", "response_id", "item_id", "distribution")
    )
    return ScoreRows(by_response, by_item, described, distributions)


def _scores_from(rows: ScoreRows, arrays: BatchArrays) -> list[SourceScores]:
    """The scores of ``rows`` on the items of ``arrays`` (``load_scores`` says how)."""
    by_response, by_item = rows.by_response, rows.by_item
    results = []
    for source_id in sorted(rows.described):
        scores = np.full(arrays.n_items, np.nan)
        mine = by_response[0] == source_id
        if mine.any():
            score_of = _lookup(by_response[1][mine].astype(np.int64), by_response[2][mine])
            if arrays.comparison:
                scores = score_of(arrays.response_pks[:, 0]) - score_of(arrays.response_pks[:, 1])
            else:
                scores = score_of(arrays.response_pks)
        mine = by_item[0] == source_id
        if mine.any():
            direct = _lookup(by_item[1][mine].astype(np.int64), by_item[2][mine])(arrays.item_pks)
            scores = np.where(np.isfinite(direct), direct, scores)
        results.append(SourceScores(*rows.described[source_id], scores))
    _attach_distributions(arrays, results, rows)
    return sorted(results, key=lambda source: source.name)


def _attach_distributions(arrays: BatchArrays, results: list[SourceScores], rows: ScoreRows):
    """Each source's label distributions per item (``_score_rows`` says whose)."""
    if not rows.distributions:
        return
    name_of = {pk: name for pk, (name, _) in rows.described.items()}
    by_name = {source.name: source for source in results}
    n_labels = arrays.label_set.size
    item_position = {pk: index for index, pk in enumerate(arrays.item_pks.tolist())}
    response_position = (
        {pk: index for index, pk in enumerate(arrays.response_pks.tolist())}
        if not arrays.comparison
        else {}
    )
    by_response = [row for row in rows.distributions if row[1] is not None]
    by_item = [row for row in rows.distributions if row[2] is not None]
    for source_pk, response_pk, item_pk, distribution in by_response + by_item:  # items win
        source = by_name.get(name_of.get(source_pk))
        index = item_position.get(item_pk) if item_pk else response_position.get(response_pk)
        if source is None or index is None or len(distribution) != n_labels:
            continue
        if source.distributions is None:
            source.distributions = np.full((arrays.n_items, n_labels), np.nan)
        source.distributions[index] = distribution


def _lookup(keys: np.ndarray, values: np.ndarray):
    """A vectorised dict: maps an array of keys to values, NaN where absent."""
    order = np.argsort(keys, kind="stable")
    sorted_keys, sorted_values = keys[order], values[order]

    def score_of(query: np.ndarray) -> np.ndarray:
        query = np.asarray(query, dtype=np.int64)
        if sorted_keys.size == 0:
            return np.full(query.shape, np.nan)
        at = np.clip(np.searchsorted(sorted_keys, query), 0, sorted_keys.size - 1)
        hit = sorted_keys[at] == query
        return np.where(hit, sorted_values[at], np.nan)

    return score_of
