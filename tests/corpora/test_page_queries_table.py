"""The corpus page's query table when it shows only the first rows: ranking all queries
by a column on the server, and the page's forms and scrolling tables staying accessible
(one id per field, named focusable regions)."""

import re

import numpy as np
import pytest

from core.models import Job
from diversity.corpora.services.analyses import analyse_now, analysis_params
from tests.corpora.analysis_corpora import make_corpus
from tests.staff import staff_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def wide_corpus(settings, tmp_path, monkeypatch):
    """5 queries x 2 models x 2 samples; query q4's samples are identical within each
    model (intra-model 1), the others random; the page shows only 2 query rows."""
    settings.DATA_DIR = tmp_path
    monkeypatch.setattr("diversity.corpora.views.QUERY_ROWS_SHOWN", 2)
    rng = np.random.default_rng(5)
    rows = []
    for q in range(5):
        for model in ("alpha", "beta"):
            base = rng.normal(size=6)
            for sample in (1, 2):
                vector = base if q == 4 else rng.normal(size=6)
                rows.append(
                    (f"q{q}", f"Query {q}?", "c", model, sample, f"r{q}{model}{sample}",
                     f"text {q} {model} {sample}", vector.tolist())
                )  # fmt: skip
    corpus = make_corpus("wide", rows)
    assert analyse_now(corpus, analysis_params(bootstrap=50)).state == Job.State.SUCCEEDED
    return corpus


def shown_queries(html: str) -> list[str]:
    return re.findall(r'class="query-link">([^<]+)</a>', html)


def test_ranking_covers_every_query_not_only_the_rows_shown(wide_corpus):
    client = staff_client("researcher")
    plain = client.get("/manage/corpora/wide/").content.decode()
    assert shown_queries(plain) == ["q0", "q1"]  # file order, the first two
    assert "sorting the table sorts these only" in plain
    ranked = client.get("/manage/corpora/wide/?rank=intra_model_mean").content.decode()
    assert shown_queries(ranked)[0] == "q4"  # the highest of all five, though not shown before
    assert "highest intra-model first" in ranked
    unknown = client.get("/manage/corpora/wide/?rank=__class__").content.decode()
    assert shown_queries(unknown) == ["q0", "q1"]


def test_every_form_field_id_is_unique_and_scrolling_tables_are_named_regions(wide_corpus):
    html = staff_client("admin").get("/manage/corpora/wide/").content.decode()
    ids = re.findall(r'<(?:input|select|textarea|button)\b[^>]*\sid="([^"]+)"', html)
    assert ids and len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    for target in re.findall(r'<label for="([^"]+)"', html):
        assert ids.count(target) == 1, target  # each label names exactly one field
    for wrapper in re.findall(r'<div class="table-wrap scroll-table"[^>]*>', html):
        assert 'role="region"' in wrapper and 'tabindex="0"' in wrapper, wrapper
        assert "aria-label=" in wrapper, wrapper
    names = re.findall(r'role="region" aria-label="([^"]+)"', html)
    assert len(names) == len(set(names)), names  # landmarks told apart by their names
