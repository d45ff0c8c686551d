"""What the import commands share: refused input becomes a CommandError listing it."""

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.management.base import CommandError

from core.errors import ServiceError
from core.tabular import ImportRejected


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
