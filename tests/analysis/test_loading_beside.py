"""Loading a batch with its items and scores read beside its labels (``core.beside``) gives
what loading them one after the other gives, value for value; the second connection is
used only where it sees the same rows (PostgreSQL, outside a transaction)."""

import threading

import numpy as np
import pytest
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction

from analysis.loading import load_batch, load_batch_and_scores, load_scores
from core.beside import beside
from tests.analysis.test_report_unchanged import seeded_batch


def assert_same_loading(mine, theirs):
    (arrays, sources), (expected_arrays, expected_sources) = mine, theirs
    for name, value in vars(expected_arrays).items():
        got = getattr(arrays, name)
        if isinstance(value, np.ndarray):
            assert got.dtype == value.dtype and np.array_equal(got, value, equal_nan=True), name
        else:
            assert got == value, name
    assert [source.name for source in sources] == [source.name for source in expected_sources]
    for got, expected in zip(sources, expected_sources, strict=True):
        assert got.kind == expected.kind
        assert np.array_equal(got.scores, expected.scores, equal_nan=True), got.name
        if expected.distributions is None:
            assert got.distributions is None
        else:
            assert np.array_equal(got.distributions, expected.distributions, equal_nan=True)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["absolute", "pairwise"])
def test_beside_the_labels_the_same_arrays_and_scores(kind):
    batch = seeded_batch(kind)
    one_after_the_other = load_batch(batch)
    expected = (one_after_the_other, load_scores(batch, one_after_the_other))
    assert expected[0].value.size and len(expected[1]) > 1
    if kind == "absolute":  # the seeded absolute batch's sources carry label distributions
        assert any(source.distributions is not None for source in expected[1])
    assert_same_loading(load_batch_and_scores(batch), expected)
    with transaction.atomic():  # inside a transaction: one connection, the same result
        assert_same_loading(load_batch_and_scores(batch), expected)


def where_it_ran():
    """This thread, its connection (Django's wrapper) and the server process behind it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    backend = connection.connection.info.backend_pid if connection.vendor == "postgresql" else 0
    return threading.get_ident(), connections[DEFAULT_DB_ALIAS], backend


@pytest.mark.django_db(transaction=True)
def test_on_postgresql_outside_a_transaction_it_runs_on_its_own_connection():
    here = where_it_ran()
    there = beside(where_it_ran).result()
    if connection.vendor != "postgresql":
        assert there == here  # deferred to the caller's thread
        return
    thread, wrapper, backend = there
    assert thread != here[0] and wrapper is not here[1] and backend != here[2]
    assert wrapper.connection is None  # closed (or given back to the pool) after its work


@pytest.mark.django_db(transaction=True)
def test_inside_a_transaction_it_runs_in_the_callers_thread_and_connection():
    with transaction.atomic():
        here = where_it_ran()
        assert beside(where_it_ran).result() == here


@pytest.mark.django_db(transaction=True)
def test_an_error_beside_reaches_the_caller():
    def fails():
        raise LookupError("beside")

    with pytest.raises(LookupError, match="beside"):
        beside(fails).result()


@pytest.mark.django_db
def test_a_label_of_an_item_read_after_the_items_is_left_for_the_next_analysis():
    from dataclasses import replace

    from analysis import loading

    batch = seeded_batch("absolute")
    items = loading.load_items(batch)
    columns = loading._label_columns(batch)
    whole = loading._with_labels(batch, items, columns)
    last = items.n_items - 1  # as if the last item had been added after the items were read
    fewer = replace(items, item_ids=items.item_ids[:-1], item_pks=items.item_pks[:-1])
    arrays = loading._with_labels(batch, fewer, columns)
    kept = whole.item_index != last
    assert 0 < kept.sum() < whole.value.size
    assert np.array_equal(arrays.item_index, whole.item_index[kept])
    assert np.array_equal(arrays.value, whole.value[kept])
    assert np.array_equal(arrays.duration_ms, whole.duration_ms[kept], equal_nan=True)
    assert (arrays.repeat_items < last).all() and len(arrays.repeats) == len(arrays.repeat_items)


class PoolOf:
    """Stands in for psycopg's pool: its statistics only."""

    def __init__(self, size: int, available: int, most: int):
        self.stats = {"pool_size": size, "pool_available": available, "pool_max": most}

    def get_stats(self):
        return dict(self.stats)


@pytest.mark.parametrize(("size", "available", "most", "room"), [
    (4, 0, 4, False),  # every connection of the pool in use
    (3, 0, 4, True),   # one more may be opened
    (4, 1, 4, True),   # one is free
])  # fmt: skip
def test_the_pool_has_room_while_it_can_give_one_more_connection(size, available, most, room):
    import core.beside

    assert core.beside._pool_has_room(PoolOf(size, available, most)) is room
    assert core.beside._pool_has_room(None)  # no pool: each thread opens its connection


@pytest.mark.django_db(transaction=True)
def test_work_is_deferred_when_the_pool_has_no_room(monkeypatch):
    import core.beside

    monkeypatch.setattr(core.beside, "_pool_has_room", lambda pool: False)
    here = where_it_ran()
    assert beside(where_it_ran).result() == here


@pytest.mark.django_db(transaction=True)
def test_when_the_thread_gets_no_connection_after_all_the_caller_does_the_work(monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("a second connection is used on PostgreSQL only")
    from django.db import OperationalError
    from psycopg_pool import PoolTimeout

    import core.beside

    def pool_timed_out():
        try:
            raise PoolTimeout("couldn't get a connection after 3.00 sec")
        except PoolTimeout as cause:
            raise OperationalError("the pool timed out") from cause

    monkeypatch.setattr(core.beside, "_connect", pool_timed_out)
    here = where_it_ran()
    assert beside(where_it_ran).result() == here

    def refused():
        raise OperationalError("connection refused")  # any other failure is raised

    monkeypatch.setattr(core.beside, "_connect", refused)
    with pytest.raises(OperationalError, match="refused"):
        beside(where_it_ran).result()
