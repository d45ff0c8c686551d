"""Exports (FORMATS.md "Labels (export)") round trip: labels collected through the services,
exported in every layout and format through the command, the HTTP endpoint and a job,
read back with pandas / pyarrow and compared with the database row for row."""

import io
import itertools
import json
import math
import statistics
from datetime import UTC, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.models import Item, Label, Participation, label_values
from annotation.services.annotators import exclude_annotator
from annotation.services.exports import delivery
from annotation.services.exports import rows as export_rows
from annotation.services.exports import schema as export_schema
from annotation.services.labelling import submit_label
from annotation.services.leasing import expire_leases, lease_next_item
from core.models import Job
from tests.factories import make_batch, make_participant
from tests.staff import staff_user

pytestmark = pytest.mark.django_db

N = 3
TABLE_LAYOUTS = ["long", "dense", "annotators"]
FORMATS = ["jsonl", "csv", "parquet"]
FORMULA_QUERY = '=HYPERLINK("http://evil.example","x")'
FORMULA_CATEGORY = "+Creative Content Generation"
FORMULA_RESPONSE = "-1 is the answer"
FORMULA_MODEL = "@model-y"


# --- the study ----------------------------------------------------------------------------


def build_study(kind: str = "absolute"):
    """Six items, N = 3, collected through the services:

    * an annotator labels two items and is then excluded (2 ``excluded`` labels);
    * an annotator's lease expires, three others fill the item, then the late label
      arrives (1 ``surplus``);
    * three regulars label round robin (items 1-3 complete, several labels each), one
      more person labels item 4 (partial); item 5 gets no label at all;
    * item 2 has a gold answer but is no attention check (only ``check: true`` items
      are); one label has no duration; cells start with = + - @.
    """
    batch = make_batch(kind=kind, n_items=6, per_item=N, lease_seconds=30)
    items = list(batch.items.order_by("position"))
    query = items[0].query
    query.text, query.category = FORMULA_QUERY, FORMULA_CATEGORY
    query.save()
    first = items[0].response or items[0].response_a
    first.text, first.model = FORMULA_RESPONSE, FORMULA_MODEL
    first.save()
    values = itertools.cycle(label_values(kind))
    Item.objects.filter(pk=items[2].pk).update(gold=label_values(kind)[:3])
    durations = itertools.count(700, 130)

    def rate(person, now=None, duration=None):
        outcome = lease_next_item(batch, person, now=now)
        assert outcome.assignment is not None, outcome.reason
        duration = next(durations) if duration is None else duration
        return submit_label(person.annotator, outcome.assignment.pk, next(values), duration)

    bad = make_participant(batch, "bad-worker")
    rate(bad), rate(bad)
    assert exclude_annotator(batch, bad.annotator) == 2

    late = make_participant(batch, "late-worker")
    held = lease_next_item(batch, late)
    later = timezone.now() + timedelta(seconds=batch.lease_seconds + 1)
    expire_leases(batch, now=later)
    for index in range(N):
        rate(make_participant(batch, f"filler-{index}"), now=later)
    assert submit_label(late.annotator, held.assignment.pk, next(values), 50).status == "surplus"

    regulars = [make_participant(batch, f"regular-{index}") for index in range(3)]
    for round_ in range(3):
        for person in regulars:
            outcome = rate(person, duration=0 if round_ == 1 else None)
            assert outcome.status == "counted"
    # one label without a duration
    person = make_participant(batch, "no-duration")
    outcome = lease_next_item(batch, person)
    submit_label(person.annotator, outcome.assignment.pk, next(values), None)

    counts = list(batch.items.order_by("position").values_list("counted_count", flat=True))
    assert counts == [N, N, N, N, 1, 0]
    assert Label.objects.filter(batch=batch, status="surplus").count() == 1
    assert Label.objects.filter(batch=batch, status="excluded").count() == 2
    return batch


# --- what the database says ---------------------------------------------------------------


