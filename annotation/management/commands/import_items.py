"""``manage.py import_items SLUG FILE``: import items into a batch, all or nothing."""

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Batch
from annotation.services.errors import ServiceError
from annotation.services.importing import ImportRejected, import_items


def _plural(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


class Command(BaseCommand):
    help = (
        "Import items into a batch from a .jsonl or .csv file (FORMATS.md). The file is "
        "validated whole first; on any problem nothing is imported and every problem is "
        "listed as FILE:LINE: field: message."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the batch's slug")
        parser.add_argument("file", help="a .jsonl or .csv file of items")

    def handle(self, *args, slug: str, file: str, **options):
        batch = Batch.objects.filter(slug=slug).first()
        if batch is None:
            raise CommandError(f"batch '{slug}' does not exist")
        try:
            summary = import_items(batch, file)
        except ImportRejected as error:
            raise CommandError(
                f"{file} was rejected, nothing was imported:\n" + "\n".join(error.problems)
            ) from error
        except ServiceError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"Imported {_plural(summary.items_created, 'item', 'items')} into {batch.slug} "
            f"({_plural(summary.queries_created, 'query', 'queries')}, "
            f"{_plural(summary.responses_created, 'response', 'responses')} new)"
        )
