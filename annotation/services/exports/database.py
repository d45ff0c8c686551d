"""PostgreSQL: the long layout built by the database itself.

On PostgreSQL the long layout (one row per label) does not pass through Python objects
row by row: one query builds each line as text — a CSV line or a JSONL line, byte for byte
what the Python writers (``formats``) make of the same row — or, for Parquet, a line of
CSV that Arrow parses (``arrow``: every present text quoted, so that only an empty
unquoted cell is null; values as stored), in the export's order (item position, item,
submission time, label). A line has two parts: the item's (its columns, with its query,
response(s) and batch), built once per item, and the label's (with its annotator and
the annotator's participation). The query returns them as rows of their own, each item's
row just before its labels' rows (``ITEM_ROW``, ``LABEL_ROW``); ``streaming`` reads them
and puts each line together. So an item's texts are built, sorted and sent once rather
than once per label, and nothing in the query keeps PostgreSQL from running it in
parallel. The Python path stays the reference (and serves SQLite), and a test compares
the two byte for byte.

The same rules as the writers: CSV cells that begin with ``=``, ``+``, ``-`` or ``@``
get a leading apostrophe (text columns only; numbers stay numbers), a cell is quoted
when it holds a comma, a double quote or a line break (quotes doubled), booleans are
``True``/``False`` and a missing value is empty; JSON strings are escaped as
``json.dumps(..., ensure_ascii=False)`` escapes them (PostgreSQL's JSON escaping is the
same set), members are separated by ``", "``; timestamps are ISO 8601 in UTC ending in
``Z``, with microseconds unless they are zero (``datetime.isoformat``).
"""

from django.db import connection

from annotation.kinds.base import ExportColumn
from annotation.models import Batch, Label, LabelStatus
from annotation.selectors import NO_FILTER, CategoryFilter
from annotation.services.exports.schema import item_columns, label_columns

# item column sources (ORM paths from Item) -> SQL, with the joins they need
RELATED = {
    "query": ("q", "annotation_query", "i.query_id"),
    "response": ("r", "annotation_response", "i.response_id"),
    "response_a": ("ra", "annotation_response", "i.response_a_id"),
    "response_b": ("rb", "annotation_response", "i.response_b_id"),
}
ITEM_FIELDS = {"item_id", "position", "bundle"}
# the label's annotator's participation in the batch: at most one (a unique constraint)
PARTICIPATION = (
    "LEFT JOIN annotation_participation p "
    "ON p.batch_id = l.batch_id AND p.annotator_id = l.annotator_id"
)
LABEL_FIELDS = {field.column for field in Label._meta.concrete_fields}
TYPES = {"string", "int", "bool", "float"}
# the first character of each row of ``line_sql``: an item's part, or a label's
ITEM_ROW = "I"
LABEL_ROW = "L"

# one to_char, then ".000000" dropped: isoformat() leaves zero microseconds out
ISO_UTC = (
    "replace(to_char({0} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US') || 'Z', "
    "'.000000Z', 'Z')"
)
# label columns whose values never hold a comma, a quote, a line break, a formula prefix
# or a character JSON escapes: the status (a check constraint holds it to its names), a
# pair's order ('', 'ab' or 'ba', written by the leasing code only) and the submission
# time (ISO_UTC: digits, "-", ":", "T", "." and "Z")
PLAIN_LABEL_COLUMNS = {"status", "shown_order", "submitted_at"}
# a CSV cell needs the rules below only when it starts like a formula or holds , " CR LF
NEEDS_CSV_RULES = "'^[=+@-]|[,\"\\r\\n]'"
# a JSON string needs escaping only when it holds a quote, a backslash or a control
NEEDS_JSON_ESCAPES = "'[\"\\\\[:cntrl:]]'"


class Unsupported(Exception):
    """A column this module cannot express in SQL: the Python path exports the batch."""


def applies(batch: Batch) -> bool:
    """Whether the database can build this batch's long export (PostgreSQL, and every
    column one it knows how to read)."""
    if connection.vendor != "postgresql":
        return False
    try:
        _expressions(batch)
    except Unsupported:
        return False
    return True


