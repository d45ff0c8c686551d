"""``manage.py import_items SLUG FILE [--publish]``: import items into a batch, all or
nothing; ``--publish`` then makes the batch live (as ``manage.py batch_state SLUG live``)."""

from django.core.management.base import CommandError

from annotation.models import Batch, BatchState
from annotation.services.batches import change_state, state_change_summary
from annotation.services.importing import import_items
from core.audit import Actor
from core.commands import ImportCommand, existing, plural
from core.errors import ServiceError


class Command(ImportCommand):
    help = (
        "Import items into a batch from a .jsonl or .csv file (FORMATS.md). The file is "
        "validated whole first; on any problem nothing is imported and every problem is "
        "listed as FILE:LINE: field: message."
    )

    name_argument = "slug"
    name_help = "the batch's slug"
    file_help = "a .jsonl or .csv file of items"

    def add_options(self, parser):
        parser.add_argument(
            "--publish",
            action="store_true",
            help="make the batch live once the items are in (a rejected file publishes nothing)",
        )

    def import_file(self, slug, file, *, actor, progress, **options) -> str:
        batch = existing(Batch, "batch", slug=slug)
        summary = import_items(batch, file, actor=actor)
        return (
            f"Imported {plural(summary.items_created, 'item', 'items')} into {batch.slug} "
            f"({plural(summary.queries_created, 'query', 'queries')}, "
            f"{plural(summary.responses_created, 'response', 'responses')} new)"
        )

    def after_import(self, slug, *, publish: bool = False, **options) -> None:
        if publish:
            self._publish(Batch.objects.get(slug=slug))

    def _publish(self, batch: Batch) -> None:
        previous_state = batch.state
        try:
            batch = change_state(batch, BatchState.LIVE, actor=Actor.command_line())
        except ServiceError as error:
            raise CommandError(
                f"the items were imported, but {batch.slug} was not published: {error}"
            ) from error
        self.stdout.write(state_change_summary(batch, previous_state))
