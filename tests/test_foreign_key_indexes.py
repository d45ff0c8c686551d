"""Every foreign key column is the first column of a whole (not partial) index.

Deleting a referenced row (a batch, an annotator, a response) makes PostgreSQL look for the
rows that still point at it; without an index leading with the column that is a scan of the
whole table per deleted row. A key needs no index of its own when another index leads with
it (``annotation/migrations/0018_fewer_indexes_on_hot_tables.py`` dropped six such indexes
from the tables every lease and label write): this test keeps that choice safe when an
index is changed later.
"""

import pytest
from django.apps import apps
from django.db import connection, models

pytestmark = pytest.mark.django_db

PROJECT_APPS = {"core", "annotation", "analysis", "diversity", "crowd", "demo"}


def _leading_columns() -> set[tuple[str, str]]:
    """(table, column) of the first key column of every whole, valid index."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT t.relname, a.attname
               FROM pg_index i
               JOIN pg_class t ON t.oid = i.indrelid
               JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = i.indkey[0]
               WHERE i.indpred IS NULL AND i.indisvalid"""
        )
        return set(cursor.fetchall())


def test_every_foreign_key_leads_an_index():
    if connection.vendor != "postgresql":
        pytest.skip("reads PostgreSQL's catalogue")
    leading = _leading_columns()
    missing = []
    for model in apps.get_models():
        if model._meta.app_label not in PROJECT_APPS or not model._meta.managed:
            continue
        for field in model._meta.local_fields:
            if isinstance(field, models.ForeignKey):
                key = (model._meta.db_table, field.column)
                if key not in leading:
                    missing.append(f"{key[0]}.{key[1]}")
    assert not missing, f"foreign keys no index leads with: {missing}"
