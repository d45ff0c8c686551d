"""Model rankings end to end: labels through the real services, the analysis job, the report
JSON, the page section, rankings.csv and the API. Expected strengths are fitted here from the
rows read back from the database with an independent Davidson likelihood (scipy.optimize)."""

import json
from collections import defaultdict

import numpy as np
import pytest
from scipy import optimize

from analysis.services.analyses import latest_report
from annotation.models import Item, Label, Response
from tests.analysis.test_competence_end_to_end import label_canonically
from tests.analysis.test_report_page import label_batch, read_csv, run_job_now
from tests.analysis.test_stats_rankings import davidson_log_likelihood
from tests.factories import make_batch
from tests.staff import staff_client

# each test runs a whole analysis job (its figures drawn in three formats): seconds each
pytestmark = [pytest.mark.django_db, pytest.mark.slow]

MODELS = ["alpha", "beta", "gamma"]


def name_models(batch) -> None:
    """Give each item's responses models: pairs cycle through the three pairings."""
    pairings = [(0, 1), (1, 2), (0, 2)]
    for item in Item.objects.filter(batch=batch).order_by("position"):
        if batch.kind == "pairwise":
            a, b = pairings[item.position % 3]
            Response.objects.filter(pk=item.response_a_id).update(model=MODELS[a])
            Response.objects.filter(pk=item.response_b_id).update(model=MODELS[b])
        else:
            Response.objects.filter(pk=item.response_id).update(model=MODELS[item.position % 3])


def preference(position: int, worker: int) -> int:
    # alpha > beta > gamma mostly, with ties and some upsets by worker
    pairing = position % 3
    base = {0: 1, 1: 1, 2: 2}[pairing]
    return [base, base, 0, -1, base][(position + worker) % 5]


def davidson_fit(rows) -> tuple[dict[str, float], float]:
    """Log-strengths (summing to zero) and ν by maximum likelihood (scipy.optimize over
    Davidson's likelihood), from (model A, model B, value) rows: > 0 a win for A, < 0 for B,
    0 a tie."""
    wins, ties = np.zeros((3, 3)), np.zeros((3, 3))
    for model_a, model_b, value in rows:
        a, b = MODELS.index(model_a), MODELS.index(model_b)
        if value == 0:
            ties[a, b] += 1
            ties[b, a] += 1
        elif value > 0:
            wins[a, b] += 1
        else:
            wins[b, a] += 1

    def negative(free):
        theta = np.append(free[:2], -free[:2].sum())
        return -davidson_log_likelihood(theta, free[2], wins, ties)

    found = optimize.minimize(negative, np.zeros(3), method="BFGS", options={"gtol": 1e-10})
    theta = np.append(found.x[:2], -found.x[:2].sum())
    return dict(zip(MODELS, theta, strict=True)), float(np.exp(found.x[2]))


