"""The census through the product path on the SHIPPED transcripts: the commands, and the API
(import, analysis job, report), reproduce every published figure (docs/CENSUS.md,
"Reference values")."""

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from core.audit import history
from core.models import Job
from diversity.census.models import Census
from diversity.census.services.analyses import analysis_params
from tests.staff import token_client

pytestmark = pytest.mark.django_db

SHIPPED = Path(__file__).resolve().parents[2] / "diversity/demo/one-word-census"
METRIC_KEYS = {
    "surprisal",
    "modal_avoid",
    "novel_rate",
    "self_distinct",
    "n_answers",
    "type",
    "surprisal_ci90",
}


def percent(share: float) -> float:
    return round(share * 100, 1)


def assert_published_figures(report: dict) -> None:
    per_model, per_category = report["per_model"], report["per_category"]
    assert (report["n_models"], report["n_categories"]) == (44, 31)
    assert len(per_model) == 44 and len(per_category) == 31
    for metrics in per_model.values():
        assert set(metrics) == METRIC_KEYS
        low, high = metrics["surprisal_ci90"]
        assert low <= metrics["surprisal"] <= high
        assert metrics["type"] in {
            "explorer",
            "true-contrarian",
            "consensus-sampler",
            "consensus-fixed",
        }
    lowest = min(per_model, key=lambda model: per_model[model]["surprisal"])
    assert (lowest, round(per_model[lowest]["surprisal"], 3)) == ("claude-sonnet-5", 1.054)
    assert round(max(m["surprisal"] for m in per_model.values()), 3) == 3.213
    for category, modal, share in [
        ("tree", "oak", 93.7),
        ("tool", "hammer", 93.7),
        ("any_word", "serendipity", 40.8),
    ]:
        figures = per_category[category]
        assert (figures["modal"], percent(figures["modal_share"])) == (modal, share)
        assert set(figures) >= {"modal", "modal_share", "n_distinct", "n_answers"}
    assert sum(f["modal_share"] >= 0.8 for f in per_category.values()) == 7

    norms = report["norms"]
    published, computed = norms["published"], norms["computed"]
    assert (published["model_source"], computed["model_source"]) == ("published", "computed")
    assert (published["n_categories"], published["n_model_more_concentrated"]) == (20, 18)
    assert round(published["mean_model_share"], 3) == 0.661
    assert round(published["mean_human_share"], 3) == 0.358
    assert (computed["n_categories"], computed["n_model_more_concentrated"]) == (20, 16)
    assert round(computed["mean_model_share"], 3) == 0.618
    assert round(computed["mean_human_share"], 3) == 0.358
    assert norms["wording_mismatch"] == sorted(
        ["animal", "tool", "gemstone", "occupation", "dance", "fabric"]
    )
    assert report["human_batch"] is None
    json.dumps(report, allow_nan=False)


def test_commands_reproduce_the_published_figures(tmp_path, capsys):
    call_command(
        "import_census",
        "one-word-census",
        str(SHIPPED / "transcripts"),
        "--human-norms",
        str(SHIPPED / "humannorms.json"),
    )
    out = tmp_path / "report.json"
    call_command("analyze_census", "one-word-census", "--json", str(out))
    printed = capsys.readouterr().out
    assert "Analysed census one-word-census: 44 models, 31 categories" in printed
    assert "(published model column): model field more concentrated in 18 of 20" in printed
    assert "(computed): model field more concentrated in 16 of 20 categories" in printed
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["settings"] == {
        "bootstrap": 2000,
        "seed": 7,
        "ci_level": 0.9,
        "human_batch": None,
    }
    assert_published_figures(report)

    # The command's analysis is recorded like the page's, and audited.
    census = Census.objects.get(name="one-word-census")
    job = census.jobs.get()
    assert job.state == Job.State.SUCCEEDED and job.result["n_models"] == 44
    assert [event.action for event in history(census)] == [
        "census_analysis.requested",
        "census.import",
    ]


