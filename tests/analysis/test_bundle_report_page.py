"""The report page of a bundled batch (ANALYSIS.md, "Bundles"): its four sections show the
position effect, Kendall's W per bundle (and against the bundles' mean item entropy), the
two-way decomposition with ICC(2,1) and ICC(3,1), and each participant's idiosyncrasy,
each number checked against a value computed here from the stored labels (scipy's
Friedman statistic for W, explicit loops for the ICCs, scipy's Spearman and entropy for
the rest); their CSV downloads hold the same numbers, escaped as every CSV of the
platform; the figures are among the report's downloads. An unbundled batch's report page
is without them."""

import csv
import io
import json
from collections import defaultdict
from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone
from scipy.stats import entropy, friedmanchisquare, spearmanr

from analysis.bundle_charts import BUNDLE_CAPTIONS
from analysis.presentation.bundles import position_sentence
from analysis.report_charts import report_figures
from analysis.services.analyses import latest_report
from annotation.models import Assignment, Label
from annotation.services.batches import change_state, create_batch
from annotation.services.importing import import_items
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.analysis.test_report_page import analysed_batch, run_job_now
from tests.analysis.test_stats_bundles import icc_by_loops
from tests.annotation.bundled import bundled_batch
from tests.factories import make_participant
from tests.staff import staff_client

# each test runs a whole analysis job (its figures drawn in three formats): seconds each
pytestmark = [pytest.mark.django_db, pytest.mark.slow]

SECTIONS = ("bundle-positions", "bundle-concordance", "bundle-decomposition", "bundle-idiosyncrasy")
BUNDLE_FIGURES = (
    "bundle-positions",
    "bundle-w",
    "bundle-w-entropy",
    "bundle-decomposition",
    "bundle-idiosyncrasy",
)
TABLES = ("bundle_positions", "bundle_concordance", "bundle_decomposition", "bundle_participants")
LABELS = [1, 2, 3, 4, 5]


def shown(value: float) -> str:
    """A figure as the page writes it: three decimals, a real minus sign, no "−0.000"."""
    return f"{round(value, 3) + 0.0:.3f}".replace("-", "−")


def rate_bundles(batch, people: int, seed: int = 0, leave_every: int = 4) -> None:
    """``people`` participants take a bundle each: labels around each item's quality, a
    person's own harshness and a drift down the positions; every ``leave_every``-th
    leaves after two items (their leases expire, the rest goes to someone else)."""
    rng = np.random.default_rng(seed)
    quality = {}
    for number in range(people):
        person = make_participant(batch, f"{batch.slug}-p{number}")
        harshness = rng.normal(0, 0.6)
        answered = 0
        while (outcome := lease_next_item(batch, person)).assignment is not None:
            lease = outcome.assignment
            if number % leave_every == leave_every - 1 and answered == 2:
                Assignment.objects.filter(annotator=person.annotator, state="open").update(
                    expires_at=timezone.now() - timedelta(seconds=1)
                )
                break
            base = quality.setdefault(lease.item_id, rng.uniform(1.5, 4.5))
            value = base + harshness + 0.35 * lease.position_in_bundle + rng.normal(0, 0.5)
            submit_label(person.annotator, lease.pk, int(np.clip(np.round(value), 1, 5)), 2000)
            answered += 1


@pytest.fixture
def bundled_report():
    """A balanced bundled batch (4 queries × 5 responses, N = 4, one bundle a person, a
    quarter leaving halfway), rated and analysed through the job, as on the page."""
    batch = bundled_batch("page-bundles", n_queries=4, per_query=5, per_item=4,
                          bundles_per_participant=1, bundle_order="balanced")  # fmt: skip
    rate_bundles(batch, 40)
    run_job_now(batch, bootstrap=400, seed=1)
    return batch


# --------------------------------------------------------------------------- oracle


