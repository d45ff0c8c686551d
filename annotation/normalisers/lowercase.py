"""The ``lowercase`` normaliser, for answers of a few words: the same answer however it
was cased or spaced, and whether or not it ended with a full stop.

Trim; lowercase; collapse every run of whitespace inside to one space; strip the
characters of ``EDGE_PUNCTUATION`` (sentence punctuation, quotes, brackets) and any
whitespace they leave from both ends. Nothing inside the answer is removed, so ``"New
York!"`` and ``"new   york"`` meet at ``"new york"``, ``"rock 'n' roll"`` keeps its inner
apostrophes, and ``"C++"`` or ``"C#"`` keep their symbols. An answer made only of those
characters has nothing left: a failed cell (``None``).
"""

__all__ = ["EDGE_PUNCTUATION", "normalise_answer"]

# What may surround an answer without being part of it (a typed full stop, quotes).
EDGE_PUNCTUATION = ".,;:!?…'\"‘’“”«»()[]{}¡¿"
_STRIPPED = EDGE_PUNCTUATION + " "


def normalise_answer(text: str | None) -> str | None:
    """The answer ``text`` gives under the ``lowercase`` rule, or ``None`` when nothing is
    left of it (empty, or only ``EDGE_PUNCTUATION``).

    ``"  The Beatles. "`` -> ``"the beatles"``; ``"New\\tYork!!"`` -> ``"new york"``;
    ``"“Hamlet”"`` -> ``"hamlet"``; ``"?!"`` -> ``None``.
    """
    collapsed = " ".join((text or "").lower().split())
    return collapsed.strip(_STRIPPED) or None
