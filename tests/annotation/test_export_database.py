"""On PostgreSQL the long export is built by the database (``exports.database``); it must
be byte for byte what the Python writers make of the same rows (``exports.formats``),
which stay the reference (and serve SQLite).

Texts here try the writers' rules: commas, double quotes, line breaks (LF and CRLF), tabs
and other control characters, formula prefixes, non-ASCII and characters JSON escapes;
labels of every status (with ``--all-statuses``), timestamps with and without
microseconds, a missing duration, a pair's orders, typed answers, and texts kept in an
item's content.
"""

from datetime import UTC, datetime

import pyarrow.parquet as pq
import pytest
from django.db import connection

from annotation.models import Item, Label, Query, Response
from annotation.services.exports import database, delivery
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
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
    "tab\there\x01\x1f control \\ backslash / slash",
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


@pytest.mark.parametrize("kind", ["absolute", "pairwise", "short_text", "similarity"])
@pytest.mark.parametrize("all_statuses", [False, True])
def test_database_lines_equal_the_python_writers(kind, all_statuses, tmp_path, monkeypatch):
    batch = _collect(kind)
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
    assert "".join(chunks).encode() == (tmp_path / "file.csv").read_bytes()
