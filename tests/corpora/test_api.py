"""The corpus reading and analysis API: who may call it, the list, detail, report, per-query
table and projection, starting an analysis (202 job), making a batch from a selection, and
unknown names answered with a JSON 404."""

import csv
import io

import pytest
from django.test import Client

from annotation.models import Batch
from core.jobs.execution import run_job
from core.models import Job
from diversity.corpora.services.analyses import analyse_now, analysis_params
from tests.corpora.analysis_corpora import HAND_MADE, make_corpus
from tests.staff import staff_user, token_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus():
    corpus = make_corpus("api-corpus")
    job = analyse_now(corpus, analysis_params(bootstrap=100))
    assert job.state == Job.State.SUCCEEDED, job.message
    return corpus


READS = [
    "/api/v1/corpora/",
    "/api/v1/corpora/api-corpus",
    "/api/v1/corpora/api-corpus/report",
    "/api/v1/corpora/api-corpus/queries.csv",
    "/api/v1/corpora/api-corpus/queries/same/projection",
]


def test_anonymous_and_roleless_callers_are_refused(corpus):
    roleless = Client()
    roleless.force_login(staff_user(None, "no-role"))
    for client in (Client(), roleless):
        for url in READS:
            assert client.get(url).status_code in (401, 403), url
        assert client.post("/api/v1/corpora/api-corpus/analyses", {}).status_code in (401, 403)
        batch = client.post(
            "/api/v1/corpora/api-corpus/batches",
            {"slug": "x", "rule": "random", "per_query": 1},
            content_type="application/json",
        )
        assert batch.status_code in (401, 403)
    assert Job.objects.count() == 1


def test_a_researcher_reads_everything(corpus):
    client = token_client("researcher")
    listing = client.get("/api/v1/corpora/").json()
    assert [c["name"] for c in listing] == ["api-corpus"]
    assert listing[0]["n_responses"] == 8 and listing[0]["embeddings"]["dimension"] == 3
    assert listing[0]["report_url"].endswith("/api/v1/corpora/api-corpus/report")
    detail = client.get("/api/v1/corpora/api-corpus").json()
    assert detail["models"] == ["alpha", "beta"]
    assert detail["categories"] == [
        {"category": "creative", "queries": 1},
        {"category": "facts", "queries": 1},
    ]
    report = client.get("/api/v1/corpora/api-corpus/report").json()
    assert report["inter_model"]["diagonal"] == "intra_model_mean"
    assert report["top_n"]["n"][-1] == 50
    table = client.get("/api/v1/corpora/api-corpus/queries.csv")
    whole = list(csv.DictReader(io.StringIO(b"".join(table.streaming_content).decode())))
    assert [row["query_id"] for row in whole] == ["same", "apart"]
    facts = client.get("/api/v1/corpora/api-corpus/queries.csv?category=facts")
    rows = _csv_rows(facts)
    assert [row["query_id"] for row in rows] == ["apart"]
    assert rows == [whole[1]]  # the same row, cell for cell
    projection = client.get("/api/v1/corpora/api-corpus/queries/apart/projection").json()
    assert projection["query"] == "Name a river." and projection["category"] == "facts"
    assert len(projection["responses"]) == 4
    points = {(r["model"], round(r["x"], 6), round(r["y"], 6)) for r in projection["responses"]}
    assert len(points) == 2  # each model's two samples coincide


def test_unknown_names_are_json_404(corpus):
    client = token_client("researcher")
    for url in (
        "/api/v1/corpora/nope",
        "/api/v1/corpora/nope/report",
        "/api/v1/corpora/nope/queries.csv",
        "/api/v1/corpora/api-corpus/queries/nope/projection",
    ):
        response = client.get(url)
        assert response.status_code == 404, url
        assert "detail" in response.json(), url
    assert client.post("/api/v1/corpora/nope/analyses", {}).status_code == 404
    make_corpus("unanalysed")
    response = client.get("/api/v1/corpora/unanalysed/report")
    assert response.status_code == 404 and "no finished analysis" in response.json()["detail"]


