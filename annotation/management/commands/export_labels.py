"""manage.py export_labels SLUG --format jsonl|csv|parquet [--dense | --annotators | --card]
[--all-statuses] -o FILE

Without a layout flag: the long layout (one row per label). ``--card`` writes the Markdown
data card (``--format md`` or a ``.md`` file). The format defaults to the output file's
extension.
"""

import os
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Batch
from annotation.services.exports.delivery import export_to_file
from annotation.services.exports.schema import CARD_FORMAT, EXPORT_FORMATS
from core.audit import Actor
from core.errors import ServiceError

SUMMARY = {
    "long": "{rows} {labels} of {slug}",
    "dense": "{rows} items (dense, counted labels) of {slug}",
    "annotators": "{rows} annotators of {slug}",
    "card": "the data card of {slug}",
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
            choices=(*EXPORT_FORMATS, CARD_FORMAT),
            default=None,
            help="default: the output file's extension (md only with --card)",
        )
        layouts = parser.add_mutually_exclusive_group()
        layouts.add_argument("--dense", action="store_true", help="one row per item")
        layouts.add_argument("--annotators", action="store_true", help="the annotator table")
        layouts.add_argument("--card", action="store_true", help="the data card (Markdown)")
        parser.add_argument(
            "--all-statuses",
            action="store_true",
            help="include surplus and excluded labels (column 'status' tells them apart)",
        )
        parser.add_argument("-o", "--output", required=True, help="file to write")

    def handle(self, *args, slug, format, dense, annotators, card, all_statuses, output, **options):
        batch = Batch.objects.filter(slug=slug).first()
        if batch is None:
            raise CommandError(f"batch {slug!r} does not exist")
        layout = "dense" if dense else "annotators" if annotators else "card" if card else "long"
        target = Path(output)
        fmt = format or target.suffix.lstrip(".").lower()
        allowed = (CARD_FORMAT,) if card else EXPORT_FORMATS
        if fmt not in allowed:
            raise CommandError(
                f"--format: give one of {', '.join(allowed)} (or an output file "
                f"ending in one of them); got {fmt or 'nothing'!r}"
            )
        # Written next to the target and renamed at the end: never a half-written file.
        handle, partial = tempfile.mkstemp(dir=target.parent or ".", suffix=".partial")
        os.close(handle)
        try:
            rows = export_to_file(
                batch,
                layout,
                fmt,
                partial,
                all_statuses=all_statuses,
                actor=Actor.command_line(),
            )
            os.replace(partial, target)
        except ServiceError as error:
            raise CommandError(str(error)) from error
        finally:
            if os.path.exists(partial):
                os.remove(partial)
        labels = "labels (all statuses)" if all_statuses else "counted labels"
        what = SUMMARY[layout].format(rows=rows, labels=labels, slug=batch.slug)
        self.stdout.write(f"Exported {what} to {target} ({fmt})")
