"""Rules for text that comes from outside: no control characters where none belong.

PostgreSQL cannot store NUL in text or JSON, and the other C0 control characters have no
place in ids, titles or codes; multi-line texts (instructions, Markdown) may hold tabs
and line breaks. Services call ``check_text``; the request guard (``core.http.limits``)
uses ``first_control_character`` on every query parameter and form field.
"""

import re

from django.utils.functional import lazy
from django.utils.translation import gettext

from core.errors import InvalidInput

# C0 controls and DEL; tab, line feed and carriage return are allowed in multi-line text.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CONTROL_EXCEPT_LINE_BREAKS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def first_control_character(text: str, *, multiline: bool = False) -> int | None:
    """Index of the first control character not allowed in ``text``, or None."""
    pattern = _CONTROL_EXCEPT_LINE_BREAKS if multiline else _CONTROL
    found = pattern.search(text)
    return found.start() if found else None


def describe_control_character(text: str, index: int) -> str:
    """``"contains the control character U+0000 at position 2"`` (1-based, for people)."""
    return f"contains the control character U+{ord(text[index]):04X} at position {index + 1}"


def _refusal_text(code: str, position: int) -> str:
    return gettext(
        "contains the control character U+%(code)s at position %(position)s; remove it"
    ) % {"code": code, "position": position}


# evaluated when shown, so that a participant reads it in their language (the refusal may
# be made before their language is known: core.http.limits)
_lazy_refusal = lazy(_refusal_text, str)


def control_character_refusal(text: str, index: int):
    """``describe_control_character`` and what to do, in the language of whoever reads it."""
    return _lazy_refusal(f"{ord(text[index]):04X}", index + 1)


def check_text(field: str, value, *, multiline: bool = False) -> None:
    """Raise ``InvalidInput(field, ...)`` if ``value`` (a string) holds a control character."""
    if not isinstance(value, str):
        return
    index = first_control_character(value, multiline=multiline)
    if index is not None:
        raise InvalidInput(field, str(control_character_refusal(value, index)))
