"""``short_text``: (prompt) → a short answer the worker types, e.g. one word for "Name a
color." (the One-Word Census asked of people).

A label keeps the ``text`` as typed (trimmed) and the ``answer`` the batch's normaliser
makes of it (``annotation.normalisers``). Per batch: ``max_words`` (default 1),
``max_chars`` (default 40) and ``normaliser`` (``census``, the default, or ``lowercase``).

A text the normaliser finds no answer in (``"Soufflé"`` under ``census``) is still the
worker's answer: it is stored, counts toward N, and has ``answer = ""`` — a *failed
cell*, which the dense export's distinct answers and the analyses leave out. Refusing it
would ask the worker to change a genuine answer to suit a rule written for model replies.
"""

import unicodedata
from collections import Counter
from collections.abc import Sequence
from typing import Any

from django.utils.translation import gettext_lazy as _

from annotation.kinds.base import CleanLabel, ExportColumn, KindSetting, TaskKind
from annotation.normalisers import DEFAULT_NORMALISER, NORMALISERS, get_normaliser
from core.errors import InvalidInput

# Label.answer holds 200 characters; lowercasing at most doubles a text's length (U+0130
# is the only character whose lowercase is two), so 100 typed characters always fit.
MAX_CHARS_LIMIT = 100
MAX_WORDS_LIMIT = 20
# the answer of a failed cell: the worker answered, the normaliser found no answer in it
FAILED_CELL = ""


def _unaccepted_character(text: str) -> str | None:
    """Why ``text`` cannot be an answer typed in a one-line text field (a control character,
    e.g. a tab or NUL, or an unpaired surrogate, which is not Unicode), or None."""
    for position, character in enumerate(text, start=1):
        category = unicodedata.category(character)
        if category in ("Cc", "Cs"):
            what = "control character" if category == "Cc" else "unpaired surrogate"
            return f"contains the {what} U+{ord(character):04X} at position {position}; remove it"
    return None


def _words(count: int) -> str:
    return "1 word" if count == 1 else f"{count} words"


