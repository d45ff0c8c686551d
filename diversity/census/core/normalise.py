"""The census's normalisation of a reply: the rule lives in ``annotation.normalisers.census``
(one home for it, shared with the ``short_text`` kind's ``census`` normaliser); this module
re-exports it under the names the census code uses."""

from annotation.normalisers.census import (
    ACKNOWLEDGEMENTS,
    MAX_WORDS,
    FailedReason,
    candidate_words,
    failed_reason,
    merge_plurals,
    normalise_reply,
)

__all__ = [
    "ACKNOWLEDGEMENTS",
    "MAX_WORDS",
    "FailedReason",
    "candidate_words",
    "failed_reason",
    "merge_plurals",
    "normalise_reply",
]
