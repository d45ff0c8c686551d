"""Hand-written SQL of the crowdworker hot path, and model instances from its rows.

The crowdworker's ``next`` and ``label`` requests run a handful of statements each. Put
together by Django's query compiler on every request, they cost the web process more CPU
than the database spent answering them (bench/crowd), so those few statements are written
once per process from the models' own tables and columns (``statement``) and their rows
turned into model instances exactly as the ORM would (``instance``).
"""

from collections.abc import Callable, Sequence
from functools import cache

from django.db import connection
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
    attnames, converted_columns = _layout(model, connection.vendor)
    converted = list(values)
    for index, column in converted_columns:
        value = converted[index]
        for function in connection.ops.get_db_converters(column) + column.get_db_converters(
            connection
        ):
            value = function(value, column, connection)
        converted[index] = value
    return model.from_db(connection.alias, attnames, converted)


@cache
def _layout(model: type[Model], vendor: str) -> tuple[list[str], list[tuple]]:
    """The model's attribute names, and (position, column) of the fields whose values
    this database vendor's rows need converted — worked out once per process (the
    converters themselves are the current connection's, looked up per row)."""
    needed = []
    for index, field in enumerate(columns(model)):
        column = field.get_col(model._meta.db_table)
        if connection.ops.get_db_converters(column) + column.get_db_converters(connection):
            needed.append((index, column))
    return [field.attname for field in columns(model)], needed
