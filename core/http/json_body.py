"""Checks on a JSON body that are cheap to make before any parser or view reads it.

Python's ``json`` module recurses once per nesting level, so a body like
``[[[[...]]]]`` a few thousand levels deep raises ``RecursionError`` inside whichever
code parses it first (for the API that is the CSRF check). ``nests_deeper_than`` measures
the depth without recursion, skipping over strings, so the guard can refuse it first.
"""

import re

# A JSON string (with its escapes) or one bracket; everything else is irrelevant here.
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def nests_deeper_than(raw: bytes, limit: int) -> bool:
    """Whether arrays and objects in ``raw`` nest more than ``limit`` levels deep."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False  # too few brackets to go that deep
    depth = 0
    for token in _TOKENS.finditer(raw):
        bracket = token.group()
        if bracket in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        elif bracket in (b"]", b"}"):
            depth -= 1
    return False


def first_string_with(value, predicate, path: str = "") -> tuple[str, str] | None:
    """``(path, text)`` of the first string (object key or value) for which ``predicate``
    holds, walking ``value`` depth first; paths read ``kind_settings.labels[2]``."""
    stack = [(path, value)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, str):
            if predicate(node):
                return where or "body", node
        elif isinstance(node, dict):
            children = []
            for key, child in node.items():
                child_path = f"{where}.{key}" if where else str(key)
                if predicate(key):
                    return child_path, key
                children.append((child_path, child))
            stack.extend(reversed(children))
        elif isinstance(node, list):
            stack.extend(reversed([(f"{where}[{i}]", child) for i, child in enumerate(node)]))
    return None
