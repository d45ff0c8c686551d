"""What the management commands share: a named row or an error saying it does not exist,
and refused input as a CommandError listing every problem."""

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.management.base import CommandError

from core.errors import ServiceError
from core.tabular import ImportRejected


def existing(model, what: str, **key):
    """The row of ``model`` with ``key`` (one field: a slug or a name), or a CommandError
    saying ``<what> '<value>' does not exist``."""
    found = model.objects.filter(**key).first()
    if found is None:
        (value,) = key.values()
        raise CommandError(f"{what} {str(value)!r} does not exist")
    return found


@contextmanager
def refused_input_as_command_error(file: str) -> Iterator[None]:
    """Exit non-zero with every ``FILE:LINE: field: message`` when the file is refused."""
    try:
        yield
    except ImportRejected as error:
        raise CommandError(
            f"{file} was rejected, nothing was imported:\n" + "\n".join(error.problems)
        ) from error
    except ServiceError as error:
        raise CommandError(str(error)) from error


def plural(count: int, singular: str, plural_form: str) -> str:
    return f"{count} {singular if count == 1 else plural_form}"
