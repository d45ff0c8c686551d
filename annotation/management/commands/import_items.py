"""``manage.py import_items SLUG FILE``: import items into a batch, all or nothing."""

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Batch
from annotation.services.importing import import_items
from core.audit import Actor
from core.commands import plural, refused_input_as_command_error


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
        with refused_input_as_command_error(file):
            summary = import_items(batch, file, actor=Actor.command_line())
        self.stdout.write(
            f"Imported {plural(summary.items_created, 'item', 'items')} into {batch.slug} "
            f"({plural(summary.queries_created, 'query', 'queries')}, "
            f"{plural(summary.responses_created, 'response', 'responses')} new)"
        )
