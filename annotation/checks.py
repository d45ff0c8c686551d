"""System checks of the annotation app (``manage.py check``, run before every command).

A mistake in ``TASK_KINDS`` would otherwise surface only when a page first asks the
registry for a kind, as a server error in front of a worker; checked at start-up it stops
the deployment with a message that names the entry.
"""

from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string

from annotation.kinds.base import ChoiceKind, TaskKind

WIDGETS = ("choice", "text")


def _error(message: str, number: int, hint: str = "") -> checks.Error:
    return checks.Error(
        message, hint=hint or None, obj="TASK_KINDS", id=f"annotation.E{number:03d}"
    )


@checks.register()
def task_kinds_are_valid(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """Every entry of ``TASK_KINDS`` imports, is a ``TaskKind`` subclass with a name of its
    own, and declares a consistent page (widget, scale and settings)."""
    paths = getattr(settings, "TASK_KINDS", None)
    if not isinstance(paths, list | tuple) or not paths:
        return [_error("TASK_KINDS must be a non-empty list of dotted paths", 1)]
    errors: list[checks.CheckMessage] = []
    named: dict[str, str] = {}
    for path in paths:
        if not isinstance(path, str):
            errors.append(_error(f"TASK_KINDS entry {path!r} is not a dotted path", 2))
            continue
        try:
            kind_class = import_string(path)
        except ImportError as error:
            errors.append(_error(f"TASK_KINDS entry {path!r} does not import: {error}", 3))
            continue
        if not (isinstance(kind_class, type) and issubclass(kind_class, TaskKind)):
            errors.append(
                _error(
                    f"TASK_KINDS entry {path!r} is not a TaskKind subclass",
                    4,
                    "A kind is a class deriving from annotation.kinds.base.TaskKind.",
                )
            )
            continue
        name = getattr(kind_class, "name", None)
        if not isinstance(name, str) or not name:
            errors.append(_error(f"kind {path!r} has no name", 5))
            continue
        if name in named:
            errors.append(_error(f"kinds {named[name]!r} and {path!r} are both named {name!r}", 6))
            continue
        named[name] = path
        errors += _kind_errors(path, kind_class)
    return errors


def _kind_errors(path: str, kind_class: type[TaskKind]) -> list[checks.CheckMessage]:
    """What is inconsistent in one kind's declaration."""
    errors = []
    if kind_class.widget not in WIDGETS:
        errors.append(
            _error(f"kind {path!r}: widget {kind_class.widget!r} is not one of {WIDGETS}", 7)
        )
    if issubclass(kind_class, ChoiceKind):
        errors += _scale_errors(path, kind_class)
    names = [setting.name for setting in kind_class.settings]
    for name in sorted({name for name in names if names.count(name) > 1}):
        errors.append(_error(f"kind {path!r}: two settings are named {name!r}", 10))
    for setting in kind_class.settings:
        if setting.choices and setting.default not in setting.choices:
            errors.append(
                _error(
                    f"kind {path!r}: setting {setting.name!r} defaults to {setting.default!r}, "
                    f"not one of its choices {setting.choices}",
                    11,
                )
            )
    fields = [slot.field for slot in kind_class.response_slots]
    columns = [
        column
        for slot in kind_class.response_slots
        for column in (slot.id_key, slot.text_key, slot.model_key)
    ]
    columns += [content.key for content in kind_class.content_texts]
    for column in sorted({column for column in columns if columns.count(column) > 1}):
        errors.append(_error(f"kind {path!r}: two items-file columns are named {column!r}", 12))
    if len(set(fields)) != len(fields):
        errors.append(_error(f"kind {path!r}: two response slots fill the same field", 13))
    return errors


def _scale_errors(path: str, kind_class: type[ChoiceKind]) -> list[checks.CheckMessage]:
    """A choice kind's buttons: a scale of distinct integer values (a button's key is its
    position, so keys are distinct whenever values are)."""
    scale = getattr(kind_class, "scale", None)
    buttons = getattr(scale, "buttons", None)
    if not buttons:
        return [_error(f"kind {path!r} chooses but has no scale", 8)]
    values = [value for value, _ in buttons]
    errors = []
    if any(isinstance(value, bool) or not isinstance(value, int) for value in values):
        errors.append(_error(f"kind {path!r}: the scale's values must be integers", 9))
    elif len(set(values)) != len(values):
        repeated = sorted({value for value in values if values.count(value) > 1})
        errors.append(_error(f"kind {path!r}: the scale repeats the value(s) {repeated}", 9))
    return errors
