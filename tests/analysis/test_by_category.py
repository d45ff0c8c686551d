"""The report broken down by category (ANALYSIS.md, "By category"): ``by_category`` in the
JSON, the report page's table and filter, and the category CSV downloads."""

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from analysis import stats
from analysis.loading import BatchArrays
from analysis.presentation import CATEGORY_KEY_COLUMNS, CORRELATION_COLUMNS
from analysis.reports import MIN_CATEGORY_ITEMS
from analysis.services.analyses import latest_report
from annotation.models import Label, LabelStatus
from tests.analysis.test_rankings_end_to_end import name_models
from tests.analysis.test_report_page import (
    absolute_value,
    add_sources,
    close,
    downloaded_table,
    label_batch,
    number,
    read_csv,
    run_job_now,
)
from tests.factories import make_batch, make_categorised_batch
from tests.staff import staff_client, token_client

# each test runs a whole analysis job (its figures drawn in three formats): seconds each
pytestmark = [pytest.mark.django_db, pytest.mark.slow]

TAXONOMY = [
    ("Creative", "Poetry", MIN_CATEGORY_ITEMS),
    ("Creative", "Stories", 6),
    ("Advice", "", 8),
]


@pytest.fixture
def researcher():
    return staff_client("researcher")


def categorised_report(taxonomy=TAXONOMY, n_workers=3, models=False):
    batch = make_categorised_batch(taxonomy, per_item=n_workers)
    if models:
        name_models(batch)
    label_batch(batch, n_workers, absolute_value)
    add_sources(batch, [("rm-alpha", "reward_model"), ("lm-beta", "lm")])
    run_job_now(batch, bootstrap=30)
    _, report = latest_report(batch)
    return batch, report


def entry_of(report, category, subcategory=None):
    return next(
        entry
        for entry in report["by_category"]
        if entry["category"] == category and entry["subcategory"] == subcategory
    )


def counted_labels(batch, category, subcategory=None):
    labels = Label.objects.filter(
        batch=batch, status=LabelStatus.COUNTED, item__query__category=category
    )
    if subcategory is not None:
        labels = labels.filter(item__query__subcategory=subcategory)
    return list(labels.values_list("item__item_id", "annotator_id", "value"))


# --------------------------------------------------------------------------- the report


def test_every_category_and_subcategory_gets_its_figures_with_counts():
    batch, report = categorised_report()
    keys = [(entry["category"], entry["subcategory"]) for entry in report["by_category"]]
    assert keys == [
        ("Advice", None),
        ("Creative", None),
        ("Creative", "Poetry"),
        ("Creative", "Stories"),
    ]
    assert report["category_min_items"] == MIN_CATEGORY_ITEMS
    for entry in report["by_category"]:
        labels = counted_labels(batch, entry["category"], entry["subcategory"])
        assert entry["n_labels"] == len(labels)
        assert entry["n_items"] == len({item for item, _, _ in labels})
        assert entry["n_annotators"] == len({annotator for _, annotator, _ in labels})
        assert entry["small"] == (entry["n_items"] < MIN_CATEGORY_ITEMS)
        assert set(entry) >= {
            "mean_rating", "mean_std", "subset_sizes", "agreement", "correlations", "by_kind",
            "annotators", "validity",
        }  # fmt: skip
        assert set(entry["agreement"]) == set(report["agreement"])
        assert set(entry["subset_sizes"]) == set(report["subsets"])
        assert entry["subset_sizes"]["full"] == entry["n_items"]
    assert entry_of(report, "Creative", "Poetry")["small"] is False
    assert entry_of(report, "Creative", "Stories")["small"] is True
    assert entry_of(report, "Advice")["small"] is True
    # a whole category is the sum of its sub-categories
    creative = entry_of(report, "Creative")
    parts = [entry_of(report, "Creative", sub) for sub in ("Poetry", "Stories")]
    assert creative["n_items"] == sum(part["n_items"] for part in parts)
    assert creative["n_labels"] == sum(part["n_labels"] for part in parts)
    # every item entry carries its category
    by_id = {item["item_id"]: item for item in report["items"]}
    assert by_id["creative-poetry-0"]["category"] == "Creative"
    assert by_id["creative-poetry-0"]["subcategory"] == "Poetry"
    assert by_id["advice-none-0"]["subcategory"] == ""


