"""How many database queries the corpus reads cost: the list of corpora (page and API) one
query for all corpora, a query's drill-down only that query's rows."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.models import Job
from diversity.corpora.models import CorpusQuery
from diversity.corpora.services.analyses import analyse_now, analysis_params
from tests.corpora.analysis_corpora import HAND_MADE, make_corpus
from tests.staff import staff_client, staff_user, with_token

pytestmark = pytest.mark.django_db

# the page: session, user, permissions, corpora, ...; the API: token, permissions, corpora
LIST_PAGE_QUERIES = 6
LIST_API_QUERIES = 4


def analysed(name: str):
    corpus = make_corpus(name, HAND_MADE)
    job = analyse_now(corpus, analysis_params(bootstrap=20))
    assert job.state == Job.State.SUCCEEDED, job.message
    return corpus, job


def test_the_list_of_corpora_costs_the_same_for_one_corpus_or_four(
    django_assert_max_num_queries,
):
    page_client = staff_client("researcher")
    api_client = with_token(staff_user("researcher"))
    analysed("c0")

    def listed(corpora: int) -> None:
        with django_assert_max_num_queries(LIST_PAGE_QUERIES):
            page = page_client.get("/manage/corpora/")
        assert page.status_code == 200
        assert page.content.decode().count('<tr data-corpus="') == corpora
        with django_assert_max_num_queries(LIST_API_QUERIES):
            listing = api_client.get("/api/v1/corpora/")
        assert [row["name"] for row in listing.json()] == [f"c{i}" for i in range(corpora)]

    listed(1)
    for number in (1, 2, 3):
        analysed(f"c{number}") if number == 2 else make_corpus(f"c{number}", HAND_MADE)
    listed(4)


def test_the_list_shows_each_corpus_newest_finished_analysis():
    first, _ = analysed("c0")
    newer = analyse_now(first, analysis_params(bootstrap=20))
    make_corpus("c1", HAND_MADE)
    Job.objects.create(kind="corpus_analysis", subject=first)  # pending: not counted
    rows = {
        row["name"]: row
        for row in with_token(staff_user("researcher")).get("/api/v1/corpora/").json()
    }
    assert rows["c0"]["analysed_at"] is not None and rows["c1"]["analysed_at"] is None
    assert rows["c0"]["analysed_at"].startswith(newer.finished_at.strftime("%Y-%m-%dT%H:%M:%S"))
    assert rows["c0"]["report_url"].endswith("/api/v1/corpora/c0/report")
    assert rows["c1"]["report_url"] is None


def test_a_query_drill_down_reads_only_that_query(django_assert_max_num_queries):
    corpus, _ = analysed("drill")
    other_text = CorpusQuery.objects.get(corpus=corpus, query_id="same").text
    client = staff_client("researcher")
    with CaptureQueriesContext(connection) as captured:
        page = client.get("/manage/corpora/drill/query/apart")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Name a river." in html and other_text not in html
    assert "The Nile flows north." in html and "Amazon basin rainforest." in html
    table = CorpusQuery._meta.db_table
    on_queries = [q["sql"] for q in captured.captured_queries if f'FROM "{table}"' in q["sql"]]
    assert on_queries and all('"query_id" = ' in sql for sql in on_queries), on_queries
    with django_assert_max_num_queries(len(captured.captured_queries)):
        assert client.get("/manage/corpora/drill/query/nope").status_code == 404
