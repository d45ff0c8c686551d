"""A corpus in a real Chromium: a researcher runs the analysis from the corpus page (the
script follows the job, then reloads), reads the three charts, opens a query's drill-down,
reaches a point of the projection by keyboard and opens its response; both pages pass axe.
Another imports a pool and its embeddings through the pages' forms (a refused file's
problems first, focused), runs the analysis, and watches the corpus page follow an
embeddings job to its end. Screenshots go to ``test-artifacts/corpus-*.png``."""

import json

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from core.jobs.execution import run_job
from core.models import Job
from diversity.corpora.models import Corpus
from diversity.corpora.services.embedding_jobs import JOB_KIND as EMBEDDINGS_JOB
from diversity.corpora.services.embedding_jobs import save_embeddings_upload
from diversity.corpora.services.local_embedding import local_model_available
from tests.browser.accessibility import assert_no_axe_violations
from tests.browser.conftest import JOB_PAGE_MARKS
from tests.browser.pages import assert_charts_drawn
from tests.browser.staff_login import log_in
from tests.corpora.analysis_corpora import make_corpus, npy_file, random_rows, responses_file
from tests.staff import staff_user

EXPECT_TIMEOUT_MS = 20_000

pytestmark = JOB_PAGE_MARKS


@pytest.fixture
def researcher(db):
    return staff_user("researcher", "ruth")


def test_researcher_analyses_a_corpus_and_drills_into_a_query(
    page: Page, live_server, researcher, artifacts
):
    make_corpus("pool", random_rows(queries=12, models=4, samples=3))
    script_errors: list[str] = []
    page.on("pageerror", lambda error: script_errors.append(str(error)))
    log_in(page, live_server, researcher, "/manage/corpora/")
    expect(page.locator("#corpora-table tr[data-corpus='pool']")).to_contain_text("144")
    page.get_by_role("link", name="pool").click()
    expect(page.get_by_role("heading", name="No analysis yet")).to_be_visible()

    page.get_by_label("Bootstrap draws").fill("200")
    page.get_by_role("button", name="Run analysis").click()
    expect(page.locator("#models-table")).to_be_visible()
    job = Corpus.objects.get(name="pool").jobs.get()
    assert job.state == Job.State.SUCCEEDED
    assert job.params["bootstrap"] == 200

    # The charts: inline SVG with a real size, their words as text.
    assert_charts_drawn(page, 3)
    expect(page.locator("#chart-heatmap svg text", has_text="model-a")).not_to_have_count(0)
    expect(page.locator("#chart-top-n svg text", has_text="nearest neighbours")).to_have_count(1)
    expect(page.locator("#models-table tbody tr")).to_have_count(4)
    expect(page.locator("#categories-table tr[data-category='odd']").first).to_be_visible()
    expect(page.locator("#queries-table tbody tr")).to_have_count(12)
    assert_no_axe_violations(page, name="corpus page")
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=artifacts / "corpus-page.png", full_page=True)

    # The drill-down: 12 points, coloured by model, each a link to its response.
    page.locator("#queries-table a.query-link", has_text="q3").click()
    expect(page).to_have_url(f"{live_server.url}/manage/corpora/pool/query/q3")
    points = page.locator("svg.projection a.point")
    expect(points).to_have_count(12)
    box = page.locator("svg.projection").bounding_box()
    assert box and box["width"] > 300 and box["height"] > 200, box
    expect(points.first.locator("title")).to_contain_text("model-a, sample 1:")
    fills = {points.nth(i).locator("circle").get_attribute("fill") for i in range(12)}
    assert len(fills) == 4
    # keyboard: focus the first point, open it; the response's row is the target
    points.first.focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{live_server.url}/manage/corpora/pool/query/q3#response-0")
    expect(page.locator("#response-0")).to_be_in_viewport()
    # a click on another point shows its response too
    points.nth(11).click()
    expect(page).to_have_url(f"{live_server.url}/manage/corpora/pool/query/q3#response-11")
    assert_no_axe_violations(page, name="query drill-down")
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=artifacts / "corpus-query.png", full_page=True)
    assert script_errors == []