def iso(moment) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def item_part(batch, item) -> dict:
    row = {
        "batch": batch.slug,
        "kind": batch.kind,
        "item_id": item.item_id,
        "query_id": item.query.query_id,
        "query": item.query.text,
        "category": item.query.category,
        "subcategory": item.query.subcategory,
        "bundle_id": item.bundle,
    }
    if batch.kind == "absolute":
        row.update(
            response_id=item.response.response_id,
            model=item.response.model,
            response=item.response.text,
        )
    else:
        for side, response in (("a", item.response_a), ("b", item.response_b)):
            row[f"response_{side}_id"] = response.response_id
            row[f"model_{side}"] = response.model
            row[f"response_{side}"] = response.text
    return row


def expected_long(batch, all_statuses=False) -> list[dict]:
    labels = (
        Label.objects.filter(batch=batch)
        .select_related(
            "item__query", "item__response", "item__response_a", "item__response_b", "annotator"
        )
        .order_by("item__position", "submitted_at", "pk")
    )
    return [
        item_part(batch, label.item)
        | {
            "annotator": label.annotator.pseudonym,
            "value": label.value,
            "status": label.status,
            "shown_order": label.shown_order or None,
            "position_in_bundle": label.position_in_bundle,
            "check_passed": label.check_passed,
            "comment": label.comment,
            "duration_ms": label.duration_ms,
            "submitted_at": iso(label.submitted_at),
            "language": Participation.objects.get(batch=batch, annotator=label.annotator).language,
        }
        for label in labels
        if all_statuses or label.status == "counted"
    ]


def expected_dense(batch) -> list[dict]:
    rows = []
    items = batch.items.select_related("query", "response", "response_a", "response_b")
    for item in items.order_by("position"):
        counted = item.labels.filter(status="counted").order_by("submitted_at", "pk")
        row = item_part(batch, item) | {
            "labels": [label.value for label in counted],
            "annotators": [label.annotator.pseudonym for label in counted],
            "n": counted.count(),
        }
        if batch.kind == "pairwise":
            row["shown_ab"] = sum(label.shown_order == "ab" for label in counted)
            row["shown_ba"] = sum(label.shown_order == "ba" for label in counted)
        rows.append(row)
    return rows


def expected_annotators(batch) -> list[dict]:
    rows = []
    for participation in Participation.objects.filter(batch=batch).order_by("pk"):
        labels = list(
            Label.objects.filter(batch=batch, annotator=participation.annotator).select_related(
                "item"
            )
        )
        if not labels:
            continue
        regular = [label for label in labels if label.status in ("counted", "surplus", "excluded")]
        durations = [label.duration_ms for label in regular if label.duration_ms is not None]
        checks = [label.check_passed for label in labels if label.status == "check"]
        rows.append(
            {
                "annotator": participation.annotator.pseudonym,
                "n_labels": len(regular),
                "median_duration_ms": int(statistics.median(durations)) if durations else None,
                "attention_checks_passed": sum(checks),
                "attention_checks_failed": len(checks) - sum(checks),
                "n_repeats": sum(label.status == "repeat" for label in labels),
                "flagged_too_fast": sum(label.too_fast for label in regular),
                "flagged_straightlined": sum(label.straightlined for label in regular),
                "status": participation.status,
                "excluded_automatically": participation.excluded_automatically,
                "exclusion_reason": participation.exclusion_reason,
                "platform_status": participation.platform_status,
                "language": participation.language,
            }
        )
    return rows


def expected(batch, layout, all_statuses=False) -> list[dict]:
    if layout == "long":
        return expected_long(batch, all_statuses)
    if layout == "dense":
        return expected_dense(batch)
    return expected_annotators(batch)


# --- reading exports back -----------------------------------------------------------------


def plain(value):
    """A pandas/numpy cell as the plain Python value it stands for."""
    if isinstance(value, np.ndarray):
        return [plain(entry) for entry in value.tolist()]
    if isinstance(value, list):
        return [plain(entry) for entry in value]
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float):
        if math.isnan(value):
            return None
        assert value.is_integer(), value
        return int(value)
    return value


