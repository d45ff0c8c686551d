"""The census pages: who may see them, the upload form, running an analysis from the page,
what the census page shows, the downloads, and user text escaped in page and charts."""

import csv
import io
import json
from pathlib import Path

import pytest

from core.models import Job
from diversity.census.models import Census
from diversity.census.services.analyses import analyse_now, analysis_params
from diversity.census.services.imports import CensusUpload, import_census
from tests.diversity import census_files
from tests.page_access import assert_every_status, assert_sent_to_log_in, outsiders, section_urls
from tests.staff import staff_client, token_client

pytestmark = pytest.mark.django_db

SHIPPED = Path(__file__).resolve().parents[2] / "diversity/demo/one-word-census"
HOSTILE = '<script>alert("x")</script>'


def transcript(model: str, scenes: dict) -> CensusUpload:
    # named by the length of the model's name: the hostile name makes no file name
    return census_files.transcript(model, scenes, filename=f"{len(model)}.json")


@pytest.fixture
def small_census():
    """Three models, one of them with a hostile name; analysed."""
    census = import_census(
        "small",
        [
            transcript("alpha", {"tree": ["Oak", "Oak"], "color": ["Blue", "Red"]}),
            transcript("beta-model", {"tree": ["Pine", "Oak"], "color": ["Blue", "Blue"]}),
            transcript(HOSTILE, {"tree": ["Birch", "Elm"], "color": ["Teal", "Blue"]}),
        ],
    )
    job = analyse_now(census, analysis_params(bootstrap=100))
    assert job.state == Job.State.SUCCEEDED
    return census


def census_urls(name: str) -> list[str]:
    return section_urls("census", name, "report.json", "models.csv", "categories.csv")


# --------------------------------------------------------------------------- access


def test_anonymous_visitors_and_crowdworkers_are_refused(small_census):
    for client in outsiders():
        assert_sent_to_log_in(client, census_urls("small"))
        assert client.post("/manage/census/small/run", {"bootstrap": 10}).status_code == 302
        assert client.get("/api/v1/census/").status_code == 403
        assert client.get("/api/v1/census/small/report").status_code == 403
        assert client.post("/api/v1/census/small/analyses", {}).status_code == 403
    assert Job.objects.count() == 1


def test_a_login_without_a_role_gets_403_everywhere(small_census):
    client = staff_client(None)
    assert_every_status(client, census_urls("small"), 403)
    assert client.post("/manage/census/small/run", {"bootstrap": 10}).status_code == 403
    assert client.post("/manage/census/new", {"name": "x"}).status_code == 403
    api = token_client(None, "api-nobody")
    assert api.get("/api/v1/census/").status_code == 403
    assert api.post("/api/v1/census/small/analyses", {}).status_code == 403
    assert Job.objects.count() == 1


@pytest.mark.parametrize("role", ["researcher", "admin"])
def test_researchers_and_admins_are_allowed(small_census, role):
    client = staff_client(role)
    assert_every_status(client, census_urls("small"), 200)
    assert 'href="/manage/census/"' in client.get("/manage/").content.decode()  # navigation


def test_unknown_census_is_404():
    client = staff_client("researcher")
    assert client.get("/manage/census/nope/").status_code == 404
    assert client.get("/manage/census/nope/models.csv").status_code == 404
    assert client.post("/manage/census/nope/run", {"bootstrap": 10}).status_code == 404


# --------------------------------------------------------------------------- upload


def test_upload_form_imports_several_files_and_norms():
    client = staff_client("researcher")
    names = ["gpt-4o.json", "claude-sonnet-5.json", "gemma-3-27b-it.json"]
    handles = [(SHIPPED / "transcripts" / name).open("rb") for name in names]
    with (SHIPPED / "humannorms.json").open("rb") as norms:
        response = client.post(
            "/manage/census/new",
            {"name": "three", "files": handles, "norms": norms, "description": "three models"},
        )
    for handle in handles:
        handle.close()
    assert response.status_code == 302 and response["Location"] == "/manage/census/three/"
    census = Census.objects.get(name="three")
    assert census.description == "three models" and census.norms.count() == 20
    html = client.get("/manage/census/three/").content.decode()
    assert "No analysis yet" in html and "Imported census three." in html
    assert all(name in html for name in names)  # the files table


