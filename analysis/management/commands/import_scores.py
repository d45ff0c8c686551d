"""``manage.py import_scores FILE [--batch SLUG]``: import model scores, all or nothing."""

from django.core.management.base import BaseCommand

from analysis.services.scores import import_scores
from annotation.models import Batch
from core.audit import Actor
from core.commands import existing, plural, refused_input_as_command_error


class Command(BaseCommand):
    help = (
        "Import model scores from a .jsonl or .csv file (FORMATS.md, 'Model scores'). The "
        "file is validated whole first; on any problem nothing is imported and every problem "
        "is listed as FILE:LINE: field: message."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="a .jsonl or .csv file of scores")
        parser.add_argument(
            "--batch", metavar="SLUG", help="the batch whose items the item_id values name"
        )

    def handle(self, *args, file: str, batch: str | None = None, **options):
        found = existing(Batch, "batch", slug=batch) if batch else None
        with refused_input_as_command_error(file):
            summary = import_scores(file, batch=found, actor=Actor.command_line())
        self.stdout.write(
            f"Imported {plural(summary.scores_created, 'score', 'scores')} "
            f"({plural(summary.scores_unchanged, 'score', 'scores')} unchanged; "
            f"{plural(summary.sources_created, 'source', 'sources')} new, "
            f"{summary.sources_updated} updated)"
        )
