"""Writing an import's rows fast: ``chunks`` splits ids for ``__in`` look-ups,
``RowInserter`` is a multi-row ``INSERT``, ``BULK_BATCH_SIZE`` rows at a time (the
all-or-nothing importers read their files with ``core.tabular``)."""

from collections.abc import Iterable, Iterator
from typing import TypeVar

from django.db import connection
from django.db.models.constants import OnConflict

__all__ = ["BULK_BATCH_SIZE", "CHUNK_SIZE", "RowInserter", "chunks"]

CHUNK_SIZE = 1000
BULK_BATCH_SIZE = 1000

T = TypeVar("T")


def chunks(keys: Iterable[T]) -> Iterator[list[T]]:
    """``keys`` in lists of ``CHUNK_SIZE`` (fewer if the database limits query parameters)."""
    size = CHUNK_SIZE
    limit = connection.features.max_query_params
    if limit:
        size = min(size, limit - 10)
    chunk: list[T] = []
    for key in keys:
        chunk.append(key)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class RowInserter:
    """``INSERT`` of many rows, ``BULK_BATCH_SIZE`` at a time, without model instances.

    This is what ``bulk_create`` does, minus building a model instance and compiling
    SQL for every row, which dominated the time of a 100,000-row import. Values are
    still prepared by the model fields (``get_db_prep_save``), so JSON is stored exactly
    as the ORM stores it. PostgreSQL gets one ``INSERT ... SELECT * FROM unnest(%s, ...)``
    per chunk, one array parameter per column (a statement with thousands of
    placeholders costs the driver more to parse than the round trips it saves);
    SQLite and others get ``executemany`` of a one-row ``INSERT``.
    """

    def __init__(self, model, field_names: list[str], *, ignore_conflicts: bool = False):
        ops = connection.ops
        self.fields = [model._meta.get_field(name) for name in field_names]
        on_conflict = OnConflict.IGNORE if ignore_conflicts else None
        columns = ", ".join(ops.quote_name(field.column) for field in self.fields)
        head = (
            f"{ops.insert_statement(on_conflict=on_conflict)} "
            f"{ops.quote_name(model._meta.db_table)} ({columns})"
        )
        tail = ops.on_conflict_suffix_sql(self.fields, on_conflict, None, None)
        self.by_columns = connection.vendor == "postgresql"
        if self.by_columns:
            arrays = ", ".join(f"%s::{field.cast_db_type(connection)}[]" for field in self.fields)
            self.sql = f"{head} SELECT * FROM unnest({arrays}) {tail}".strip()
        else:
            placeholders = ", ".join(["%s"] * len(self.fields))
            self.sql = f"{head} VALUES ({placeholders}) {tail}".strip()
        self.json_positions = [
            index
            for index, field in enumerate(self.fields)
            if field.get_internal_type() == "JSONField"
        ]

    def insert(self, rows: list[list]) -> int:
        """Insert the rows; the number the database reports inserted (-1: not known)."""
        for index in self.json_positions:
            field = self.fields[index]
            for row in rows:
                row[index] = field.get_db_prep_save(row[index], connection)
        inserted = 0
        with connection.cursor() as cursor:
            for start in range(0, len(rows), BULK_BATCH_SIZE):
                chunk = rows[start : start + BULK_BATCH_SIZE]
                if self.by_columns:
                    cursor.execute(self.sql, [list(column) for column in zip(*chunk, strict=True)])
                else:
                    cursor.executemany(self.sql, chunk)
                count = cursor.rowcount
                inserted = -1 if inserted < 0 or count is None or count < 0 else inserted + count
        return inserted
