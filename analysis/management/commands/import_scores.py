"""``manage.py import_scores FILE [--batch SLUG]``: import model scores, all or nothing."""

from django.core.management.base import BaseCommand, CommandError

from analysis.services.scores import ImportRejected, import_scores
from annotation.models import Batch
from annotation.services.errors import ServiceError


def _plural(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


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
        found = None
        if batch:
            found = Batch.objects.filter(slug=batch).first()
            if found is None:
                raise CommandError(f"batch '{batch}' does not exist")
        try:
            summary = import_scores(file, batch=found)
        except ImportRejected as error:
            raise CommandError(
                f"{file} was rejected, nothing was imported:\n" + "\n".join(error.problems)
            ) from error
        except ServiceError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"Imported {_plural(summary.scores_created, 'score', 'scores')} "
            f"({_plural(summary.scores_unchanged, 'score', 'scores')} unchanged; "
            f"{_plural(summary.sources_created, 'source', 'sources')} new, "
            f"{summary.sources_updated} updated)"
        )