def test_researcher_imports_a_pool_and_its_embeddings_through_the_pages(
    page: Page, live_server, researcher, artifacts, tmp_path
):
    rows = random_rows(queries=8, models=3, samples=2)
    pool = tmp_path / "pool.jsonl"
    pool.write_bytes(responses_file(rows).getvalue())
    bad = tmp_path / "bad.jsonl"
    lines = pool.read_text().splitlines()
    broken = json.loads(lines[2])
    broken["sample"] = "two"
    bad.write_text("\n".join([*lines[:2], json.dumps(broken), *lines[3:]]) + "\n")
    vectors = tmp_path / "vectors.npy"
    vectors.write_bytes(npy_file([row[7] for row in rows]).getvalue())
    script_errors: list[str] = []
    page.on("pageerror", lambda error: script_errors.append(str(error)))
    log_in(page, live_server, researcher, "/manage/corpora/")

    # The form, by keyboard: name, title, file, button in that order; it passes axe.
    expect(page.get_by_role("heading", name="Import a response pool")).to_be_visible()
    assert_no_axe_violations(page, name="corpus list with the import form")
    page.get_by_label("Name").focus()
    page.keyboard.type("pool")
    page.keyboard.press("Tab")
    expect(page.get_by_label("Title")).to_be_focused()
    page.keyboard.type("Eight queries")
    page.keyboard.press("Tab")
    expect(page.get_by_label("Responses file")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Import pool")).to_be_focused()

    # A refused file: its problems come first, announced and focused; nothing imported.
    page.get_by_label("Responses file").set_input_files(bad)
    page.get_by_role("button", name="Import pool").click()
    problems = page.locator("#upload-problems")
    expect(problems).to_be_focused()
    expect(problems).to_contain_text("bad.jsonl was rejected; nothing was imported.")
    expect(problems).to_contain_text("bad.jsonl:3: sample: must be a whole number")
    assert not Corpus.objects.exists()
    assert_no_axe_violations(page, name="corpus list with a refused file")
    page.screenshot(path=artifacts / "corpus-import-refused.png", full_page=True)

    # The good file (the name and title are kept for the new try).
    expect(page.get_by_label("Name")).to_have_value("pool")
    expect(page.get_by_label("Title")).to_have_value("Eight queries")
    page.get_by_label("Responses file").set_input_files(pool)
    page.get_by_role("button", name="Import pool").click()
    done = page.locator("#import-done")
    expect(done).to_be_focused()
    expect(done).to_contain_text("Imported corpus pool from pool.jsonl: 8 queries, 3 models")
    expect(page.locator("#corpora-table tr[data-corpus='pool']")).to_contain_text("48")
    states = Job.objects.filter(kind="corpus_import").order_by("created_at")
    assert list(states.values_list("state", flat=True)) == ["failed", "succeeded"]
    page.get_by_role("link", name="Open corpus pool").click()
    expect(page).to_have_url(f"{live_server.url}/manage/corpora/pool/")

    # The embeddings panel: no embeddings yet; the local model, or how to install it.
    panel = page.locator("#embeddings")
    expect(panel.locator("#embeddings-now")).to_contain_text("None yet")
    if local_model_available():
        expect(panel.get_by_role("button", name="Compute with the local model")).to_be_visible()
    else:
        expect(panel.locator("#local-model-missing")).to_contain_text('pip install -e ".[embed]"')
        expect(panel.locator("#local-model-missing")).to_contain_text("lexical TF-IDF vectors")
    assert_no_axe_violations(page, name="corpus page with the embeddings panel")
    panel.get_by_label("Embeddings file").set_input_files(vectors)
    panel.get_by_role("button", name="Import embeddings").click()
    expect(page.locator("#embeddings-done")).to_be_focused()
    expect(page.locator("#embeddings-done")).to_contain_text(
        "Embeddings imported from vectors.npy: 8 dimensions, stored as float32"
    )
    corpus = Corpus.objects.get(name="pool")
    assert corpus.has_embeddings and corpus.embedding_dimension == 8

    # The analysis, on those embeddings; the page drops ?job= when it shows the report.
    page.get_by_label("Bootstrap draws").fill("200")
    page.get_by_role("button", name="Run analysis").click()
    expect(page.locator("#models-table")).to_be_visible()
    expect(page).to_have_url(f"{live_server.url}/manage/corpora/pool/")
    expect(page.locator("[data-basis='embeddings']")).to_have_count(1)
    expect(page.locator("svg.chart")).to_have_count(3)
    expect(page.locator("#models-table tbody tr")).to_have_count(3)

    # A job started elsewhere (the API, another tab): the page follows it and, once it has
    # ended, shows how.
    again = np.random.default_rng(5).normal(size=(48, 4))
    with open(tmp_path / "again.npy", "wb") as target:
        np.save(target, again.astype(np.float32))
    with open(tmp_path / "again.npy", "rb") as source:
        stored = save_embeddings_upload(source, "again.npy")
    pending = Job.objects.create(
        kind=EMBEDDINGS_JOB,
        subject=corpus,
        params={"stored_file": stored, "filename": "again.npy", "dtype": "float32"},
        created_by=researcher,
    )
    page.reload()
    expect(page.locator("#job-progress")).to_be_visible()
    expect(page.locator("#job-progress h2")).to_have_text("Embeddings job running")
    run_job(str(pending.pk))
    expect(page.locator("#embeddings-done")).to_contain_text("again.npy: 4 dimensions")
    expect(page).to_have_url(f"{live_server.url}/manage/corpora/pool/?job={pending.pk}")
    expect(page.locator("#job-progress")).to_be_hidden()
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=artifacts / "corpus-embeddings.png", full_page=True)
    assert script_errors == []


