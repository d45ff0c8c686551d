"""Data migrations read and write through the migration's own connection.

Behind a transaction pooler ``migrate`` runs on ``settings.DIRECT_DATABASE`` (README,
PgBouncer), a session other than "default": a data migration that reads through the
default manager waits for the lock its own schema change holds, and ``migrate`` hangs.
Each model query in a migration must name ``schema_editor.connection.alias``.
"""

import ast
from pathlib import Path

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
