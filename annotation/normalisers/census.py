"""The One-Word Census rule: from a raw reply to the one answer it gives (docs/CENSUS.md,
"Failed cells", "Normalising a reply" and "Plural merge").

The one home of the rule: the census of model replies (``diversity.census``) and the
``short_text`` kind's ``census`` normaliser (a crowdworker's one-word answer) both use it,
so a human's answer and a model's are counted alike.

A reply is first checked on its raw text by the junk guard (``failed_reason``); a reply that
passes is normalised to its last candidate word (``normalise_reply``). A reply that fails, or
has no candidate word, is a *failed cell*: it is not an answer and is never scored.
``merge_plurals`` then folds plurals into their singular within one category's pooled answers.
"""

import re
from collections.abc import Iterable
from enum import StrEnum

__all__ = [
    "ACKNOWLEDGEMENTS",
    "MAX_WORDS",
    "FailedReason",
    "candidate_words",
    "failed_reason",
    "merge_plurals",
    "normalise_reply",
]

MAX_WORDS = 15
ACKNOWLEDGEMENTS = ("okay", "ok", "sure", "certainly", "alright")


class FailedReason(StrEnum):
    """Why a cell is not an answer; the value is what ``failed_reason`` returns."""

    EMPTY = "empty"
    INSTRUCTION_MARKER = "[INST]"
    TAG = "tag"
    THINKING = "thinking"
    ACKNOWLEDGEMENT = "acknowledgement"
    TOO_LONG = "too_long"
    NO_CANDIDATE = "no_candidate"


# Leaked chat-template markers: the model is continuing a prompt, not answering it.
_INSTRUCTION_MARKER = re.compile(r"\[/?INST\]")
# Anything between angle brackets (<think>, </s>, <|endoftext|>, ...) is template debris.
_TAG = re.compile(r"<[^>]*>")
_THINKING = re.compile(r"\bthinking\b", re.IGNORECASE)
_ACKNOWLEDGEMENT = re.compile(
    r"(?:" + "|".join(ACKNOWLEDGEMENTS) + r")[.!]?", re.IGNORECASE | re.ASCII
)

# Step 2: markup and punctuation become spaces; every other character stays in its word.
_PUNCTUATION_TO_SPACE = str.maketrans(dict.fromkeys("*_`#>[]().,!?\"':;", " "))
# Step 3: emoji blocks (U+1F000-U+1FAFF, U+2600-U+27BF) become spaces.
_EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf]")
# Step 4: lowercase letters and hyphens (at least two characters), or digits (any length).
_CANDIDATE = re.compile(r"[a-z-]{2,}|[0-9]+", re.ASCII)


def _raw_reason(reply: str | None) -> FailedReason | None:
    """The first junk-guard rule the raw reply breaks, or ``None``; the rules are tried in the
    order of docs/CENSUS.md, "Failed cells"."""
    if reply is None or not reply.strip():
        return FailedReason.EMPTY
    if _INSTRUCTION_MARKER.search(reply):
        return FailedReason.INSTRUCTION_MARKER
    if _TAG.search(reply):
        return FailedReason.TAG
    if _THINKING.search(reply):
        return FailedReason.THINKING
    if _ACKNOWLEDGEMENT.fullmatch(reply.strip()):
        return FailedReason.ACKNOWLEDGEMENT
    if len(reply.split()) > MAX_WORDS:
        return FailedReason.TOO_LONG
    return None


def candidate_words(reply: str) -> list[str]:
    """Normalisation steps 1-4: the reply's candidate words, in reading order.

    Trim and lowercase; markup/punctuation and emoji become spaces; split on whitespace; keep
    words made only of ``a``-``z`` and ``-`` (two characters or more) or only of digits.
    """
    text = reply.strip().lower().translate(_PUNCTUATION_TO_SPACE)
    text = _EMOJI.sub(" ", text)
    return [word for word in text.split() if _CANDIDATE.fullmatch(word)]


def failed_reason(reply: str | None) -> str | None:
    """Why ``reply`` is a failed cell (a ``FailedReason`` value), or ``None`` if it is an answer.

    Rules on the raw reply: empty or missing; contains ``[INST]``/``[/INST]``; contains a tag
    (``<`` ... ``>``); contains the whole word ``thinking`` (any case); is only a bare
    acknowledgement (``okay``, ``ok``, ``sure``, ``certainly``, ``alright``, optionally followed
    by one ``.`` or ``!``); has more than ``MAX_WORDS`` whitespace-separated words. Then, after
    normalisation: no candidate word.
    """
    reason = _raw_reason(reply)
    if reason is not None:
        return reason
    if not candidate_words(reply):
        return FailedReason.NO_CANDIDATE
    return None


def normalise_reply(reply: str | None) -> str | None:
    """The one answer ``reply`` gives (its **last** candidate word), or ``None`` for a failed cell.

    ``"A common color is blue."`` -> ``"blue"``; ``"Soufflé"`` -> ``None`` (no candidate).
    """
    if _raw_reason(reply) is not None:
        return None
    words = candidate_words(reply)
    # The last word, because a sentence-shaped reply ends on its answer ("... is blue").
    return words[-1] if words else None


def merge_plurals(answers_in_category: Iterable[str]) -> dict[str, str]:
    """Map each distinct answer of one category's pool to the form it is counted as.

    An answer ending in ``s`` whose form without that final ``s`` also occurs in the pool maps
    to that form (``cats`` -> ``cat`` when ``cat`` occurs); every other answer maps to itself.
    One ``s`` is dropped at most, and the test is against the pool as given, so the result does
    not depend on the order of the answers.
    """
    pool = set(answers_in_category)
    return {
        answer: answer[:-1] if answer.endswith("s") and answer[:-1] in pool else answer
        for answer in pool
    }
