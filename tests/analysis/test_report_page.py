"""The analysis report page under /manage/<slug>/report: access, running an analysis from
the page, what it shows, the CSV/JSON downloads and escaping of user text in page and SVG."""

import csv
import io
import json
import math

import pytest
from django.test import Client

from analysis import plots
from analysis.models import Score, ScoreSource
from analysis.presentation import CORRELATION_COLUMNS
from analysis.services.analyses import latest_report
from analysis.views import ITEM_ROWS_SHOWN
from annotation.models import Item
from core.jobs.queue import start_job
from core.models import Job
from tests.factories import label_every_item, make_batch
from tests.staff import staff_client

# each test runs a whole analysis job (its figures drawn in three formats): seconds each
pytestmark = [pytest.mark.django_db, pytest.mark.slow]

HOSTILE = 'evil <script>alert("x")</script> & =cmd'
MATHTEXT = "_costs $5 or $\\nope"  # would break mathtext and hide from the legend


# --------------------------------------------------------------------------- data


def label_batch(batch, n_workers: int, value_of) -> None:
    """Each worker labels every item they are handed; ``value_of(position, worker)``."""
    label_every_item(
        batch,
        [f"{batch.slug}-w{worker}" for worker in range(n_workers)],
        lambda item, worker: value_of(item.position, worker),
        lambda worker: 1000 + 250 * worker,
    )


def absolute_value(position: int, worker: int) -> int:
    return max(1, min(5, 1 + (position * 7 + worker * (position % 3)) % 5))


def pairwise_value(position: int, worker: int) -> int:
    return max(-2, min(2, (position % 5) - 2 + (worker % 2) * (1 if position % 2 else -1)))


def add_sources(batch, names_and_kinds) -> None:
    items = list(Item.objects.filter(batch=batch).order_by("position"))
    for offset, (name, kind) in enumerate(names_and_kinds):
        source = ScoreSource.objects.create(name=name, kind=kind)
        rows = []
        for item in items:
            value = float(item.position * (1 + offset) % 7) + 0.1 * offset
            if batch.kind == "pairwise":
                rows.append(Score(source=source, item=item, value=value))
            else:
                rows.append(Score(source=source, response=item.response, value=value))
        Score.objects.bulk_create(rows)


def analysed_batch(kind="absolute", n_items=12, sources=None, bootstrap=50):
    batch = make_batch(kind=kind, n_items=n_items, per_item=3)
    label_batch(batch, 4, absolute_value if kind == "absolute" else pairwise_value)
    add_sources(
        batch,
        sources or [("rm-alpha", "reward_model"), ("lm-beta", "lm"), ("judge-gamma", "judge")],
    )
    run_job_now(batch, bootstrap)
    return batch


def run_job_now(batch, bootstrap=50, seed=0):
    from core.jobs.execution import run_job

    job = start_job("analysis", batch, {"bootstrap": bootstrap, "seed": seed})
    return run_job(job.pk)  # eager Celery would run it on commit; run it here directly


# --------------------------------------------------------------------------- users


@pytest.fixture
def researcher():
    return staff_client("researcher")


def report_urls(slug: str) -> list[str]:
    return [
        f"/manage/{slug}/report",
        f"/manage/{slug}/report.json",
        f"/manage/{slug}/report/items.csv",
        f"/manage/{slug}/report/correlations.csv",
        f"/manage/{slug}/report/annotators.csv",
        f"/manage/{slug}/report/scatter.svg",
    ]


# --------------------------------------------------------------------------- access


def test_anonymous_visitors_are_sent_to_the_login_page():
    batch = analysed_batch()
    for url in report_urls(batch.slug):
        response = Client().get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/?next=")
    response = Client().post(f"/manage/{batch.slug}/report/run", {"bootstrap": 10, "seed": 0})
    assert response.status_code == 302
    assert not batch.jobs.filter(created_by__isnull=False).exists()


def test_a_user_without_a_role_gets_403():
    batch = analysed_batch()
    client = staff_client(None)
    for url in report_urls(batch.slug):
        response = client.get(url)
        assert response.status_code == 403, url
        assert b"No access" in response.content
    before = Job.objects.count()
    assert client.post(f"/manage/{batch.slug}/report/run", {"bootstrap": 10}).status_code == 403
    assert Job.objects.count() == before


@pytest.mark.parametrize("role", ["researcher", "admin"])
def test_researchers_and_admins_see_the_report(role):
    batch = analysed_batch()
    response = staff_client(role).get(f"/manage/{batch.slug}/report")
    assert response.status_code == 200
    assert response.templates[0].name == "analysis/report.html"
    assert "annotation/staff/base.html" in [t.name for t in response.templates]


