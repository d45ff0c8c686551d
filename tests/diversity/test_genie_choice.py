"""Choosing which difference to read: two methods (or two models) of a Genie report, through
the set page's "Compare" form and ``GET /api/v1/genie/<name>/comparison``. Expected means,
differences, intervals and p-values are computed here from GENIE's own scores
(``compute_genie_reference``), with the bootstrap loop of ``test_genie_comparison``."""

import itertools
import re

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command

from diversity.genie.core.report import chosen_comparison
from tests.diversity import genie_native_set as genie
from tests.diversity.test_genie_comparison import two_stage_draws
from tests.diversity.test_genie_native import compute_genie_reference
from tests.staff import staff_client, token_client

pytestmark = pytest.mark.django_db

DRAWS, SEED = 200, 3


@pytest.fixture
def methods_set(tmp_path):
    """GENIE's similarity file for two models and three methods over four prompts,
    imported and analysed; returns the records and GENIE's own scores."""
    records = genie.rows(seed=8, prompts=genie.METHODS_PROMPTS, models=genie.METHODS_MODELS)
    path = tmp_path / "similarity.jsonl"
    path.write_text(genie.jsonl(records), "utf-8")
    call_command("import_genie", "methods", str(path))
    call_command("analyze_genie", "methods", "--bootstrap", str(DRAWS), "--seed", str(SEED))
    expected, _ = compute_genie_reference(path)
    return records, expected


def expected_difference(records, scores: pd.DataFrame, first: str, second: str, feature):
    """first − second (methods) from GENIE's scores: per prompt the mean of each method's
    documents, the mean of the per-prompt differences, its exact sign-flip p and the two-stage
    bootstrap interval."""
    method = scores["Model_1"].str.partition("+")[2].replace("", "(none)")
    scores = scores.assign(method=method)
    if feature is None:  # a document's overall score: the mean of its feature scores
        scores = scores.groupby(["Prompt", "Model_1", "DocID_1", "method"], as_index=False)[
            "GENIE"
        ].mean()
    else:
        scores = scores[scores["Feature"] == feature]
    value = {(r.Prompt, r.Model_1, r.DocID_1): r.GENIE for r in scores.itertuples()}
    group = {(r.Prompt, r.Model_1, r.DocID_1): r.method for r in scores.itertuples()}
    # the report keeps documents in the order of their first scored pair in the file
    scored = [
        r
        for r in records
        if r["Similarity"] in (1, 2, 3, 4)
        and r["Answer_1"] not in genie.EXCLUDED
        and r["Answer_2"] not in genie.EXCLUDED
    ]
    order = list(dict.fromkeys((r["Prompt"], r["Model_1"], r["DocID_1"]) for r in scored))
    docs = {name: {} for name in (first, second)}
    for key in order:
        if key in value and group[key] in docs:
            docs[group[key]].setdefault(key[0], []).append(value[key])
    prompts = [p for p in docs[first] if p in docs[second]]
    d = np.array([np.mean(docs[first][p]) - np.mean(docs[second][p]) for p in prompts])
    flips = [abs(np.mean(np.array(s) * d)) for s in itertools.product([1, -1], repeat=d.size)]
    p_value = sum(f >= abs(d.mean()) - 1e-12 for f in flips) / len(flips)
    draws = two_stage_draws(
        [docs[first][p] for p in prompts],
        np.random.default_rng(SEED),
        DRAWS,
        [docs[second][p] for p in prompts],
    )
    return d.mean(), p_value, np.percentile(draws, [2.5, 97.5]), len(prompts)