def test_pairwise_report_ranks_the_named_models(tmp_path):
    batch = make_batch(kind="pairwise", n_items=18, per_item=5)
    name_models(batch)
    label_canonically(batch, 5, preference)  # A and B as imported, whatever the order shown
    run_job_now(batch, bootstrap=100, seed=3)
    _, report = latest_report(batch)
    section = report["rankings"]
    assert section["absolute"] is None
    fit = section["bradley_terry"]
    assert fit["identifiability"] == "sum_to_zero"
    assert fit["bootstrap"] == {"unit": "annotator", "B": 100, "seed": 3, "n_used": 100}

    # the same maximum from the database rows, by a likelihood written in the tests
    rows = Label.objects.filter(batch=batch, status="counted").values_list(
        "item__response_a__model", "item__response_b__model", "value"
    )
    expected, nu = davidson_fit(rows)
    by_model = {entry["model"]: entry for entry in fit["models"]}
    for model in MODELS:
        assert by_model[model]["log_strength"] == pytest.approx(expected[model], abs=1e-6)
        low, high = by_model[model]["ci"]
        assert low <= by_model[model]["log_strength"] <= high
    assert sum(entry["log_strength"] for entry in fit["models"]) == pytest.approx(0, abs=1e-9)
    assert fit["tie_parameter"] == pytest.approx(nu, rel=1e-6)
    assert [entry["model"] for entry in fit["models"]] == sorted(MODELS, key=lambda m: -expected[m])
    assert sum(entry["n_comparisons"] for entry in fit["models"]) == 2 * len(rows)
    assert set(fit["by_subset"]) == {"most_ties_80pct", "least_agreement_80pct"}
    assert fit["win_probability"]["models"] == [entry["model"] for entry in fit["models"]]

    researcher = staff_client("researcher")
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert "Model rankings" in page and "ν =" in page and 'id="chart-rankings"' in page
    table = read_csv(researcher.get(f"/manage/{batch.slug}/report/rankings.csv"))
    full = [row for row in table if row["subset"] == "full"]
    assert [row["model"] for row in full] == [entry["model"] for entry in fit["models"]]
    assert float(full[0]["value"]) == pytest.approx(fit["models"][0]["log_strength"])
    subset_rows = [row for row in table if row["subset"] == "least_agreement_80pct"]
    tau = fit["by_subset"]["least_agreement_80pct"]["kendall_tau"]["tau"]
    assert subset_rows and all(
        float(row["kendall_tau"]) == pytest.approx(tau) for row in subset_rows
    )
    matrix = read_csv(researcher.get(f"/manage/{batch.slug}/report/win_probability.csv"))
    order = fit["win_probability"]["models"]
    assert [row["model"] for row in matrix] == order
    for i, row in enumerate(matrix):
        for j, other in enumerate(order):
            expected = fit["win_probability"]["matrix"][i][j]
            assert (row[other] == "") if expected is None else float(row[other]) == expected
    api = researcher.get(f"/api/v1/batches/{batch.slug}/report")
    assert api.json()["rankings"] == json.loads(json.dumps(section))


def test_absolute_report_ranks_mean_ratings_with_annotator_centring():
    batch = make_batch(kind="absolute", n_items=12, per_item=4)
    name_models(batch)
    label_batch(batch, 4, lambda position, worker: 1 + (position % 3) + (worker % 2))
    run_job_now(batch, bootstrap=50, seed=0)
    _, report = latest_report(batch)
    section = report["rankings"]
    assert section["bradley_terry"] is None
    values = defaultdict(list)
    by_annotator = defaultdict(list)
    rows = list(
        Label.objects.filter(batch=batch, status="counted").values_list(
            "item__response__model", "annotator_id", "value"
        )
    )
    for _model, annotator, value in rows:
        by_annotator[annotator].append(value)
    centred = defaultdict(list)
    for model, annotator, value in rows:
        values[model].append(value)
        centred[model].append(value - np.mean(by_annotator[annotator]))
    by_model = {entry["model"]: entry for entry in section["absolute"]["models"]}
    for model in MODELS:
        assert by_model[model]["mean"] == pytest.approx(np.mean(values[model]), abs=1e-12)
        assert by_model[model]["centred_mean"] == pytest.approx(np.mean(centred[model]), abs=1e-12)
        assert by_model[model]["n_labels"] == len(values[model])
    assert [entry["model"] for entry in section["absolute"]["models"]] == ["gamma", "beta", "alpha"]


def test_a_batch_whose_items_name_one_model_has_no_rankings():
    batch = make_batch(kind="pairwise", n_items=6, per_item=3)  # all "model-x"
    label_batch(batch, 3, lambda position, worker: 1)
    run_job_now(batch, bootstrap=10)
    _, report = latest_report(batch)
    assert "rankings" not in report
    page = staff_client("researcher").get(f"/manage/{batch.slug}/report").content.decode()
    assert "No ranking: the items name fewer than two models" in page
    assert "Rankings CSV" not in page