def _item_expression(column: ExportColumn, joins: dict) -> str:
    source = column.source
    if column.name == "batch":
        return "b.slug"
    if column.name == "kind":
        return "b.kind"
    if source.startswith("content."):
        key = source.removeprefix("content.")
        if not key.isidentifier():
            raise Unsupported(source)
        return f"i.content -> '{key}'"  # jsonb: formatted below by its type
    if source in ITEM_FIELDS:
        return f"i.{source}"
    relation, _, field = source.partition("__")
    if relation in RELATED and field in {
        "query_id",
        "response_id",
        "text",
        "model",
        "category",
        "subcategory",
    }:
        alias, table, key = RELATED[relation]
        joins[alias] = f"LEFT JOIN {table} {alias} ON {alias}.id = {key}"
        return f"{alias}.{field}"
    raise Unsupported(source)


def _label_expression(column: ExportColumn) -> str:
    if column.name == "annotator":
        return "an.pseudonym"
    if column.name == "shown_order":
        return "NULLIF(l.shown_order, '')"
    if column.name == "language":  # the label's annotator's, in this batch (PARTICIPATION)
        return "p.language"
    if column.name in LABEL_FIELDS:
        return f"l.{column.name}"
    raise Unsupported(column.name)


def _expressions(batch: Batch) -> tuple[list, list, dict]:
    """(column, SQL expression) of the item's columns and of the label's columns of the
    long layout, and the joins the item's need."""
    joins: dict[str, str] = {}
    items = [(column, _item_expression(column, joins)) for column in item_columns(batch.kind)]
    labels = [(column, _label_expression(column)) for column in label_columns(batch.kind)]
    for column, _ in items + labels:
        if column.type not in TYPES:
            raise Unsupported(column.type)
    return items, labels, joins


def _is_json(expression: str) -> bool:
    return expression.startswith("i.content ->")


def _as_text(column: ExportColumn, expression: str) -> str:
    """The value as text (NULL when missing), as ``str()`` of the Python value."""
    if column.name == "submitted_at":
        return ISO_UTC.format(expression)
    if _is_json(expression):
        return f"({expression} #>> '{{}}')"
    if column.type == "bool":
        return f"CASE WHEN {expression} THEN 'True' WHEN NOT {expression} THEN 'False' END"
    return f"({expression})::text"


def _csv_cell(column: ExportColumn, expression: str) -> str:
    text = _as_text(column, expression)
    if column.type == "string" and column.name not in PLAIN_LABEL_COLUMNS:
        # formulas neutralised, then quoted when the cell holds , " CR or LF
        formula = f"left({text}, 1) IN ('=', '+', '-', '@')"
        ruled = f"(CASE WHEN {formula} THEN '''' || {text} ELSE {text} END)"
        ruled = (
            f"(CASE WHEN {ruled} ~ '[,\"\\r\\n]' "
            f"THEN '\"' || replace({ruled}, '\"', '\"\"') || '\"' ELSE {ruled} END)"
        )
        text = f"(CASE WHEN {text} ~ {NEEDS_CSV_RULES} THEN {ruled} ELSE {text} END)"
    return f"coalesce({text}, '')"


def _arrow_cell(column: ExportColumn, expression: str) -> str:
    """A cell of the CSV that Arrow reads for Parquet: every present text quoted (so that
    an empty text stays "" and only an empty unquoted cell is null), values as stored —
    no formula guard, which is for spreadsheets — and booleans as true/false."""
    text = _as_text(column, expression)
    if column.type == "bool":
        text = f"({expression})::text"
    elif column.type == "string" and column.name in PLAIN_LABEL_COLUMNS:
        text = f"'\"' || {text} || '\"'"
    elif column.type == "string":
        text = f"'\"' || replace({text}, '\"', '\"\"') || '\"'"
    return f"coalesce({text}, '')"


def _json_member(column: ExportColumn, expression: str) -> list:
    """Tokens (``Literal`` text or SQL) of one ``"name": value`` member."""
    if column.name == "submitted_at":
        value = f"'\"' || {ISO_UTC.format(expression)} || '\"'"
    elif _is_json(expression):
        value = f"({expression})::text"
    elif column.name in PLAIN_LABEL_COLUMNS:
        value = f"'\"' || {expression} || '\"'"
    elif column.type == "string":
        # to_json only where escaping is needed: a quote, a backslash, a control character
        value = (
            f"CASE WHEN {expression} ~ {NEEDS_JSON_ESCAPES} THEN to_json({expression})::text "
            f"ELSE '\"' || {expression} || '\"' END"
        )
    else:  # int, float, bool: their JSON text is PostgreSQL's text (true/false)
        value = f"({expression})::text"
    return [Literal(f'"{column.name}": '), f"coalesce({value}, 'null')"]


