"""Genie novelty on a set small enough to score by hand.

One prompt ``p1``; questions q1 and q2 probe Plot, q3 probes Setting; target documents d1, d2;
population documents e1, e2, e3. e2 gave no answer to q2, d1 gave no answer to q3.

LLM similarities (``-`` = no usable pair)::

            q1 (Plot)     q2 (Plot)      q3 (Setting)
            e1 e2 e3      e1 e2 e3       e1 e2 e3
    d1       4  1  2       3  -  3        -  -  -      (d1 has no q3 answer)
    d2       1  1  1       2  -  4        1  4         (e3 not judged for q3)

Human labels: (q1, d1, e1) = 4 and 3 (two labels); (q1, d1, e2) = 2; (q1, d2, e1) = 1;
(q2, d1, e2) = 3 (dropped: e2 has no q2 answer).
"""

import json

import numpy as np
import pytest

from diversity.genie.core.pairs import pair_similarities, paired_judgments
from diversity.genie.core.report import genie_report
from diversity.genie.core.scoring import (
    DocumentFeatureScore,
    document_scores,
    feature_novelty,
    feature_summary,
    normalised_similarity,
    question_novelty,
)
from diversity.genie.records import Judgment

FEATURES = {"q1": "Plot", "q2": "Plot", "q3": "Setting"}
# No answer: e2 to q2, d1 to q3.
MISSING = {("q2", "e2"), ("q3", "d1")}


def judgment(question, document, member, similarity, source="llm"):
    return Judgment(
        prompt_id="p1",
        question_id=question,
        feature=FEATURES[question],
        document_id=document,
        population_id=member,
        target_answer=None if (question, document) in MISSING else f"{document}:{question}",
        population_answer=None if (question, member) in MISSING else f"{member}:{question}",
        similarity=similarity,
        source=source,
    )


LLM = [
    *(judgment("q1", "d1", e, s) for e, s in [("e1", 4), ("e2", 1), ("e3", 2)]),
    *(judgment("q1", "d2", e, s) for e, s in [("e1", 1), ("e2", 1), ("e3", 1)]),
    *(judgment("q2", "d1", e, s) for e, s in [("e1", 3), ("e2", None), ("e3", 3)]),
    # e2 has no answer: a similarity given anyway is ignored.
    *(judgment("q2", "d2", e, s) for e, s in [("e1", 2), ("e2", 4), ("e3", 4)]),
    *(judgment("q3", "d1", e, None) for e in ["e1", "e2", "e3"]),
    *(judgment("q3", "d2", e, s) for e, s in [("e1", 1), ("e2", 4)]),
]
HUMAN = [
    judgment("q1", "d1", "e1", 4, "human"),
    judgment("q1", "d1", "e1", 3, "human"),
    judgment("q1", "d1", "e2", 2, "human"),
    judgment("q1", "d2", "e1", 1, "human"),
    judgment("q2", "d1", "e2", 3, "human"),
]

# By hand, norm = (sim - 1) / 3 and Q = 1 - mean(norm):
# d1: Q1 = 1 - (3/3 + 0/3 + 1/3) / 3 = 5/9; Q2 = 1 - (2/3 + 2/3) / 2 = 1/3
#     Plot = (5/9 + 1/3) / 2 = 4/9; Setting: no usable pair -> no score.
# d2: Q1 = 1 - 0 = 1; Q2 = 1 - (1/3 + 3/3) / 2 = 1/3 (e2 dropped)
#     Plot = (1 + 1/3) / 2 = 2/3; Setting: Q3 = 1 - (0/3 + 3/3) / 2 = 1/2.
D1_PLOT = ((1 - (1 + 0 + 1 / 3) / 3) + (1 - (2 / 3 + 2 / 3) / 2)) / 2
D2_PLOT = ((1 - 0) + (1 - (1 / 3 + 1) / 2)) / 2
D2_SETTING = 1 - (0 + 1) / 2


def scores_by_key(scores):
    return {(score.document_id, score.feature): score for score in scores}


def test_normalised_similarity_maps_1_to_4_onto_0_to_1():
    assert [normalised_similarity(s) for s in (1, 2.5, 4)] == [0.0, 0.5, 1.0]


def test_question_novelty():
    assert question_novelty([4, 1, 2]) == pytest.approx(1 - (1 + 0 + 1 / 3) / 3)
    assert question_novelty(np.array([1.0, 1.0])) == 1.0
    assert question_novelty([2.5]) == pytest.approx(0.5)  # a mean of human labels


def test_question_novelty_drops_missing_pairs():
    assert question_novelty([None, 3, float("nan")]) == pytest.approx(1 / 3)
    assert question_novelty([None, None]) is None
    assert question_novelty([]) is None


def test_feature_novelty_skips_unscored_questions():
    assert feature_novelty([None, 0.2, 0.4]) == pytest.approx(0.3)
    assert feature_novelty([None]) is None
    assert feature_novelty([]) is None


