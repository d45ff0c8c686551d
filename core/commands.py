"""What the management commands share: a named row or an error saying it does not exist,
refused input as a CommandError listing every problem, and the shape of every command that
imports one file (``ImportCommand``)."""

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.management.base import BaseCommand, CommandError

from core.audit import Actor
from core.command_progress import progress_bar
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


class ImportCommand(BaseCommand):
    """``manage.py import_<what> NAME FILE [options]``: one file imported into ``NAME``, all or
    nothing. A refused file stores nothing and ends the command non-zero with every
    ``FILE:LINE: field: message``; an accepted one prints one line saying what came in.

    A subclass says what its two arguments are (``name_argument``, ``name_help``,
    ``file_help``), adds its own options (``add_options``), imports (``import_file``, which
    returns the line to print) and may act once the import is in (``after_import``); with a
    ``progress_unit`` ("bytes", "rows") it draws a progress bar on stderr that ``--quiet``
    hides."""

    name_argument = "name"
    name_help = "the name of what is imported into (lower-case letters, digits, -)"
    file_help = "the file"
    progress_unit = ""

    def add_arguments(self, parser):
        parser.add_argument(self.name_argument, help=self.name_help)
        parser.add_argument("file", help=self.file_help)
        if self.progress_unit:
            parser.add_argument("--quiet", action="store_true", help="no progress bar")
        self.add_options(parser)

    def add_options(self, parser) -> None:
        """The command's own options (none by default)."""

    def import_file(self, name: str, file: str, *, actor: Actor, progress, **options) -> str:
        """Import ``file`` into ``name``; the line that says what was imported. Raises
        ``ImportRejected`` or another ``ServiceError`` to refuse it."""
        raise NotImplementedError

    def after_import(self, name: str, **options) -> None:
        """What the command does once the import is in (nothing by default)."""

    def handle(self, *args, file: str, quiet: bool = False, **options):
        name = options.pop(self.name_argument)
        hidden = quiet or not self.progress_unit
        with (
            progress_bar(self, self.progress_unit, hidden) as bar,
            refused_input_as_command_error(file),
        ):
            said = self.import_file(name, file, actor=Actor.command_line(), progress=bar, **options)
        self.stdout.write(said)
        self.after_import(name, **options)
