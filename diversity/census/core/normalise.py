"""The census's normalisation of a reply: the rule lives in ``annotation.normalisers.census``
(one home for it, shared with the ``short_text`` kind's ``census`` normaliser); this module
re-exports it under the names the census code uses."""

import annotation.normalisers.census as _rule
from annotation.normalisers.census import *  # noqa: F403

__all__ = list(_rule.__all__)
