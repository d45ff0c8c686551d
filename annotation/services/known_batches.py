"""Each web process's copy of the batches its participants work in, with the version of
the row each was read from.

The crowd's busiest requests need the batch's settings before they write (the kind checks
a label's value against them). Reading the batch again on every request cost a statement,
a round trip and a transaction of its own (``bench/crowd``), so the hot path keeps the row
it last read, by slug, with PostgreSQL's ``xmin`` of that row: the id of the transaction
that wrote this version of it, new with every change of the row. A statement that relies
on a copy checks, in its own ``WHERE``, that the batch row still has that version; when it
does not (the batch was edited, paused, closed since), the statement changes nothing and
the caller takes the path that reads the batch afresh — which puts the new row here. A
copy is therefore never used stale. PostgreSQL only: SQLite has no row versions, and its
hot path reads the batch as before.

What is kept is the row's values, not a model instance: each request builds its own
instance (``sql.instance``), so nothing one request does to its batch reaches another.
"""

from functools import cache

from annotation.models import Batch
from annotation.services import sql

# batches kept per process; a process serves a handful of live batches at a time
KEEP = 256

_rows: dict[str, tuple[tuple, str]] = {}


def remember(row: tuple, version: str | None) -> None:
    """Keep a batch's row (the values of ``sql.select_list(Batch, ...)``) and its version
    (``None``, SQLite's: nothing is kept)."""
    if version is None:
        return
    slug = row[_slug_position()]
    if len(_rows) >= KEEP and slug not in _rows:
        _rows.clear()
    _rows[slug] = (tuple(row), version)


def known(slug: str) -> tuple[Batch, str] | None:
    """A fresh instance of the batch as last read by this process, and the version of the
    row it was read from; ``None`` when this process has not read it."""
    kept = _rows.get(slug)
    if kept is None:
        return None
    row, version = kept
    return sql.instance(Batch, row), version


def version_of(alias: str, vendor: str) -> str:
    """The select-list entry of the row version of batch ``alias`` (``NULL`` on SQLite)."""
    return f"{alias}.xmin::text" if vendor == "postgresql" else "NULL"


@cache
def _slug_position() -> int:
    return [field.attname for field in sql.columns(Batch)].index("slug")
