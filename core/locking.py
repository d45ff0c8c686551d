"""Row locking that degrades gracefully on SQLite.

PostgreSQL gets ``SELECT ... FOR UPDATE [SKIP LOCKED]``. SQLite has no row locks; there
the settings open every transaction with ``BEGIN IMMEDIATE``, which takes the database's
single write lock up front, so transactions that read-then-write are serialised.
"""

from django.db import connection
from django.db.models import QuerySet


def lock_rows(queryset: QuerySet, *, skip_locked: bool = False) -> QuerySet:
    features = connection.features
    if not features.has_select_for_update:
        return queryset
    options = {}
    if features.has_select_for_update_of:
        options["of"] = ("self",)
    if skip_locked and features.has_select_for_update_skip_locked:
        options["skip_locked"] = True
    return queryset.select_for_update(**options)
