"""The whole analysis report stays the same, number for number, while its computation is
reworked for speed.

Two seeded batches (absolute and pairwise) carry everything the report computes from:
categories with and without sub-categories (one category has a single sub-category, one
spans no sub-category), items outside any category, attention checks, surplus and excluded
labels, repeats, questionnaire answers, durations (some unknown), models for the rankings,
and score sources with ties, partial coverage, per-item scores and label distributions.
Their report JSON (``analyse_batch``, 200 resamples) must equal the reference under
``tests/analysis/reference/``: every key in order, every count, text and flag exactly, every
float to within one part in 10^10. On one machine the floats agree to the last bit; another
CPU may take another of numpy's vectorised paths (AVX-512 against AVX2 sum in another order)
and differ in the last bit or two (seen: 1e-16 relative, p-values of 1e-26 to 5e-14), which
no change to the computation would produce.

The reference pins behaviour, not correctness: the figures themselves are checked against
independent implementations by the other tests here. A change that is meant to alter a
figure fails this test; the failure names a file with the new report, which then replaces
the reference in the same commit, with the reason in its message.
"""

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from analysis.models import Score, ScoreSource
from analysis.services.analyses import analyse_batch
from annotation.models import (
    Annotator,
    Assignment,
    Item,
    Label,
    Participation,
    Query,
    Response,
)
from annotation.services.batches import create_batch

pytestmark = pytest.mark.django_db

