"""Playwright fixtures for the browser tests: one Chromium for the session, a fresh
context (cookies, localStorage) per test.

Playwright's sync API drives its own event loop, so Django's ORM (called from the test
body) believes it runs inside an async context; ``DJANGO_ALLOW_ASYNC_UNSAFE`` is the
documented workaround for Playwright + Django tests.
"""

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
WIDE = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
# A browser test whose pages start jobs: the live server's threads must see its rows (so
# they are committed), and the jobs write their files in the test's own folder.
JOB_PAGE_MARKS = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("private_job_files"),
]


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists() and not shutil.which("chromium"):
        pytest.skip(f"Chromium is not installed at {CHROMIUM}; browser tests need it")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium")),
            args=CHROMIUM_ARGS,
            headless=True,
        )
        yield browser
        browser.close()


@pytest.fixture
def context(browser):
    context = browser.new_context(viewport=WIDE)
    context.set_default_timeout(5_000)
    yield context
    context.close()


@pytest.fixture
def page(context):
    return context.new_page()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(autouse=True)
def _expect_timeout(request):
    """How long ``expect`` waits: the test module's ``EXPECT_TIMEOUT_MS`` (pages that run a
    job, or render many plots, set more), else 8 s."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    sync_api.expect.set_options(timeout=getattr(request.module, "EXPECT_TIMEOUT_MS", 8_000))


@pytest.fixture
def private_job_files(settings, tmp_path):
    """Jobs started by the page write their files under the test's own folder."""
    settings.DATA_DIR = tmp_path
