"""The export columns: name, type and meaning, per layout and batch kind.

Layouts (``LAYOUTS``):

* ``long`` — one row per label (counted only unless ``all_statuses``);
* ``dense`` — one row per item in import order, items without a counted label included;
* ``annotators`` — one row per annotator who contributed a label to the batch;
* ``bundles`` — one row per (annotator, bundle) of a bundled batch, with that person's
  counted labels of the bundle's items in item order (the within-person table);
* ``card`` — a Markdown data card (format ``md`` only);
* ``lewidi`` — the perspectivist JSON of the LeWiDi shared tasks (format ``json`` only;
  ``exports.lewidi``).

The columns of a kind's items and labels are declared by the kind (``annotation.kinds``).

Types: ``int`` stays an integer (``int64`` in Parquet, null where a value is missing);
``int_list``/``string_list`` stay lists (Parquet list columns, JSON arrays in JSONL, JSON
array text in a CSV cell); ``string`` is text. Timestamps are ISO 8601 strings in UTC
ending in ``Z`` in every format.
"""

from django.utils.text import slugify

from annotation.kinds import get_kind
from annotation.kinds.base import ExportColumn
from annotation.models import Batch
from annotation.selectors import NO_FILTER, CategoryFilter
from core.errors import InvalidInput

LAYOUTS = ("long", "dense", "annotators", "bundles", "card", "lewidi")
TABLE_LAYOUTS = ("long", "dense", "annotators", "bundles")
EXPORT_FORMATS = ("jsonl", "csv", "parquet")
CARD_FORMAT = "md"
LEWIDI_FORMAT = "json"
CONTENT_TYPES = {
    "json": "application/json; charset=utf-8",
    "jsonl": "application/x-ndjson; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
    "parquet": "application/vnd.apache.parquet",
    "md": "text/markdown; charset=utf-8",
}
ITEM_COLUMNS = [
    ExportColumn("batch", "string", "the batch's slug"),
    ExportColumn("kind", "string", "the batch's kind"),
    ExportColumn("item_id", "string", "the item's id, as imported", "item_id"),
    ExportColumn("query_id", "string", "the query's project-wide id", "query__query_id"),
    ExportColumn("query", "string", "the query's text", "query__text"),
    ExportColumn("category", "string", "the query's category (empty when none)", "query__category"),
    ExportColumn(
        "subcategory",
        "string",
        "the query's sub-category within its category (empty when none)",
        "query__subcategory",
    ),
    ExportColumn(
        "bundle_id",
        "string",
        "the bundle the item was rated in (bundle_by; empty when the batch has none)",
        "bundle",
    ),
]
# A label's columns in the long layout: the annotator, the kind's value columns, then these.
ANNOTATOR_COLUMN = ExportColumn("annotator", "string", "the annotator's pseudonym")
LABEL_TAIL_COLUMNS = [
    ExportColumn(
        "status",
        "string",
        "counted, surplus, excluded, check (attention check), repeat, or cant_judge "
        "(“I can't judge this”: no value, never counted)",
    ),
    ExportColumn("shown_order", "string", "a pair's order on the page: ab (A first) or ba"),
    ExportColumn(
        "position_in_bundle",
        "int",
        "where in their bundle the annotator met the item (0 first; null outside bundles)",
    ),
    ExportColumn("check_passed", "bool", "an attention check's outcome (null otherwise)"),
    ExportColumn("comment", "string", "the annotator's note on the item (empty when none)"),
    ExportColumn("duration_ms", "int", "time from showing the item to submitting, if known"),
    ExportColumn("submitted_at", "string", "when the label was stored (UTC)"),
    ExportColumn(
        "language",
        "string",
        "the language the annotator's pages were shown in (a code such as en, ja, ar; "
        "empty for a participation that entered before languages were recorded)",
    ),
]
ANNOTATOR_COLUMNS = [
    ExportColumn("annotator", "string", "the annotator's pseudonym"),
    ExportColumn("n_labels", "int", "their labels of regular items (counted, surplus, excluded)"),
    ExportColumn("median_duration_ms", "int", "median time per such label (null when unknown)"),
    ExportColumn("attention_checks_passed", "int", "attention checks answered as the gold"),
    ExportColumn("attention_checks_failed", "int", "attention checks answered otherwise"),
    ExportColumn("n_repeats", "int", "items shown to them a second time (test–retest)"),
    ExportColumn("flagged_too_fast", "int", "labels faster than the batch's minimum time"),
    ExportColumn("flagged_straightlined", "int", "labels in a run of identical values"),
    ExportColumn("status", "string", "active or excluded"),
    ExportColumn("excluded_automatically", "bool", "excluded by a quality policy"),
    ExportColumn("exclusion_reason", "string", "why they were excluded (empty if not)"),
    ExportColumn(
        "platform_status",
        "string",
        "the crowd platform's status of their submission (e.g. RETURNED), empty if unknown",
    ),
    ExportColumn(
        "language",
        "string",
        "the language the annotator's pages were shown in (a code such as en, ja, ar; "
        "empty for a participation that entered before languages were recorded)",
    ),
]
# the questionnaire's answers follow, one column per question: q_<id>
QUESTION_TYPES = {"choice": "string", "text": "string", "number": "float"}


