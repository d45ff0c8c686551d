"""Checks on a JSON body that are cheap to make before any parser or view reads it.

Python's ``json`` module recurses once per nesting level, so a body like
``[[[[...]]]]`` a few thousand levels deep raises ``RecursionError`` inside whichever
code parses it first (for the API that is the CSRF check). ``nests_deeper_than`` measures
the depth without recursion, skipping over strings (``core.json_text``, the one depth
check of every JSON reader), so the guard can refuse it first.
"""

from core.json_text import nests_deeper_than  # noqa: F401 - the guard's check


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
