"""What a task kind is: the one place that knows how its items look, how its labels are
validated, what the worker sees and which export columns and analyses it has.

The platform (import, leasing, labelling, exports, pages) asks the batch's kind through
this interface and knows nothing else about it. ``docs/KINDS.md`` is the recipe for
adding one; ``annotation/kinds/absolute.py`` is the smallest complete example.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from django.template.loader import render_to_string

from annotation.rendering import render_markdown
from core.errors import InvalidInput

COLUMN_TYPES = ("string", "int", "float", "bool", "int_list", "string_list")


@dataclass(frozen=True)
class ExportColumn:
    """One column of an export: name, type (``COLUMN_TYPES``) and meaning.

    ``source`` is where an item column is read from: an ORM path from ``Item`` (e.g.
    ``"response__model"``) or ``"content.<key>"`` for a text kept in ``Item.content``.
    """

    name: str
    type: str
    meaning: str
    source: str = ""


@dataclass(frozen=True)
class ResponseSlot:
    """A model response an item of this kind shows, and its keys in the items file."""

    field: str  # the Item foreign key: "response", "response_a" or "response_b"
    id_key: str
    text_key: str
    model_key: str


@dataclass(frozen=True)
class ContentText:
    """A text an item of this kind keeps in ``Item.content`` (required in the file)."""

    key: str
    meaning: str


@dataclass(frozen=True)
class KindSetting:
    """A per-batch setting of a kind (kept in ``Batch.kind_settings``): a positive integer
    (at most ``maximum``), or, when ``choices`` is given, one of those names."""

    name: str
    label: str
    default: int | str
    help: str = ""
    maximum: int | None = None
    choices: tuple[str, ...] = ()

    def clean(self, value: Any) -> int | str:
        """The setting's value from what a form, a file or the API gave (``None`` or an
        empty string: the default); ``InvalidInput`` names the setting when it is bad."""
        if value is None or value == "":
            return self.default
        if self.choices:
            if isinstance(value, str) and value.strip() in self.choices:
                return value.strip()
            raise InvalidInput(
                self.name, f"must be one of {', '.join(self.choices)}, got {value!r}"
            )
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidInput(self.name, f"must be a positive integer, got {value!r}")
        if self.maximum is not None and value > self.maximum:
            raise InvalidInput(self.name, f"must be at most {self.maximum}")
        return value


@dataclass(frozen=True)
class CleanLabel:
    """A validated label: ``value`` for kinds that choose, ``text`` and ``answer`` (the
    text as normalised for analysis) for kinds that write."""

    value: int | None = None
    text: str | None = None
    answer: str | None = None


@dataclass(frozen=True)
class Option:
    """A button of a choice widget: the value it stores, its text and its key."""

    value: int
    text: str
    key: str


class TaskKind:
    """Base of every kind. Subclasses set the class attributes and override what differs."""

    name: ClassVar[str]
    label: ClassVar[str]
    # -- items file
    response_slots: ClassVar[tuple[ResponseSlot, ...]] = ()
    content_texts: ClassVar[tuple[ContentText, ...]] = ()
    # -- per-batch settings
    settings: ClassVar[tuple[KindSetting, ...]] = ()
    # -- the worker's page
    widget: ClassVar[str] = "choice"  # "choice" (buttons with keys) or "text" (a text field)
    question: ClassVar[str] = ""  # the widget's legend
    item_template: ClassVar[str] = ""
    # -- exports
    item_columns: ClassVar[tuple[ExportColumn, ...]] = ()
    value_columns: ClassVar[tuple[ExportColumn, ...]] = ()
    dense_columns: ClassVar[tuple[ExportColumn, ...]] = ()
    # -- analyses of the platform that apply to its labels (names the analysis app knows)
    analyses: ClassVar[tuple[str, ...]] = ()
    # a label compares two responses (pairwise): its subsets and model scores differ
    comparison: ClassVar[bool] = False

    @property
    def import_columns(self) -> tuple[str, ...]:
        """The columns an items file of this kind must have, in the order the batch page
        lists them: the query's, then each response slot's id and text, then the texts
        kept in ``Item.content``."""
        columns = ["item_id", "query_id", "query"]
        for slot in self.response_slots:
            columns += [slot.id_key, slot.text_key]
        return (*columns, *(content.key for content in self.content_texts))

    # ----------------------------------------------------------------- settings

    def clean_settings(self, raw: dict | None) -> dict:
        """The kind's settings with defaults filled in; ``InvalidInput`` names a bad one."""
        if raw is not None and not isinstance(raw, dict):
            raise InvalidInput("kind_settings", "must be an object of the kind's settings")
        raw = dict(raw or {})
        known = {setting.name for setting in self.settings}
        unknown = sorted(set(raw) - known)
        if unknown:
            allowed = ", ".join(sorted(known)) or "none"
            raise InvalidInput(
                unknown[0], f"is not a setting of {self.name} batches (they have: {allowed})"
            )
        return {setting.name: setting.clean(raw.get(setting.name)) for setting in self.settings}

    def clean_settings_change(self, batch, wanted: dict) -> dict:
        """The settings a batch that exists may change to (its current settings merged
        with the change): ``clean_settings`` unless a kind refuses a change that would
        make its stored labels inconsistent."""
        return self.clean_settings(wanted)

    def setting(self, batch, name: str) -> int | str:
        return self.clean_settings(batch.kind_settings).get(name)

    # ----------------------------------------------------------------- labels

    def clean_label(self, batch, raw: Any) -> CleanLabel:
        """Validate a submitted value; ``InvalidInput("value", ...)`` says what is wrong."""
        raise NotImplementedError

    def clean_gold(self, batch, raw: Any) -> list:
        """The accepted answers of an attention check, from the items file's ``gold``.

        Raises ``ValueError`` with a message for the ``gold`` field.
        """
        raise NotImplementedError

    def passes_check(self, gold: Sequence, label: CleanLabel) -> bool:
        raise NotImplementedError

    def canonical(self, label: CleanLabel, shown_order: str) -> CleanLabel:
        """The label in the kind's stored terms, from the value as given on a page that
        showed ``shown_order`` (kinds without presentation orders store it as given)."""
        return label

    def same_label(self, first: CleanLabel, second: CleanLabel) -> bool:
        """Whether a resubmission repeats the stored label (an idempotent retry)."""
        return (first.value, first.text) == (second.value, second.text)

    def shown(self, label) -> str:
        """A stored label as the worker gave it, for messages."""
        return str(label.value) if label.value is not None else repr(label.text)

    # ----------------------------------------------------------------- the worker's page

    def options(self, batch, scale_labels: dict | None = None) -> list[Option]:
        """The buttons of a choice widget, in key order (empty for a text widget);
        ``scale_labels`` replaces the batch's own button texts (a translation's)."""
        return []

    def widget_config(self, batch) -> dict:
        """What the page's script needs to drive the widget."""
        return {"widget": self.widget}

    def texts(self, item) -> dict[str, str]:
        """The item's texts by name (``query``, ``response``, ...) as given."""
        texts = {"query": item.query.text}
        for slot in self.response_slots:
            texts[slot.field] = getattr(item, slot.field).text
        for content in self.content_texts:
            texts[content.key] = (item.content or {}).get(content.key, "")
        return texts

    def payload(self, item, batch, presentation: dict | None = None) -> dict:
        """What the worker's page receives for an item: its id, each text as given
        (``query``, ``response``, ...) and as sanitised HTML (``query_html``, ...), and
        ``html``, the item's whole display (``item_template`` with those texts).

        ``presentation`` carries lease-specific choices (e.g. the order of a pair).
        """
        texts = self.texts(item)
        html = {name: render_markdown(text) for name, text in texts.items()}
        context = {"item": item, "batch": batch, "html": html, "texts": texts}
        context.update(presentation or {})
        payload = {"item_id": item.item_id}
        for name, text in texts.items():
            payload[name] = text
            payload[f"{name}_html"] = html[name]
        payload["html"] = self.render_item(context)
        return payload

    def render_item(self, context: dict) -> str:
        """The item's display (``item_template`` rendered with ``html`` and ``texts``)."""
        return render_to_string(self.item_template, context)

    # ----------------------------------------------------------------- exports

    def dense_values(self, labels: list[dict]) -> dict:
        """The kind's dense columns for one item, from its counted labels in submission
        order (each a dict of the ``value_columns``)."""
        raise NotImplementedError

    # the label column whose counted values the data card tabulates
    distribution_column: ClassVar[str] = "value"

    def label_distribution(self, batch, counted: dict) -> list[tuple[str, str, int]]:
        """(value, meaning, labels) rows of the data card, from counts of counted labels
        keyed by ``distribution_column``."""
        ranked = sorted(counted.items(), key=lambda entry: (-entry[1], str(entry[0])))
        return [(str(key), "", count) for key, count in ranked]