def test_the_corpus_page_follows_an_analysis_done_in_parts(
    page: Page, live_server, researcher, artifacts
):
    from core.jobs.execution import JobProgress, record_success
    from diversity.corpora.services.analyses import analysis_params
    from diversity.corpora.services.analysis_parts import ANALYSIS_PARTS

    corpus = make_corpus("parts", random_rows(queries=10, models=3, samples=2))
    job = Job.objects.create(
        kind="corpus_analysis",
        subject=corpus,
        params=analysis_params(bootstrap=100),
        created_by=researcher,
        state=Job.State.RUNNING,
        progress=2,
        total=5,
        message="2 of 5 parts done",
    )  # as the workers leave it while they measure its parts
    script_errors: list[str] = []
    page.on("pageerror", lambda error: script_errors.append(str(error)))
    log_in(page, live_server, researcher, "/manage/corpora/parts/")
    card = page.locator("#job-progress")
    expect(card).to_be_visible()
    expect(page.locator("#job-text")).to_have_text("40 % done (2 of 5 parts done)")
    expect(page.locator("#job-bar")).to_have_attribute("aria-valuenow", "2")
    assert_no_axe_violations(page, name="corpus page with an analysis in parts")
    page.screenshot(path=artifacts / "corpus-parts.png", full_page=True)

    Job.objects.filter(pk=job.pk).update(progress=4, message="4 of 5 parts done")
    expect(page.locator("#job-text")).to_have_text("80 % done (4 of 5 parts done)")
    job.refresh_from_db()
    result, result_path = ANALYSIS_PARTS.runner(job, JobProgress(job))
    record_success(job.pk, result, result_path)
    expect(page.locator("#models-table")).to_be_visible()  # the page reloads with the report
    expect(card).to_be_hidden()
    assert script_errors == []