def csv_cell(value) -> str:
    """A value as the export's CSV writes it (lists as JSON, formulas neutralised)."""
    if value is None:
        return ""
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, str) and value.startswith(("=", "+", "-", "@")):
        return "'" + value
    return str(value)


def read_back(data: bytes, fmt: str) -> tuple[list[str], list[dict]]:
    """(columns, rows) of an export; CSV rows are the raw cell strings."""
    if fmt == "jsonl":
        frame = pd.read_json(io.BytesIO(data), lines=True, dtype=False)
    elif fmt == "csv":
        frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    else:
        frame = pd.read_parquet(io.BytesIO(data))
    rows = [{key: plain(value) for key, value in row.items()} for row in frame.to_dict("records")]
    return list(frame.columns), rows


def assert_matches_database(batch, layout, fmt, data: bytes, all_statuses=False):
    want = expected(batch, layout, all_statuses)
    columns, rows = read_back(data, fmt)
    assert columns == export_schema.layout_columns(layout, batch)
    if fmt == "csv":
        want = [{key: csv_cell(value) for key, value in row.items()} for row in want]
    assert len(rows) == len(want)
    for got, row in zip(rows, want, strict=True):
        assert got == row
    if fmt == "parquet":
        schema = pq.read_schema(io.BytesIO(data))
        for column in columns:
            if column in ("labels",):
                assert schema.field(column).type == pa.list_(pa.int64())
            elif column == "annotators" and layout == "dense":
                assert schema.field(column).type == pa.list_(pa.string())
            elif column in {
                c.name for c in export_schema.columns(layout, batch) if c.type == "int"
            }:
                assert schema.field(column).type == pa.int64(), column
            elif column in {
                c.name for c in export_schema.columns(layout, batch) if c.type == "bool"
            }:
                assert schema.field(column).type == pa.bool_(), column
            else:
                assert schema.field(column).type == pa.string(), column
    return rows


# --- clients ------------------------------------------------------------------------------


def researcher(username=None):
    return staff_user("researcher", username)


def researcher_client():
    client = Client()
    client.force_login(researcher())
    return client


def body(response) -> bytes:
    """The streamed content; the test client closes the response once it is consumed (do
    not close it again: that would fire request_finished and close the test database)."""
    return b"".join(response.streaming_content)


def http_export(client, batch, **params):
    response = client.get(f"/api/v1/batches/{batch.slug}/export", params)
    assert response.status_code == 200, response.content
    return response


def command_export(batch, tmp_path, layout, fmt, *flags) -> bytes:
    target = tmp_path / f"{batch.slug}-{layout}{''.join(flags)}.{fmt}"
    options = {"long": [], "dense": ["--dense"], "annotators": ["--annotators"], "card": ["--card"]}
    call_command(
        "export_labels", batch.slug, "--format", fmt, *options[layout], *flags, "-o", str(target)
    )
    assert not list(tmp_path.glob("*.partial"))
    return target.read_bytes()


def without_card_date(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith("- Card written"))