def test_category_figures_are_the_report_redone_on_its_items_alone():
    batch, report = categorised_report()
    entry = entry_of(report, "Creative", "Poetry")
    labels = counted_labels(batch, "Creative", "Poetry")
    by_item: dict[str, list[int]] = {}
    for item, _, value in labels:
        by_item.setdefault(item, []).append(value)
    item_ids = sorted(by_item)
    means = np.array([np.mean(by_item[item]) for item in item_ids])
    assert close(entry["mean_rating"], float(np.mean(means)))
    assert close(entry["mean_std"], float(np.mean([np.std(by_item[i]) for i in item_ids])))

    # agreement over the category's labels only
    items = {item: index for index, item in enumerate(item_ids)}
    annotators = {a: index for index, a in enumerate(sorted({a for _, a, _ in labels}))}
    summary = stats.agreement_summary(
        np.array([items[i] for i, _, _ in labels]),
        np.array([annotators[a] for _, a, _ in labels]),
        np.array([v for _, _, v in labels]),
        np.arange(1, 6),
        len(item_ids),
    )
    assert close(
        entry["agreement"]["krippendorff_alpha_ordinal"], summary.krippendorff_alpha_ordinal
    )
    assert close(entry["agreement"]["mean_entropy_bits"], summary.mean_entropy_bits)
    assert entry["agreement"] != entry_of(report, "Advice")["agreement"]

    # the subsets are chosen within the category (Tukey fences of its own item means)
    q1, q3 = np.percentile(means, [25, 75])
    inside = (means >= q1 - 1.5 * (q3 - q1)) & (means <= q3 + 1.5 * (q3 - q1))
    assert entry["subset_sizes"]["tukey_k1.5"] == int(inside.sum())

    # Spearman of each source against the category's item means, by scipy (add_sources
    # scores an item by its position)
    positions = dict(batch.items.values_list("item_id", "position"))
    for offset, source in enumerate(["rm-alpha", "lm-beta"]):
        scores = [float(positions[item] * (1 + offset) % 7) + 0.1 * offset for item in item_ids]
        expected = float(scipy_stats.spearmanr(scores, means).statistic)
        full = next(
            c for c in entry["correlations"] if c["source"] == source and c["subset"] == "full"
        )
        assert full["n"] == len(item_ids)
        assert math.isclose(full["spearman"]["r"], expected, abs_tol=1e-9)
        assert full["spearman"]["ci95"] is not None


def test_a_category_holding_every_item_has_the_batch_figures():
    # one category with one sub-category: both groups are the whole batch
    _, report = categorised_report([("Advice", "Health", 12)], n_workers=3, models=True)
    keys = [(entry["category"], entry["subcategory"]) for entry in report["by_category"]]
    assert keys == [("Advice", None), ("Advice", "Health")]
    without_checks = [
        {key: value for key, value in entry.items() if not key.startswith("attention_checks")}
        for entry in report["annotators"]
    ]
    for entry in report["by_category"]:
        assert entry["n_items"] == report["n_items"] == 12
        assert entry["n_labels"] == report["n_labels"]
        assert entry["correlations"] == report["correlations"]
        assert entry["by_kind"] == report["by_kind"]
        assert entry["agreement"] == report["agreement"]
        assert entry["annotators"] == without_checks
        assert entry["validity"] == report["validity"]
        assert entry["subset_sizes"] == {name: len(ids) for name, ids in report["subsets"].items()}
        # the model rankings and calibration too (the batch's, computed once, copied)
        assert "rankings" in report
        for section in ("rankings", "calibration"):
            assert entry.get(section) == report.get(section)
        assert entry["rankings"] is not report["rankings"]


def test_a_batch_without_categories_has_an_empty_breakdown(researcher):
    batch = make_batch(n_items=6, per_item=3)
    label_batch(batch, 3, absolute_value)
    run_job_now(batch, bootstrap=10)
    _, report = latest_report(batch)
    assert report["by_category"] == []
    assert all(item["category"] == "" for item in report["items"])
    html = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert 'id="category-report"' not in html and "Categories CSV" not in html
    assert read_csv(researcher.get(f"/manage/{batch.slug}/report/categories.csv")) == []


def test_items_without_a_category_form_their_own_group_listed_last():
    _, report = categorised_report([("Advice", "", 4), ("", "", 3)], n_workers=2)
    keys = [(entry["category"], entry["subcategory"]) for entry in report["by_category"]]
    assert keys == [("Advice", None), ("", None)]
    assert entry_of(report, "")["n_items"] == 3


