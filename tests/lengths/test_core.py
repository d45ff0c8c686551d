"""The length statistics' pure core against figures worked out by hand and by the standard
library (statistics.quantiles' inclusive method is numpy's linear percentile)."""

import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diversity.lengths.core.lengths import Response, length_report, words


def test_hand_figures():
    responses = [
        Response("q1", "alpha", "ab"),  # 2 characters, 1 word
        Response("q1", "alpha", "ab cd ef"),  # 8, 3
        Response("q1", "beta", "  spaced\tout\nwords  "),  # 20, 3
        Response("q2", "alpha", "ééé"),  # 3 code points, 1 word
        Response("q2", "beta", ""),  # 0, 0
    ]
    report = length_report(responses, tail=50)
    alpha = report["per_model"]["alpha"]
    assert alpha["n_responses"] == 3
    assert alpha["characters"] == {"mean": 13 / 3, "median": 3.0, "tail": 3.0}
    assert alpha["words"] == {"mean": 5 / 3, "median": 1.0, "tail": 1.0}
    beta = report["per_model"]["beta"]
    assert beta["characters"] == {"mean": 10.0, "median": 10.0, "tail": 10.0}
    assert report["per_query"]["q1"] == {
        "n_responses": 3,
        "mean_characters": 10.0,
        "median_characters": 8.0,
        "longest_model": "beta",  # 20 against alpha's mean of 5
    }
    assert report["per_query"]["q2"]["longest_model"] == "alpha"
    assert (report["n_responses"], report["n_models"], report["n_queries"]) == (5, 2, 2)
    assert report["characters"]["median"] == 3.0


def test_a_tie_names_the_first_model_by_name():
    responses = [Response("q", "zeta", "abc"), Response("q", "alpha", "xyz")]
    assert length_report(responses)["per_query"]["q"]["longest_model"] == "alpha"


def test_words_are_runs_of_non_whitespace():
    assert words("one  two\u00a0three\n\nfour") == 4  # a no-break space separates too
    assert words("") == 0 and words("   ") == 0


@pytest.mark.parametrize("tail", [0, 100, -5])
def test_a_tail_outside_1_to_99_is_refused(tail):
    with pytest.raises(ValueError, match="tail"):
        length_report([Response("q", "m", "x")], tail=tail)


def test_no_responses_give_no_overall_figures():
    report = length_report([])
    assert report["n_responses"] == 0 and report["characters"] is None


@given(
    st.lists(st.text(max_size=40), min_size=2, max_size=30),
    st.integers(min_value=1, max_value=99),
)
def test_the_figures_agree_with_the_standard_library(texts, tail):
    report = length_report([Response("q", "m", text) for text in texts], tail=tail)
    lengths = [len(text) for text in texts]
    figures = report["per_model"]["m"]["characters"]
    assert figures["mean"] == pytest.approx(statistics.fmean(lengths))
    assert figures["median"] == pytest.approx(statistics.median(lengths))
    cut = statistics.quantiles(lengths, n=100, method="inclusive")[tail - 1]
    assert figures["tail"] == pytest.approx(cut)