REFERENCE = Path(__file__).parent / "reference"
RESAMPLES = 200
N = 7  # counted labels per item
ANNOTATORS = 24
QUESTIONS = [
    {"id": "english", "text": "First language English?", "type": "choice",
     "options": ["yes", "no"]},
]  # fmt: skip
# (category, sub-categories, items per sub-category): Creative has a single sub-category
# (the same items as the category), Code none, and the last group no category at all.
TAXONOMY = [
    ("Advice", ["Health", "Money"], 40),
    ("Creative", ["Poetry"], 35),
    ("Code", [""], 30),
    ("", [""], 12),
]
MODELS = ["model-a", "model-b", "model-c", "model-d"]
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def seeded_batch(kind: str, seed: int = 7):
    """The batch of the module docstring, written row by row with fixed values."""
    rng = np.random.default_rng(seed)
    pairwise = kind == "pairwise"
    batch = create_batch(
        slug=f"unchanged-{kind}",
        kind=kind,
        title=f"Unchanged report ({kind})",
        annotations_per_item=N,
        questionnaire=QUESTIONS,
    )
    items = []
    for category, subcategories, per_group in TAXONOMY:
        for subcategory in subcategories:
            for index in range(per_group):
                stem = f"{kind}-{category or 'none'}-{subcategory or 'none'}-{index}".lower()
                query = Query.objects.create(
                    query_id=f"q-{stem}",
                    text=f"Question {stem}?",
                    category=category,
                    subcategory=subcategory,
                )
                sides = ("a", "b") if pairwise else ("",)
                responses = [
                    Response.objects.create(
                        response_id=f"r-{stem}{side}",
                        query=query,
                        model=MODELS[int(rng.integers(len(MODELS)))],
                        text=f"Answer {stem}{side}",
                    )
                    for side in sides
                ]
                fields = (
                    {"response_a": responses[0], "response_b": responses[1]}
                    if pairwise
                    else {"response": responses[0]}
                )
                items.append(
                    Item(
                        batch=batch,
                        item_id=stem,
                        position=len(items),
                        query=query,
                        target=N,
                        **fields,
                    )
                )
    for item in items[::29][:4]:  # attention checks
        item.is_check, item.gold, item.target = True, [2 if pairwise else 5], 0
    Item.objects.bulk_create(items)
    items = list(Item.objects.filter(batch=batch).order_by("position"))
    checks = [item for item in items if item.is_check]
    regular = [item for item in items if not item.is_check]

    annotators = []
    for number in range(ANNOTATORS):
        annotator = Annotator.objects.create(
            platform="generic",
            platform_id=f"{kind}-worker-{number}",
            pseudonym=f"ann-{kind}-{number:02d}",
        )
        Participation.objects.create(
            batch=batch,
            annotator=annotator,
            questionnaire_answers={"english": "yes" if rng.random() < 0.6 else "no"},
        )
        annotators.append(annotator)
    harsh = rng.normal(0, 0.6, ANNOTATORS)  # each person's own leaning

    labels: list[tuple[Item, Annotator, str, int, bool | None]] = []
    low, high = (-2, 2) if pairwise else (1, 5)
    qualities = rng.uniform(low, high, len(regular))
    for item, quality in zip(regular, qualities, strict=True):
        who = rng.choice(ANNOTATORS, size=N + 1, replace=False)
        for rank, person in enumerate(who):
            value = int(np.clip(np.rint(quality + harsh[person] + rng.normal(0, 0.9)), low, high))
            status = "counted" if rank < N else ("surplus" if rng.random() < 0.5 else "excluded")
            labels.append((item, annotators[person], status, value, None))
    for annotator in annotators:
        for item in rng.choice(len(checks), size=2, replace=False):
            passed = bool(rng.random() < 0.8)
            gold = 2 if pairwise else 5
            value = gold if passed else (-2 if pairwise else 1)
            labels.append((checks[item], annotator, "check", value, passed))
        mine = [row for row in labels if row[1] is annotator and row[2] == "counted"]
        for item, _, _, value, _ in mine[:: max(1, len(mine) // 2)][:2]:
            again = int(np.clip(value + rng.integers(-1, 2), low, high))
            labels.append((item, annotator, "repeat", again, None))

    submitted = START + timedelta(seconds=1) * rng.permutation(len(labels)) * 7
    assignments, rows = [], []
    for (item, annotator, status, value, passed), at in zip(labels, submitted, strict=True):
        order = ("ab" if rng.random() < 0.5 else "ba") if pairwise else ""
        assignment = Assignment(
            batch=batch,
            item=item,
            annotator=annotator,
            state="submitted",
            purpose={"check": "check", "repeat": "repeat"}.get(status, "regular"),
            shown_order=order,
            leased_at=at - timedelta(minutes=1),
            expires_at=at + timedelta(minutes=9),
            submitted_at=at,
        )
        assignments.append(assignment)
        duration = None if rng.random() < 0.05 else int(rng.integers(1_500, 40_000))
        rows.append(
            Label(
                assignment=assignment,
                batch=batch,
                item=item,
                annotator=annotator,
                kind=kind,
                value=value,
                status=status,
                shown_order=order,
                check_passed=passed,
                duration_ms=duration,
                submitted_at=at,
            )
        )
    Assignment.objects.bulk_create(assignments)
    Label.objects.bulk_create(rows)
    add_seeded_sources(batch, regular, qualities, rng)
    return batch


def add_seeded_sources(batch, regular: list[Item], qualities: np.ndarray, rng) -> None:
    """Scores that follow the items' quality more or less closely: a fine-grained reward
    model; a language model with ties that misses some items; a judge with label
    distributions; for pairwise batches a judge of the pairs instead."""
    pairwise = batch.kind == "pairwise"
    reward = ScoreSource.objects.create(name=f"{batch.kind}-rm", kind="reward_model")
    lm = ScoreSource.objects.create(name=f"{batch.kind}-lm", kind="lm")
    judge = ScoreSource.objects.create(name=f"{batch.kind}-judge", kind="judge")
    scores = []
    responses = [
        (response, quality * sign / 2 if pairwise else quality)
        for item, quality in zip(regular, qualities, strict=True)
        for response, sign in (
            ((item.response_a, 1), (item.response_b, -1)) if pairwise else ((item.response, 1),)
        )
    ]
    for response, quality in responses:
        scores.append(
            Score(source=reward, response=response, value=float(quality + rng.normal(0, 1)))
        )
        if rng.random() < 0.9:
            value = float(np.round(quality + rng.normal(0, 2), 0))
            scores.append(Score(source=lm, response=response, value=value))
        if not pairwise:
            distribution = rng.dirichlet(1 + np.exp(-((np.arange(1, 6) - quality) ** 2))).round(4)
            distribution[-1] = round(1 - distribution[:-1].sum(), 4)
            value = float(np.dot(distribution, np.arange(1, 6)))
            scores.append(
                Score(
                    source=judge,
                    response=response,
                    value=value,
                    distribution=distribution.tolist(),
                )
            )
    if pairwise:
        for item, quality in zip(regular, qualities, strict=True):
            value = float(np.clip(np.rint(quality + rng.normal(0, 1)), -2, 2))
            scores.append(Score(source=judge, item=item, value=value))
    Score.objects.bulk_create(scores)


@pytest.mark.parametrize("kind", ["absolute", "pairwise"])
def test_the_report_is_the_reference_number_for_number(kind, tmp_path):
    batch = seeded_batch(kind)
    report = json.loads(json.dumps(analyse_batch(batch, n_resamples=RESAMPLES, seed=3)))
    assert report["by_category"] and report["validity"] and report["correlations"]
    reference_path = REFERENCE / f"unchanged-report-{kind}.json"
    reference = json.loads(reference_path.read_text()) if reference_path.exists() else None
    difference = "no reference" if reference is None else first_difference(report, reference)
    if difference:
        written = tmp_path / reference_path.name
        written.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
        pytest.fail(
            f"the report differs from {reference_path} at {difference}; this run's is {written}"
        )


RELATIVE = 1e-10


def first_difference(mine, theirs, path: str = "") -> str:
    """Where ``mine`` first differs from ``theirs`` (the module doc's rules), or ""."""
    if isinstance(mine, float) and isinstance(theirs, float):
        close = mine == pytest.approx(theirs, rel=RELATIVE, abs=1e-300)
        return "" if close else f"{path or '/'}: {mine!r} against {theirs!r}"
    if type(mine) is not type(theirs):
        return f"{path or '/'}: {mine!r} against {theirs!r}"
    if isinstance(mine, dict):
        if list(mine) != list(theirs):
            return f"{path or '/'}: keys {list(mine)} against {list(theirs)}"
        pairs = ((f"{path}/{key}", mine[key], theirs[key]) for key in mine)
    elif isinstance(mine, list):
        if len(mine) != len(theirs):
            return f"{path or '/'}: {len(mine)} entries against {len(theirs)}"
        pairs = (
            (f"{path}[{index}]", a, b)
            for index, (a, b) in enumerate(zip(mine, theirs, strict=True))
        )
    else:
        return "" if mine == theirs else f"{path or '/'}: {mine!r} against {theirs!r}"
    return next((found for where, a, b in pairs if (found := first_difference(a, b, where))), "")


def test_the_comparison_finds_a_changed_figure_and_a_changed_key():
    report = {"a": [1, 0.5, {"b": "x"}], "c": 2.0}
    assert first_difference(report, json.loads(json.dumps(report))) == ""
    assert first_difference(report, {**report, "c": 2.0 * (1 + 1e-16)}) == ""
    assert first_difference(report, {**report, "c": 2.0001}) == "/c: 2.0 against 2.0001"
    assert first_difference(report, {"c": 2.0, "a": report["a"]}).startswith("/: keys")
    assert (
        first_difference(report, {**report, "a": [1, 0.5, {"b": "y"}]})
        == "/a[2]/b: 'x' against 'y'"
    )
    assert first_difference({"n": 1}, {"n": 1.0}) == "/n: 1 against 1.0"
