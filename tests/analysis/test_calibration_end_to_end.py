"""Calibration end to end: a judge's distributions imported with score_distribution, labels
through the services, the analysis job, ``calibration`` in the report, its page card and
calibration.csv. The expected divergences come from scipy (``jensenshannon``,
``wasserstein_distance``) over the rows read back from the database."""

from collections import defaultdict

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import spearmanr, wasserstein_distance

from analysis.services.analyses import latest_report
from analysis.services.scores import import_scores
from annotation.models import Item, Label
from tests.analysis.test_report_page import label_batch, read_csv, run_job_now
from tests.factories import make_batch
from tests.files import write_jsonl
from tests.staff import staff_client

# each test runs a whole analysis job (its figures drawn in three formats): seconds each
pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def test_a_judges_distributions_are_compared_with_the_human_histograms(tmp_path):
    batch = make_batch(kind="absolute", n_items=15, per_item=5)
    label_batch(batch, 5, lambda position, worker: 1 + (position + worker * (position % 3)) % 5)
    rng = np.random.default_rng(2)
    rows = []
    for item in Item.objects.filter(batch=batch).select_related("response"):
        distribution = rng.dirichlet(np.ones(5)).round(6)
        distribution[-1] = round(1 - distribution[:-1].sum(), 6)
        rows.append(
            {"source": "judge-p", "kind": "judge", "response_id": item.response.response_id,
             "score_distribution": distribution.tolist()}
        )  # fmt: skip
        rows.append(
            {"source": "rm-scalar", "kind": "reward_model",
             "response_id": item.response.response_id, "score": float(rng.normal())}
        )  # fmt: skip
    import_scores(write_jsonl(tmp_path / "scores.jsonl", rows))
    run_job_now(batch, bootstrap=100, seed=4)
    _, report = latest_report(batch)
    section = report["calibration"]
    assert section["bootstrap"] == {"unit": "item", "B": 100, "seed": 4}
    [judge] = section["sources"]
    assert judge["source"] == "judge-p"
    [scalar] = section["scalar_sources"]
    assert scalar["source"] == "rm-scalar" and "distribution" in section["scalar_note"]

    labels = defaultdict(list)
    for item_id, value in Label.objects.filter(batch=batch, status="counted").values_list(
        "item__item_id", "value"
    ):
        labels[item_id].append(value)
    given = {
        row["response_id"]: row["score_distribution"] for row in rows if "score_distribution" in row
    }
    jsd, emd, entropy = [], [], []
    for item in Item.objects.filter(batch=batch).select_related("response").order_by("position"):
        human = np.bincount(labels[item.item_id], minlength=6)[1:] / len(labels[item.item_id])
        judge_p = np.array(given[item.response.response_id])
        jsd.append(jensenshannon(human, judge_p, base=2) ** 2)
        emd.append(wasserstein_distance([1, 2, 3, 4, 5], [1, 2, 3, 4, 5], human, judge_p))
        entropy.append(-sum(p * np.log2(p) for p in human if p > 0))
    full = judge["subsets"]["full"]
    assert full["n"] == 15
    assert full["jsd"]["mean"] == pytest.approx(np.mean(jsd), abs=1e-9)
    assert full["emd"]["mean"] == pytest.approx(np.mean(emd), abs=1e-9)
    low, high = full["jsd"]["ci"]
    assert low <= full["jsd"]["mean"] <= high
    assert full["entropy_spearman"]["r"] == pytest.approx(spearmanr(jsd, entropy).statistic)
    assert set(judge["subsets"]) == {"full", "tukey_k1.5", "top_entropy_10pct"}

    researcher = staff_client("researcher")
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert "Calibration to the distribution" in page and 'id="chart-calibration"' in page
    table = read_csv(researcher.get(f"/manage/{batch.slug}/report/calibration.csv"))
    judge_full = next(r for r in table if r["source"] == "judge-p" and r["subset"] == "full")
    assert float(judge_full["jsd"]) == pytest.approx(full["jsd"]["mean"])
    scalar_row = next(r for r in table if r["source"] == "rm-scalar")
    assert float(scalar_row["spread_spearman_r"]) == pytest.approx(scalar["spread_spearman"]["r"])


def test_a_batch_without_scores_has_no_calibration():
    batch = make_batch(kind="absolute", n_items=4, per_item=3)
    label_batch(batch, 3, lambda position, worker: 3)
    run_job_now(batch, bootstrap=10)
    _, report = latest_report(batch)
    assert "calibration" not in report
