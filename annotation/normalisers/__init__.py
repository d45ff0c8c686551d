"""Normalisers: from a written answer as typed to the answer that is counted.

A kind whose workers write (``short_text``) keeps both: the text as typed and the answer a
normaliser makes of it, so ``"Blue."``, ``"blue"`` and ``" BLUE "`` count as one answer.
A batch chooses its normaliser by name (``NORMALISERS``); each is a pure function
``str -> str | None`` whose ``None`` means a *failed cell*: the text gives no answer under
that rule (``"Soufflé"`` under ``census``: no candidate word).

* ``census`` — the One-Word Census rule (``census.normalise_reply``, docs/CENSUS.md): junk
  guard, lowercase, punctuation and emoji out, the last word of ``a``–``z``/``-`` (or of
  digits). For one-word answers; the default.
* ``lowercase`` — trim, lowercase, collapse inner whitespace, strip surrounding
  punctuation (``lowercase.normalise_answer``). For answers of several words.
"""

from collections.abc import Callable
from dataclasses import dataclass

from annotation.normalisers import census, lowercase

__all__ = ["DEFAULT_NORMALISER", "NORMALISERS", "Normaliser", "get_normaliser"]


@dataclass(frozen=True)
class Normaliser:
    """A named rule: ``normalise(text)`` is the counted answer, or ``None`` (a failed cell)."""

    name: str
    description: str
    normalise: Callable[[str | None], str | None]


NORMALISERS: dict[str, Normaliser] = {
    normaliser.name: normaliser
    for normaliser in (
        Normaliser(
            "census",
            "One-Word Census rule: lowercase, punctuation and emoji removed, the last word "
            "of letters a–z and hyphens (or of digits)",
            census.normalise_reply,
        ),
        Normaliser(
            "lowercase",
            "trimmed, lowercased, inner whitespace collapsed, surrounding punctuation removed",
            lowercase.normalise_answer,
        ),
    )
}
DEFAULT_NORMALISER = "census"


def get_normaliser(name: str) -> Normaliser:
    """The normaliser called ``name``; ``KeyError`` when there is none."""
    return NORMALISERS[name]
