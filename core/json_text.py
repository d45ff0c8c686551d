"""Reading JSON with one nesting limit, for every reader of the platform.

Python's ``json`` recurses once per nesting level, so ``[[[[...]]]]`` a few thousand
levels deep raises ``RecursionError`` in whichever code parses it — a 500 where a reader
forgot to expect it. Request bodies (``core.http.limits``, ``core.api.parsers``) and every
file reader (item, score, census and Genie files, their JSONL lines and JSON cells) call
``loads`` here, which measures the depth without recursion first and refuses deeper
documents than ``JSON_MAX_DEPTH`` as invalid JSON, with the position of the bracket that
went too deep; no data this platform reads nests anywhere near that.
"""

import json
import re
from typing import Any

from django.conf import settings

# A JSON string (with its escapes) or one bracket; everything else is irrelevant here.
_BYTE_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_TEXT_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


class NestedTooDeep(json.JSONDecodeError):
    """The document nests deeper than the limit (a ``JSONDecodeError``, so that every
    reader reports it as it reports any other invalid JSON)."""


def too_deep_at(raw: bytes | str, limit: int) -> int | None:
    """The offset of the first bracket in ``raw`` that opens level ``limit + 1``, or
    ``None`` when arrays and objects nest at most ``limit`` levels deep."""
    if isinstance(raw, str):
        opening, tokens = ("[", "{"), _TEXT_TOKENS
        closing = ("]", "}")
        count = raw.count("[") + raw.count("{")
    else:
        opening, tokens = (b"[", b"{"), _BYTE_TOKENS
        closing = (b"]", b"}")
        count = raw.count(b"[") + raw.count(b"{")
    if count <= limit:
        return None  # too few brackets to go that deep
    depth = 0
    for token in tokens.finditer(raw):
        bracket = token.group()
        if bracket in opening:
            depth += 1
            if depth > limit:
                return token.start()
        elif bracket in closing:
            depth -= 1
    return None


def nests_deeper_than(raw: bytes | str, limit: int) -> bool:
    """Whether arrays and objects in ``raw`` nest more than ``limit`` levels deep."""
    return too_deep_at(raw, limit) is not None


def loads(text: str | bytes, **options) -> Any:
    """``json.loads`` that refuses documents nested deeper than ``JSON_MAX_DEPTH`` with
    ``NestedTooDeep`` (a ``json.JSONDecodeError``) before parsing them."""
    limit = settings.JSON_MAX_DEPTH
    position = too_deep_at(text, limit)
    if position is not None:
        document = text if isinstance(text, str) else text.decode("utf-8", "replace")
        raise NestedTooDeep(
            f"nested deeper than {limit} levels (JSON_MAX_DEPTH)", document, position
        )
    return json.loads(text, **options)