def expected_figures(batch) -> dict:
    """Every figure of the bundle sections, computed here from the counted labels."""
    labels = list(
        Label.objects.filter(batch=batch, status="counted").values_list(
            "item__bundle", "item__item_id", "annotator__pseudonym", "value", "position_in_bundle"
        )
    )
    sets = {}  # one group per participant's set: the unit the permutation shuffles within
    groups = np.array([sets.setdefault((row[0], row[2]), len(sets)) for row in labels])
    by_position = defaultdict(list)
    for _, _, _, value, place in labels:
        by_position[place].append(value)
    values = np.array([row[3] for row in labels], dtype=float)
    places = np.array([row[4] for row in labels], dtype=float)
    cells = defaultdict(dict)  # bundle -> (person, item) -> value
    for bundle, item, person, value, _ in labels:
        cells[bundle][(person, item)] = value
    bundles, rankings = {}, {}
    for bundle, table in cells.items():
        items = sorted({item for _, item in table})
        people = sorted({person for person, _ in table})
        complete = [p for p in people if all((p, item) in table for item in items)]
        rows = np.array([[table[(p, item)] for item in items] for p in complete], dtype=float)
        m, n = rows.shape
        w = friedmanchisquare(*rows.T).statistic / (m * (n - 1)) if m >= 2 else None
        item_entropy = [
            entropy(
                [sum(table.get((p, item)) == label for p in people) for label in LABELS], base=2
            )
            for item in items
        ]
        _, _, _, icc2, icc3, share = icc_by_loops(rows) if m >= 2 else (None,) * 6
        bundles[bundle] = {
            "n_items": n,
            "n_participants": len(people),
            "n_complete": m,
            "w": w,
            "entropy": float(np.mean(item_entropy)),
            "icc_2_1": icc2,
            "icc_3_1": icc3,
            "share": share,
        }
        for person in people:
            mine = [item for item in items if (person, item) in table]
            shared, own, others = [], [], []
            for item in mine:
                rest = [table[(p, item)] for p in people if p != person and (p, item) in table]
                if rest:
                    shared.append(item)
                    own.append(table[(person, item)])
                    others.append(np.mean(rest))
            rho = None
            if len(shared) >= 3 and np.ptp(own) > 0 and np.ptp(others) > 0:
                rho = float(spearmanr(own, others).statistic)
            rankings[(person, bundle)] = {"n": len(shared), "rho": rho}
    defined = [(b["entropy"], b["w"]) for b in bundles.values() if b["w"] is not None]
    return {
        "positions": {place: (len(v), float(np.mean(v))) for place, v in by_position.items()},
        "rho": float(spearmanr(values, places).statistic),
        "labels": values,
        "places": places,
        "groups": groups,
        "bundles": bundles,
        "rankings": rankings,
        "w_entropy_rho": float(spearmanr(*zip(*defined, strict=True)).statistic),
        "n_with_w": len(defined),
    }


def permutation_p(values, places, groups, shuffles: int, seed: int) -> float:
    """Two-sided p of Spearman's ρ with the positions shuffled within each group."""
    rng = np.random.default_rng(seed)
    observed = abs(spearmanr(values, places).statistic)
    reached = 1
    for _ in range(shuffles):
        shuffled = places.copy()
        for group in np.unique(groups):
            where = np.flatnonzero(groups == group)
            shuffled[where] = rng.permutation(places[where])
        reached += abs(spearmanr(values, shuffled).statistic) >= observed - 1e-12
    return reached / (shuffles + 1)


def section_html(html: str, section: str) -> str:
    return html.split(f'id="{section}"')[1].split("</section>")[0]


def read_csv(client, slug: str, table: str) -> list[dict]:
    response = client.get(f"/manage/{slug}/report/{table}.csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert f'filename="{slug}-{table}.csv"' in response["Content-Disposition"]
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text)))


def close(cell: str, expected) -> bool:
    if expected is None:
        return cell == ""
    return float(cell) == pytest.approx(expected, rel=1e-9, abs=1e-12)


# --------------------------------------------------------------------------- page


