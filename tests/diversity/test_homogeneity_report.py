"""The JSON report: its shape, plain numbers only, null for what is undefined."""

import json
import math

import numpy as np
import pytest

from diversity.homogeneity.pipeline import AnalysisSettings, QueryPool, analyse_corpus
from diversity.homogeneity.report import analysis_report, json_number

from .test_homogeneity_pipeline import MODEL_NAMES, SETTINGS, random_corpus


def walk(value):
    if isinstance(value, dict):
        for key, item in value.items():
            assert isinstance(key, str)
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)
    else:
        yield value


@pytest.fixture(scope="module")
def report():
    return analysis_report(analyse_corpus(random_corpus(0, n_queries=15), MODEL_NAMES, SETTINGS))


def test_report_is_strict_json_of_plain_values(report):
    text = json.dumps(report, allow_nan=False)
    assert json.loads(text) == report
    for leaf in walk(report):
        assert leaf is None or type(leaf) in (int, float, str, bool)


def test_report_shape(report):
    intra = report["intra_model"]
    assert set(intra) == set(MODEL_NAMES) | {"pooled"}
    pooled = intra["pooled"]
    assert set(pooled) == {"values", "mean", "histogram", "share_above_0.8", "share_above_0.9"}
    assert len(pooled["histogram"]) == 10 and sum(pooled["histogram"]) == pytest.approx(1)

    inter = report["inter_model"]
    assert sorted(inter["models"]) == sorted(MODEL_NAMES)
    assert len(inter["matrix"]) == 4 and all(len(row) == 4 for row in inter["matrix"])
    for position, name in enumerate(inter["models"]):
        assert inter["matrix"][position][position] == pytest.approx(intra[name]["mean"])
    best = inter["most_similar"][0]
    assert set(best) == {"models", "similarity", "queries"}
    assert best["similarity"] >= inter["least_similar"][0]["similarity"]

    top_n = report["top_n"]
    assert top_n["n"] == list(range(1, 9))
    assert len(top_n["mean_unique_models"]) == 8 and len(top_n["ci95"]) == 8
    assert all(lo <= hi for lo, hi in top_n["ci95"] if lo is not None)

    assert set(report["lexical"]["by_query"]) == {
        "distinct_1", "distinct_2", "distinct_3", "duplicate_share",
    }  # fmt: skip
    assert set(report["by_category"]) == {"facts", "poems"}
    facts = report["by_category"]["facts"]
    assert facts["queries"] == 10 and facts["small"] is False
    assert {"intra_model", "inter_model", "top_n", "lexical"} <= set(facts)
    assert report["settings"]["max_n"] == 8 and report["models"] == MODEL_NAMES


def test_undefined_figures_become_null():
    # one query, two responses of different models: no intra value, top-N only at N = 1
    pool = QueryPool("q", np.eye(2), np.array([0, 1]))
    report = analysis_report(analyse_corpus([pool], ["a", "b"], AnalysisSettings(max_n=3)))
    assert report["intra_model"]["a"]["mean"] is None
    assert report["intra_model"]["pooled"]["histogram"] == [None] * 10
    assert report["inter_model"]["matrix"][0][0] is None
    assert report["top_n"]["mean_unique_models"] == [1.0, None, None]
    assert report["top_n"]["ci95"][1] == [None, None]
    assert report["lexical"] is None
    json.dumps(report, allow_nan=False)


def test_model_may_not_be_called_pooled():
    pool = QueryPool("q", np.eye(2), np.array([0, 1]))
    with pytest.raises(ValueError, match="pooled"):
        analysis_report(analyse_corpus([pool], ["pooled", "b"], SETTINGS))


def test_json_number():
    assert json_number(np.float32(0.5)) == 0.5 and type(json_number(np.float64(1))) is float
    assert json_number(np.int64(3)) == 3 and type(json_number(np.int64(3))) is int
    assert json_number(math.nan) is None and json_number(-math.inf) is None
    assert json_number(None) is None and json_number(np.bool_(True)) is True