class ShortTextKind(TaskKind):
    name = "short_text"
    label = "Short text answer"
    settings = (
        KindSetting(
            "max_words",
            "Most words per answer",
            1,
            "Words are separated by spaces; 1 asks for a single word.",
            maximum=MAX_WORDS_LIMIT,
        ),
        KindSetting(
            "max_chars",
            "Most characters per answer",
            40,
            "Counted after trimming the spaces around the answer.",
            maximum=MAX_CHARS_LIMIT,
        ),
        KindSetting(
            "normaliser",
            "Normaliser",
            DEFAULT_NORMALISER,
            "How a typed answer becomes the counted answer: census (one word, the One-Word "
            "Census rule) or lowercase (several words). Fixed once the batch holds labels "
            "or attention checks.",
            choices=tuple(NORMALISERS),
        ),
    )
    widget = "text"
    question = _("Your answer")
    item_template = "annotation/kinds/short_text.html"
    value_columns = (
        ExportColumn("text", "string", "the answer as the annotator typed it (trimmed)", "text"),
        ExportColumn(
            "answer",
            "string",
            "the answer as the batch's normaliser counts it (empty: a failed cell)",
            "answer",
        ),
    )
    dense_columns = (
        ExportColumn(
            "answers",
            "string_list",
            "the item's counted answers, normalised, in submission order (empty: failed cell)",
        ),
        ExportColumn("annotators", "string_list", "their annotators' pseudonyms, same order"),
        ExportColumn("n", "int", "how many counted labels the item holds"),
        ExportColumn(
            "distinct_answers",
            "string_list",
            "the distinct answers, most frequent first (ties: first given first); "
            "failed cells left out",
        ),
        ExportColumn("distinct_counts", "int_list", "how often each distinct answer was given"),
    )
    distribution_column = "answer"
    analyses = ("census_norms",)

    # ----------------------------------------------------------------- settings

    def clean_settings_change(self, batch, wanted: dict) -> dict:
        """A batch's normaliser is fixed once it holds labels or gold answers: they were
        normalised by it, and answers counted by two rules cannot be compared."""
        cleaned = self.clean_settings(wanted)
        current = self.clean_settings(batch.kind_settings)["normaliser"]
        if cleaned["normaliser"] != current and (
            batch.labels.exists() or batch.items.filter(gold__isnull=False).exists()
        ):
            raise InvalidInput(
                "normaliser",
                f"stays {current!r}: the batch's labels and attention checks were normalised "
                "with it",
            )
        return cleaned

    # ----------------------------------------------------------------- labels

    def clean_label(self, batch, raw: Any) -> CleanLabel:
        """The typed answer, trimmed, and its normalised form.

        Refused (``InvalidInput("value", ...)``): not a string, empty, a control
        character, more than ``max_chars`` characters or more than ``max_words`` words.
        """
        settings = self.clean_settings(batch.kind_settings)
        if not isinstance(raw, str):
            raise InvalidInput("value", f"must be the typed answer as a string, got {raw!r}")
        text = raw.strip()
        if not text:
            raise InvalidInput("value", "is empty: type an answer")
        problem = _unaccepted_character(text)
        if problem:
            raise InvalidInput("value", problem)
        if len(text) > settings["max_chars"]:
            raise InvalidInput(
                "value",
                f"is {len(text)} characters long; this batch takes at most {settings['max_chars']}",
            )
        words = len(text.split())
        if words > settings["max_words"]:
            raise InvalidInput(
                "value",
                f"has {_words(words)}; this batch takes at most {_words(settings['max_words'])}",
            )
        answer = get_normaliser(settings["normaliser"]).normalise(text)
        return CleanLabel(text=text, answer=FAILED_CELL if answer is None else answer)

    def clean_gold(self, batch, raw: Any) -> list[str]:
        """The accepted answers, normalised by the batch's normaliser, distinct, in file
        order. A string or a list of strings (a number is read as its digits)."""
        normaliser = get_normaliser(self.clean_settings(batch.kind_settings)["normaliser"])
        entries = raw if isinstance(raw, list) else [raw]
        if not entries:
            raise ValueError("must not be an empty list")
        accepted: list[str] = []
        for entry in entries:
            if isinstance(entry, int) and not isinstance(entry, bool):
                entry = str(entry)
            if not isinstance(entry, str):
                raise ValueError(f"{entry!r} is not a string (give an answer or a list of them)")
            answer = normaliser.normalise(entry)
            if not answer:
                raise ValueError(f"{entry!r} gives no answer under the {normaliser.name} rule")
            if answer not in accepted:
                accepted.append(answer)
        return accepted

    def passes_check(self, gold: Sequence, label: CleanLabel) -> bool:
        return bool(label.answer) and label.answer in list(gold)

    # ----------------------------------------------------------------- the worker's page

    def widget_config(self, batch) -> dict:
        settings = self.clean_settings(batch.kind_settings)
        return {
            "widget": "text",
            "max_words": settings["max_words"],
            "max_chars": settings["max_chars"],
        }

    # ----------------------------------------------------------------- exports

    def dense_values(self, labels: list[dict]) -> dict:
        answers = [label["answer"] for label in labels]
        # Counter keeps first-occurrence order, and sorted() is stable: equal counts stay
        # in the order their answers were first given.
        counts = Counter(answer for answer in answers if answer != FAILED_CELL)
        ranked = sorted(counts.items(), key=lambda entry: -entry[1])
        return {
            "answers": answers,
            "distinct_answers": [answer for answer, _ in ranked],
            "distinct_counts": [count for _, count in ranked],
        }

    def label_distribution(self, batch, counted: dict) -> list[tuple[str, str, int]]:
        """Failed cells first (when any), then the answers, most frequent first."""
        rows = []
        failed = counted.get(FAILED_CELL, 0)
        if failed:
            normaliser = self.clean_settings(batch.kind_settings)["normaliser"]
            rows.append(("(failed cell)", f"no answer under the {normaliser} rule", failed))
        answers = [(answer, count) for answer, count in counted.items() if answer]
        answers.sort(key=lambda entry: (-entry[1], entry[0]))
        rows += [(answer, "", count) for answer, count in answers]
        return rows