# --- tests --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["absolute", "pairwise"])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("layout", TABLE_LAYOUTS)
def test_round_trip_command_and_http(tmp_path, kind, layout, fmt):
    batch = build_study(kind)
    from_command = command_export(batch, tmp_path, layout, fmt)
    rows = assert_matches_database(batch, layout, fmt, from_command)

    response = http_export(researcher_client(), batch, layout=layout, format=fmt)
    assert response["Content-Type"] == export_schema.CONTENT_TYPES[fmt]
    assert response["Content-Disposition"] == (
        f'attachment; filename="{batch.slug}-{layout}.{fmt}"'
    )
    from_http = body(response)
    assert_matches_database(batch, layout, fmt, from_http)
    if fmt == "parquet":
        assert pq.read_table(io.BytesIO(from_http)).equals(pq.read_table(io.BytesIO(from_command)))
    else:
        assert from_http == from_command

    if layout == "dense":
        by_item = {row["item_id"]: row for row in rows}
        n_of = dict(batch.items.values_list("item_id", "counted_count"))
        for item_id, counted in n_of.items():
            labels = by_item[item_id]["labels"]
            labels = json.loads(labels) if fmt == "csv" else labels
            assert len(labels) == counted == int(by_item[item_id]["n"])
            if counted == N:  # every complete item holds exactly N labels
                assert len(labels) == N
        assert by_item["item-5"]["n"] in (0, "0")  # no counted label, still a row
    if layout == "annotators":
        # attention checks are check items (tests/annotation/test_quality.py); a regular
        # item that carries a gold answer is no check
        assert all(int(row["attention_checks_passed"]) == 0 for row in rows)
        assert {row["status"] for row in rows} == {"active", "excluded"}
    if layout == "long":
        excluded = Participation.objects.get(batch=batch, status="excluded").annotator
        assert excluded.pseudonym not in {row["annotator"] for row in rows}


def test_dense_parquet_keeps_list_columns(tmp_path):
    batch = build_study("pairwise")
    data = command_export(batch, tmp_path, "dense", "parquet")
    frame = pd.read_parquet(io.BytesIO(data))
    assert str(frame["n"].dtype) == "int64"
    complete = frame[frame["n"] == N]
    assert len(complete) == 4
    for labels, annotators in zip(complete["labels"], complete["annotators"], strict=True):
        assert len(labels) == N and len(annotators) == N
        assert all(isinstance(value, int | np.integer) for value in labels)
        assert all(isinstance(name, str) for name in annotators)
    assert list(frame["labels"].iloc[-1]) == [] and frame["n"].iloc[-1] == 0
    schema = pq.read_schema(io.BytesIO(data))
    assert schema.field("labels").type == pa.list_(pa.int64())
    assert schema.field("annotators").type == pa.list_(pa.string())


def test_csv_neutralises_formulas_but_not_numbers(tmp_path):
    batch = build_study("pairwise")
    data = command_export(batch, tmp_path, "long", "csv")
    frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    first = frame.iloc[0]
    assert first["query"] == "'" + FORMULA_QUERY
    assert first["category"] == "'" + FORMULA_CATEGORY
    assert first["response_a"] == "'" + FORMULA_RESPONSE
    assert first["model_a"] == "'" + FORMULA_MODEL
    # integers, negative ones too, stay numbers: the cells are exactly the stored values
    stored = Label.objects.filter(batch=batch, status="counted").values_list("value", flat=True)
    assert sorted(frame["value"]) == sorted(str(value) for value in stored)
    assert all(not cell.startswith(("=", "+", "-", "@")) for cell in frame["query"])
    reread = pd.read_csv(io.BytesIO(data))
    assert str(reread["value"].dtype) == "int64"


def test_all_statuses_option(tmp_path):
    batch = build_study()
    client = researcher_client()
    for fmt in FORMATS:
        data = command_export(batch, tmp_path, "long", fmt, "--all-statuses")
        rows = assert_matches_database(batch, "long", fmt, data, all_statuses=True)
        statuses = sorted(row["status"] for row in rows)
        assert statuses.count("surplus") == 1 and statuses.count("excluded") == 2
        assert len(rows) == Label.objects.filter(batch=batch).count()
        response = http_export(client, batch, layout="long", format=fmt, all_statuses="1")
        assert "all-statuses" in response["Content-Disposition"]
        assert_matches_database(batch, "long", fmt, body(response), all_statuses=True)
    counted_only = body(http_export(client, batch, all_statuses="0"))
    assert_matches_database(batch, "long", "jsonl", counted_only)
    # dense holds counted labels only, with or without the option
    dense = body(http_export(client, batch, layout="dense", all_statuses="1"))
    assert_matches_database(batch, "dense", "jsonl", dense)


