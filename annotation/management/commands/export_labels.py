"""manage.py export_labels SLUG --format jsonl|csv|parquet [--dense | --annotators | --card |
--layout LAYOUT] [--all-statuses] [--category C] [--subcategory S] -o FILE

Without a layout flag: the long layout (one row per label). ``--card`` writes the Markdown
data card (``--format md`` or a ``.md`` file); ``--layout lewidi`` the perspectivist JSON of
the LeWiDi shared tasks (``--format json`` or a ``.json`` file). The format defaults to the
output file's extension. ``-o -`` writes to standard output (give ``--format``); the summary
line then goes to standard error. A FIFO or a device is written directly (``core.files``).
``--category`` / ``--subcategory`` export those items only (the card says so).
"""

import shutil
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Batch
from annotation.selectors import CategoryFilter
from annotation.services.exports.delivery import export_to_file
from annotation.services.exports.schema import CARD_FORMAT, EXPORT_FORMATS, LAYOUTS, LEWIDI_FORMAT
from core.audit import Actor
from core.commands import existing
from core.errors import ServiceError
from core.files import output_path

STANDARD_OUTPUT = "-"

SUMMARY = {
    "long": "{rows} {labels} of {slug}",
    "dense": "{rows} items (dense, counted labels) of {slug}",
    "annotators": "{rows} annotators of {slug}",
    "bundles": "{rows} (annotator, bundle) rows of {slug}",
    "card": "the data card of {slug}",
    "lewidi": "{rows} items (LeWiDi, counted labels) of {slug}",
}


class Command(BaseCommand):
    help = (
        "Export a batch's labels: one row per label (counted only unless --all-statuses), "
        "one row per item (--dense), the annotator table (--annotators) or the data card "
        "(--card, Markdown)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument(
            "--format",
            choices=(*EXPORT_FORMATS, CARD_FORMAT, LEWIDI_FORMAT),
            default=None,
            help="default: the output file's extension (md only with --card)",
        )
        layouts = parser.add_mutually_exclusive_group()
        layouts.add_argument("--dense", action="store_true", help="one row per item")
        layouts.add_argument("--annotators", action="store_true", help="the annotator table")
        layouts.add_argument("--card", action="store_true", help="the data card (Markdown)")
        layouts.add_argument(
            "--layout", choices=LAYOUTS, help="any layout by name, e.g. lewidi (LeWiDi JSON)"
        )
        parser.add_argument(
            "--all-statuses",
            action="store_true",
            help="include surplus and excluded labels (column 'status' tells them apart)",
        )
        parser.add_argument("--category", help="only the items whose query has this category")
        parser.add_argument(
            "--subcategory", help="only the items whose query has this sub-category"
        )
        parser.add_argument(
            "-o", "--output", required=True, help="file to write ('-': standard output)"
        )

    def handle(
        self, *args, slug, format, dense, annotators, card, layout, all_statuses, output, **options
    ):
        batch = existing(Batch, "batch", slug=slug)
        if layout is None:
            layout = (
                "dense" if dense else "annotators" if annotators else "card" if card else "long"
            )
        to_stdout = output == STANDARD_OUTPUT
        target = Path(output)
        fmt = format or ("" if to_stdout else target.suffix.lstrip(".").lower())
        allowed = {"card": (CARD_FORMAT,), "lewidi": (LEWIDI_FORMAT,)}.get(layout, EXPORT_FORMATS)
        if fmt not in allowed:
            raise CommandError(
                f"--format: give one of {', '.join(allowed)} (or an output file "
                f"ending in one of them); got {fmt or 'nothing'!r}"
            )
        export = {"all_statuses": all_statuses, "actor": Actor.command_line()}
        try:
            export["categories"] = CategoryFilter.from_params(options)
            if to_stdout:
                rows = self._export_to_stdout(batch, layout, fmt, export)
            else:
                with output_path(target) as path:
                    rows = export_to_file(batch, layout, fmt, path, **export)
        except ServiceError as error:
            raise CommandError(str(error)) from error
        except OSError as error:
            raise CommandError(f"cannot write {output}: {error.strerror or error}") from error
        labels = "labels (all statuses)" if all_statuses else "counted labels"
        what = SUMMARY[layout].format(rows=rows, labels=labels, slug=batch.slug)
        if to_stdout:  # the summary must not mix with the export (and is no error)
            self.stderr.write(f"Exported {what} to standard output ({fmt})", style_func=str)
        else:
            self.stdout.write(f"Exported {what} to {target} ({fmt})")

    def _export_to_stdout(self, batch, layout: str, fmt: str, export: dict) -> int:
        # The writers take a path: the export is written to a private file, then copied out.
        with tempfile.TemporaryDirectory(prefix="export-") as folder:
            path = Path(folder) / f"export.{fmt}"
            rows = export_to_file(batch, layout, fmt, path, **export)
            binary = getattr(self.stdout, "buffer", None)
            if binary is None:  # a text stream (call_command(stdout=StringIO()))
                self.stdout.write(path.read_text(encoding="utf-8"), ending="")
                return rows
            self.stdout.flush()
            with open(path, "rb") as source:
                shutil.copyfileobj(source, binary)
            binary.flush()
        return rows
