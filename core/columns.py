"""Query results straight into numpy columns, without a Python object per value.

An analysis reads hundreds of thousands of rows of a few numbers each (labels, scores).
Through a cursor's ``fetchall`` every value becomes a Python object and every row a tuple
before numpy sees them; on PostgreSQL :func:`fetch_columns` instead asks for one row: per
column, every value's 8-byte binary form (``int8send``, ``float8send``,
``timestamptz_send``) concatenated by ``string_agg``, which ``np.frombuffer`` reads in one
step. The client does nothing per row and holds Python's lock only for those few steps,
so another thread can load something else meanwhile (``analysis.loading``); a binary
``COPY``, the previous way, cost the same in all but was read a row at a time in Python.
The rows are put in order here (``np.lexsort``), not by the database: sorting hundreds
of thousands of rows by a timestamp made PostgreSQL walk an index in random heap order,
several times slower than reading the rows as they lie. Other databases (SQLite) take the
cursor path, with the same result.
"""

from collections.abc import Sequence

import numpy as np
from django.db import connection
from django.db.models import BigIntegerField, DateTimeField, Expression, F, FloatField, QuerySet
from django.db.models.functions import Cast, Mod

from core.beside import beside, can_run_beside

__all__ = ["fetch_columns"]

_WIDTH = 8  # int8, float8 and timestamptz (microseconds) are all 8 bytes


def fetch_columns(
    queryset: QuerySet,
    fields: Sequence[str | Expression],
    dtype: type = np.int64,
    order_by: Sequence[str] = (),
    *,
    parts: int = 1,
) -> list[np.ndarray]:
    """One array per entry of ``fields`` (``np.int64`` or ``np.float64``), a value per row
    of ``queryset``, rows in the order of ``order_by``: names of integer or timestamp fields
    of the model, ascending, ties broken by the next (the last should be unique: ``"pk"``).

    ``parts`` > 1 reads the rows in that many slices (by an integer primary key) at once,
    each on its own connection (``core.beside``), where that is possible: worth it for
    hundreds of thousands of rows, whose packing is most of PostgreSQL's work. A slice
    travels as one ``bytea`` per column, which PostgreSQL caps at 1 GB: some 134 million
    rows per slice.

    A value or key must not be null (wrap a nullable field in ``Coalesce``): a null
    raises ``ValueError`` (on SQLite, a null key is ordered first).
    """
    if dtype not in (np.int64, np.float64):
        raise ValueError(f"dtype must be np.int64 or np.float64, got {dtype!r}")
    if queryset.query.is_empty():
        return [np.empty(0, dtype=dtype) for _ in fields]
    if connection.vendor == "postgresql":
        return _aggregated_columns(queryset, fields, dtype, order_by, parts)
    rows = queryset.order_by(*order_by).values_list(*fields)
    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        table = cursor.fetchall()
    if not table:
        return [np.empty(0, dtype=dtype) for _ in fields]
    if any(value is None for row in table for value in row):
        raise ValueError("a column of the query is null")
    values = np.array(table, dtype=dtype)
    return [values[:, column] for column in range(len(fields))]


def _aggregated_columns(
    queryset: QuerySet, fields: Sequence, dtype: type, order_by: Sequence[str], parts: int
) -> list[np.ndarray]:
    if parts > 1 and can_run_beside():
        sliced = queryset.alias(_slice=Mod("pk", parts, output_field=BigIntegerField()))
        # the last slice takes whatever the others do not (MOD of a negative key is negative)
        querysets = [sliced.filter(_slice=number) for number in range(parts - 1)]
        querysets.append(sliced.exclude(_slice__in=range(parts - 1)))
        slices = [_packing_statement(part, fields, dtype, order_by) for part in querysets]
        others = [beside(_packed, *statement) for statement in slices[1:]]
        packed = [_packed(*slices[0])] + [other.result() for other in others]
        columns = [np.concatenate(column) for column in zip(*packed, strict=True)]
    else:
        columns = _packed(*_packing_statement(queryset, fields, dtype, order_by))
    kind = ">i8" if dtype is np.int64 else ">f8"
    values = [column.view(kind).astype(dtype) for column in columns[: len(fields)]]
    keys = [column.view(">i8") for column in columns[len(fields) :]]
    if keys and values[0].size:
        order = np.lexsort(keys[::-1])
        values = [column[order] for column in values]
    return values


def _packing_statement(
    queryset: QuerySet, fields: Sequence, dtype: type, order_by: Sequence[str]
) -> tuple[str, tuple]:
    """The statement that answers one row: the row count, then per field and per key of
    ``order_by`` the binary forms of all its values, concatenated in the same row order."""
    output = BigIntegerField() if dtype is np.int64 else FloatField()
    cast = [Cast(F(field) if isinstance(field, str) else field, output) for field in fields]
    value_send = "int8send" if dtype is np.int64 else "float8send"
    sends = [value_send] * len(fields)
    # A timestamp key travels as it is (its binary form is int8 microseconds), any other
    # key as int8.
    keys = []
    for name in order_by:
        if isinstance(_field(queryset, name), DateTimeField):
            keys.append(name)
            sends.append("timestamptz_send")
        else:
            keys.append(Cast(F(name), BigIntegerField()))
            sends.append("int8send")
    rows = queryset.order_by().values_list(*cast, *keys)
    sql, params = rows.query.sql_with_params()
    names = [f"c{index}" for index in range(len(sends))]
    aggregates = ", ".join(
        f"string_agg({send}({name}), ''::bytea)" for send, name in zip(sends, names, strict=True)
    )
    statement = f"SELECT count(*), {aggregates} FROM ({sql}) AS rows ({', '.join(names)})"
    return statement, params


def _packed(statement: str, params: tuple) -> list[np.ndarray]:
    """The answer of a ``_packing_statement``: one array of raw 8-byte values per column."""
    import psycopg  # PostgreSQL only

    with connection.cursor() as cursor:
        # A binary answer needs a cursor that binds server-side (Django's bind client-side).
        # Never prepared, whatever the connection's prepare_threshold: a prepared statement
        # outlives the transaction, which a pooler in transaction mode does not allow.
        with psycopg.Cursor(cursor.cursor.connection) as raw:
            raw.execute(statement, params, prepare=False, binary=True)
            count, *packed = raw.fetchone()
    if not count:
        return [np.empty(0, dtype="V8") for _ in packed]
    # string_agg leaves a null out: a null anywhere makes its column short
    if any(column is None or len(column) != count * _WIDTH for column in packed):
        raise ValueError("a column of the query is null")
    return [np.frombuffer(column, dtype="V8") for column in packed]


def _field(queryset: QuerySet, name: str):
    meta = queryset.model._meta
    return meta.pk if name == "pk" else meta.get_field(name)
