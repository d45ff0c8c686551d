"""On PostgreSQL the long export is built by the database (``exports.database``); it must
be byte for byte what the Python writers make of the same rows (``exports.formats``),
which stay the reference (and serve SQLite).

Texts here try the writers' rules: commas, double quotes, line breaks (LF and CRLF), tabs
and other control characters, formula prefixes, non-ASCII and characters JSON escapes;
labels of every status (with ``--all-statuses``), timestamps with and without
microseconds, a missing duration, a pair's orders, typed answers, and texts kept in an
item's content. They also try COPY's text escapes (``exports.streaming``): backslashes,
alone, doubled, at the end of a text and before the letters of the escapes.

The lines are read in two ways (``exports.streaming``): inside a transaction (these tests'
usual wrapping) through a cursor on the transaction's connection; outside one, by COPY on
a connection of the export's own, which only sees committed rows — the tests marked
``transaction=True`` commit theirs.
"""

import time
from datetime import UTC, datetime

import pyarrow.parquet as pq
import pytest
from django.db import connection

from annotation.models import Item, Label, Query, Response
from annotation.services.exports import database, delivery, streaming
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from core.jobs import execution
from core.jobs.execution import run_job
from core.models import Job
from tests.factories import make_batch, make_participant

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="the database path is PostgreSQL's"
    ),
]

TRICKY = [
    'a, "quoted" text',
    "two\nlines\r\nand a CR\r end",
    "=SUM(A1)",
    "+1 plus",
    "-minus, with a comma",
    "@handle",
    "tab\there\x01\x1f control \\ backslash / slash \b\f\v",
    "\\n \\\\ \\t\\r\\ trailing backslash \\",
    "Ünïcödé — “quotes” ✓ \u2028 line sep",
    "",
]