def test_data_card(tmp_path):
    batch = build_study()
    text = command_export(batch, tmp_path, "card", "md").decode()
    response = http_export(researcher_client(), batch, layout="card")
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert without_card_date(body(response).decode()) == without_card_date(text)
    assert f"`{batch.slug}`" in text and "`absolute`" in text
    assert "> Rate **carefully**." in text
    assert "| items | 6 |" in text
    assert "| labels counted | 13 |" in text
    assert "| labels surplus | 1 |" in text
    assert "| labels excluded | 2 |" in text
    assert "| annotators excluded | 1 |" in text
    assert "| attention-check items (with a gold answer) | 1 |" in text
    contributors = Label.objects.filter(batch=batch).values("annotator").distinct().count()
    assert f"| annotators who contributed a label | {contributors} |" in text
    counted = Label.objects.filter(batch=batch, status="counted")
    for value in label_values(batch.kind):
        count = counted.filter(value=value).count()
        assert f"| {value} | {dict(batch.scale())[value]} | {count} |" in text
    assert "labels of excluded annotators are kept with status excluded and not counted" in text
    with pytest.raises(CommandError, match="--format"):
        call_command("export_labels", batch.slug, "--card", "-o", str(tmp_path / "card.csv"))


def test_token_auth_and_permissions():
    batch = build_study()
    user = researcher()
    token = Token.objects.create(user=user)
    client = Client(headers={"Authorization": f"Token {token.key}"})
    response = client.get(f"/api/v1/batches/{batch.slug}/export", {"format": "csv"})
    assert response.status_code == 200
    assert_matches_database(batch, "long", "csv", body(response))

    url = f"/api/v1/batches/{batch.slug}/export"
    assert Client().get(url).status_code in (401, 403)
    assert Client(headers={"Authorization": "Token nope"}).get(url).status_code in (401, 403)
    plain_staff = User.objects.create_user("staff", password="x", is_staff=True)
    other = Client()
    other.force_login(plain_staff)
    assert other.get(url).status_code == 403
    assert other.post(f"/api/v1/batches/{batch.slug}/export-jobs").status_code == 403
    assert researcher_client_for("r2").get("/api/v1/batches/nope/export").status_code == 404


def researcher_client_for(username):
    client = Client()
    client.force_login(researcher(username))
    return client


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"layout": "wide"}, "layout"),
        ({"format": "xlsx"}, "format"),
        ({"layout": "card", "format": "csv"}, "format"),
        ({"layout": "dense", "format": "md"}, "format"),
        ({"all_statuses": "maybe"}, "all_statuses"),
    ],
)
def test_bad_parameters_answer_400_naming_them(params, field):
    batch = make_batch()
    client = researcher_client()
    response = client.get(f"/api/v1/batches/{batch.slug}/export", params)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json()["field"] == field and field in response.json()["detail"]
    job = client.post(
        f"/api/v1/batches/{batch.slug}/export-jobs", params, content_type="application/json"
    )
    assert job.status_code == 400 and job.json()["field"] == field
    assert not Job.objects.exists()


def test_parquet_download_deletes_its_temporary_file(monkeypatch):
    made = []

    class Recorded(delivery.TemporaryExportFile):
        def __init__(self, path):
            super().__init__(path)
            made.append(Path(path))

    monkeypatch.setattr(delivery, "TemporaryExportFile", Recorded)
    batch = build_study()
    response = http_export(researcher_client(), batch, layout="dense", format="parquet")
    [path] = made
    assert path.exists()
    assert int(response["Content-Length"]) == path.stat().st_size
    data = body(response)  # closes the response
    assert not path.exists()
    assert_matches_database(batch, "dense", "parquet", data)