def item_columns(kind: str) -> list[ExportColumn]:
    return ITEM_COLUMNS + list(get_kind(kind).item_columns)


def label_columns(kind: str) -> list[ExportColumn]:
    """A label's own columns in the long layout, after the item's."""
    return [ANNOTATOR_COLUMN, *get_kind(kind).value_columns, *LABEL_TAIL_COLUMNS]


def columns(layout: str, batch: Batch) -> list[ExportColumn]:
    """The columns of a table layout for a batch (its kind, its questionnaire), in order."""
    kind = batch.kind
    if layout == "long":
        return item_columns(kind) + label_columns(kind)
    if layout == "dense":
        return item_columns(kind) + list(get_kind(kind).dense_columns)
    if layout == "annotators":
        return list(ANNOTATOR_COLUMNS) + questionnaire_columns(batch)
    if layout == "bundles":
        return bundle_columns(kind)
    raise InvalidInput("layout", f"{layout!r} has no columns (it is not a table)")


def bundle_columns(kind: str) -> list[ExportColumn]:
    """The bundles layout: the labels are values (kinds that choose) or answers (kinds
    that write), listed in the bundle's item order, null where the person has none."""
    writes = not getattr(get_kind(kind), "label_set", ())  # text kinds have no label set
    return [
        ExportColumn("batch", "string", "the batch's slug"),
        ExportColumn("bundle_id", "string", "the bundle (e.g. query:q7)"),
        ExportColumn("annotator", "string", "the annotator's pseudonym"),
        ExportColumn("item_ids", "string_list", "the bundle's items in import order"),
        ExportColumn(
            "answers" if writes else "values",
            "string_list" if writes else "int_list",
            "this person's counted label of each item, same order (null: none)",
        ),
        ExportColumn(
            "positions", "int_list", "where they met each item (position_in_bundle; null: none)"
        ),
        ExportColumn("n_labels", "int", "how many of the items they labelled"),
    ]


def questionnaire_columns(batch: Batch) -> list[ExportColumn]:
    return [
        ExportColumn(f"q_{question['id']}", QUESTION_TYPES[question["type"]], question["text"])
        for question in batch.questionnaire or []
    ]


def layout_columns(layout: str, batch: Batch) -> list[str]:
    return [column.name for column in columns(layout, batch)]


def export_params(layout=None, fmt=None, all_statuses=None) -> tuple[str, str, bool]:
    """Validate and normalise (layout, format, all_statuses) as given by a user.

    ``layout`` defaults to ``long``; ``format`` to ``jsonl`` (``md`` for the card);
    ``all_statuses`` accepts booleans and 0/1/true/false/yes/no. It only changes the long
    layout: dense lists counted labels only, and the annotators table and card always
    cover every status.
    """
    if isinstance(layout, str):
        layout = layout.strip().lower()
    layout = layout or "long"
    if layout not in LAYOUTS:
        raise InvalidInput("layout", f"{layout!r} is not one of {', '.join(LAYOUTS)}")
    if isinstance(fmt, str):
        fmt = fmt.strip().lower()
    if not fmt:
        fmt = {"card": CARD_FORMAT, "lewidi": LEWIDI_FORMAT}.get(layout, "jsonl")
    if fmt == "markdown":
        fmt = CARD_FORMAT
    if layout == "card":
        if fmt != CARD_FORMAT:
            raise InvalidInput("format", f"the card is Markdown only (md); got {fmt!r}")
    elif layout == "lewidi":
        if fmt != LEWIDI_FORMAT:
            raise InvalidInput("format", f"the lewidi layout is JSON only (json); got {fmt!r}")
    elif fmt not in EXPORT_FORMATS:
        raise InvalidInput("format", f"{fmt!r} is not one of {', '.join(EXPORT_FORMATS)}")
    return layout, fmt, _flag(all_statuses)


def _flag(raw) -> bool:
    if raw is None or isinstance(raw, bool):
        return bool(raw)
    if isinstance(raw, int):
        if raw in (0, 1):
            return bool(raw)
    elif isinstance(raw, str):
        text = raw.strip().lower()
        if text in ("", "0", "false", "no", "off"):
            return False
        if text in ("1", "true", "yes", "on"):
            return True
    raise InvalidInput("all_statuses", f"{raw!r} is not 0 or 1")


def export_filename(
    batch: Batch,
    layout: str,
    fmt: str,
    all_statuses: bool = False,
    categories: CategoryFilter = NO_FILTER,
) -> str:
    """``<slug>-<layout>[-all-statuses][-<category>[-<subcategory>]].<format>``; a
    filtered export names its filter (slugified; ``subset`` when nothing of it is left)."""
    suffix = "-all-statuses" if all_statuses and layout == "long" else ""
    if categories.active:
        words = "-".join(slugify(value) or "subset" for value in categories.params().values())
        suffix += f"-{words}"
    return f"{batch.slug}-{layout}{suffix}.{fmt}"
