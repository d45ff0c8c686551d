"""The Genie pages: who may see them, the upload form, what a set's page shows, the
downloads, and user text escaped in page and charts."""

import csv
import io
import json

import pytest

from core.models import Job
from diversity.genie.models import GenieSet
from diversity.genie.services.analyses import analyse_now, analysis_params
from diversity.genie.services.imports import import_genie
from tests.diversity import genie_set as hand
from tests.page_access import assert_every_status, assert_sent_to_log_in, outsiders, section_urls
from tests.staff import staff_client, token_client

pytestmark = pytest.mark.django_db

HOSTILE = '<img src=x onerror="alert(1)">'


@pytest.fixture
def analysed():
    """The hand set with a hostile feature name, analysed."""
    content = hand.jsonl().decode().replace('"Setting"', json.dumps(HOSTILE)).encode()
    genie_set = import_genie("hand", hand.upload(content), filename="judgments.jsonl")
    assert analyse_now(genie_set, analysis_params(bootstrap=100)).state == Job.State.SUCCEEDED
    return genie_set


def urls(name: str) -> list[str]:
    paths = ("report.json", "documents.csv", "features.csv", "agreement.csv")
    return section_urls("genie", name, *paths)


def test_anonymous_visitors_and_crowdworkers_are_refused(analysed):
    for client in outsiders():
        assert_sent_to_log_in(client, urls("hand"))
        assert client.get("/api/v1/genie/").status_code == 403
        assert client.post("/api/v1/genie/hand/analyses", {}).status_code == 403
    nobody = staff_client(None)
    assert_every_status(nobody, urls("hand"), 403)
    assert nobody.post("/manage/genie/hand/run", {"bootstrap": 10}).status_code == 403
    assert token_client(None, "api-nobody").get("/api/v1/genie/hand/report").status_code == 403
    assert Job.objects.count() == 1


def test_researcher_sees_profiles_tables_and_escaped_names(analysed):
    client = staff_client("researcher")
    assert_every_status(client, urls("hand"), 200)
    html = client.get("/manage/genie/hand/").content.decode()
    assert html.count('<svg class="chart"') == 2  # LLM profiles, per-feature summary
    assert HOSTILE not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert html.count('<tr data-document="llm/p1/') == 2
    assert "No pair was judged by both an LLM and people" in html
    assert "manage.py genie_batch hand SLUG" in html
    assert 'href="/manage/genie/"' in client.get("/manage/").content.decode()


def test_downloads_match_the_report(analysed):
    client = staff_client("researcher")
    report = json.loads(b"".join(client.get("/manage/genie/hand/report.json").streaming_content))
    assert report["genie_set"] == "hand"
    text = b"".join(client.get("/manage/genie/hand/documents.csv").streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["document_id"], r["feature"]) for r in rows] == [
        ("d1", "Plot"),
        ("d2", "Plot"),
        ("d2", HOSTILE),
    ]
    assert float(rows[0]["novelty"]) == pytest.approx(hand.D1_PLOT)
    text = b"".join(client.get("/manage/genie/hand/features.csv").streaming_content).decode()
    features = list(csv.DictReader(io.StringIO(text)))
    assert [(f["source"], f["feature"], f["n_documents"]) for f in features] == [
        ("llm", "Plot", "2"),
        ("llm", HOSTILE, "1"),
    ]
    assert float(features[0]["mean"]) == pytest.approx(5 / 9)


def test_upload_form_imports_or_lists_problems():
    client = staff_client("researcher")
    response = client.post(
        "/manage/genie/new", {"name": "up", "file": hand.upload(hand.jsonl()), "description": "d"}
    )
    assert response.status_code == 302 and response["Location"] == "/manage/genie/up/"
    assert GenieSet.objects.get(name="up").judgments.count() == 17
    bad = hand.upload(b'{"prompt_id": "p1"}\n', "bad.jsonl")
    response = client.post("/manage/genie/new", {"name": "bad", "file": bad})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Nothing was imported." in html and "bad.jsonl:1: question_id: required" in html
    response = client.post("/manage/genie/new", {"name": "nofile"})
    assert (
        response.status_code == 400
        and "file: choose a .jsonl, .json or .csv file" in response.content.decode()
    )
    assert not GenieSet.objects.filter(name__in=["bad", "nofile"]).exists()


def test_run_from_the_page(analysed, django_capture_on_commit_callbacks):
    client = staff_client("researcher")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/manage/genie/hand/run",
            {"bootstrap": "30", "seed": "2"},
            HTTP_ACCEPT="application/json",
        )
    assert response.status_code == 202
    assert Job.objects.get(pk=response.json()["id"]).params == {
        "bootstrap": 30,
        "seed": 2,
        "human_batch": None,
    }
    response = client.post(
        "/manage/genie/hand/run", {"bootstrap": "x"}, HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 400 and "Bootstrap draws" in response.json()["error"]
    assert client.get("/manage/genie/nope/").status_code == 404


def test_a_set_with_no_usable_pair_still_analyses_and_renders():
    rows = [json.loads(line) for line in hand.jsonl().decode().splitlines()]
    unanswered = [{**row, "target_answer": None, "similarity": None} for row in rows]
    content = "".join(json.dumps(row) + "\n" for row in unanswered).encode()
    genie_set = import_genie("blank", hand.upload(content), filename="blank.jsonl")
    assert analyse_now(genie_set, analysis_params(bootstrap=10)).state == Job.State.SUCCEEDED
    client = staff_client("researcher")
    response = client.get("/manage/genie/blank/")
    assert response.status_code == 200
    assert response.context["report"]["scores"] == {"llm": None, "human": None}
    assert_every_status(client, urls("blank")[2:], 200)
