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