class Literal(str):
    """Constant text among the SQL expressions ``_concat`` joins."""


def _concat(tokens: list) -> str:
    """One SQL text expression of ``tokens`` (``Literal`` text or SQL expressions) in
    order, adjacent constants merged into one literal."""
    merged: list = []
    for token in tokens:
        if isinstance(token, Literal) and merged and isinstance(merged[-1], Literal):
            merged[-1] = Literal(merged[-1] + token)
        else:
            merged.append(token)
    return " || ".join(
        "'" + token.replace("'", "''") + "'" if isinstance(token, Literal) else f"({token})"
        for token in merged
    )


def _joined(parts: list[list], separator: str) -> list:
    tokens: list = []
    for index, part in enumerate(parts):
        if index:
            tokens.append(Literal(separator))
        tokens.extend(part)
    return tokens


def _query(
    batch: Batch,
    all_statuses: bool,
    part: str,
    rest: str,
    categories: CategoryFilter = NO_FILTER,
):
    """The long layout's query: a row of each item (``ITEM_ROW`` and ``part``, the item's
    part of its lines), then a row of each of its labels (``LABEL_ROW`` and ``rest``, the
    label's part), in the export's order. ``categories`` keeps the items of a category
    (``selectors.CategoryFilter``'s rule: the query's category and sub-category equal to
    those given)."""
    _, _, joins = _expressions(batch)
    item_where, item_params = "i.batch_id = %s", [batch.pk]
    filter_joins = {}
    for field, value in categories.params().items():
        alias, table, key = RELATED["query"]
        filter_joins[alias] = f"LEFT JOIN {table} {alias} ON {alias}.id = {key}"
        item_where += f" AND {alias}.{field} = %s"
        item_params.append(value)
    joins.update(filter_joins)
    where = "l.batch_id = %s" + ("" if all_statuses else " AND l.status = %s")
    label_params = [batch.pk] + ([] if all_statuses else [LabelStatus.COUNTED])
    sql = f"""
        SELECT line FROM (
            SELECT i.position, i.id AS item, 0 AS row, NULL::timestamptz AS submitted_at,
                0::bigint AS label, '{ITEM_ROW}' || {part} AS line
            FROM annotation_item i
            JOIN annotation_batch b ON b.id = i.batch_id
            {" ".join(joins.values())}
            WHERE {item_where}
            UNION ALL
            SELECT i.position, i.id, 1, l.submitted_at, l.id, '{LABEL_ROW}' || {rest}
            FROM annotation_label l
            JOIN annotation_item i ON i.id = l.item_id
            {" ".join(filter_joins.values())}
            JOIN annotation_annotator an ON an.id = l.annotator_id
            {PARTICIPATION}
            WHERE {item_where} AND {where}
        ) rows
        ORDER BY position, item, row, submitted_at, label
    """
    return sql, [*item_params, *item_params, *label_params]


def line_sql(
    batch: Batch, fmt: str, all_statuses: bool, categories: CategoryFilter = NO_FILTER
) -> tuple[str, list]:
    """The query of the long layout's lines for a CSV file, a JSONL file or the CSV Arrow
    reads for Parquet (``fmt="arrow"``), in one text column: each item's part of its
    lines, then each of its labels' part (``_query``); a line is the two joined, without
    its line end."""
    items, labels, _ = _expressions(batch)
    if fmt in ("csv", "arrow"):
        cell = _csv_cell if fmt == "csv" else _arrow_cell
        part = _joined([[cell(column, sql)] for column, sql in items], ",")
        rest = _joined([[cell(column, sql)] for column, sql in labels], ",")
        return _query(
            batch, all_statuses, _concat([*part, Literal(",")]), _concat(rest), categories
        )
    if fmt == "jsonl":
        part = _joined([_json_member(column, sql) for column, sql in items], ", ")
        rest = _joined([_json_member(column, sql) for column, sql in labels], ", ")
        return _query(
            batch,
            all_statuses,
            _concat([Literal("{"), *part, Literal(", ")]),
            _concat([*rest, Literal("}")]),
            categories,
        )
    raise ValueError(fmt)
