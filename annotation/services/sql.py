"""Hand-written SQL of the crowdworker hot path, and model instances from its rows.

The crowdworker's ``next`` and ``label`` requests run a handful of statements each. Put
together by Django's query compiler on every request, they cost the web process more CPU
than the database spent answering them (bench/crowd), so those few statements are written
once per process from the models' own tables and columns (``statement``) and their rows
turned into model instances exactly as the ORM would (``instance``). On PostgreSQL they
run as prepared statements (``cursor``).
"""

from collections.abc import Callable, Sequence
from functools import cache, lru_cache

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Model


def columns(model: type[Model]) -> list:
    """The model's concrete fields, in the order ``select_list`` selects them."""
    return list(model._meta.concrete_fields)


def select_list(model: type[Model], alias: str) -> str:
    """``alias."col1", alias."col2", ...`` for every concrete field of the model."""
    quote = connection.ops.quote_name
    return ", ".join(f"{alias}.{quote(field.column)}" for field in columns(model))


def table(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def statement(build: Callable[[], str]) -> Callable[[], str]:
    """A statement built once per process (and database vendor) by ``build``."""
    built = cache(lambda vendor: build())
    return lambda: built(connection.vendor)


def instance(model: type[Model], values: Sequence) -> Model:
    """A model instance from the values of ``select_list(model, ...)``, converted by the
    database backend and the fields (dates on SQLite, JSON fields) as the ORM converts
    them; the instance is marked as loaded from the database."""
    database = connections[DEFAULT_DB_ALIAS]  # once: each ``connection.x`` looks it up
    attnames, converters = _layout(model, database)
    converted = list(values)
    for index, column, functions in converters:
        value = converted[index]
        for function in functions:
            value = function(value, column, database)
        converted[index] = value
    return model.from_db(database.alias, attnames, converted)


def stored(model: type[Model], values: dict) -> Model:
    """The instance of a row a statement has just written, from its attribute values
    (``attname``: ``batch_id``, not ``batch``) and the fields' defaults for the rest,
    marked as loaded from the database. It is built by position, as a loaded row is:
    ``Model(**values)`` matches every keyword against every field, which on the crowd's
    hot path cost more CPU than sending the statement (``bench/crowd``). A related
    object is set on the instance afterwards (``assignment.batch = batch``)."""
    attnames, defaults = _attributes(model)
    unknown = values.keys() - defaults.keys()
    if unknown:
        raise TypeError(f"{model.__name__} has no field {', '.join(sorted(unknown))}")
    row = [values[name] if name in values else defaults[name]() for name in attnames]
    return model.from_db(DEFAULT_DB_ALIAS, None, row)


@cache
def _attributes(model: type[Model]) -> tuple[list[str], dict[str, Callable]]:
    """The model's attribute names in ``columns`` order, and each field's default."""
    fields = columns(model)
    return [field.attname for field in fields], {
        field.attname: field.get_default for field in fields
    }


@lru_cache(maxsize=64)
def _layout(model: type[Model], database) -> tuple[list[str], list[tuple]]:
    """The model's attribute names, and (position, column, converters) of the fields
    whose values this connection's rows need converted — worked out once per process and
    connection object (Django keeps one per thread and alias)."""
    needed = []
    for index, field in enumerate(columns(model)):
        column = field.get_col(model._meta.db_table)
        functions = database.ops.get_db_converters(column) + column.get_db_converters(database)
        if functions:
            needed.append((index, column, functions))
    return [field.attname for field in columns(model)], needed


def cursor():
    """A cursor for the hot path's statements.

    On PostgreSQL each statement is prepared once per connection and then only executed,
    its parameters sent apart from its text (server-side binding): parsing and planning
    these statements anew on every request was most of the database's work on them
    (``bench/crowd``), and the pooled connections live for an hour. Django's own cursors
    bind client-side and never prepare (so that PgBouncer in transaction mode works);
    ``DATABASE_PREPARED_STATEMENTS=0`` makes these plain cursors too (PgBouncer before
    1.21, which cannot carry prepared statements across its server connections). The
    cursor is Django's wrapper, so errors, query logging and counting behave as for
    any other cursor. Parameters in a select list need a cast (``typed_parameter``): a
    parameter sent apart has no type of its own there.
    """
    database = connections[DEFAULT_DB_ALIAS]  # once: each ``connection.x`` looks it up
    if database.vendor != "postgresql" or not settings.DATABASE_PREPARED_STATEMENTS:
        return database.cursor()
    database.ensure_connection()
    with database.wrap_database_errors:
        return database._prepare_cursor(_preparing_cursor_class()(database.connection))


# a statement is prepared when asked to (``PreparingCursor``), never after some count
NEVER_UNASKED = 2**31 - 1


@cache
def _preparing_cursor_class():
    import psycopg

    class PreparingCursor(psycopg.Cursor):
        """psycopg's server-side binding cursor, preparing every statement it runs."""

        def execute(self, query, params=None, *, prepare=None, binary=None):
            # Preparing is on for the connection only while this cursor runs: Django turns
            # it off (threshold None), and with it on, psycopg would count every other
            # statement on the connection under its whole text, parameters included for
            # Django's client-side binding cursors, and keep the last hundred of them (an
            # import's INSERTs held megabytes for the life of the connection).
            manager = self._conn._prepared
            previous = manager.prepare_threshold
            if previous is None:
                manager.prepare_threshold = NEVER_UNASKED
            try:
                return super().execute(query, params, prepare=prepare is not False, binary=binary)
            finally:
                manager.prepare_threshold = previous

        def _send_query_prepared(self, name, pgq, *, binary=None):
            # keep the statement, as an unprepared execution does: Django's query log
            # (tests, DEBUG) reads it back from the cursor
            self._query = pgq
            return super()._send_query_prepared(name, pgq, binary=binary)

    return PreparingCursor


def typed_parameter(model: type[Model], column: str, name: str) -> str:
    """``CAST(%(name)s AS <the column's type>)``: a parameter in a select list (an
    ``INSERT ... SELECT``) whose type the database cannot infer from its place."""
    field = next(field for field in columns(model) if field.column == column)
    return f"CAST(%({name})s AS {field.cast_db_type(connection)})"