def test_the_page_shows_each_bundle_section_with_the_right_numbers(bundled_report):
    batch = bundled_report
    expected = expected_figures(batch)
    html = staff_client("researcher").get(f"/manage/{batch.slug}/report").content.decode()
    for section in SECTIONS:
        assert f'<section class="card" aria-labelledby="{section}-title" id="{section}">' in html

    # position: n and mean at each position, ρ over every label, the permutation p
    positions = section_html(html, "bundle-positions")
    for place, (n, mean) in expected["positions"].items():
        cells = f'<td class="num">{n}</td><td class="num">{shown(mean)}</td>'
        assert f'<th scope="row">{place + 1}</th>{cells}' in positions
    total = len(expected["labels"])
    assert f"Spearman ρ = {shown(expected['rho'])} over {total} labels" in positions
    assert expected["rho"] > 0.1  # the drift down the positions is there
    p = permutation_p(expected["labels"], expected["places"], expected["groups"], 400, seed=5)
    shown_p = positions.split("permutation p ")[1].split(" (")[0].removeprefix("= ")
    assert (shown_p == "< 0.001" and p < 0.01) or abs(float(shown_p) - p) < 0.05
    assert "(400 shuffles)" in positions

    # concordance: W and the mean item entropy of each bundle, the median over bundles,
    # and W against entropy with the number of bundles it rests on
    concordance = section_html(html, "bundle-concordance")
    for bundle, figures in expected["bundles"].items():
        row = concordance.split(f'data-value="{bundle}"')[1].split("</tr>")[0]
        cells = [figures["n_items"], figures["n_participants"], figures["n_complete"]]
        for count in cells:
            assert f">{count}</td>" in row
        assert shown(figures["entropy"]) in row
        assert (shown(figures["w"]) if figures["w"] is not None else "—") in row
    ws = [b["w"] for b in expected["bundles"].values() if b["w"] is not None]
    assert f"median {np.median(ws):.2f}".replace("-", "−") in concordance
    assert f"n = {len(ws)} of {len(expected['bundles'])} bundles" in concordance
    n = expected["n_with_w"]
    assert f"Spearman ρ = {shown(expected['w_entropy_rho'])} over {n} bundles" in concordance
    assert f"no p-value: too few (n = {n})" in concordance  # under 5 bundles: as everywhere

    # decomposition: ICC(2,1), ICC(3,1) and the participant share, defined on the page
    decomposition = section_html(html, "bundle-decomposition")
    assert "ICC(2,1)</strong> = (MSR − MSE) / (MSR + (k − 1)·MSE + k·(MSC − MSE)/n)" in (
        decomposition
    )
    assert "ICC(3,1)</strong> = (MSR − MSE) / (MSR + (k − 1)·MSE)" in decomposition
    for bundle, figures in expected["bundles"].items():
        row = decomposition.split(f'data-value="{bundle}"')[1].split("</tr>")[0]
        assert f">{figures['n_items']}</td>" in row and f">{figures['n_complete']}</td>" in row
        for key in ("share", "icc_2_1", "icc_3_1"):
            assert f">{shown(figures[key]) if figures[key] is not None else '—'}</td>" in row
    iccs = [b["icc_2_1"] for b in expected["bundles"].values() if b["icc_2_1"] is not None]
    assert f"ICC(2,1): median {np.median(iccs):.2f}".replace("-", "−") in decomposition

    # idiosyncrasy: one row per participant and bundle, with the items it rests on
    idiosyncrasy = section_html(html, "bundle-idiosyncrasy")
    assert idiosyncrasy.count('<tr><th scope="row"') == len(expected["rankings"])
    for (person, bundle), figures in expected["rankings"].items():
        row = idiosyncrasy.split(f"<code>{person}</code>")[1].split("</tr>")[0]
        assert f"<code>{bundle}</code>" in row and f">{figures['n']}</td>" in row
        assert (shown(figures["rho"]) if figures["rho"] is not None else "—") in row
    rhos = [r["rho"] for r in expected["rankings"].values() if r["rho"] is not None]
    assert f"median {np.median(rhos):.2f}".replace("-", "−") in idiosyncrasy

    # every chart inline, beside its table, and each table's CSV linked
    for key in BUNDLE_FIGURES:
        assert f'id="chart-{key}"' in html
    assert html.count('<svg class="chart"') >= 5
    for table in TABLES:
        assert f"/manage/{batch.slug}/report/{table}.csv" in html


def test_the_bundle_tables_download_as_csv_with_the_same_numbers(bundled_report):
    batch = bundled_report
    expected = expected_figures(batch)
    client = staff_client("researcher")
    positions = read_csv(client, batch.slug, "bundle_positions")
    assert [int(row["position_in_bundle"]) for row in positions] == sorted(expected["positions"])
    for row in positions:
        n, mean = expected["positions"][int(row["position_in_bundle"])]
        assert int(row["n_labels"]) == n and close(row["mean_label"], mean)
    concordance = read_csv(client, batch.slug, "bundle_concordance")
    decomposition = read_csv(client, batch.slug, "bundle_decomposition")
    assert {row["bundle"] for row in concordance} == set(expected["bundles"])
    for row in concordance:
        figures = expected["bundles"][row["bundle"]]
        assert int(row["n_complete"]) == figures["n_complete"]
        assert close(row["kendalls_w"], figures["w"])
        assert close(row["mean_item_entropy"], figures["entropy"])
    for row in decomposition:
        figures = expected["bundles"][row["bundle"]]
        assert int(row["n_participants"]) == figures["n_complete"]
        assert close(row["icc_2_1"], figures["icc_2_1"])
        assert close(row["icc_3_1"], figures["icc_3_1"])
        assert close(row["participant_share"], figures["share"])
    participants = read_csv(client, batch.slug, "bundle_participants")
    assert len(participants) == len(expected["rankings"])
    for row in participants:
        figures = expected["rankings"][(row["annotator"], row["bundle"])]
        assert int(row["n_items"]) == figures["n"]
        assert close(row["spearman_with_others"], figures["rho"])