def test_export_job_through_the_api(settings, tmp_path, django_capture_on_commit_callbacks):
    settings.DATA_DIR = tmp_path
    batch = build_study()
    client = researcher_client()
    for request_body, as_json in [
        ({"layout": "dense", "format": "jsonl"}, True),
        ({"layout": "long", "format": "parquet", "all_statuses": "1"}, False),  # form body
        ({"layout": "card"}, True),
    ]:
        with django_capture_on_commit_callbacks(execute=True):
            if as_json:
                started = client.post(
                    f"/api/v1/batches/{batch.slug}/export-jobs",
                    json.dumps(request_body),
                    content_type="application/json",
                )
            else:
                started = client.post(f"/api/v1/batches/{batch.slug}/export-jobs", request_body)
        assert started.status_code == 202, started.content
        payload = started.json()
        assert payload["kind"] == "export" and payload["batch"] == batch.slug
        status = client.get(payload["status_url"]).json()
        assert status["state"] == "succeeded", status
        layout = request_body["layout"]
        fmt = request_body.get("format", "md")
        assert status["result"]["layout"] == layout and status["result"]["format"] == fmt
        assert status["progress"] == status["total"]
        job = Job.objects.get(pk=payload["id"])
        assert job.result_path == f"{job.pk}-{batch.slug}-{layout}.{fmt}"
        assert (tmp_path / "jobs" / job.result_path).exists()
        downloaded = client.get(status["download_url"])
        assert downloaded.status_code == 200
        from_job = body(downloaded)
        streamed = body(http_export(client, batch, **request_body))
        if fmt == "parquet":
            assert pq.read_table(io.BytesIO(from_job)).equals(pq.read_table(io.BytesIO(streamed)))
            rows = assert_matches_database(batch, layout, fmt, from_job, all_statuses=True)
            assert status["result"]["rows"] == len(rows)
        elif fmt == "md":
            assert without_card_date(from_job.decode()) == without_card_date(streamed.decode())
        else:
            assert from_job == streamed
            assert status["result"]["rows"] == len(
                assert_matches_database(batch, layout, fmt, from_job)
            )


def test_progress_is_reported_from_one_count(tmp_path, monkeypatch, django_assert_num_queries):
    batch = build_study()
    monkeypatch.setattr(delivery, "PROGRESS_EVERY", 5)
    calls = []
    # one COUNT; then items and labels merged (two queries), or on PostgreSQL one query
    # that joins them (annotation.services.exports.database)
    with django_assert_num_queries(2 if connection.vendor == "postgresql" else 3):
        rows = delivery.export_to_file(
            batch, "long", "jsonl", tmp_path / "x.jsonl", progress=lambda *a: calls.append(a)
        )
    assert rows == 13
    assert calls[0] == (0, 13) and calls[-1] == (13, 13)
    middle = [done for done, _ in calls[1:-1]]
    assert len(middle) >= 2 and middle == sorted(middle) and all(0 < d < 13 for d in middle)
    assert all(total == 13 for _, total in calls)


@pytest.mark.parametrize("layout", ["long", "dense"])
def test_long_and_dense_make_two_queries_whatever_the_number_of_items(
    layout, django_assert_num_queries
):
    batch = build_study()
    with django_assert_num_queries(2):
        found = (
            [label for _, group in export_rows.iter_long_groups(batch) for label in group]
            if layout == "long"
            else list(export_rows.iter_dense_rows(batch))
        )
    assert len(found) == (13 if layout == "long" else 6)
    if layout == "dense":
        assert [row["item_id"] for row in found] == [f"item-{index}" for index in range(6)]


def test_schema_documents_the_export_parameters():
    admin = User.objects.create_superuser("admin", password="x")
    client = Client()
    client.force_login(admin)
    response = client.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    schema = json.loads(response.content)
    operation = schema["paths"]["/api/v1/batches/{slug}/export"]["get"]
    names = {parameter["name"] for parameter in operation["parameters"]}
    assert {"layout", "format", "all_statuses"} <= names
    content = operation["responses"]["200"]["content"]
    assert {"text/csv", "application/vnd.apache.parquet"} <= set(content)
    job = schema["paths"]["/api/v1/batches/{slug}/export-jobs"]["post"]
    assert "202" in job["responses"]
