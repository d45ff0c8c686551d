"""core.columns.fetch_columns: query results as numpy columns, the same on PostgreSQL
(binary COPY, ordered in numpy) as through the ORM's own ordering."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.db.models import Value
from django.db.models.functions import Coalesce

from analysis.models import Score, ScoreSource
from annotation.models import Annotator, Batch, Query, Response
from core.columns import fetch_columns
from tests.factories import make_batch

pytestmark = pytest.mark.django_db


def scored_responses(n: int = 40):
    query = Query.objects.create(query_id="q-columns", text="?")
    responses = Response.objects.bulk_create(
        Response(response_id=f"r-{i}", query=query, text=f"answer {i}") for i in range(n)
    )
    source = ScoreSource.objects.create(name="rm-columns", kind="reward_model")
    values = [(-1) ** i * (i / 7 + 1e-9) for i in range(n)] + [1e300, -0.0]
    Score.objects.bulk_create(
        Score(source=source, response=response, value=value)
        for response, value in zip(responses, values, strict=False)
    )
    return source


def test_rows_become_one_column_per_field_value_for_value():
    scored_responses()
    expected = sorted(Score.objects.values_list("source_id", "response_id", "value"))
    ids = fetch_columns(Score.objects.all(), ["source_id", "response_id"])
    [values] = fetch_columns(Score.objects.all(), ["value"], np.float64)
    assert ids[0].dtype == np.int64 and values.dtype == np.float64
    rows = sorted(zip(ids[0].tolist(), ids[1].tolist(), values.tolist(), strict=True))
    assert rows == expected  # floats to the last bit


def test_rows_come_in_the_order_asked_for_ties_broken_by_the_next_key():
    start = datetime(2026, 3, 1, tzinfo=UTC)
    offsets = [5, 1, 3, 1, 0, 5, 2, 1]  # ties on the timestamp
    for number, offset in enumerate(offsets):
        annotator = Annotator.objects.create(platform="generic", platform_id=f"w{number}")
        Annotator.objects.filter(pk=annotator.pk).update(
            created_at=start + timedelta(microseconds=offset)
        )
    expected = list(Annotator.objects.order_by("created_at", "pk").values_list("pk", flat=True))
    [pks] = fetch_columns(Annotator.objects.all(), ["pk"], order_by=("created_at", "pk"))
    assert pks.tolist() == expected
    [pks] = fetch_columns(Annotator.objects.all(), ["pk"], order_by=("pk",))
    assert pks.tolist() == sorted(expected)


def test_a_four_byte_integer_orders_too():
    for per_item in (30, 10, 20, 10):
        make_batch(n_items=0, per_item=per_item, live=False)
    [pks] = fetch_columns(Batch.objects.all(), ["pk"], order_by=("annotations_per_item", "pk"))
    expected = Batch.objects.order_by("annotations_per_item", "pk").values_list("pk", flat=True)
    assert pks.tolist() == list(expected)


def test_no_rows_give_empty_columns():
    for nothing in (Score.objects.none(), Score.objects.filter(value__gt=0)):
        columns = fetch_columns(nothing, ["source_id", "value"], np.float64, order_by=("pk",))
        assert [(column.size, column.dtype) for column in columns] == [(0, np.float64)] * 2


def test_a_null_value_is_refused_and_coalesce_fills_it():
    Annotator.objects.create(platform="generic", platform_id="no-user")  # user is null
    with pytest.raises(ValueError, match="null"):
        fetch_columns(Annotator.objects.all(), ["pk", "user_id"])
    [filled] = fetch_columns(Annotator.objects.all(), [Coalesce("user_id", Value(-1))])
    assert filled.tolist() == [-1]


def test_only_int64_and_float64():
    with pytest.raises(ValueError, match="dtype"):
        fetch_columns(Score.objects.all(), ["value"], np.float32)


@pytest.mark.django_db(transaction=True)
def test_rows_read_in_slices_at_once_are_the_same_rows_in_the_same_order():
    start = datetime(2026, 3, 1, tzinfo=UTC)
    for number, offset in enumerate([4, 1, 3, 1, 0, 4, 2, 1, 7, 0, 5]):  # ties on the time
        annotator = Annotator.objects.create(platform="generic", platform_id=f"s{number}")
        Annotator.objects.filter(pk=annotator.pk).update(
            created_at=start + timedelta(microseconds=offset)
        )
    ordered = Annotator.objects.order_by("created_at", "pk")
    expected = [list(ordered.values_list("pk", flat=True)), [-1] * ordered.count()]
    fields = ["pk", Coalesce("user_id", Value(-1))]
    for parts in (1, 2, 3, 20):  # 20: most slices are empty
        columns = fetch_columns(
            Annotator.objects.all(), fields, order_by=("created_at", "pk"), parts=parts
        )
        assert [column.tolist() for column in columns] == expected, parts
    with pytest.raises(ValueError, match="null"):
        fetch_columns(Annotator.objects.all(), ["pk", "user_id"], parts=2)


@pytest.mark.django_db(transaction=True)
def test_slices_keep_rows_whose_key_is_negative():
    # PostgreSQL's MOD(-7, 2) is -1: no slice 0..parts-1 would hold that row by itself
    for pk in (-7, -2, 3, 8):
        Annotator.objects.create(pk=pk, platform="generic", platform_id=f"n{pk}")
    for parts in (1, 2, 3):
        [pks] = fetch_columns(Annotator.objects.all(), ["pk"], order_by=("pk",), parts=parts)
        assert pks.tolist() == [-7, -2, 3, 8], parts


def test_the_packed_query_is_never_prepared_however_often_it_runs():
    # a prepared statement would outlive its transaction: PgBouncer in transaction mode
    # hands the server connection to another client, which does not have it
    from django.db import connection

    scored_responses(6)
    if connection.vendor != "postgresql":
        return
    connection.ensure_connection()
    raw = connection.connection
    default = raw.prepare_threshold  # Django's None; a deployment may set one
    raw.prepare_threshold = 1  # psycopg would prepare a statement on its second run
    try:
        for _ in range(3):
            fetch_columns(Score.objects.all(), ["source_id", "value"], np.float64)
    finally:
        raw.prepare_threshold = default
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        assert cursor.fetchone()[0] == 0