def test_document_scores_by_hand():
    scores = scores_by_key(document_scores(LLM, source="llm"))
    assert set(scores) == {("d1", "Plot"), ("d2", "Plot"), ("d2", "Setting")}
    assert scores["d1", "Plot"].novelty == pytest.approx(4 / 9)
    assert scores["d1", "Plot"].novelty == pytest.approx(D1_PLOT)
    assert scores["d2", "Plot"].novelty == pytest.approx(2 / 3)
    assert scores["d2", "Plot"].novelty == pytest.approx(D2_PLOT)
    assert scores["d2", "Setting"].novelty == pytest.approx(D2_SETTING)
    assert scores["d2", "Setting"].n_questions == 1
    assert scores["d1", "Plot"].n_questions == 2


def test_feature_without_usable_question_is_absent_not_nan():
    scores = document_scores(LLM, source="llm")
    assert ("d1", "Setting") not in scores_by_key(scores)
    assert all(np.isfinite(score.novelty) for score in scores)


def test_document_scores_use_one_source_and_average_human_labels():
    # d1, q1: human pairs e1 = mean(4, 3) = 3.5 and e2 = 2 -> 1 - (2.5/3 + 1/3) / 2 = 5/12;
    # q2's only human pair has no population answer, so Plot = Q1.
    scores = scores_by_key(document_scores(LLM + HUMAN, source="human"))
    assert set(scores) == {("d1", "Plot"), ("d2", "Plot")}
    assert scores["d1", "Plot"].novelty == pytest.approx(5 / 12)
    assert scores["d2", "Plot"].novelty == 1.0
    # Human rows do not leak into the llm scores.
    assert document_scores(LLM + HUMAN, source="llm") == document_scores(LLM, source="llm")


def test_pair_similarities_average_labels_and_drop_unusable_pairs():
    human = pair_similarities(HUMAN, "human")
    assert [tuple(key) for key in human] == [
        ("p1", "q1", "d1", "e1"),
        ("p1", "q1", "d1", "e2"),
        ("p1", "q1", "d2", "e1"),
    ]
    assert list(human.values()) == [3.5, 2.0, 1.0]


def test_paired_judgments_align_llm_and_human_on_the_pair():
    llm, human = paired_judgments(list(reversed(LLM + HUMAN)))
    # Shared usable pairs in key order: (q1, d1, e1), (q1, d1, e2), (q1, d2, e1).
    np.testing.assert_array_equal(llm, [4.0, 1.0, 1.0])
    np.testing.assert_array_equal(human, [3.5, 2.0, 1.0])


def test_paired_judgments_of_one_source_only_are_empty():
    llm, human = paired_judgments(LLM)
    assert llm.shape == human.shape == (0,)


# --------------------------------------------------------------------------- summaries


def reference_interval(values, draws, seed, level):
    """The bootstrap written as a plain loop, one resample of the documents at a time."""
    rng = np.random.default_rng(seed)
    means = [np.mean(rng.choice(values, size=len(values), replace=True)) for _ in range(draws)]
    tail = (1 - level) / 2 * 100
    return tuple(np.percentile(means, [tail, 100 - tail]))


def test_feature_summary_mean_and_interval():
    summary = feature_summary(document_scores(LLM, source="llm"))
    plot = summary["Plot"]
    assert plot.mean == pytest.approx((4 / 9 + 2 / 3) / 2)
    assert plot.n_documents == 2
    assert plot.level == 0.95
    # Resampling two documents gives means 4/9, 5/9 or 2/3 only.
    assert 4 / 9 - 1e-12 <= plot.ci_low <= plot.mean <= plot.ci_high <= 2 / 3 + 1e-12
    assert (plot.ci_low, plot.ci_high) == pytest.approx(
        reference_interval([4 / 9, 2 / 3], 1000, 7, 0.95)
    )
    setting = summary["Setting"]
    assert (setting.mean, setting.ci_low, setting.ci_high) == (0.5, 0.5, 0.5)


def test_feature_summary_is_reproducible_with_its_seed():
    novelties = [0.1, 0.35, 0.4, 0.8, 0.55, 0.2, 0.9]
    scores = [DocumentFeatureScore("p", f"d{i}", "Style", v, 1) for i, v in enumerate(novelties)]
    first = feature_summary(scores, draws=2000, seed=11, level=0.9)["Style"]
    again = feature_summary(scores, draws=2000, seed=11, level=0.9)["Style"]
    assert first == again
    assert (first.ci_low, first.ci_high) == pytest.approx(
        reference_interval(novelties, 2000, 11, 0.9)
    )
    assert first.mean == pytest.approx(np.mean(novelties))
    assert first.ci_low < first.mean < first.ci_high
    other_seed = feature_summary(scores, draws=2000, seed=12, level=0.9)["Style"]
    assert (other_seed.ci_low, other_seed.ci_high) != (first.ci_low, first.ci_high)


def test_report_is_plain_json():
    scores = document_scores(LLM, source="llm")
    report = genie_report(scores, feature_summary(scores))
    assert json.loads(json.dumps(report, allow_nan=False)) == report
    d1 = report["per_document"][0]
    assert (d1["document_id"], list(d1["features"])) == ("d1", ["Plot"])
    assert report["per_feature"]["Setting"] == {
        "mean": 0.5,
        "ci": [0.5, 0.5],
        "ci_level": 0.95,
        "n_documents": 1,
    }
