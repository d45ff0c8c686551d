"""A corpus's name and title, checked before any file is read (the list page, the API and
the ``import_corpus`` command alike)."""

from core.errors import InvalidInput
from core.jobs.subject_names import check_subject_name
from core.text import describe_control_character, first_control_character

__all__ = ["MAX_TITLE_CHARS", "RESERVED_NAMES", "check_name", "check_title"]

RESERVED_NAMES = frozenset({"import-jobs"})  # /api/v1/corpora/import-jobs
MAX_TITLE_CHARS = 300


def check_name(name: str) -> str:
    return check_subject_name(name, RESERVED_NAMES)


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
