"""Suite-wide test settings."""

import pytest


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # PBKDF2's deliberate slowness costs ~0.5 s per user; tests need no brute-force guard.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def private_job_files(settings, tmp_path):
    # Job files (exports, reports, stored uploads) go to a folder of each test's own.
    settings.DATA_DIR = tmp_path / "data"


@pytest.fixture(autouse=True)
def figures_on_download(settings):
    # Drawing every chart as SVG and PDF is most of a test's analysis job (~9 s of ~14 s on
    # a 2-core machine), and only the figure tests look at those files: they turn the
    # production default (drawn by the job) back on (tests/analysis/test_figure_files.py).
    # The download draws them either way (analysis.figure_files.figures_zip).
    settings.ANALYSIS_FIGURES_IN_JOB = False


@pytest.fixture(scope="session", autouse=True)
def flush_by_deleting_rows():
    """After each transactional test Django empties every table (its ``flush``). On
    PostgreSQL that is one ``TRUNCATE`` of all of them, about a second even when they are
    nearly empty (new files for every table and index); deleting their rows takes a few
    milliseconds. The foreign keys are deferred, and flush runs in one transaction, so the
    order of the tables does not matter."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or allow_cascade or not tables:
            return truncate(
                self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        deletes = [f"DELETE FROM {self.quote_name(table)};" for table in tables]
        return ["SET CONSTRAINTS ALL DEFERRED;", *deletes]

    DatabaseOperations.sql_flush = sql_flush
    yield
    DatabaseOperations.sql_flush = truncate


@pytest.fixture(autouse=True)
def redis_answering():
    # A test that made Redis fail opens this process's breaker (core.redis_outage); the
    # next test starts with Redis assumed to answer.
    from core import redis_outage

    redis_outage.reset()
    yield
    redis_outage.reset()


# A quick run (``bin/test -m "not slow and not browser"``) is quick only while every long
# test is marked: the tests that ran longer than this without a ``slow`` or ``browser``
# mark are listed at the end of each run, to be marked or made faster.
UNMARKED_SLOW_SECONDS = 5.0
_unmarked_slow: list[tuple[str, float]] = []


def pytest_runtest_logreport(report):
    if report.when != "call" or report.duration <= UNMARKED_SLOW_SECONDS:
        return
    if {"slow", "browser"} & set(report.keywords):
        return
    _unmarked_slow.append((report.nodeid, report.duration))


def pytest_terminal_summary(terminalreporter):
    if not _unmarked_slow:
        return
    terminalreporter.section("tests over 5 s without a slow mark")
    for nodeid, seconds in sorted(_unmarked_slow, key=lambda entry: -entry[1]):
        terminalreporter.write_line(f"{seconds:6.1f} s  {nodeid}")


# Run in parallel (``-n 2 --dist loadgroup``, as CI does), the fault tests stay on one
# worker: they share one session-wide stack of processes (tests/faults/conftest.py).
SHARED_STACK_FOLDERS = ("tests/faults/",)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(SHARED_STACK_FOLDERS):
            item.add_marker(pytest.mark.xdist_group("fault-stack"))