def test_upload_problems_are_listed_and_nothing_is_imported():
    client = staff_client("researcher")
    bad = io.BytesIO(b'{"model": "m", "category": "tree", "run": "first", "reply": "Oak"}\n')
    bad.name = "replies.jsonl"
    response = client.post("/manage/census/new", {"name": "bad", "files": [bad]})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Nothing was imported." in html
    assert (
        "replies.jsonl:1: run: must be an integer from 0 to 2,147,483,647, not &#x27;first&#x27;"
        in html
    )
    assert 'value="bad"' in html  # the form keeps what was typed
    assert not Census.objects.exists()
    response = client.post("/manage/census/new", {"name": "nofiles"})
    assert response.status_code == 400 and "files: give at least one" in response.content.decode()


# --------------------------------------------------------------------------- running


def test_run_from_the_page_as_json_and_as_a_form(small_census, django_capture_on_commit_callbacks):
    client = staff_client("researcher")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/manage/census/small/run",
            {"bootstrap": "25", "seed": "3", "human_batch": ""},
            HTTP_ACCEPT="application/json",
        )
    assert response.status_code == 202
    job = Job.objects.get(pk=response.json()["id"])
    assert job.params == {"bootstrap": 25, "seed": 3, "human_batch": None}
    assert response.json()["status_url"] == f"/api/v1/jobs/{job.pk}"
    response = client.post(
        "/manage/census/small/run", {"bootstrap": "0", "seed": "1"}, HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 400 and "Bootstrap draws" in response.json()["error"]
    response = client.post("/manage/census/small/run", {"bootstrap": "10", "human_batch": "x"})
    assert response.status_code == 302  # back to the page, with the error as a message
    assert "Analysis not started" in client.get("/manage/census/small/").content.decode()


# --------------------------------------------------------------------------- the page


def test_page_shows_charts_tables_and_escapes_names(small_census):
    client = staff_client("researcher")
    html = client.get("/manage/census/small/").content.decode()
    assert html.count('<svg class="chart"') == 3
    for chart in ("chart-ranking", "chart-scatter", "chart-modal-share"):
        assert f'id="{chart}"' in html
    assert HOSTILE not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert html.count('<tr data-model="') == 3
    assert html.count('<tr data-category="') == 2
    assert "No human norms to compare with in this report." in html
    assert "human batch: <span" in html and "none linked" in html


def test_downloads_match_the_report(small_census):
    client = staff_client("researcher")
    report = json.loads(b"".join(client.get("/manage/census/small/report.json").streaming_content))
    assert set(report["per_model"]) == {"alpha", "beta-model", HOSTILE}
    models = list(csv.DictReader(io.StringIO(_text(client.get("/manage/census/small/models.csv")))))
    assert [row["model"] for row in models] == sorted(
        report["per_model"], key=lambda m: -report["per_model"][m]["surprisal"]
    )
    assert float(models[0]["surprisal"]) == pytest.approx(
        report["per_model"][models[0]["model"]]["surprisal"]
    )
    categories = list(
        csv.DictReader(io.StringIO(_text(client.get("/manage/census/small/categories.csv"))))
    )
    assert [(row["category"], row["modal"]) for row in categories] == [
        ("tree", "oak"),
        ("color", "blue"),
    ]
    assert float(categories[0]["modal_share"]) == pytest.approx(3 / 6)


def _text(response) -> str:
    return b"".join(response.streaming_content).decode("utf-8")


@pytest.mark.parametrize(
    ("models", "n_models"),
    [
        ({"solo": {"tree": ["Oak", "Pine"]}}, 0),  # nobody else to compare with
        ({"a": {"tree": ["Okay."]}, "b": {"tree": [None]}}, 0),  # no valid answer at all
    ],
)
def test_a_census_with_nothing_to_score_still_analyses_and_renders(models, n_models):
    census = import_census("edge", [transcript(name, scenes) for name, scenes in models.items()])
    assert analyse_now(census, analysis_params(bootstrap=10)).state == Job.State.SUCCEEDED
    client = staff_client("researcher")
    response = client.get("/manage/census/edge/")
    assert response.status_code == 200
    assert response.context["report"]["n_models"] == n_models
    assert_every_status(client, census_urls("edge")[2:], 200)