def test_the_bundle_figures_are_among_the_downloads(bundled_report):
    """ "Download figures" writes every figure ``report_figures`` gives, with its caption;
    each bundle figure is one of them and downloads as SVG and PDF."""
    batch = bundled_report
    figures = report_figures(batch, latest_report(batch)[1])
    client = staff_client("researcher")
    for key in BUNDLE_FIGURES:
        assert figures[key].caption == BUNDLE_CAPTIONS[key]
    single = client.get(f"/manage/{batch.slug}/report/figures/bundle-positions.svg")
    assert single.status_code == 200 and single["Content-Type"] == "image/svg+xml"
    assert b"Mean label by position" in single.content
    pdf = client.get(f"/manage/{batch.slug}/report/figures/bundle-idiosyncrasy.pdf")
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")


def test_an_unbundled_report_page_shows_no_bundle_section():
    batch = analysed_batch()
    client = staff_client("researcher")
    html = client.get(f"/manage/{batch.slug}/report").content.decode()
    for section in (*SECTIONS, "bundles"):
        assert f'id="{section}"' not in html
    for table in TABLES:
        assert f"{table}.csv" not in html
        assert read_csv(client, batch.slug, table) == []  # a header, no rows
    figures = report_figures(batch, latest_report(batch)[1])
    assert figures and not [key for key in figures if key.startswith("bundle-")]
    assert client.get(f"/manage/{batch.slug}/report/figures/bundle-w.svg").status_code == 404


def test_a_bundled_batch_without_labels_says_so_and_draws_nothing():
    batch = bundled_batch("empty-bundles", n_queries=2, per_query=3, per_item=2)
    run_job_now(batch, bootstrap=10)
    client = staff_client("researcher")
    html = client.get(f"/manage/{batch.slug}/report").content.decode()
    assert "No bundle figures: no counted labels yet." in section_html(html, "bundles")
    assert not [section for section in SECTIONS if f'id="{section}"' in html]
    assert read_csv(client, batch.slug, "bundle_concordance") == []


def test_the_test_of_no_trend_says_what_it_rests_on():
    effect = {"positions": [0, 1], "n_labels": [2, 2], "mean_label": [2.0, 3.0],
              "spearman_rho": 0.8944, "permutation_p": 0.31, "permutations": 200}  # fmt: skip
    assert position_sentence(effect, 5) == (
        "Spearman ρ = 0.894 over 4 labels; no p-value: too few (n = 4)"
    )
    effect["n_labels"] = [30, 30]
    assert position_sentence(effect, 5) == (
        "Spearman ρ = 0.894 over 60 labels; permutation p = 0.310 (200 shuffles)"
    )
    # bootstrap 0 asks for no resamples: the p of zero shuffles (1) is not a test
    effect.update(permutations=0, permutation_p=1.0)
    assert position_sentence(effect, 5) == (
        "Spearman ρ = 0.894 over 60 labels; no permutation p-value (the analysis ran with "
        "0 resamples)"
    )
    effect.update(spearman_rho=None, permutation_p=None)
    assert position_sentence(effect, 5).startswith("no test over 60 labels")


def test_a_hostile_bundle_key_is_escaped_on_the_page_and_in_the_csv():
    """A metadata key that starts like a formula and a value with markup: shown as text on
    the page, written as text in the CSVs."""
    batch = create_batch(slug="hostile-bundles", kind="absolute", annotations_per_item=2,
                         bundle_by="meta:=grp")  # fmt: skip
    rows = [
        {
            "item_id": f"h{n}",
            "query_id": f"hq{n}",
            "query": "Q?",
            "response_id": f"hr{n}",
            "response": "A.",
            "=grp": "<b>bold</b>" if n < 3 else "plain",
        }  # fmt: skip
        for n in range(6)
    ]
    lines = "".join(json.dumps(row) + "\n" for row in rows)
    import_items(batch, io.BytesIO(lines.encode()), filename="hostile.jsonl")
    batch = change_state(batch, "live")
    for number in range(4):
        person = make_participant(batch, f"hostile-{number}")
        while (outcome := lease_next_item(batch, person)).assignment is not None:
            value = 1 + (outcome.assignment.item.position + number) % 5
            submit_label(person.annotator, outcome.assignment.pk, value, 2000)
    run_job_now(batch, bootstrap=20)
    assert {entry["bundle"] for entry in latest_report(batch)[1]["bundles"]["bundles"]} == {
        "=grp:<b>bold</b>",
        "=grp:plain",
    }
    client = staff_client("researcher")
    html = client.get(f"/manage/{batch.slug}/report").content.decode()
    assert "<b>bold</b>" not in html and "=grp:&lt;b&gt;bold&lt;/b&gt;" in html
    for table in ("bundle_concordance", "bundle_decomposition", "bundle_participants"):
        cells = {row["bundle"] for row in read_csv(client, batch.slug, table)}
        assert cells == {"'=grp:<b>bold</b>", "'=grp:plain"}, table
