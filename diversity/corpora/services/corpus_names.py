"""A corpus's name and title, checked before any file is read (the list page, the API and
the ``import_corpus`` command alike)."""

import re

from core.errors import InvalidInput
from core.text import describe_control_character, first_control_character

__all__ = ["MAX_TITLE_CHARS", "NAME_PATTERN", "RESERVED_NAMES", "check_name", "check_title"]

NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,99}$")
RESERVED_NAMES = frozenset({"import-jobs"})  # /api/v1/corpora/import-jobs
MAX_TITLE_CHARS = 300


def check_name(name: str) -> str:
    name = (name or "").strip() if isinstance(name, str) else ""
    if not NAME_PATTERN.match(name):
        raise InvalidInput(
            "name", f"{name!r} must be lower-case letters, digits and hyphens (at most 100)"
        )
    if name in RESERVED_NAMES:
        raise InvalidInput("name", f"{name!r} is a word of the API's paths; choose another")
    return name


def check_title(title) -> str:
    if title is None:
        return ""
    if not isinstance(title, str):
        raise InvalidInput("title", "must be text")
    title = title.strip()
    if len(title) > MAX_TITLE_CHARS:
        raise InvalidInput("title", f"is longer than {MAX_TITLE_CHARS} characters")
    index = first_control_character(title)
    if index is not None:
        raise InvalidInput("title", describe_control_character(title, index) + "; remove it")
    return title
