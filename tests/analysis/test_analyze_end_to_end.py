"""End to end: labels through the real services, scores from a file, ``analyze --json``.

The expected numbers are computed here independently (plain Python and scipy.stats on the
rows read back from the database), not with ``analysis.stats``.
"""

import json
import math
import random
from collections import Counter, defaultdict

import numpy as np
import pytest
from django.core.management import call_command
from django.test import Client
from scipy import stats

from analysis.stats.correlation import EXACT_P_MAX_PAIRS, MIN_P_VALUE_PAIRS
from annotation.models import Label
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from core.models import Job
from tests.factories import make_batch, make_participant
from tests.staff import logged_in, staff_user, token_client

pytestmark = pytest.mark.django_db


def collect_labels(batch, n_people: int, seed: int) -> None:
    rng = random.Random(seed)
    people = [make_participant(batch) for _ in range(n_people)]
    progress = True
    while progress:
        progress = False
        for person in people:
            outcome = lease_next_item(batch, person)
            if outcome.assignment is None:
                continue
            item = outcome.assignment.item
            low, high = (-2, 2) if batch.kind == "pairwise" else (1, 5)
            value = min(high, max(low, rng.choice([-1, 0, 0, 1]) + (int(item.item_id[-1]) % 3)))
            submit_label(person.annotator, outcome.assignment.pk, value, rng.randint(500, 9000))
            progress = True


def write_scores(path, batch, sources):
    rows = []
    rng = random.Random(7)
    for name, kind in sources:
        for item in batch.items.select_related("response", "response_a", "response_b"):
            responses = [item.response] if item.response_id else [item.response_a, item.response_b]
            for response in responses:
                rows.append({"source": name, "kind": kind, "response_id": response.response_id,
                             "score": rng.uniform(-3, 3)})  # fmt: skip
    # one LM reports perplexity, lower is better: imported negated
    rows[0]["higher_is_better"] = True
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return rows


def expected_from_database(batch):
    values = defaultdict(list)
    for item_id, value in (
        Label.objects.filter(batch=batch, status="counted")
        .order_by("submitted_at", "pk")
        .values_list("item__item_id", "value")
    ):
        values[item_id].append(value)
    return values


@pytest.mark.parametrize("kind", ["absolute", "pairwise"])
def test_analyze_json_matches_independent_computation(tmp_path, kind):
    batch = make_batch(kind=kind, n_items=12, per_item=5)
    collect_labels(batch, n_people=9, seed=3)
    scores_file = tmp_path / "scores.jsonl"
    rows = write_scores(
        scores_file, batch, [("rm", "reward_model"), ("lm", "lm"), ("judge", "judge")]
    )
    call_command("import_scores", str(scores_file))
    report_path = tmp_path / "report.json"
    call_command(
        "analyze", batch.slug, "--json", str(report_path), "--bootstrap", "200", "--seed", "5"
    )
    report = json.loads(report_path.read_text())  # parses: no NaN/Infinity allowed by json
    labels = expected_from_database(batch)
    # recorded like an analysis started on the report page, which now shows it
    job = Job.objects.get(kind="analysis", state=Job.State.SUCCEEDED)
    assert job.params == {"bootstrap": 200, "seed": 5, "group_by": None}
    assert job.subject == batch and job.created_by is None
    page = logged_in(staff_user("researcher", "cli-reader")).get(f"/manage/{batch.slug}/report")
    assert "No analysis yet" not in page.content.decode()

    assert report["n_items"] == 12 and report["n_labels"] == 60
    label_set = [1, 2, 3, 4, 5] if kind == "absolute" else [-2, -1, 0, 1, 2]
    for entry in report["items"]:
        given = labels[entry["item_id"]]
        counts = Counter(given)
        assert entry["n"] == len(given) == 5
        assert entry["counts"] == {str(v): counts.get(v, 0) for v in label_set}
        assert entry["mean"] == pytest.approx(sum(given) / len(given), abs=1e-12)
        assert entry["std"] == pytest.approx(float(np.std(given)), abs=1e-12)
        entropy = -sum(c / 5 * math.log2(c / 5) for c in counts.values())
        assert entry["entropy_bits"] == pytest.approx(entropy, abs=1e-12)
        if kind == "pairwise":
            a = sum(v > 0 for v in given)
            b = sum(v < 0 for v in given)
            tie = sum(v == 0 for v in given)
            assert entry["agreement"] == pytest.approx(max(a + tie / 2, b + tie / 2) / 5)
            assert entry["p_disagree"] == pytest.approx(1 - entry["agreement"])

    # Spearman/Pearson on the full set, from the file's scores and the database's labels
    score_of = {(row["source"], row["response_id"]): row["score"] for row in rows}
    items = {
        item.item_id: item
        for item in batch.items.select_related("response", "response_a", "response_b")
    }
    order = [entry["item_id"] for entry in report["items"]]
    human = [sum(labels[i]) / len(labels[i]) for i in order]
    for source in ("rm", "lm", "judge"):
        if kind == "absolute":
            model = [score_of[(source, items[i].response.response_id)] for i in order]
        else:
            model = [
                score_of[(source, items[i].response_a.response_id)]
                - score_of[(source, items[i].response_b.response_id)]
                for i in order
            ]
        entry = next(
            e for e in report["correlations"] if e["source"] == source and e["subset"] == "full"
        )
        rho = stats.spearmanr(model, human)
        r = stats.pearsonr(model, human)
        assert entry["n"] == 12
        assert entry["spearman"]["r"] == pytest.approx(rho.statistic, abs=1e-9)
        assert entry["spearman"]["p"] == pytest.approx(rho.pvalue, abs=1e-9)
        assert entry["pearson"]["r"] == pytest.approx(r.statistic, abs=1e-9)
        assert entry["pearson"]["p"] == pytest.approx(r.pvalue, abs=1e-9)
        low, high = entry["spearman"]["ci95"]
        assert -1 <= low <= high <= 1
    assert set(report["subsets"]["full"]) == set(order)
    families = (
        ("tukey_k", "top_entropy_") if kind == "absolute" else ("most_ties_", "least_agreement_")
    )
    assert all(any(name.startswith(f) for name in report["subsets"]) for f in families)
    kinds = {row["kind"] for row in report["by_kind"]}
    assert kinds == {"reward_model", "lm", "judge"}


