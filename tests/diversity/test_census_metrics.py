"""Every census metric on a field small enough to compute by hand.

The field (answers already final, answerers A, B, C; run order as listed)::

    color: A = [red, red, blue]   B = [green, green]   C = [red, blue]
    pet:   A = [cat]              B = (none)           C = [dog, dog]
    tree:  A = [oak]              B = (none)           C = (none)

* ``pet`` is skipped for B (no answer of B's);
* ``tree`` is skipped for A (no answer of anybody else's) and for B and C (none of theirs);
* for C in ``color`` the others' pool A + B = [red, red, blue, green, green] has a mode tie
  between red and green (2 each): red occurs first, so red is the mode.
"""

from collections import Counter
from math import log2

import numpy as np
import pytest

from diversity.census.core.categories import (
    category_figures,
    figures_of_pool,
    frequent_answer_count,
    modal_answer,
    second_place_share,
)
from diversity.census.core.field import AnswerField, build_field
from diversity.census.core.metrics import (
    answer_surprisal,
    answerer_metrics,
    answerer_type,
    kept_categories,
    mean_surprisal,
    modal_avoid_rate,
    novel_rate,
    self_distinctness,
    surprisal_ci,
)
from diversity.census.core.report import census_report
from diversity.census.transcripts import CensusRecord

FIELD = AnswerField.from_answers(
    {
        "color": {"C": ["red", "blue"], "A": ["red", "red", "blue"], "B": ["green", "green"]},
        "pet": {"A": ["cat"], "C": ["dog", "dog"], "B": []},
        "tree": {"A": ["oak"]},
    }
)

# Per answerer, by hand (surprisal = -log2((pool count + 1) / (others total + V))):
#
# A, color: others = B + C = [green, green, red, blue]; total 4, V = |{green, red, blue}| = 3,
#   mode green. red, red, blue each have pool count 1 -> -log2(2/7) each. All three avoid the
#   mode, none is novel, 2 distinct of 3.
# A, pet: others = C = [dog, dog]; total 2, V = |{dog, cat}| = 2, mode dog. cat: count 0 ->
#   -log2(1/4) = 2; avoids the mode, novel, 1 distinct of 1.
A_SURPRISALS = [-log2(2 / 7)] * 3 + [2.0]
A_EXPECTED = {
    "surprisal": sum(A_SURPRISALS) / 4,
    "modal_avoid": (3 + 1) / 4,
    "novel_rate": (0 + 1) / 4,
    "self_distinct": (2 / 3 + 1 / 1) / 2,
    "n_answers": 4,
}
# B, color only: others = A + C = [red, red, blue, red, blue]; total 5, V = |{red, blue,
#   green}| = 3, mode red. green, green: count 0 -> -log2(1/8) = 3 each; both avoid the mode,
#   both novel, 1 distinct of 2.
B_EXPECTED = {
    "surprisal": (3.0 + 3.0) / 2,
    "modal_avoid": 2 / 2,
    "novel_rate": 2 / 2,
    "self_distinct": 1 / 2,
    "n_answers": 2,
}
# C, color: others = A + B = [red, red, blue, green, green]; total 5, V = 3, mode red (tie
#   with green, red first). red: count 2 -> -log2(3/8); blue: count 1 -> -log2(2/8) = 2.
#   Only blue avoids the mode; none novel; 2 distinct of 2.
# C, pet: others = A = [cat]; total 1, V = |{cat, dog}| = 2, mode cat. dog, dog: count 0 ->
#   -log2(1/3) each; both avoid the mode, both novel, 1 distinct of 2.
C_SURPRISALS = [-log2(3 / 8), 2.0, -log2(1 / 3), -log2(1 / 3)]
C_EXPECTED = {
    "surprisal": sum(C_SURPRISALS) / 4,
    "modal_avoid": (1 + 2) / 4,
    "novel_rate": (0 + 2) / 4,
    "self_distinct": (2 / 2 + 1 / 2) / 2,
    "n_answers": 4,
}
# Medians over A, B, C: surprisal: A = 1.856..., B = 3, C = 1.646... -> A's; self_distinct:
# A = 0.833..., B = 0.5, C = 0.75 -> C's. "High" is strictly above the median.
#   A: surprisal = median (not high), 0.833 > 0.75 (high)   -> consensus-sampler
#   B: 3 > 1.856 (high), 0.5 (not high)                      -> true-contrarian
#   C: 1.646 (not high), 0.75 = median (not high)            -> consensus-fixed
EXPECTED = {
    "A": {**A_EXPECTED, "type": "consensus-sampler"},
    "B": {**B_EXPECTED, "type": "true-contrarian"},
    "C": {**C_EXPECTED, "type": "consensus-fixed"},
}


