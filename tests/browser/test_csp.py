"""No page breaks the Content-Security-Policy: a crawl of the worker flow, the staff
pages (with the census, Genie and response-pool pages, their charts and a running job's
progress bar),
the API docs and Django's admin in Chromium, collecting every console message about the
policy (README "Deployment", browser hardening).

Inline ``style="..."`` attributes are refused by the policy (``style-src 'self'``): a
failure lists the templates that still carry one.
"""

import re
from pathlib import Path

from django.contrib.auth import get_user_model
from django.utils.timezone import now
from playwright.sync_api import Page, expect

from core.models import Job
from tests.browser.conftest import JOB_PAGE_MARKS
from tests.factories import make_batch

pytestmark = JOB_PAGE_MARKS

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
INLINE_STYLE = re.compile(r"""\sstyle\s*=\s*["']""")
PASSWORD = "csp-crawl-password"


def templates_with_inline_styles() -> list[str]:
    return sorted(
        str(path.relative_to(TEMPLATES))
        for path in TEMPLATES.rglob("*.html")
        if INLINE_STYLE.search(path.read_text())
    )


class PolicyWatch:
    """Console messages about the Content-Security-Policy, per page visited."""

    def __init__(self, page: Page):
        self.page = page
        self.current = ""
        self.violations: list[tuple[str, str]] = []
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self.violations.append((self.current, str(error))))

    def _on_console(self, message) -> None:
        text = message.text
        if "Content Security Policy" in text or "Content-Security-Policy" in text:
            self.violations.append((self.current, text))

    def visit(self, url: str) -> None:
        self.current = url
        response = self.page.goto(url)
        assert response is not None and "content-security-policy" in response.headers, url
        self.page.wait_for_load_state("networkidle")


def analysed_census_and_genie_set() -> list[str]:
    """A census and a Genie set with their reports, and a census whose analysis is
    running (the page then shows its progress bar); their pages' paths."""
    import io
    import json

    from diversity.census.services import analyses as census_analyses
    from diversity.census.services.imports import CensusUpload, import_census
    from diversity.genie.services import analyses as genie_analyses
    from diversity.genie.services.imports import import_genie
    from tests.diversity import genie_set as hand

    def transcript(model: str, scenes: dict) -> CensusUpload:
        runs = {c: {"runs": [[{"reply": r}] for r in replies]} for c, replies in scenes.items()}
        content = json.dumps({"model": model, "scenes": runs}).encode()
        return CensusUpload(io.BytesIO(content), f"{model}.json")

    def small_census(name: str):
        return import_census(
            name,
            [
                transcript("alpha", {"tree": ["Oak", "Oak"], "color": ["Blue", "Red"]}),
                transcript("beta", {"tree": ["Pine", "Oak"], "color": ["Blue", "Blue"]}),
                transcript("gamma", {"tree": ["Birch", "Elm"], "color": ["Teal", "Blue"]}),
            ],
        )

    analysed = small_census("analysed")
    job = census_analyses.analyse_now(analysed, census_analyses.analysis_params(bootstrap=50))
    assert job.state == Job.State.SUCCEEDED
    running = small_census("running")
    Job.objects.create(
        kind=census_analyses.JOB_KIND, subject=running, state=Job.State.RUNNING, started_at=now()
    )
    genie = import_genie("hand", hand.upload(hand.jsonl()), filename="judgments.jsonl")
    job = genie_analyses.analyse_now(genie, genie_analyses.analysis_params(bootstrap=50))
    assert job.state == Job.State.SUCCEEDED
    return [  # the lists carry the upload forms (their "new" paths take posts only)
        "/manage/census/",
        "/manage/census/analysed/",
        "/manage/census/running/",
        "/manage/genie/",
        "/manage/genie/hand/",
    ]


def analysed_corpus() -> list[str]:
    """A response pool with its report (charts, tables, drill-down), and a running import
    (the list page follows it) and embeddings job (the corpus page follows it); the
    pages' paths."""
    from diversity.corpora.services.analyses import analyse_now, analysis_params
    from tests.corpora.analysis_corpora import make_corpus

    corpus = make_corpus("pool")
    assert analyse_now(corpus, analysis_params(bootstrap=50)).state == Job.State.SUCCEEDED
    importing = Job.objects.create(
        kind="corpus_import",
        params={"filename": "more.jsonl", "name": "more"},
        state=Job.State.RUNNING,
        started_at=now(),
    )
    embedding = make_corpus("embedding", embeddings=False)
    Job.objects.create(
        kind="corpus_embeddings",
        subject=embedding,
        params={"filename": "e.npy"},
        state=Job.State.RUNNING,
        started_at=now(),
    )
    return [  # the list carries the upload form, the corpus page the embeddings panel
        "/manage/corpora/",
        f"/manage/corpora/?job={importing.pk}",
        "/manage/corpora/pool/",
        "/manage/corpora/embedding/",
        "/manage/corpora/pool/query/apart",
    ]


def test_no_page_violates_the_content_security_policy(page: Page, live_server):
    batch = make_batch(n_items=2, per_item=1, completion_url="https://example.org/done")
    diversity_pages = analysed_census_and_genie_set() + analysed_corpus()
    get_user_model().objects.create_superuser("csp", "csp@example.org", PASSWORD)
    watch = PolicyWatch(page)
    base = live_server.url

    # the crowdworker flow to its end page
    watch.visit(f"{base}/work/{batch.slug}/?worker=crawler")
    page.locator("#start").click()
    page.wait_for_url(re.compile(rf"/work/{batch.slug}/task$"))
    watch.current = f"{base}/work/{batch.slug}/task"
    for _ in range(2):
        expect(page.locator("#rating")).to_be_visible()
        before = page.locator("#progress-text").text_content()
        page.keyboard.press("3")
        page.keyboard.press("Enter")
        page.wait_for_function(
            "(b) => document.getElementById('progress-text').textContent !== b", arg=before
        )
    page.wait_for_load_state("networkidle")
    watch.visit(f"{base}/work/{batch.slug}/?worker=a%00b")  # the 400 page

    # staff pages, the API docs and the admin
    watch.visit(f"{base}/accounts/login/")
    page.get_by_label("Username").fill("csp")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state("networkidle")
    for path in (
        "/manage/",
        "/manage/new",
        f"/manage/{batch.slug}/",
        f"/manage/{batch.slug}/edit",
        f"/manage/{batch.slug}/annotators",
        f"/manage/{batch.slug}/history",
        f"/manage/{batch.slug}/preview",
        f"/manage/{batch.slug}/report",
        "/api/docs/",
        "/admin/",
        "/admin/annotation/batch/",
        f"/admin/annotation/batch/{batch.pk}/change/",
        "/admin/core/job/",
        *diversity_pages,
    ):
        watch.visit(f"{base}{path}")

    report = "\n".join(f"{where}: {text[:200]}" for where, text in watch.violations)
    assert not watch.violations, (
        f"{report}\n(templates with inline style attributes: {templates_with_inline_styles()})"
    )