def test_unknown_batch_is_404(researcher):
    assert researcher.get("/manage/no-such-batch/report").status_code == 404


# --------------------------------------------------------------------------- running


def test_without_a_report_the_page_offers_to_run_it_and_post_starts_a_job(
    researcher, django_capture_on_commit_callbacks
):
    batch = make_batch(n_items=6, per_item=3)
    label_batch(batch, 3, absolute_value)
    add_sources(batch, [("rm-alpha", "reward_model")])

    page = researcher.get(f"/manage/{batch.slug}/report")
    html = page.content.decode()
    assert "Run analysis" in html
    assert 'name="bootstrap"' in html and 'value="1000"' in html
    assert 'name="seed"' in html and 'value="0"' in html
    assert "report.js" in html
    assert "Items CSV" not in html  # no downloads before there is a report
    assert researcher.get(f"/manage/{batch.slug}/report/items.csv").status_code == 404

    with django_capture_on_commit_callbacks(execute=True):
        response = researcher.post(
            f"/manage/{batch.slug}/report/run", {"bootstrap": "20", "seed": "3"}
        )
    assert response.status_code == 302
    assert response["Location"] == f"/manage/{batch.slug}/report"
    job = batch.jobs.get(kind="analysis")
    assert job.params == {"bootstrap": 20, "seed": 3}
    assert job.state == Job.State.SUCCEEDED  # eager Celery ran it on commit
    assert job.created_by.groups.filter(name="researcher").exists()

    html = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert "No analysis yet" not in html
    assert 'id="headline-table"' in html
    assert "rm-alpha" in html
    assert "20 bootstrap resamples, seed 3" in html
    assert "<svg" in html


def test_the_script_gets_json_with_the_status_url(researcher, django_capture_on_commit_callbacks):
    batch = make_batch(n_items=4, per_item=2)
    label_batch(batch, 2, absolute_value)
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher.post(
            f"/manage/{batch.slug}/report/run",
            {"bootstrap": "0", "seed": "0"},
            HTTP_ACCEPT="application/json",
        )
    assert response.status_code == 202
    payload = response.json()
    job = batch.jobs.get(kind="analysis")
    assert payload["id"] == str(job.pk)
    assert payload["status_url"] == f"/api/v1/jobs/{job.pk}"
    status = researcher.get(payload["status_url"])  # what report.js polls
    assert status.status_code == 200
    assert status.json()["state"] == "succeeded"


def test_a_running_job_is_followed_by_the_page(researcher):
    batch = make_batch(n_items=4, per_item=2)
    job = Job.objects.create(kind="analysis", subject=batch, params={"bootstrap": 10})
    html = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert f'data-status-url="/api/v1/jobs/{job.pk}"' in html
    assert "Analysis running" in html