def test_field_orders_answerers_and_drops_empty_cells():
    assert FIELD.answerers == ("A", "B", "C")
    assert FIELD.categories == ("color", "pet", "tree")
    assert list(FIELD.answers["color"]) == ["A", "B", "C"]
    assert "B" not in FIELD.answers["pet"]
    assert FIELD.pooled("color", without="B") == ["red", "red", "blue", "red", "blue"]


def test_hand_values_order_as_the_type_comment_says():
    # The medians named above: A is the middle surprisal, C the middle self-distinctness.
    assert C_EXPECTED["surprisal"] < A_EXPECTED["surprisal"] < B_EXPECTED["surprisal"]
    assert B_EXPECTED["self_distinct"] < C_EXPECTED["self_distinct"] < A_EXPECTED["self_distinct"]


def test_skipped_categories():
    assert [score.category for score in kept_categories(FIELD, "A")] == ["color", "pet"]
    assert [score.category for score in kept_categories(FIELD, "B")] == ["color"]
    assert [score.category for score in kept_categories(FIELD, "C")] == ["color", "pet"]


def test_per_answer_surprisals():
    assert [s for score in kept_categories(FIELD, "A") for s in score.surprisals] == (
        pytest.approx(A_SURPRISALS)
    )
    assert [s for score in kept_categories(FIELD, "C") for s in score.surprisals] == (
        pytest.approx(C_SURPRISALS)
    )


@pytest.mark.parametrize("answerer", ["A", "B", "C"])
def test_answerer_metrics_match_the_hand_computation(answerer):
    metrics = answerer_metrics(FIELD)[answerer]
    expected = EXPECTED[answerer]
    assert metrics.surprisal == pytest.approx(expected["surprisal"])
    assert metrics.modal_avoid == pytest.approx(expected["modal_avoid"])
    assert metrics.novel_rate == pytest.approx(expected["novel_rate"])
    assert metrics.self_distinct == pytest.approx(expected["self_distinct"])
    assert metrics.n_answers == expected["n_answers"]
    assert metrics.type == expected["type"]


@pytest.mark.parametrize("answerer", ["A", "B", "C"])
def test_each_statistic_function_on_the_kept_categories(answerer):
    scores = kept_categories(FIELD, answerer)
    expected = EXPECTED[answerer]
    assert mean_surprisal(scores) == pytest.approx(expected["surprisal"])
    assert modal_avoid_rate(scores) == pytest.approx(expected["modal_avoid"])
    assert novel_rate(scores) == pytest.approx(expected["novel_rate"])
    assert self_distinctness(scores) == pytest.approx(expected["self_distinct"])


def test_mode_tie_goes_to_the_answer_that_occurs_first():
    assert modal_answer(["red", "red", "blue", "green", "green"]) == "red"
    assert modal_answer(["green", "green", "red", "red", "blue"]) == "green"
    # C's blue avoids the mode red; were green the mode, C would avoid it twice.
    [color, _] = kept_categories(FIELD, "C")
    assert color.n_modal_avoided == 1


def test_answer_surprisal_formula():
    # -log2((2 + 1) / (5 + 3))
    assert answer_surprisal("red", Counter(red=2, blue=3), 5, 3) == pytest.approx(log2(8 / 3))


@pytest.mark.parametrize(
    ("surprisal", "distinct", "expected"),
    [
        (2.0, 0.9, "explorer"),
        (2.0, 0.5, "true-contrarian"),
        (2.0, 0.6, "true-contrarian"),  # equal to the median is not high
        (1.0, 0.9, "consensus-sampler"),
        (1.5, 0.6, "consensus-fixed"),
    ],
)
def test_answerer_type_quadrants(surprisal, distinct, expected):
    assert answerer_type(surprisal, distinct, 1.5, 0.6) == expected


def test_answerer_with_nothing_to_score_is_left_out():
    field = AnswerField.from_answers({"tree": {"A": ["oak"]}, "pet": {"B": ["cat"]}})
    assert answerer_metrics(field) == {}


def test_answerer_without_any_valid_answer_is_not_in_the_field():
    records = [
        CensusRecord("A", "color", 0, "Blue"),
        CensusRecord("B", "color", 0, "Okay."),
        CensusRecord("C", "color", 0, "Red"),
    ]
    field = build_field(records)
    assert field.answerers == ("A", "C")
    assert [(cell.model, cell.reason) for cell in field.failed] == [("B", "acknowledgement")]
    assert list(answerer_metrics(field)) == ["A", "C"]


