"""``manage.py import_items SLUG FILE [--publish]``: import items into a batch, all or
nothing; ``--publish`` then makes the batch live (as ``manage.py batch_state SLUG live``)."""

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Batch, BatchState
from annotation.services.batches import change_state, state_change_summary
from annotation.services.importing import import_items
from core.audit import Actor
from core.commands import existing, plural, refused_input_as_command_error
from core.errors import ServiceError


class Command(BaseCommand):
    help = (
        "Import items into a batch from a .jsonl or .csv file (FORMATS.md). The file is "
        "validated whole first; on any problem nothing is imported and every problem is "
        "listed as FILE:LINE: field: message."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the batch's slug")
        parser.add_argument("file", help="a .jsonl or .csv file of items")
        parser.add_argument(
            "--publish",
            action="store_true",
            help="make the batch live once the items are in (a rejected file publishes nothing)",
        )

    def handle(self, *args, slug: str, file: str, publish: bool = False, **options):
        batch = existing(Batch, "batch", slug=slug)
        with refused_input_as_command_error(file):
            summary = import_items(batch, file, actor=Actor.command_line())
        self.stdout.write(
            f"Imported {plural(summary.items_created, 'item', 'items')} into {batch.slug} "
            f"({plural(summary.queries_created, 'query', 'queries')}, "
            f"{plural(summary.responses_created, 'response', 'responses')} new)"
        )
        if publish:
            self._publish(batch)

    def _publish(self, batch: Batch) -> None:
        previous_state = batch.state
        try:
            batch = change_state(batch, BatchState.LIVE, actor=Actor.command_line())
        except ServiceError as error:
            raise CommandError(
                f"the items were imported, but {batch.slug} was not published: {error}"
            ) from error
        self.stdout.write(state_change_summary(batch, previous_state))
