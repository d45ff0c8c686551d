"""Data migrations read and write through the migration's own connection.

Behind a transaction pooler ``migrate`` runs on ``settings.DIRECT_DATABASE`` (README,
PgBouncer), a session other than "default": a data migration that reads through the
default manager waits for the lock its own schema change holds, and ``migrate`` hangs.
Each model query in a migration must name ``schema_editor.connection.alias``.
"""

import ast
import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.db import connection

REPO = Path(__file__).resolve().parents[1]


def _migration_files() -> list[Path]:
    return sorted(
        path
        for path in REPO.glob("**/migrations/0*.py")
        if ".venv" not in path.parts and "node_modules" not in path.parts
    )


def _queries_without_alias(tree: ast.AST) -> list[int]:
    """Lines where ``<model>.objects.<method>`` is called other than as ``.using(...)``."""
    lines = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "objects"
            and node.attr != "using"
        ):
            lines.append(node.lineno)
    return lines


def test_every_data_migration_names_its_connection():
    files = _migration_files()
    assert len(files) > 20, "the migrations were not found"
    offenders = [
        f"{path.relative_to(REPO)}:{line}"
        for path in files
        for line in _queries_without_alias(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not offenders, "query the migration's connection (.using(alias)): " + ", ".join(
        offenders
    )


def test_the_check_finds_a_query_through_the_default_manager():
    source = "def forwards(apps, schema_editor):\n    Corpus.objects.filter(a=1).update(b=2)\n"
    assert _queries_without_alias(ast.parse(source)) == [2]
    fixed = "def f(apps, schema_editor):\n    Corpus.objects.using(alias).filter(a=1)\n"
    assert _queries_without_alias(ast.parse(fixed)) == []


@pytest.mark.slow
def test_migrate_on_the_direct_connection_finishes(tmp_path):
    """Every migration from an empty database, as a web container behind PgBouncer runs
    them (``DATABASE_TRANSACTION_POOLING``: "default" and the direct connection are two
    sessions): the corpus migration read through "default" and hung on its own lock."""
    if connection.vendor != "postgresql":
        pytest.skip("the direct connection is PostgreSQL's")
    params = connection.settings_dict
    server = {
        "host": params["HOST"] or "127.0.0.1",
        "port": params["PORT"] or 5432,
        "user": params["USER"],
        "password": params["PASSWORD"] or None,
    }
    name = f"migrate_direct_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        url = f"postgres://{server['user']}@{server['host']}:{server['port']}/{name}"
        environment = {
            **os.environ,
            "DATABASE_URL": url,
            "DATABASE_TRANSACTION_POOLING": "1",
            "DATABASE_DIRECT_URL": url,
            "DATA_DIR": str(tmp_path),
        }
        finished = subprocess.run(
            [sys.executable, "manage.py", "migrate_serialised", "-v0"],
            cwd=REPO,
            env=environment,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert finished.returncode == 0, finished.stderr[-3000:]
    finally:
        with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
