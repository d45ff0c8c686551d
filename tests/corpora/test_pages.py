"""The corpus pages: who may see them, what the corpus page and a query's drill-down show,
every download, running an analysis and making a batch from the page, and user text
escaped in page and charts."""

import csv
import io
import json
import re
import zipfile
from html import unescape
from urllib.parse import quote, urljoin, urlsplit

import pytest

from annotation.models import Batch
from core.models import Job
from tests.corpora.analysis_corpora import E1, E2, make_corpus, named_model_rows, run_analysis
from tests.page_access import assert_every_status, assert_sent_to_log_in, outsiders, section_urls
from tests.staff import staff_client, token_client

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert("x")</script>'

ROWS = named_model_rows(HOSTILE)


@pytest.fixture
def analysed_corpus():
    corpus = make_corpus("pages", ROWS)
    run_analysis(corpus, bootstrap=100)
    return corpus


def corpus_urls(name: str) -> list[str]:
    """The corpus's pages and downloads, and the page and projection of its query ``same``."""
    downloads = ["report.json", "figures.zip", "figure/heatmap.svg"]
    tables = ["models.csv", "queries.csv"]
    return section_urls("corpora", name, *downloads, *tables, "query/same", "query.json/same")


# --------------------------------------------------------------------------- access


def test_anonymous_visitors_workers_and_roleless_logins_are_refused(analysed_corpus):
    for client in outsiders():
        assert_sent_to_log_in(client, corpus_urls("pages"))
        assert client.post("/manage/corpora/pages/run", {"bootstrap": 10}).status_code == 302
    nobody = staff_client(None)
    assert_every_status(nobody, corpus_urls("pages"), 403)
    assert nobody.post("/manage/corpora/pages/batch", {}).status_code == 403
    assert Job.objects.filter(kind="corpus_analysis").count() == 1


def test_researchers_read_and_analyse_but_only_admins_make_batches(analysed_corpus):
    researcher = staff_client("researcher")
    assert_every_status(researcher, corpus_urls("pages"), 200)
    page = researcher.get("/manage/corpora/pages/").content.decode()
    assert 'id="make-batch"' not in page and 'id="rerun"' in page
    refused = researcher.post(
        "/manage/corpora/pages/batch", {"slug": "x", "rule": "random", "per_query": 1}
    )
    assert refused.status_code == 403
    admin_page = staff_client("admin").get("/manage/corpora/pages/").content.decode()
    assert 'id="make-batch"' in admin_page


def test_unknown_names_are_404(analysed_corpus):
    researcher = staff_client("researcher")
    assert researcher.get("/manage/corpora/nope/").status_code == 404
    assert researcher.get("/manage/corpora/pages/query/nope").status_code == 404
    assert researcher.get("/manage/corpora/pages/nope.csv").status_code == 404
    assert researcher.get("/manage/corpora/pages/figure/nope.svg").status_code == 404
    make_corpus("fresh")
    assert researcher.get("/manage/corpora/fresh/report.json").status_code == 404
    page = researcher.get("/manage/corpora/fresh/").content.decode()
    assert "No analysis yet" in page


# --------------------------------------------------------------------------- content


def test_corpus_page_shows_the_charts_tables_and_escapes_names(analysed_corpus):
    researcher = staff_client("researcher")
    listing = researcher.get("/manage/corpora/").content.decode()
    assert 'data-corpus="pages"' in listing
    page = researcher.get("/manage/corpora/pages/").content.decode()
    for chart in ("intra-histogram", "heatmap", "top-n"):
        assert f'id="chart-{chart}"' in page
    assert page.count('<svg class="chart"') == 3
    assert HOSTILE not in page and "&lt;script&gt;" in page
    assert ' style="' not in page  # inline styles are refused by the CSP
    assert 'data-category="creative"' in page and 'data-small="1"' in page
    assert 'class="badge small-group"' in page
    assert 'href="/manage/corpora/pages/query/same"' in page
    filtered = researcher.get("/manage/corpora/pages/?category=facts").content.decode()
    assert 'data-query="apart"' in filtered and 'data-query="same"' not in filtered


def test_drill_down_projects_the_responses_with_their_texts(analysed_corpus):
    researcher = staff_client("researcher")
    page = researcher.get("/manage/corpora/pages/query/same").content.decode()
    assert page.count('class="point"') == 4
    assert 'href="#response-0"' in page and 'id="response-3"' in page
    assert "A frog &lt;jumps&gt; in." in page and "A frog <jumps>" not in page
    assert HOSTILE not in page
    payload = json.loads(researcher.get("/manage/corpora/pages/query.json/same").content)
    assert payload["query_id"] == "same" and len(payload["responses"]) == 4
    assert {r["model"] for r in payload["responses"]} == {HOSTILE, "beta"}
    assert all(set(r) >= {"x", "y", "text", "typicality"} for r in payload["responses"])


# Ids a link must carry as they are: "/", dot segments, "%", "?" and "#".
AWKWARD_IDS = ["q/../x", "x", "./y/.", "..", ".", "100%", "what?#now"]