def test_starting_an_analysis_answers_202_with_the_job(corpus):
    client = token_client("researcher")
    response = client.post(
        "/api/v1/corpora/api-corpus/analyses",
        {"bootstrap": 20, "seed": 3, "lexical": True},
        content_type="application/json",
    )
    assert response.status_code == 202
    job = response.json()
    assert job["kind"] == "corpus_analysis" and job["corpus"] == "api-corpus"
    assert job["params"] == {"bootstrap": 20, "seed": 3, "lexical": True, "human_batch": None}
    finished = run_job(job["id"])  # what the worker does with the queued job
    assert finished.state == Job.State.SUCCEEDED and finished.result["basis"] == "tfidf"
    assert (finished.progress, finished.total) == (1, 1)  # one part: a small corpus
    refused = client.post(
        "/api/v1/corpora/api-corpus/analyses", {"bootstrap": 0}, content_type="application/json"
    )
    assert refused.status_code == 400 and refused.json()["field"] == "bootstrap"
    # a misspelt setting is named, not run at its default
    jobs = Job.objects.count()
    misspelt = client.post(
        "/api/v1/corpora/api-corpus/analyses", {"lexicall": True}, content_type="application/json"
    )
    assert misspelt.status_code == 400 and misspelt.json()["field"] == "lexicall"
    assert "bootstrap, seed, lexical, human_batch" in misspelt.json()["detail"]
    assert Job.objects.count() == jobs


def test_making_a_batch_needs_an_admin(corpus):
    body = {"slug": "api-typical", "rule": "typicality", "per_query": 1}
    researcher = token_client("researcher")
    refused = researcher.post(
        "/api/v1/corpora/api-corpus/batches", body, content_type="application/json"
    )
    assert refused.status_code == 403
    admin = token_client("admin")
    made = admin.post("/api/v1/corpora/api-corpus/batches", body, content_type="application/json")
    assert made.status_code == 201, made.content
    payload = made.json()
    assert payload["batch"] == "api-typical" and payload["counts"]["items"] == 4
    assert payload["analysis_job"] is not None
    assert Batch.objects.get(slug="api-typical").state == "draft"
    again = admin.post("/api/v1/corpora/api-corpus/batches", body, content_type="application/json")
    assert again.status_code == 409
    bad = admin.post(
        "/api/v1/corpora/api-corpus/batches",
        {**body, "slug": "other", "categories": ["poems"]},
        content_type="application/json",
    )
    assert bad.status_code == 400 and bad.json()["field"] == "categories"


def test_the_schema_documents_the_corpus_endpoints():
    schema = token_client("researcher").get("/api/schema/", HTTP_ACCEPT="application/json")
    paths = schema.json()["paths"]
    for path in (
        "/api/v1/corpora/",
        "/api/v1/corpora/{name}/report",
        "/api/v1/corpora/{name}/analyses",
        "/api/v1/corpora/{name}/batches",
    ):
        assert path in paths, path
    assert paths["/api/v1/corpora/{name}/analyses"]["post"]["tags"] == ["corpora"]
    assert paths["/api/v1/corpora/{name}/analyses"]["post"]["summary"]


def test_a_category_of_the_table_keeps_negative_numbers_numbers(monkeypatch):
    # beta's answers point the other way: across models the similarity is -1
    alpha = next(row[7] for row in HAND_MADE if row[0] == "apart" and row[3] == "alpha")
    opposite = [
        (*row[:7], [-value for value in alpha]) if row[3] == "beta" and row[0] == "apart"
        else row
        for row in HAND_MADE
    ]  # fmt: skip
    made = make_corpus("opposite", opposite)
    assert analyse_now(made, analysis_params(bootstrap=50)).state == Job.State.SUCCEEDED
    client = token_client("researcher")
    whole = client.get("/api/v1/corpora/opposite/queries.csv")
    facts = client.get("/api/v1/corpora/opposite/queries.csv?category=facts")
    whole_rows = _csv_rows(whole)
    rows = _csv_rows(facts)
    assert rows == [whole_rows[1]]
    assert rows[0]["inter_model_mean"] == "-1.0"  # not "'-1.0", text in a spreadsheet
    # the page's download of the table takes the same filter, and says so in its name
    researcher = Client()
    researcher.force_login(staff_user("researcher"))
    page_facts = researcher.get("/manage/corpora/opposite/queries.csv?category=facts")
    assert page_facts.status_code == 200
    assert "corpus-opposite-queries.csv" in page_facts["Content-Disposition"]
    assert _csv_rows(page_facts) == rows
    assert _csv_rows(researcher.get("/manage/corpora/opposite/queries.csv")) == whole_rows
    # the page lists the first rows only and links the category's whole table
    monkeypatch.setattr("diversity.corpora.views.QUERY_ROWS_SHOWN", 0)
    page = researcher.get("/manage/corpora/opposite/?category=facts").content.decode()
    assert "every query of facts is in the" in page
    assert "/manage/corpora/opposite/queries.csv?category=facts" in page


def _csv_rows(response) -> list[dict]:
    body = b"".join(response) if response.streaming else response.content
    return list(csv.DictReader(io.StringIO(body.decode())))
