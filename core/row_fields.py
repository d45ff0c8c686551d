"""The single values of an import row (ids, labels, texts), checked one way for every importer.

The items importer (``annotation.services.importing``) and the response-pool importer
(``diversity.corpora.services.imports``) read the same kinds of value from a row of
``core.tabular``: an id, an optional short label (a category), a long text. ``RowFields``
checks each and collects its problem as ``FILE:LINE: field: message``, so that one mistake
is worded the same whichever file it is in. What still differs between the importers is
what they accept, and is a parameter here: the items format takes a JSON number as an id
(``1.0`` becomes ``"1.0"``), a pool only an integer; a pool refuses control characters in
its ids and labels, where an items file refuses only what no database could store.
"""

from typing import Any

from core.tabular import Collector, json_type, required_value
from core.text import describe_control_character, first_control_character

__all__ = [
    "SUBCATEGORY_WITHOUT_CATEGORY",
    "RowFields",
    "unstorable",
    "unstorable_json",
]

SUBCATEGORY_WITHOUT_CATEGORY = "a sub-category needs its category: give category too"


def unstorable(text: str) -> str | None:
    """Why a database could not store this text (NUL, unpaired surrogate), or None."""
    if "\x00" in text:
        return "contains a NUL character"
    if not text.isascii():  # ASCII holds no surrogate: most ids skip the encoding
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "contains an unpaired surrogate (\\ud800-\\udfff), which is not valid Unicode"
    return None


def unstorable_json(value: Any) -> str | None:
    """``unstorable`` for every string (keys included) inside a JSON value."""
    pending = [value]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            problem = unstorable(value)
            if problem:
                return problem
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
    return None


class RowFields:
    """Reads checked values out of rows; a bad value is ``None`` with its problem collected.

    ``csv_header``: the rows come from ``tabular.csv_rows``, whose header already reported
    each missing required column once. ``id_max``, ``label_max`` and ``text_max`` are the
    longest id, label and text accepted. ``number_ids``: the JSON number types an id may
    be (``(int,)`` or ``(int, float)``; never a boolean). ``control_characters``: whether
    ids and labels may hold C0 control characters (``core.text``) that a database can store.
    """

    def __init__(
        self,
        problems: Collector,
        *,
        csv_header: bool,
        id_max: int,
        label_max: int,
        text_max: int,
        number_ids: tuple[type, ...] = (int,),
        control_characters: bool = False,
    ):
        self.problems = problems
        self.csv_header = csv_header
        self.id_max = id_max
        self.label_max = label_max
        self.text_max = text_max
        self.id_types = (str, *number_ids)
        self.control_characters = control_characters

    def present(self, line: int, row: dict, key: str) -> Any:
        """The value, or None after reporting that a required key is missing or empty."""
        return required_value(self.problems, line, row, key, csv_header=self.csv_header)

    def identifier(self, line: int, row: dict, key: str) -> str | None:
        """A required id: a string (or an accepted number, as a string), stripped."""
        value = self.present(line, row, key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, self.id_types):
            self.problems.add(line, key, f"must be a string, not {json_type(value)}")
            return None
        return self._checked(line, key, str(value).strip(), self.id_max)

    def label(self, line: int, row: dict, key: str) -> str | None:
        """An optional label (category, sub-category, model): '' when absent; None when bad."""
        value = row.get(key)
        if value is None:
            return ""
        if not isinstance(value, str):
            self.problems.add(line, key, f"must be a string, not {json_type(value)}")
            return None
        return self._checked(line, key, value.strip(), self.label_max)

    def text(self, line: int, row: dict, key: str) -> str | None:
        """A required text (a query, a response), kept as given: not stripped, and free to
        hold line breaks and other control characters."""
        value = self.present(line, row, key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.problems.add(line, key, f"must be a string, not {json_type(value)}")
            return None
        if len(value) > self.text_max:
            self.problems.add(
                line,
                key,
                f"the text is {len(value):,} characters; at most TEXT_MAX_CHARS "
                f"({self.text_max:,}) are accepted",
            )
            return None
        return self._storable(line, key, value)

    def check_taxonomy(self, line: int, category: str | None, subcategory: str | None) -> None:
        """A sub-category belongs to a category: a row that gives one must give both."""
        if subcategory and category == "":
            self.problems.add(line, "subcategory", SUBCATEGORY_WITHOUT_CATEGORY)

    def _checked(self, line: int, key: str, value: str, max_length: int) -> str | None:
        if len(value) > max_length:
            self.problems.add(line, key, f"is longer than {max_length} characters")
            return None
        if not self.control_characters:
            index = first_control_character(value)
            if index is not None:
                self.problems.add(line, key, describe_control_character(value, index))
                return None
        return self._storable(line, key, value)

    def _storable(self, line: int, key: str, value: str) -> str | None:
        problem = unstorable(value)
        if problem:
            self.problems.add(line, key, problem)
            return None
        return value