def _collect(kind: str) -> object:
    batch = make_batch(kind=kind, n_items=len(TRICKY), per_item=2)
    items = list(batch.items.order_by("position"))
    # the batch's items share one query: it gets every tricky text at once
    Query.objects.filter(pk=items[0].query_id).update(text=" | ".join(TRICKY), category="=cat")
    for index, item in enumerate(items):
        text = TRICKY[index]
        for field in ("response_id", "response_a_id", "response_b_id"):
            pk = getattr(item, field)
            if pk:
                Response.objects.filter(pk=pk).update(text=text or "r", model=text)
        if item.content:
            Item.objects.filter(pk=item.pk).update(content={key: text for key in item.content})
    values = {
        "short_text": ["Blue", "=red,"],
        "pairwise": [-2, 1],
        "similarity": [1, 4],
    }.get(kind, [1, 5])
    for person_index in range(2):
        person = make_participant(batch, f"db-export-{kind}-{person_index}")
        for turn in range(len(items)):
            outcome = lease_next_item(batch, person)
            if outcome.assignment is None:
                break
            duration = None if turn == 1 else 1000 + turn
            submit_label(person.annotator, outcome.assignment.pk, values[turn % 2], duration)
    # one timestamp without microseconds (isoformat then leaves them out)
    first = Label.objects.filter(batch=batch).order_by("pk").first()
    Label.objects.filter(pk=first.pk).update(submitted_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    return batch


def _export(batch, fmt, path, *, all_statuses, by_database, monkeypatch):
    with monkeypatch.context() as patch:
        if not by_database:
            patch.setattr(database, "applies", lambda batch: False)
        else:
            assert database.applies(batch)
        return delivery.export_to_file(batch, "long", fmt, path, all_statuses=all_statuses)


KINDS = ["absolute", "pairwise", "short_text", "similarity"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("all_statuses", [False, True])
def test_database_lines_equal_the_python_writers(kind, all_statuses, tmp_path, monkeypatch):
    _assert_same_files(_collect(kind), all_statuses, tmp_path, monkeypatch)


def _copy_only(monkeypatch):
    """The lines must come by COPY (the rows are committed, no transaction is open)."""

    def no_cursor(*args, **kwargs):
        raise AssertionError("read through a cursor outside a transaction")

    monkeypatch.setattr(streaming, "_cursor_lines", no_cursor)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", KINDS)
def test_copied_lines_equal_the_python_writers(kind, tmp_path, monkeypatch):
    batch = _collect(kind)
    _copy_only(monkeypatch)
    _assert_same_files(batch, True, tmp_path, monkeypatch)


def _assert_same_files(batch, all_statuses, tmp_path, monkeypatch):
    for fmt in ("csv", "jsonl", "parquet"):
        python_file, database_file = tmp_path / f"py.{fmt}", tmp_path / f"db.{fmt}"
        rows = _export(
            batch, fmt, python_file, all_statuses=all_statuses, by_database=False,
            monkeypatch=monkeypatch,
        )  # fmt: skip
        same_rows = _export(
            batch, fmt, database_file, all_statuses=all_statuses, by_database=True,
            monkeypatch=monkeypatch,
        )  # fmt: skip
        assert rows == same_rows > 0
        if fmt == "parquet":
            python_table, database_table = pq.read_table(python_file), pq.read_table(database_file)
            assert database_table.schema == python_table.schema
            assert database_table.to_pylist() == python_table.to_pylist()
        else:
            assert database_file.read_bytes() == python_file.read_bytes(), fmt
    text = (tmp_path / "db.csv").read_bytes().decode()
    assert 'a, ""quoted"" text' in text and ",'=cat," in text and "two\nlines\r\nand" in text


def test_a_streamed_download_is_the_same_file(tmp_path, monkeypatch):
    batch = _collect("absolute")
    delivery.export_to_file(batch, "long", "csv", tmp_path / "file.csv")
    chunks, _, _ = delivery.stream_export(batch, "long", "csv")
    assert b"".join(chunks) == (tmp_path / "file.csv").read_bytes()


@pytest.mark.django_db(transaction=True)
def test_an_export_job_writes_its_progress_while_the_lines_stream(tmp_path, monkeypatch):
    """The job's progress is written through the default connection while the COPY holds
    the export's own, in pieces as small as PROGRESS_EVERY, and counts every label."""
    batch = _collect("absolute")
    _copy_only(monkeypatch)
    monkeypatch.setattr(delivery, "PROGRESS_EVERY", 3)
    monkeypatch.setattr(execution, "PROGRESS_WRITE_INTERVAL_S", 0)
    written = []
    write = execution.JobProgress.__call__

    def recorded(self, done, total=None, message=""):
        write(self, done, total, message)
        written.append((done, Job.objects.get(pk=self.job.pk).progress))

    monkeypatch.setattr(execution.JobProgress, "__call__", recorded)
    job = Job.objects.create(
        kind="export", subject=batch, params={"layout": "long", "format": "csv"}
    )
    job = run_job(job.pk)
    assert job.state == Job.State.SUCCEEDED, job.message
    labels = Label.objects.filter(batch=batch, status="counted").count()
    assert job.result["rows"] == job.progress == job.total == labels
    assert all(done == stored for done, stored in written)
    middle = [done for done, _ in written if 0 < done < labels]
    assert len(middle) >= 2 and middle == sorted(middle)
    python_file = tmp_path / "py.csv"
    _export(
        batch, "csv", python_file, all_statuses=False, by_database=False, monkeypatch=monkeypatch
    )
    assert (execution.job_files_dir() / job.result_path).read_bytes() == python_file.read_bytes()


@pytest.mark.django_db(transaction=True)
def test_a_download_left_halfway_ends_its_copy(monkeypatch):
    """A client that goes away closes the response's chunks: the COPY's connection is
    closed with them, and the next export runs."""
    from django.db import connection

    batch = _collect("absolute")
    _copy_only(monkeypatch)
    monkeypatch.setattr(delivery, "LINES_PER_CHUNK", 1)
    chunks, _, _ = delivery.stream_export(batch, "long", "jsonl")
    try:
        assert next(chunks) and next(chunks)  # the first line, then the second
        assert _other_connections(connection) == 1  # the export's own
    finally:
        chunks.close()
    assert _other_connections(connection, until=0) == 0
    again, _, _ = delivery.stream_export(batch, "long", "jsonl")
    lines = b"".join(again).count(b"\n")  # JSON escapes the line feeds of texts
    assert lines == Label.objects.filter(batch=batch, status="counted").count()


def _other_connections(connection, until=None) -> int:
    """Other sessions on the test database (waiting up to 5 s for ``until``: a closed
    connection's server process ends a moment after its client closes the socket)."""
    deadline = time.monotonic() + 5
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            count = cursor.fetchone()[0]
        if until is None or count == until or time.monotonic() > deadline:
            return count
        time.sleep(0.05)
