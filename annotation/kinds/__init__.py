"""Task kinds as plug-ins: one module per kind, registered in one place.

The kinds a deployment offers are listed in the ``TASK_KINDS`` setting (dotted paths of
``TaskKind`` subclasses, in ``config/settings.py``) and nowhere else; ``get_kind(name)`` is
how every part of the platform reaches a batch's kind. See ``docs/KINDS.md`` for adding one.
"""

from functools import lru_cache

from django.conf import settings
from django.utils.module_loading import import_string

from annotation.kinds.base import TaskKind
from core.errors import InvalidInput


def _configured() -> tuple[str, ...]:
    return tuple(settings.TASK_KINDS)


@lru_cache(maxsize=8)
def _kinds(paths: tuple[str, ...]) -> dict[str, TaskKind]:
    kinds: dict[str, TaskKind] = {}
    for path in paths:
        kind = import_string(path)()
        if kind.name in kinds:
            raise ValueError(f"TASK_KINDS lists two kinds named {kind.name!r}")
        kinds[kind.name] = kind
    return kinds


def all_kinds() -> dict[str, TaskKind]:
    """Every configured kind by name (re-read when the setting changes, e.g. in tests)."""
    return _kinds(_configured())


def get_kind(name: str) -> TaskKind:
    """The kind called ``name``; ``InvalidInput`` on the ``kind`` field when unknown."""
    kind = all_kinds().get(name)
    if kind is None:
        known = ", ".join(all_kinds())
        raise InvalidInput("kind", f"{name!r} is not one of {known}")
    return kind


def kinds_reading(analysis: str) -> tuple[str, ...]:
    """The names of the kinds whose batches the analysis ``analysis`` reads (the kinds
    whose ``analyses`` include it), in the order of ``TASK_KINDS``."""
    return tuple(name for name, kind in all_kinds().items() if analysis in kind.analyses)


def kinds_reading_text(analysis: str) -> str:
    """The kinds ``analysis`` reads, for a message: ``similarity``, or ``a or b``."""
    return " or ".join(kinds_reading(analysis))


def kind_choices() -> list[tuple[str, str]]:
    return [(kind.name, kind.label) for kind in all_kinds().values()]
