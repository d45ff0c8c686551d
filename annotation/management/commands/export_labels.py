"""manage.py export_labels SLUG --format jsonl|csv|parquet [--all-statuses] -o FILE"""

import os
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Batch
from annotation.services.errors import ServiceError
from annotation.services.exporting import EXPORT_FORMATS, export_long


class Command(BaseCommand):
    help = "Export a batch's labels, one row per label (counted only unless --all-statuses)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--format", choices=EXPORT_FORMATS, default=None)
        parser.add_argument("--dense", action="store_true", help="one row per item")
        parser.add_argument("--annotators", action="store_true", help="the annotator table")
        parser.add_argument(
            "--all-statuses",
            action="store_true",
            help="include surplus and excluded labels (column 'status' tells them apart)",
        )
        parser.add_argument("-o", "--output", required=True, help="file to write")

    def handle(self, *args, slug, format, dense, annotators, all_statuses, output, **options):
        if dense or annotators:
            raise CommandError("--dense and --annotators exports are not available yet.")
        batch = Batch.objects.filter(slug=slug).first()
        if batch is None:
            raise CommandError(f"batch {slug!r} does not exist")
        target = Path(output)
        fmt = format or target.suffix.lstrip(".").lower()
        if fmt not in EXPORT_FORMATS:
            raise CommandError(
                f"--format: give one of {', '.join(EXPORT_FORMATS)} (or an output file "
                f"ending in one of them); got {fmt or 'nothing'!r}"
            )
        # Written next to the target and renamed at the end: never a half-written file.
        handle, partial = tempfile.mkstemp(dir=target.parent or ".", suffix=".partial")
        os.close(handle)
        try:
            rows = export_long(batch, fmt, partial, all_statuses=all_statuses)
            os.replace(partial, target)
        except ServiceError as error:
            raise CommandError(str(error)) from error
        finally:
            if os.path.exists(partial):
                os.remove(partial)
        which = "labels (all statuses)" if all_statuses else "counted labels"
        self.stdout.write(f"Exported {rows} {which} of {batch.slug} to {target} ({fmt})")