def test_the_api_compares_the_chosen_methods(methods_set):
    records, scores = methods_set
    api = token_client("researcher")
    answer = api.get(
        "/api/v1/genie/methods/comparison",
        {"by": "method", "first": "persona", "second": "(none)"},
    )
    assert answer.status_code == 200
    found = answer.json()
    assert (found["source"], found["by"], found["first"], found["second"]) == (
        "llm", "method", "persona", "(none)",
    )  # fmt: skip
    rows = {row["feature"]: row for row in found["per_feature"]}
    assert list(rows) == ["Plot", "Setting", "(all features)"]
    for feature in ("Plot", "Setting", None):
        row = rows[feature or "(all features)"]
        difference, p_value, (low, high), n = expected_difference(
            records, scores, "persona", "(none)", feature
        )
        assert row["difference"]["difference"] == pytest.approx(difference, abs=1e-12)
        assert row["difference"]["p"] == pytest.approx(p_value, abs=1e-12)
        assert row["difference"]["exact"] and row["difference"]["n_prompts"] == n == 4
        assert row["difference"]["ci"] == [
            pytest.approx(low, abs=1e-12),
            pytest.approx(high, abs=1e-12),
        ]
    # the report's own table has the same figures for a pair it lists
    report = api.get("/api/v1/genie/methods/report").json()
    listed = report["scores"]["llm"]["comparisons"]["method"]["per_feature"]["Plot"]
    same = next(d for d in listed["differences"] if (d["first"], d["second"]) == ("(none)", "hot"))
    again = api.get(
        "/api/v1/genie/methods/comparison", {"by": "method", "first": "(none)", "second": "hot"}
    ).json()
    assert again["per_feature"][0]["difference"] == same

    for params, field in (
        ({"by": "method", "first": "persona", "second": "sideways"}, "second"),
        ({"by": "method", "first": "persona", "second": "persona"}, "second"),
        ({"by": "colour", "first": "persona", "second": "hot"}, "by"),
        ({"by": "model", "first": "gpt-4o", "second": "llama-3", "source": "human"}, "source"),
    ):
        refused = api.get("/api/v1/genie/methods/comparison", params)
        assert refused.status_code == 400 and refused.json()["field"] == field, params
    assert api.get("/api/v1/genie/nothing/comparison", {"by": "model"}).status_code == 404


def test_the_page_shows_the_chosen_difference(methods_set):
    records, scores = methods_set
    page = staff_client("researcher")
    html = page.get("/manage/genie/methods/").content.decode()
    assert 'id="compare"' in html and 'id="chosen-comparison"' not in html
    assert '<optgroup label="Methods">' in html and '<optgroup label="Models">' in html
    chosen = page.get(
        "/manage/genie/methods/",
        {"source": "llm", "first": "model:llama-3", "second": "model:gpt-4o"},
    )
    assert chosen.status_code == 200
    html = chosen.content.decode()
    table = html.split('id="chosen-comparison"')[1].split("</table>")[0]
    assert 'data-first="llama-3" data-second="gpt-4o"' in html
    assert 'id="chosen-chart"' in html
    for feature in ("Plot", "Setting"):
        row = re.search(rf'<tr data-feature="{feature}">(.*?)</tr>', table).group(1)
        shown = re.search(r'data-field="difference">([^<]+)<', row).group(1)
        by_model = scores.assign(model=scores["Model_1"].str.partition("+")[0])
        by_model = by_model[by_model["Feature"] == feature]
        per_prompt = by_model.groupby(["model", "Prompt"])["GENIE"].mean()
        expected = (per_prompt["llama-3"] - per_prompt["gpt-4o"]).mean()
        assert shown == f"{expected:.3f}".replace("-", "−")

    mixed = page.get(
        "/manage/genie/methods/",
        {"source": "llm", "first": "model:llama-3", "second": "method:persona"},
    )
    assert mixed.status_code == 400
    assert "Choose two models, or two methods — not one of each." in mixed.content.decode()
    unknown = page.get(
        "/manage/genie/methods/", {"source": "llm", "first": "model:x", "second": "model:gpt-4o"}
    )
    assert unknown.status_code == 400 and 'id="id_first_error"' in unknown.content.decode()


def test_chosen_comparison_refuses_groups_it_does_not_have():
    documents = [
        {"prompt_id": "p", "document_id": "d", "model": "m", "method": None,
         "features": {"Plot": {"novelty": 0.5, "n_questions": 1}}},
    ]  # fmt: skip
    with pytest.raises(ValueError, match="'x' is not a model"):
        chosen_comparison(documents, ["Plot"], "model", "m", "x", draws=5, seed=0, permutations=5)