# --------------------------------------------------------------------------- bootstrap


def reference_ci(scores, draws, seed):
    """The docs/CENSUS.md "Bootstrap interval" written as a plain loop, one draw at a time."""
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(draws):
        drawn = [scores[i] for i in rng.choice(len(scores), size=len(scores), replace=True)]
        values.append(
            sum(sum(score.surprisals) for score in drawn)
            / sum(len(score.surprisals) for score in drawn)
        )
    return tuple(np.percentile(values, [5, 95]))


@pytest.mark.parametrize("answerer", ["A", "C"])
def test_surprisal_ci_equals_the_one_draw_at_a_time_bootstrap(answerer):
    scores = kept_categories(FIELD, answerer)
    assert surprisal_ci(scores) == pytest.approx(reference_ci(scores, 2000, 7))
    assert answerer_metrics(FIELD)[answerer].surprisal_ci90 == surprisal_ci(scores)


def test_surprisal_ci_stays_within_the_possible_draw_values():
    # A's draws pool {color, color}, {pet, pet} or {color, pet}:
    # mean -log2(2/7) = 1.807..., 2, or (3 * 1.807... + 2) / 4.
    low, high = surprisal_ci(kept_categories(FIELD, "A"))
    assert -log2(2 / 7) <= low <= high <= 2.0
    assert low < A_EXPECTED["surprisal"] < high


def test_surprisal_ci_of_a_single_category_is_a_point():
    assert answerer_metrics(FIELD)["B"].surprisal_ci90 == (3.0, 3.0)


def test_surprisal_ci_is_seeded():
    scores = kept_categories(FIELD, "C")
    assert surprisal_ci(scores, draws=500, seed=3) == surprisal_ci(scores, draws=500, seed=3)
    assert surprisal_ci(scores, draws=500, seed=3) == pytest.approx(reference_ci(scores, 500, 3))


# --------------------------------------------------------------------------- categories


def test_category_figures_by_hand():
    figures = category_figures(FIELD)
    # color pool (A, B, C): [red, red, blue, green, green, red, blue]: red 3, blue 2, green 2.
    # Runner-up among the 4 non-red answers [blue, green, green, blue]: blue and green tie
    # at 2, blue occurs first -> 2 / 4.
    color = figures["color"]
    assert (color.modal, color.n_distinct, color.n_answers) == ("red", 3, 7)
    assert color.modal_share == pytest.approx(3 / 7)
    assert color.second_share == pytest.approx(2 / 4)
    # pet pool: [cat, dog, dog]: dog 2 of 3; the one non-modal answer is cat -> 1 / 1.
    pet = figures["pet"]
    assert (pet.modal, pet.n_distinct, pet.n_answers) == ("dog", 2, 3)
    assert pet.modal_share == pytest.approx(2 / 3)
    assert pet.second_share == 1.0
    # tree pool: [oak]: no runner-up exists.
    tree = figures["tree"]
    assert (tree.modal, tree.modal_share, tree.second_share) == ("oak", 1.0, None)


def test_category_mode_tie_goes_to_first_answer():
    figures = figures_of_pool("c", ["b", "a", "a", "b", "c"])
    assert (figures.modal, figures.modal_share) == ("b", 2 / 5)
    # Without b: [a, a, c] -> a takes 2 of the 3 non-modal answers.
    assert figures.second_share == pytest.approx(2 / 3)
    assert second_place_share(["x", "x"]) is None


def test_frequent_answer_count_counts_exactly_five_percent():
    # 40 answers: oak 12 (30 %), pine 8 (20 %), maple 2 (exactly 5 %), 18 singletons (2.5 %).
    answers = ["oak"] * 12 + ["pine"] * 8 + ["maple"] * 2 + [f"tree-{i}" for i in range(18)]
    assert frequent_answer_count(answers) == 3
    assert frequent_answer_count(answers, share=0.25) == 1


# --------------------------------------------------------------------------- report


def test_report_shape_and_plain_numbers():
    report = census_report(answerer_metrics(FIELD), category_figures(FIELD))
    assert list(report) == ["per_model", "per_category"]
    assert set(report["per_model"]["A"]) == {*EXPECTED["A"], "surprisal_ci90"}
    assert report["per_model"]["B"]["surprisal_ci90"] == [3.0, 3.0]
    assert report["per_category"]["tree"] == {
        "modal": "oak",
        "modal_share": 1.0,
        "n_distinct": 1,
        "n_answers": 1,
        "second_share": None,
    }
    for entry in report["per_model"].values():
        for bound in entry["surprisal_ci90"]:
            assert type(bound) is float  # not a numpy scalar