def test_analysis_job_through_the_api(django_capture_on_commit_callbacks):
    batch = make_batch(n_items=6, per_item=3)
    collect_labels(batch, n_people=4, seed=1)
    client = token_client("researcher", "res")
    assert client.get(f"/api/v1/batches/{batch.slug}/report").status_code == 404
    with django_capture_on_commit_callbacks(execute=True):  # the job starts on commit
        started = client.post(
            f"/api/v1/batches/{batch.slug}/analyses",
            data={"bootstrap": 50, "seed": 2},
            content_type="application/json",
        )
    assert started.status_code == 202
    job = client.get(started.json()["status_url"]).json()
    assert job["state"] == "succeeded" and job["result"]["n_items"] == 6  # eager by default
    report = client.get(f"/api/v1/batches/{batch.slug}/report").json()
    assert report["batch"] == batch.slug and report["settings"] == {
        "bootstrap_resamples": 50,
        "seed": 2,
        "min_p_value_n": MIN_P_VALUE_PAIRS,
        "exact_p_max_n": EXACT_P_MAX_PAIRS,
    }
    bad = client.post(
        f"/api/v1/batches/{batch.slug}/analyses",
        data={"bootstrap": -1},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "bootstrap" in bad.json()["detail"]
    misspelt = client.post(
        f"/api/v1/batches/{batch.slug}/analyses",
        data={"bootstrap": 50, "sede": 3},
        content_type="application/json",
    )  # refused, not run at the default seed unnoticed
    assert misspelt.status_code == 400 and misspelt.json()["field"] == "sede"
    assert "settings: bootstrap, seed, group_by" in misspelt.json()["detail"]
    unknown_question = client.post(
        f"/api/v1/batches/{batch.slug}/analyses",
        data={"group_by": "no-such-question"},
        content_type="application/json",
    )
    assert unknown_question.status_code == 400
    assert Job.objects.filter(kind="analysis").count() == 1
    assert Client().post(f"/api/v1/batches/{batch.slug}/analyses").status_code == 403


def test_annotator_page_shows_crowd_agreement_of_the_latest_analysis(
    django_capture_on_commit_callbacks,
):
    from core.jobs.queue import start_job

    batch = make_batch(n_items=8, per_item=4)
    collect_labels(batch, n_people=5, seed=4)
    admin = staff_user("admin", "adm")
    client = logged_in(admin)
    before = client.get(f"/manage/{batch.slug}/annotators").content.decode()
    assert "run an analysis to see it" in before
    with django_capture_on_commit_callbacks(execute=True):
        start_job("analysis", batch, {"bootstrap": 10, "seed": 0}, admin)
    page = client.get(f"/manage/{batch.slug}/annotators").content.decode()
    download = client.get(f"/manage/{batch.slug}/report.json")
    report = json.loads(b"".join(download.streaming_content))
    shown = [e["crowd_spearman"] for e in report["annotators"] if e["crowd_spearman"] is not None]
    assert shown and f"{shown[0]:.2f}" in page
    assert "from the analysis of" in page
