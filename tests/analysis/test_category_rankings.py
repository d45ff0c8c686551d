"""Model rankings and calibration per category (``by_category``): the same fits on each
category's items alone, in the report, on the page and in category_rankings.csv /
category_calibration.csv. Expected strengths are maximum-likelihood fits written in the tests
(scipy.optimize over Davidson's likelihood) from the rows read back from the database;
expected divergences come from scipy's ``jensenshannon``."""

from collections import defaultdict

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon

from analysis.services.analyses import latest_report
from analysis.services.scores import import_scores
from annotation.models import Item, Label
from tests.analysis.test_competence_end_to_end import label_canonically
from tests.analysis.test_rankings_end_to_end import MODELS, davidson_fit, name_models, preference
from tests.analysis.test_report_page import read_csv, run_job_now
from tests.factories import make_categorised_batch
from tests.files import write_jsonl
from tests.staff import staff_client

# each test runs a whole analysis job (its figures drawn in three formats): seconds each
pytestmark = [pytest.mark.django_db, pytest.mark.slow]

# "code" items (positions 0-8) prefer alpha > beta > gamma; "chat" items (9-17) the reverse
TAXONOMY = [("code", "", 9), ("chat", "", 9)]


def by_category(position: int, worker: int) -> int:
    value = preference(position, worker)
    return value if position < 9 else -value


def test_each_category_is_ranked_and_calibrated_on_its_own_items(tmp_path):
    batch = make_categorised_batch(TAXONOMY, kind="pairwise", per_item=5)
    name_models(batch)
    label_canonically(batch, 5, by_category)
    rng = np.random.default_rng(5)
    given = {}
    for item in Item.objects.filter(batch=batch):
        distribution = rng.dirichlet(np.ones(5)).round(6)
        distribution[-1] = round(1 - distribution[:-1].sum(), 6)
        given[item.item_id] = distribution.tolist()
    rows = [
        {"source": "judge-p", "kind": "judge", "item_id": item_id, "score_distribution": p}
        for item_id, p in given.items()
    ]
    import_scores(write_jsonl(tmp_path / "judge.jsonl", rows), batch=batch)
    run_job_now(batch, bootstrap=20, seed=2)
    _, report = latest_report(batch)
    entries = {entry["category"]: entry for entry in report["by_category"]}
    assert list(entries) == ["chat", "code"]

    labels = Label.objects.filter(batch=batch, status="counted")
    for category in ("chat", "code"):
        mine = labels.filter(item__query__category=category)
        expected, nu = davidson_fit(
            mine.values_list("item__response_a__model", "item__response_b__model", "value")
        )
        fit = entries[category]["rankings"]["bradley_terry"]
        by_model = {entry["model"]: entry for entry in fit["models"]}
        for model in MODELS:
            assert by_model[model]["log_strength"] == pytest.approx(expected[model], abs=1e-6)
            low, high = by_model[model]["ci"]
            assert low <= by_model[model]["log_strength"] <= high
        assert fit["tie_parameter"] == pytest.approx(nu, rel=1e-6)
        assert fit["bootstrap"]["unit"] == "annotator"
        assert sum(entry["n_comparisons"] for entry in fit["models"]) == 2 * mine.count()
        assert entries[category]["rankings"]["absolute"] is None

        # the judge against the human histogram of each of the category's items
        counts = defaultdict(lambda: np.zeros(5))
        for item_id, value in mine.values_list("item__item_id", "value"):
            counts[item_id][value + 2] += 1
        jsd = [
            jensenshannon(counts[item_id] / counts[item_id].sum(), given[item_id], base=2) ** 2
            for item_id in counts
        ]
        [judge] = entries[category]["calibration"]["sources"]
        assert judge["subsets"]["full"]["n"] == len(jsd) == 9
        assert judge["subsets"]["full"]["jsd"]["mean"] == pytest.approx(np.mean(jsd), abs=1e-9)
    order = {
        c: [e["model"] for e in entries[c]["rankings"]["bradley_terry"]["models"]] for c in entries
    }
    assert order == {"code": MODELS, "chat": MODELS[::-1]}

    researcher = staff_client("researcher")
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert 'id="category-rankings"' in page and 'id="category-calibration"' in page
    assert "Category rankings CSV" in page and "Category calibration CSV" in page
    narrowed = researcher.get(f"/manage/{batch.slug}/report?category=code").content.decode()
    table = narrowed.split('id="category-rankings"')[1].split("</table>")[0]
    assert 'data-category="code"' in table and 'data-category="chat"' not in table

    ranking_rows = read_csv(researcher.get(f"/manage/{batch.slug}/report/category_rankings.csv"))
    code_full = [r for r in ranking_rows if r["category"] == "code" and r["subset"] == "full"]
    assert [r["model"] for r in code_full] == MODELS
    code_fit = {e["model"]: e for e in entries["code"]["rankings"]["bradley_terry"]["models"]}
    for row in code_full:
        assert float(row["value"]) == pytest.approx(code_fit[row["model"]]["log_strength"])
        assert row["small"] == "1"  # 9 items, fewer than 30
    calibration_rows = read_csv(
        researcher.get(f"/manage/{batch.slug}/report/category_calibration.csv")
    )
    chat = next(r for r in calibration_rows if r["category"] == "chat" and r["subset"] == "full")
    full_chat = entries["chat"]["calibration"]["sources"][0]["subsets"]["full"]
    assert float(chat["jsd"]) == pytest.approx(full_chat["jsd"]["mean"])
    api = researcher.get(f"/api/v1/batches/{batch.slug}/report?category=chat").json()
    assert [e["category"] for e in api["by_category"]] == ["chat"]
    assert api["by_category"][0]["rankings"] == entries["chat"]["rankings"]


def test_a_category_naming_one_model_has_no_ranking():
    batch = make_categorised_batch([("one", "", 6), ("two", "", 6)], kind="absolute", per_item=3)
    for item in Item.objects.filter(batch=batch, query__category="two").select_related("response"):
        item.response.model = MODELS[item.position % 3]
        item.response.save()
    label_canonically(batch, 3, lambda position, worker: 1 + (position + worker) % 5)
    run_job_now(batch, bootstrap=20)
    _, report = latest_report(batch)
    entries = {entry["category"]: entry for entry in report["by_category"]}
    assert "rankings" not in entries["one"]  # every response of "one" is model-x
    assert entries["two"]["rankings"]["absolute"]["models"]
    assert "calibration" not in entries["two"]  # no score source at all
