"""``manage.py migrate_serialised``: migrate, one web instance at a time."""

import io

import pytest
from django.core.management import call_command
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_migrates_and_releases_its_lock():
    out = io.StringIO()
    call_command("migrate_serialised", stdout=out, verbosity=1)
    assert "No migrations to apply" in out.getvalue()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
            assert cursor.fetchone()[0] == 0
