"""The name of a study type's subject (a census, a Genie set, a corpus): checked before any
file is read, alike on the pages, the API and the commands. It is a path segment of the
subject's pages and API (``/manage/<type>/<name>/``)."""

import re

from core.errors import InvalidInput

__all__ = ["SUBJECT_NAME_PATTERN", "check_subject_name"]

SUBJECT_NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,99}$")


def check_subject_name(name, reserved: frozenset[str] = frozenset()) -> str:
    """The name, stripped; ``InvalidInput`` on ``name`` when it is not lower-case letters,
    digits and hyphens (at most 100) or is one of the ``reserved`` words of the paths."""
    name = name.strip() if isinstance(name, str) else ""
    if not SUBJECT_NAME_PATTERN.match(name):
        raise InvalidInput(
            "name", f"{name!r} must be lower-case letters, digits and hyphens (at most 100)"
        )
    if name in reserved:
        raise InvalidInput("name", f"{name!r} is a word of the API's paths; choose another")
    return name