@dataclass(frozen=True)
class Scale:
    """The labels of a choice kind: value → default text, in key order."""

    buttons: tuple[tuple[int, str], ...]

    @property
    def values(self) -> list[int]:
        return sorted(value for value, _ in self.buttons)


class ChoiceKind(TaskKind):
    """A kind whose label is one of a fixed set of integers chosen with keys 1…k."""

    widget = "choice"
    scale: ClassVar[Scale]
    value_columns = (
        ExportColumn("value", "int", "the label (one of the kind's label set)", "value"),
    )
    dense_columns = (
        ExportColumn("labels", "int_list", "the item's counted labels in submission order"),
        ExportColumn("annotators", "string_list", "their annotators' pseudonyms, same order"),
        ExportColumn("n", "int", "how many counted labels the item holds"),
    )

    @property
    def label_set(self) -> list[int]:
        return self.scale.values

    def default_texts(self) -> dict[int, str]:
        return {value: str(text) for value, text in self.scale.buttons}

    def button_texts(self, batch, scale_labels: dict | None = None) -> dict[int, str]:
        """Default texts (in the active language) with the batch's own
        (``Batch.scale_labels``, or ``scale_labels`` when given) where set."""
        texts = self.default_texts()
        own = batch.scale_labels if scale_labels is None else scale_labels
        for key, text in (own or {}).items():
            if str(key).lstrip("-").isdigit() and int(key) in texts and text:
                texts[int(key)] = str(text)
        return texts

    def options(self, batch, scale_labels: dict | None = None) -> list[Option]:
        texts = self.button_texts(batch, scale_labels)
        return [
            Option(value, texts[value], str(key))
            for key, (value, _) in enumerate(self.scale.buttons, start=1)
        ]

    def widget_config(self, batch) -> dict:
        return {"widget": "choice", "keys": [option.key for option in self.options(batch)]}

    def clean_label(self, batch, raw: Any) -> CleanLabel:
        allowed = self.label_set
        value = raw
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise InvalidInput("value", f"must be an integer in {allowed}, got {raw!r}")
        if value not in allowed:
            raise InvalidInput("value", f"must be one of {allowed}, got {value}")
        return CleanLabel(value=value)

    def clean_gold(self, batch, raw: Any) -> list[int]:
        if isinstance(raw, str):
            raise ValueError(f"{raw!r} is not an integer or a list of integers")
        values = raw if isinstance(raw, list) else [raw]
        if not values:
            raise ValueError("must not be an empty list")
        low, high = min(self.label_set), max(self.label_set)
        accepted: list[int] = []
        for entry in values:
            if isinstance(entry, bool) or not isinstance(entry, int):
                raise ValueError(f"{entry!r} is not an integer (the label set is {low}..{high})")
            if entry not in self.label_set:
                raise ValueError(f"{entry} is not in the label set {low}..{high}")
            if entry not in accepted:
                accepted.append(entry)
        return accepted

    def passes_check(self, gold: Sequence, label: CleanLabel) -> bool:
        return label.value in list(gold)

    def dense_values(self, labels: list[dict]) -> dict:
        return {"labels": [label["value"] for label in labels]}

    def label_distribution(self, batch, counted: dict) -> list[tuple[str, str, int]]:
        texts = self.button_texts(batch)
        return [(str(value), texts[value], counted.get(value, 0)) for value in self.label_set]
