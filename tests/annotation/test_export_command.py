"""export_labels: the long JSONL/CSV/Parquet export, row for row against the database."""

import csv
import json

import pyarrow.parquet as pq
import pytest
from django.core.management import CommandError, call_command

from annotation.models import Label
from annotation.services.labelling import submit_label
from annotation.services.leasing import expire_leases, lease_next_item
from tests.factories import make_batch, make_participant

pytestmark = pytest.mark.django_db


def collect(batch, values):
    """One label per participant, through the services; ``values`` are the labels as
    stored (a pair's worker answers relative to the order the lease showed)."""
    for value in values:
        person = make_participant(batch)
        outcome = lease_next_item(batch, person)
        shown = -value if outcome.assignment.shown_order == "ba" else value
        submit_label(person.annotator, outcome.assignment.pk, shown, 900)


def make_surplus(batch):
    from datetime import timedelta

    from django.utils import timezone

    late, other = make_participant(batch), make_participant(batch)
    held = lease_next_item(batch, late)
    later = timezone.now() + timedelta(seconds=batch.lease_seconds + 1)
    expire_leases(batch, now=later)
    submit_label(other.annotator, lease_next_item(batch, other, now=later).assignment.pk, 5, 1)
    assert submit_label(late.annotator, held.assignment.pk, 1, 1).status == "surplus"


def test_long_jsonl_matches_database(tmp_path):
    batch = make_batch(n_items=2, per_item=2)
    collect(batch, [1, 2, 3, 4])
    target = tmp_path / "labels.jsonl"
    call_command("export_labels", batch.slug, "--format", "jsonl", "-o", str(target))
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    labels = Label.objects.filter(batch=batch).select_related("item", "annotator")
    assert len(rows) == labels.count() == 4
    expected = {(lb.item.item_id, lb.annotator.pseudonym, lb.value) for lb in labels}
    assert {(r["item_id"], r["annotator"], r["value"]) for r in rows} == expected
    assert list(rows[0]) == [
        "batch", "kind", "item_id", "query_id", "query", "category", "subcategory",
        "bundle_id", "response_id", "model", "response", "annotator", "value", "status",
        "shown_order", "position_in_bundle", "check_passed", "comment", "duration_ms",
        "submitted_at", "language",
    ]  # fmt: skip
    assert rows[0]["submitted_at"].endswith("Z")
    assert all(r["status"] == "counted" for r in rows)


def test_all_statuses_includes_surplus(tmp_path):
    batch = make_batch(n_items=1, per_item=1, lease_seconds=30)
    make_surplus(batch)
    counted, everything = tmp_path / "c.jsonl", tmp_path / "a.jsonl"
    call_command("export_labels", batch.slug, "--format", "jsonl", "-o", str(counted))
    call_command(
        "export_labels", batch.slug, "--format", "jsonl", "--all-statuses", "-o", str(everything)
    )
    assert len(counted.read_text().splitlines()) == 1
    statuses = [json.loads(line)["status"] for line in everything.read_text().splitlines()]
    assert sorted(statuses) == ["counted", "surplus"]


def test_csv_neutralises_formulas_and_parquet_keeps_integers(tmp_path):
    batch = make_batch(kind="pairwise", n_items=1, per_item=2)
    item = batch.items.first()
    item.query.text = "=HYPERLINK(evil)"
    item.query.save()
    collect(batch, [-2, 1])
    csv_path, parquet_path = tmp_path / "l.csv", tmp_path / "l.parquet"
    call_command("export_labels", batch.slug, "--format", "csv", "-o", str(csv_path))
    call_command("export_labels", batch.slug, "-o", str(parquet_path))
    with open(csv_path, newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert rows[0]["query"] == "'=HYPERLINK(evil)"
    assert sorted(int(r["value"]) for r in rows) == [-2, 1]  # numbers are not neutralised
    table = pq.read_table(parquet_path)
    assert str(table.schema.field("value").type) == "int64"
    assert sorted(table.column("value").to_pylist()) == [-2, 1]
    assert "response_a" in table.column_names and "response" not in table.column_names


def test_unknown_batch_and_format_fail_clearly(tmp_path):
    with pytest.raises(CommandError, match="does not exist"):
        call_command("export_labels", "nope", "--format", "jsonl", "-o", str(tmp_path / "x.jsonl"))
    batch = make_batch()
    with pytest.raises(CommandError, match="--format"):
        call_command("export_labels", batch.slug, "-o", str(tmp_path / "x.txt"))
    assert not (tmp_path / "x.txt").exists()