def test_the_api_report_has_the_breakdown():
    batch, report = categorised_report([("Advice", "", 4), ("Creative", "Poetry", 4)], 2)
    answer = token_client("researcher").get(f"/api/v1/batches/{batch.slug}/report")
    assert answer.status_code == 200
    assert answer.json()["by_category"] == report["by_category"]


@pytest.mark.slow
def test_the_api_report_narrows_items_and_breakdown_to_a_category_as_the_page_does(researcher):
    batch, report = categorised_report()
    api = token_client("researcher")
    url = f"/api/v1/batches/{batch.slug}/report"

    def item_ids(entries):
        return sorted(item["item_id"] for item in entries)

    creative = api.get(url, {"category": "Creative"}).json()
    assert item_ids(creative["items"]) == item_ids(
        item for item in report["items"] if item["category"] == "Creative"
    )
    assert [(e["category"], e["subcategory"]) for e in creative["by_category"]] == [
        ("Creative", None),
        ("Creative", "Poetry"),
        ("Creative", "Stories"),
    ]
    assert creative["correlations"] == report["correlations"]  # batch-level figures stay
    html = researcher.get(f"/manage/{batch.slug}/report", {"category": "Creative"})
    assert html.context["n_items_total"] == len(creative["items"])
    assert len(html.context["by_category"]["rows"]) == len(creative["by_category"])

    stories = api.get(url, {"subcategory": "Stories"}).json()
    assert {item["subcategory"] for item in stories["items"]} == {"Stories"}
    assert len(stories["items"]) == 6
    assert [(e["category"], e["subcategory"]) for e in stories["by_category"]] == [
        ("Creative", "Stories")
    ]
    nothing = api.get(url, {"category": "Unheard of"}).json()
    assert nothing["items"] == [] and nothing["by_category"] == []
    too_long = api.get(url, {"category": "x" * 201})
    assert too_long.status_code == 400 and too_long.json()["field"] == "category"
    assert api.get(url).json()["items"] == report["items"]


# --------------------------------------------------------------------------- pure part


def test_restricting_arrays_keeps_the_items_labels_annotators_and_repeats():
    arrays = BatchArrays(
        slug="s",
        kind="absolute",
        label_set=np.arange(1, 6),
        item_ids=["a", "b", "c"],
        item_pks=np.array([10, 11, 12]),
        response_pks=np.array([20, 21, 22]),
        item_index=np.array([0, 1, 2, 1, 2]),
        annotator_index=np.array([0, 0, 1, 2, 2]),
        value=np.array([1, 2, 3, 4, 5]),
        duration_ms=np.array([1.0, 2.0, 3.0, 4.0, 5.0]),
        annotators=["p0", "p1", "p2"],
        gold=[None, None, None],
        shown_order=np.zeros(5, dtype=np.int8),
        checks_passed=np.array([1, 2, 3]),
        checks_failed=np.array([0, 0, 1]),
        repeats=np.array([[0, 2, 2], [2, 5, 4]]),
        repeat_items=np.array([1, 2]),
        questions=[{"id": "age"}],
        answers={"age": ["young", "old", "young"]},
        categories=["X", "Y", "Y"],
        subcategories=["", "s", "t"],
    )
    only = arrays.restricted_to(np.array([False, True, True]))
    assert only.item_ids == ["b", "c"] and only.item_pks.tolist() == [11, 12]
    assert only.item_index.tolist() == [0, 1, 0, 1]
    assert only.annotators == ["p0", "p1", "p2"]
    assert only.value.tolist() == [2, 3, 4, 5]
    assert only.repeats.tolist() == [[0, 2, 2], [2, 5, 4]]
    assert only.repeat_items.tolist() == [0, 1]
    assert only.categories == ["Y", "Y"] and only.subcategories == ["s", "t"]

    just_c = arrays.restricted_to(np.array([False, False, True]))
    assert just_c.annotators == ["p1", "p2"]  # p0 labelled no item of it
    assert just_c.annotator_index.tolist() == [0, 1]
    assert just_c.checks_passed.tolist() == [2, 3]
    assert just_c.answers == {"age": ["old", "young"]}
    assert just_c.repeats.tolist() == [[1, 5, 4]]  # p2's repeat, p2 renumbered 1