def test_bad_settings_are_refused_and_no_job_starts(researcher):
    batch = make_batch(n_items=4, per_item=2)
    response = researcher.post(
        f"/manage/{batch.slug}/report/run",
        {"bootstrap": "-5", "seed": "x"},
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 400
    assert "Bootstrap resamples" in response.json()["error"]
    response = researcher.post(f"/manage/{batch.slug}/report/run", {"bootstrap": "10**9"})
    assert response.status_code == 302
    assert not batch.jobs.all().exists()
    html = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert "Analysis not started" in html


def test_a_failed_analysis_is_explained(researcher, monkeypatch):
    batch = make_batch(n_items=4, per_item=2)
    label_batch(batch, 2, absolute_value)

    def broken(*args, **kwargs):
        raise RuntimeError("scores table is on fire")

    monkeypatch.setattr("analysis.services.analyses.build_report", broken)
    job = start_job("analysis", batch, {"bootstrap": 0, "seed": 0})
    from core.jobs.execution import run_job

    with pytest.raises(RuntimeError):
        run_job(job.pk)
    html = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert "The last analysis failed" in html
    assert "scores table is on fire" in html
    assert "Run analysis" in html


# --------------------------------------------------------------------------- the report


def test_the_page_shows_summary_headline_charts_and_tables(researcher):
    batch = analysed_batch()
    _, report = latest_report(batch)
    html = researcher.get(f"/manage/{batch.slug}/report").content.decode()

    assert f'data-summary="n_items">{report["n_items"]}<' in html
    assert f'data-summary="n_labels">{report["n_labels"]}<' in html
    assert "Krippendorff α (ordinal)" in html and "Krippendorff α (interval)" in html
    alpha = report["agreement"]["krippendorff_alpha_ordinal"]
    assert f"{alpha:.3f}".replace("-", "−") in html

    # headline: full against the default subsets, with n and the interval
    assert '<option value="tukey_k1.5" selected>' in html
    assert '<option value="top_entropy_10pct" selected>' in html
    full = next(
        c
        for c in report["correlations"]
        if c["source"] == "rm-alpha" and c["subset"] == "full" and c["spearman"]
    )
    assert f"{full['spearman']['r']:.3f}".replace("-", "−") in html
    assert f"n = {full['n']}" in html
    for kind_row in ("Reward models", "Language models", "LLM judges"):
        assert kind_row in html
    data = json.loads(html.split('id="headline-data" type="application/json">')[1].split("<")[0])
    assert set(data[0]) == set(report["subsets"])

    # a subset too small for a correlation says why
    small = [c for c in report["correlations"] if c["spearman"] is None]
    if small:
        assert small[0]["reason"] in html

    # charts inline, with their axis labels as text
    assert html.count('<svg class="chart"') >= 5
    assert "Shannon entropy (bits)" in html
    assert "Spearman ρ" in html
    assert f"/manage/{batch.slug}/report/scatter.svg" in html

    # tables
    assert 'id="items-table"' in html and 'id="annotators-table"' in html
    assert html.count('<tr><td data-value="item-') == report["n_items"]
    assert "Entropy (bits)" in html
    for annotator in report["annotators"]:
        assert annotator["annotator"] in html


def test_the_headline_subset_can_be_picked_without_script(researcher):
    batch = analysed_batch()
    html = researcher.get(
        f"/manage/{batch.slug}/report?similar=tukey_k3.0&disagree=nonsense"
    ).content.decode()
    assert '<option value="tukey_k3.0" selected>' in html
    assert '<option value="top_entropy_10pct" selected>' in html  # unknown → default


def test_pairwise_report_uses_its_own_subsets_and_p_disagree(researcher):
    batch = analysed_batch(kind="pairwise", n_items=10)
    html = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert '<option value="most_ties_80pct" selected>' in html
    assert '<option value="least_agreement_80pct" selected>' in html
    assert "p_disagree" in html
    assert 'id="chart-p-disagree"' in html


def test_a_batch_without_scores_explains_how_to_get_them(researcher):
    batch = make_batch(n_items=5, per_item=2)
    label_batch(batch, 2, absolute_value)
    run_job_now(batch)
    html = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert "No model scores" in html
    assert 'id="chart-entropy"' in html
    assert researcher.get(f"/manage/{batch.slug}/report/scatter.svg").status_code == 404


def test_the_item_table_is_capped(researcher, monkeypatch):
    monkeypatch.setattr("analysis.views.ITEM_ROWS_SHOWN", 5)
    batch = analysed_batch(n_items=9)
    html = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert html.count('<tr><td data-value="item-') == 5
    assert "The first 5 of 9 items" in html
    assert ITEM_ROWS_SHOWN == 2000


# --------------------------------------------------------------------------- downloads


def read_csv(response) -> list[dict]:
    assert response["Content-Type"].startswith("text/csv")
    text = b"".join(response.streaming_content).decode("utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def downloaded_table(client, batch, table: str) -> list[dict]:
    """The rows of the report's ``table`` downloaded as a CSV file named after the batch."""
    response = client.get(f"/manage/{batch.slug}/report/{table}.csv")
    assert f'filename="{batch.slug}-{table}.csv"' in response["Content-Disposition"]
    return read_csv(response)


def number(cell: str):
    return None if cell == "" else float(cell)


def close(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def test_report_json_is_the_stored_report(researcher):
    batch = analysed_batch()
    _, report = latest_report(batch)
    response = researcher.get(f"/manage/{batch.slug}/report.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert f'filename="{batch.slug}-report.json"' in response["Content-Disposition"]
    assert json.loads(b"".join(response.streaming_content)) == report


def test_items_csv_matches_the_report(researcher):
    batch = analysed_batch()
    _, report = latest_report(batch)
    rows = downloaded_table(researcher, batch, "items")
    assert len(rows) == len(report["items"])
    for row, item in zip(rows, report["items"], strict=True):
        assert row["item_id"] == item["item_id"]
        assert int(row["n"]) == item["n"]
        for label, count in item["counts"].items():
            assert int(row[f"count_{label}"]) == count
        for key in ("mean", "std", "entropy_bits"):
            assert close(number(row[key]), item[key])
        for subset, members in report["subsets"].items():
            assert row[f"in_{subset}"] == ("1" if item["item_id"] in members else "0")


def test_correlations_csv_matches_the_report(researcher):
    batch = analysed_batch()
    _, report = latest_report(batch)
    rows = read_csv(researcher.get(f"/manage/{batch.slug}/report/correlations.csv"))
    assert list(rows[0]) == CORRELATION_COLUMNS
    assert len(rows) == len(report["correlations"])
    for row, entry in zip(rows, report["correlations"], strict=True):
        assert (row["source"], row["kind"], row["subset"]) == (
            entry["source"],
            entry["kind"],
            entry["subset"],
        )
        assert int(row["n"]) == entry["n"]
        for method in ("spearman", "pearson"):
            result = entry[method]
            if result is None:
                assert row[f"{method}_r"] == ""
                assert row["reason"] == entry["reason"]
                continue
            assert close(number(row[f"{method}_r"]), result["r"])
            assert close(number(row[f"{method}_p"]), result["p"])
            if result["ci95"]:
                assert close(number(row[f"{method}_ci_low"]), result["ci95"][0])
                assert close(number(row[f"{method}_ci_high"]), result["ci95"][1])


def test_annotators_csv_matches_the_report(researcher):
    batch = analysed_batch()
    _, report = latest_report(batch)
    rows = read_csv(researcher.get(f"/manage/{batch.slug}/report/annotators.csv"))
    assert len(rows) == len(report["annotators"]) == 3  # per_item=3: the 4th gets nothing
    for row, entry in zip(rows, report["annotators"], strict=True):
        assert row["annotator"] == entry["annotator"]
        assert int(row["n_labels"]) == entry["n_labels"]
        assert close(number(row["crowd_spearman"]), entry["crowd_spearman"])
        assert close(number(row["median_duration_ms"]), entry["median_duration_ms"])
        assert int(row["attention_checks_failed"]) == entry["attention_checks_failed"]


# --------------------------------------------------------------------------- escaping


def test_a_hostile_source_name_is_escaped_in_page_svg_and_csv(researcher):
    batch = analysed_batch(sources=[(HOSTILE, "reward_model"), (MATHTEXT, "lm")])
    page = researcher.get(f"/manage/{batch.slug}/report")
    html = page.content.decode()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert" in html
    # the correlation chart's legend carries the name as escaped SVG text
    chart = html.split('id="chart-correlations"')[1].split("</figure>")[0]
    assert "&lt;script&gt;" in chart and "<script>" not in chart
    # the headline data for the script (JSON in a <script> element) holds no raw "<"
    data = html.split('id="headline-data" type="application/json">')[1].split("</script>")[0]
    assert "<" not in data

    svg = researcher.get(f"/manage/{batch.slug}/report/scatter.svg")
    assert svg["Content-Type"].startswith("image/svg+xml")
    assert "default-src 'none'" in svg["Content-Security-Policy"]
    body = svg.content.decode()
    assert "<script" not in body and "&lt;script&gt;" in body

    rows = read_csv(researcher.get(f"/manage/{batch.slug}/report/correlations.csv"))
    assert {row["source"] for row in rows} == {HOSTILE, MATHTEXT}


def test_formula_cells_are_neutralised_in_csv(researcher):
    batch = analysed_batch(sources=[("=HYPERLINK(1)", "judge"), ("-neg", "lm")])
    rows = read_csv(researcher.get(f"/manage/{batch.slug}/report/correlations.csv"))
    assert {row["source"] for row in rows} == {"'=HYPERLINK(1)", "'-neg"}
    # numbers stay numbers, negative ones included
    assert all(row["n"].isdigit() for row in rows)


def test_svg_text_is_escaped_by_matplotlib():
    svg = plots.correlation_chart(
        [
            {
                "source": "<script>alert(1)</script> $x$ _hidden",
                "kind": "lm",
                "subset": "full",
                "n": 5,
                "spearman": {"r": 0.5, "p": 0.1, "ci95": [0.1, 0.9]},
            }
        ],
        plots.subset_families(False, ["full", "tukey_k1.5", "top_entropy_2pct"]),
    )
    assert "<script" not in svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt; $x$ _hidden" in svg
    assert svg.startswith('<svg class="chart"')


def test_a_batch_without_labels_still_gets_a_page(researcher, django_capture_on_commit_callbacks):
    batch = make_batch(n_items=3, per_item=2)
    add_sources(batch, [("rm-alpha", "reward_model")])
    with django_capture_on_commit_callbacks(execute=True):
        researcher.post(f"/manage/{batch.slug}/report/run", {"bootstrap": "10", "seed": "0"})
    assert batch.jobs.get().state == Job.State.SUCCEEDED
    response = researcher.get(f"/manage/{batch.slug}/report")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-summary="n_items">0<' in html
    assert "<svg" not in html  # nothing to draw
    assert "scatter.svg" not in html
    assert researcher.get(f"/manage/{batch.slug}/report/scatter.svg").status_code == 404
    assert read_csv(researcher.get(f"/manage/{batch.slug}/report/items.csv")) == []
