"""``manage.py batch_state SLUG live|paused|closed``: publish, pause, resume or close a batch.

The same rules and messages as the batch page's buttons and ``POST /api/v1/batches/<slug>/
state`` (``annotation.services.batches.change_state``), recorded in the audit trail as
the command line. ``publish``, ``pause``, ``resume`` and ``close`` are accepted as well.
"""

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Batch, BatchState
from annotation.services.batches import change_state, state_change_summary
from core.audit import Actor
from core.commands import existing
from core.errors import ServiceError

# What each word asks for; "resume" is "live" for a paused batch only (as on the page).
STATE_WORDS = {
    BatchState.LIVE: BatchState.LIVE,
    BatchState.PAUSED: BatchState.PAUSED,
    BatchState.CLOSED: BatchState.CLOSED,
    "publish": BatchState.LIVE,
    "pause": BatchState.PAUSED,
    "resume": BatchState.LIVE,
    "close": BatchState.CLOSED,
}


class Command(BaseCommand):
    help = (
        "Move a batch to another state: live (alias publish, or resume a paused batch), "
        "paused (pause) or closed (close, for good). Publishing needs at least one item."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the batch's slug")
        parser.add_argument("state", choices=list(STATE_WORDS), help="the state to move to")

    def handle(self, *args, slug: str, state: str, **options):
        batch = existing(Batch, "batch", slug=slug)
        if state == "resume" and batch.state != BatchState.PAUSED:
            raise CommandError(
                f"state: only a paused batch can be resumed; {batch.slug} is {batch.state}"
                + (" (publish it instead)" if batch.state == BatchState.DRAFT else "")
            )
        previous_state = batch.state
        try:
            batch = change_state(batch, STATE_WORDS[state], actor=Actor.command_line())
        except ServiceError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(state_change_summary(batch, previous_state))