# --------------------------------------------------------------------------- page and CSV


@pytest.mark.slow
def test_the_report_page_shows_the_table_with_counts_and_small_groups_marked(researcher):
    batch, report = categorised_report()
    html = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert 'id="category-report"' in html
    table = html.split('id="category-report"')[1].split("</table>")[0]
    rows = table.split("<tr ")[1:]
    assert len(rows) == len(report["by_category"])
    for row, entry in zip(rows, report["by_category"], strict=True):
        assert f'data-category="{entry["category"]}"' in row
        assert f'data-small="{int(entry["small"])}"' in row
        assert f'data-count="items">{entry["n_items"]}' in row
        assert f'data-count="labels">{entry["n_labels"]}' in row
        assert ("small</span>" in row) == entry["small"]
    assert f"fewer than {MIN_CATEGORY_ITEMS} labelled items" in html
    for name in ("categories", "category_correlations", "category_annotators"):
        assert f"/manage/{batch.slug}/report/{name}.csv" in html


@pytest.mark.slow
def test_the_report_page_filters_items_and_categories(researcher):
    batch, report = categorised_report()
    url = f"/manage/{batch.slug}/report"
    html = researcher.get(url, {"category": "Creative", "subcategory": "Stories"}).content.decode()
    assert html.count('<tr><td data-value="creative-stories-') == 6
    assert '<tr><td data-value="advice-' not in html
    table = html.split('id="category-report"')[1].split("</table>")[0]
    assert table.count("<tr ") == 1 and 'data-subcategory="Stories"' in table
    assert 'id="category-filter"' in html

    html = researcher.get(url, {"category": "Creative"}).content.decode()
    table = html.split('id="category-report"')[1].split("</table>")[0]
    assert table.count("<tr ") == 3  # the category and its two sub-categories

    response = researcher.get(url, {"category": "Nothing like it"})
    assert response.status_code == 200
    html = response.content.decode()
    assert '<tr><td data-value="' not in html
    assert "No category of this report matches the filter." in html
    assert researcher.get(url, {"category": "x" * 201}).status_code == 400


def test_the_category_csvs_match_the_report(researcher):
    batch, report = categorised_report()
    base = f"/manage/{batch.slug}/report"
    rows = downloaded_table(researcher, batch, "categories")
    assert len(rows) == len(report["by_category"])
    for row, entry in zip(rows, report["by_category"], strict=True):
        assert row["category"] == entry["category"]
        assert row["subcategory"] == (entry["subcategory"] or "")
        assert row["small"] == str(int(entry["small"]))
        for key in ("n_items", "n_labels", "n_annotators"):
            assert int(row[key]) == entry[key]
        assert close(number(row["mean_rating"]), entry["mean_rating"])
        for key, value in entry["agreement"].items():
            assert close(number(row[key]), value)
        for subset, size in entry["subset_sizes"].items():
            assert int(row[f"n_{subset}"]) == size

    rows = read_csv(researcher.get(f"{base}/category_correlations.csv"))
    assert list(rows[0]) == [*CATEGORY_KEY_COLUMNS, *CORRELATION_COLUMNS]
    expected = [
        (entry["category"], entry["subcategory"] or "", c["source"], c["subset"], c["n"])
        for entry in report["by_category"]
        for c in entry["correlations"]
    ]
    got = [(r["category"], r["subcategory"], r["source"], r["subset"], int(r["n"])) for r in rows]
    assert got == expected
    poetry_full = next(
        r
        for r in rows
        if r["subcategory"] == "Poetry" and r["source"] == "rm-alpha" and r["subset"] == "full"
    )
    figures = next(
        c
        for c in entry_of(report, "Creative", "Poetry")["correlations"]
        if c["source"] == "rm-alpha" and c["subset"] == "full"
    )
    assert close(number(poetry_full["spearman_r"]), figures["spearman"]["r"])

    rows = read_csv(researcher.get(f"{base}/category_annotators.csv"))
    assert len(rows) == sum(len(entry["annotators"]) for entry in report["by_category"])
    assert {int(r["n_labels"]) for r in rows if r["category"] == "Advice"} == {8}

    items = read_csv(researcher.get(f"{base}/items.csv"))
    assert {(r["category"], r["subcategory"]) for r in items} == {
        ("Creative", "Poetry"),
        ("Creative", "Stories"),
        ("Advice", ""),
    }
