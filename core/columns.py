"""Query results straight into numpy columns, without a Python object per value.

An analysis reads hundreds of thousands of rows of a few numbers each (labels, scores).
Through a cursor's ``fetchall`` every value becomes a Python object and every row a tuple
before numpy sees them; on PostgreSQL :func:`fetch_columns` instead runs the query as
``COPY (…) TO STDOUT (FORMAT BINARY)`` with every column cast to an 8-byte type, so each
row arrives as fixed-width big-endian fields that ``np.frombuffer`` reads in one step. The
rows are put in order here (``np.lexsort``), not by the database: sorting hundreds of
thousands of rows by a timestamp made PostgreSQL walk an index in random heap order, several
times slower than reading the rows as they lie. Other databases (SQLite) take the cursor
path, with the same result.
"""

from collections.abc import Sequence

import numpy as np
from django.db import connection
from django.db.models import BigIntegerField, DateTimeField, Expression, F, FloatField, QuerySet
from django.db.models.functions import Cast

__all__ = ["fetch_columns"]

# PostgreSQL's binary COPY: an 11-byte signature, 32-bit flags, the length of a header
# extension; then per row a 16-bit field count and per field a 32-bit length and the
# value; then a 16-bit -1.
_SIGNATURE = b"PGCOPY\n\xff\r\n\x00"
_FIXED_HEADER = len(_SIGNATURE) + 8
_TRAILER = 2
_WIDTH = 8  # int8, float8 and timestamptz (microseconds) are all 8 bytes


def fetch_columns(
    queryset: QuerySet,
    fields: Sequence[str | Expression],
    dtype: type = np.int64,
    order_by: Sequence[str] = (),
) -> list[np.ndarray]:
    """One array per entry of ``fields`` (``np.int64`` or ``np.float64``), a value per row
    of ``queryset``, rows in the order of ``order_by``: names of integer or timestamp fields
    of the model, ascending, ties broken by the next (the last should be unique: ``"pk"``).

    A value must not be null (wrap a nullable field in ``Coalesce``): a null raises
    ``ValueError``.
    """
    if dtype not in (np.int64, np.float64):
        raise ValueError(f"dtype must be np.int64 or np.float64, got {dtype!r}")
    if queryset.query.is_empty():
        return [np.empty(0, dtype=dtype) for _ in fields]
    if connection.vendor == "postgresql":
        return _copied_columns(queryset, fields, dtype, order_by)
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


def _copied_columns(
    queryset: QuerySet, fields: Sequence, dtype: type, order_by: Sequence[str]
) -> list[np.ndarray]:
    output = BigIntegerField() if dtype is np.int64 else FloatField()
    cast = [Cast(F(field) if isinstance(field, str) else field, output) for field in fields]
    # A timestamp key travels as it is (binary COPY sends int8 microseconds), any other
    # key as int8.
    keys = [
        name
        if isinstance(_field(queryset, name), DateTimeField)
        else Cast(F(name), BigIntegerField())
        for name in order_by
    ]
    rows = queryset.order_by().values_list(*cast, *keys)
    sql, params = rows.query.sql_with_params()
    buffer = bytearray()
    with connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY ({sql}) TO STDOUT (FORMAT BINARY)", params) as copy:
            while block := copy.read():
                buffer += block
    width = len(fields) + len(order_by)
    table = _fixed_width_rows(buffer, width)
    columns = [table[f"v{index}"] for index in range(width)]
    kind = ">i8" if dtype is np.int64 else ">f8"
    values = [column.view(kind).astype(dtype) for column in columns[: len(fields)]]
    keys = [column.view(">i8") for column in columns[len(fields) :]]
    if keys and values[0].size:
        order = np.lexsort(keys[::-1])
        values = [column[order] for column in values]
    return values


def _field(queryset: QuerySet, name: str):
    meta = queryset.model._meta
    return meta.pk if name == "pk" else meta.get_field(name)


def _fixed_width_rows(buffer: bytearray, width: int) -> np.ndarray:
    """The rows of a binary COPY of ``width`` 8-byte columns, as a structured array whose
    fields ``v0``… hold each column's raw bytes."""
    if not buffer.startswith(_SIGNATURE):
        raise ValueError("not PostgreSQL's binary COPY format")
    extension = int.from_bytes(buffer[_FIXED_HEADER - 4 : _FIXED_HEADER], "big")
    body = memoryview(buffer)[_FIXED_HEADER + extension : len(buffer) - _TRAILER]
    layout = [("count", ">i2")]
    for index in range(width):
        layout += [(f"n{index}", ">i4"), (f"v{index}", "V8")]
    row = np.dtype(layout)
    if len(body) % row.itemsize:
        raise ValueError("a column of the COPY is null or not 8 bytes wide")
    table = np.frombuffer(body, dtype=row)
    lengths_fit = all((table[f"n{index}"] == _WIDTH).all() for index in range(width))
    if not (table["count"] == width).all() or not lengths_fit:
        raise ValueError("a column of the COPY is null or not 8 bytes wide")
    return table