def test_api_job_reproduces_the_published_figures(django_capture_on_commit_callbacks):
    client = token_client("researcher")
    files = sorted((SHIPPED / "transcripts").glob("*.json"))
    handles = [path.open("rb") for path in files]
    try:
        with (SHIPPED / "humannorms.json").open("rb") as norms:
            response = client.post(
                "/api/v1/census/",
                {"name": "owc", "files": handles, "norms": norms, "description": "shipped"},
            )
    finally:
        for handle in handles:
            handle.close()
    assert response.status_code == 201, response.content
    created = response.json()
    assert (created["name"], created["n_models"], created["n_replies"]) == ("owc", 44, 5456)
    assert created["has_norms"] is True and len(created["files"]) == 45
    assert client.get("/api/v1/census/owc/report").status_code == 404

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/v1/census/owc/analyses",
            {"bootstrap": 2000, "seed": 7},
            content_type="application/json",
        )
    assert response.status_code == 202, response.content
    started = response.json()
    assert started["kind"] == "census_analysis" and started["census"] == "owc"
    job = client.get(f"/api/v1/jobs/{started['id']}").json()
    assert job["state"] == "succeeded", job
    assert job["result"]["n_models"] == 44

    report = client.get("/api/v1/census/owc/report").json()
    assert_published_figures(report)
    listed = client.get("/api/v1/census/").json()
    assert [entry["name"] for entry in listed] == ["owc"] and listed[0]["analysed_at"]


def test_api_refuses_bad_requests_with_4xx(django_capture_on_commit_callbacks):
    client = token_client("researcher")
    response = client.post("/api/v1/census/", {"name": "x"})
    assert response.status_code == 400 and response.json()["field"] == "files"
    with (SHIPPED / "transcripts" / "gpt-4o.json").open("rb") as handle:
        response = client.post("/api/v1/census/", {"name": "Bad Name", "files": [handle]})
    assert response.status_code == 400 and response.json()["field"] == "name"
    bad = SHIPPED / "humannorms.json"  # a norms file is not a transcript
    with bad.open("rb") as handle:
        response = client.post("/api/v1/census/", {"name": "x", "files": [handle]})
    assert response.status_code == 400
    assert response.json()["problems"] == [
        "humannorms.json: model: missing or not a non-empty string",
        "humannorms.json: scenes: missing",
    ]
    assert client.post("/api/v1/census/nope/analyses", {}).status_code == 404

    with (SHIPPED / "transcripts" / "gpt-4o.json").open("rb") as handle:
        assert client.post("/api/v1/census/", {"name": "one", "files": [handle]}).status_code == 201
    for body, field in [
        ({"bootstrap": 0}, "bootstrap"),
        ({"seed": -1}, "seed"),
        ({"human_batch": "no-such-batch"}, "human_batch"),
    ]:
        response = client.post("/api/v1/census/one/analyses", body, content_type="application/json")
        assert response.status_code == 400, body
        assert response.json()["field"] == field
    response = client.post(
        "/api/v1/census/one/analyses", {"bootstrap": "many"}, content_type="application/json"
    )
    assert response.status_code == 400 and response.json()["field"] == "bootstrap"
    assert not Job.objects.exists()


def test_analysis_parameters_are_checked():
    assert analysis_params() == {"bootstrap": 2000, "seed": 7, "human_batch": None}
    assert analysis_params("50", "3", "") == {"bootstrap": 50, "seed": 3, "human_batch": None}


def test_analyze_command_refuses_unknown_census_and_bad_settings(tmp_path):
    with pytest.raises(CommandError, match="census 'nope' does not exist"):
        call_command("analyze_census", "nope")
    call_command("import_census", "one", str(SHIPPED / "transcripts" / "gpt-4o.json"))
    with pytest.raises(CommandError, match="bootstrap: must be between 1 and 100000"):
        call_command("analyze_census", "one", "--bootstrap", "0")
    with pytest.raises(CommandError, match="human_batch: there is no batch 'nope'"):
        call_command("analyze_census", "one", "--human-batch", "nope")