def test_a_query_link_opens_that_query_whatever_its_id(analysed_corpus):
    texts = {query_id: f"Query number {n}." for n, query_id in enumerate(AWKWARD_IDS)}
    rows = [
        (query_id, texts[query_id], "", model, sample, f"{n}-{model}-{sample}", "A text.", vector)
        for n, query_id in enumerate(AWKWARD_IDS)
        for model, vector in (("alpha", E1), ("beta", E2))
        for sample in (1, 2)
    ]
    run_analysis(make_corpus("awkward", rows), bootstrap=20)
    researcher = staff_client("researcher")
    api = token_client("researcher", "api-researcher")
    page_url = "http://testserver/manage/corpora/awkward/"
    page = researcher.get(page_url).content.decode()
    links = re.findall(r'<a href="([^"]*)" class="query-link">([^<]*)</a>', page)
    assert sorted(unescape(shown) for _, shown in links) == sorted(AWKWARD_IDS)
    for href, shown in links:
        query_id = unescape(shown)
        # as a browser resolves it: relative to the page, dot segments removed
        followed = urlsplit(urljoin(page_url, unescape(href)))
        assert followed.path.startswith("/manage/corpora/awkward/query/"), href
        assert followed.fragment == "", href
        opened = researcher.get(followed.path + (f"?{followed.query}" if followed.query else ""))
        assert opened.status_code == 200, (query_id, href)
        assert opened.context["detail"].query.query_id == query_id
        assert texts[query_id] in opened.content.decode()
        json_href = re.search(
            r'<a class="button small" href="([^"]*)" download>', opened.content.decode()
        )
        download = urlsplit(urljoin(page_url, unescape(json_href.group(1))))
        projection = researcher.get(
            download.path + (f"?{download.query}" if download.query else "")
        )
        assert projection.status_code == 200 and projection.json()["query_id"] == query_id
        if query_id not in (".", ".."):  # the API takes the id percent-encoded in the path
            encoded = quote(query_id, safe="")
            answer = api.get(f"/api/v1/corpora/awkward/queries/{encoded}/projection")
            assert answer.status_code == 200 and answer.json()["query_id"] == query_id


@pytest.mark.slow
def test_downloads_hold_the_report_tables_and_figures(analysed_corpus):
    researcher = staff_client("researcher")
    report = json.loads(b"".join(researcher.get("/manage/corpora/pages/report.json")))
    assert report["corpus"] == "pages"
    for table in ("models", "histogram", "inter-model", "top-n", "categories", "human"):
        response = researcher.get(f"/manage/corpora/pages/{table}.csv")
        assert response.status_code == 200, table
        rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
        assert rows[0], table
    typicality = researcher.get("/manage/corpora/pages/responses.csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(typicality.streaming_content).decode())))
    assert len(rows) == 8 and rows[0]["response_id"] == "s-h1"
    queries = b"".join(researcher.get("/manage/corpora/pages/queries.csv"))
    assert b"unique_models_n1" in queries
    pdf = researcher.get("/manage/corpora/pages/figure/top-n.pdf")
    assert pdf.content.startswith(b"%PDF")
    archive = zipfile.ZipFile(
        io.BytesIO(researcher.get("/manage/corpora/pages/figures.zip").content)
    )
    names = set(archive.namelist())
    assert {"pages-heatmap.svg", "pages-top-n.pdf", "pages-categories.csv"} <= names
    assert "Figures of corpus pages" in archive.read("captions.txt").decode()
    # the downloads keep the names they had before the corpus pages joined the scaffold
    for path, filename in [
        ("report.json", "corpus-pages-report.json"),
        ("models.csv", "corpus-pages-models.csv"),
        ("queries.csv", "corpus-pages-queries.csv"),
        ("figures.zip", "corpus-pages-figures.zip"),
        ("figure/heatmap.svg", "pages-heatmap.svg"),
    ]:
        disposition = researcher.get(f"/manage/corpora/pages/{path}")["Content-Disposition"]
        assert filename in disposition, path


def test_the_tables_old_addresses_lead_to_the_same_files(analysed_corpus):
    researcher = staff_client("researcher")
    moved = researcher.get("/manage/corpora/pages/tables/models.csv")
    assert moved.status_code == 301
    assert moved["Location"] == "../models.csv"
    followed = researcher.get("/manage/corpora/pages/tables/models.csv", follow=True)
    assert followed.request["PATH_INFO"] == "/manage/corpora/pages/models.csv"
    assert followed.status_code == 200 and b"intra_model_mean" in b"".join(followed)
    assert researcher.get("/manage/corpora/pages/nope.csv").status_code == 404


# --------------------------------------------------------------------------- forms


def test_run_form_starts_a_job(analysed_corpus):
    researcher = staff_client("researcher")
    response = researcher.post(
        "/manage/corpora/pages/run",
        {"bootstrap": 50, "seed": 2, "lexical": "on"},
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 202
    status = response.json()
    assert status["status_url"].startswith("/api/v1/jobs/")
    job = Job.objects.get(pk=status["id"])
    assert job.params == {"bootstrap": 50, "seed": 2, "lexical": True, "human_batch": None}
    bad = researcher.post(
        "/manage/corpora/pages/run", {"bootstrap": 0, "seed": 1}, HTTP_ACCEPT="application/json"
    )
    assert bad.status_code == 400 and "Bootstrap" in bad.json()["error"]


def test_make_batch_form_makes_a_draft_batch(analysed_corpus):
    admin = staff_client("admin")
    response = admin.post(
        "/manage/corpora/pages/batch",
        {"slug": "typical-pages", "rule": "typicality", "per_query": 1, "categories": ["facts"]},
    )
    assert response.status_code == 302 and response["Location"] == "/manage/typical-pages/"
    batch = Batch.objects.get(slug="typical-pages")
    assert batch.items.count() == 2
    page = admin.get("/manage/corpora/pages/").content.decode()
    assert 'href="/manage/typical-pages/"' in page
    refused = admin.post(
        "/manage/corpora/pages/batch", {"slug": "typical-pages", "rule": "random", "per_query": 1}
    )
    assert refused.status_code == 302 and refused["Location"].endswith("#make-batch")
