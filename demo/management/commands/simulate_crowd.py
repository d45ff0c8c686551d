"""``manage.py simulate_crowd <slug>``: a dry run of a study design with simulated people
(``demo.simulation``), then what the study promises, checked."""

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Batch
from core.errors import ServiceError
from demo.simulation import simulate


class Command(BaseCommand):
    help = (
        "Simulated people rate a live batch through the crowd's own services until it hands "
        "out no more work (some leave halfway, returning the study), then the command says "
        "whether every item has exactly N counted labels, how many bundles each person "
        "rated and how evenly positions are spread. For a dry run of a design: a batch "
        "holding real workers' labels is refused."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument(
            "--leave-share", type=float, default=0.2,
            help="share of the people who leave halfway (default 0.2)",
        )  # fmt: skip
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, **options):
        batch = Batch.objects.filter(slug=options["slug"]).first()
        if batch is None:
            raise CommandError(f"no batch {options['slug']!r}")
        if not 0 <= options["leave_share"] < 1:
            raise CommandError("--leave-share must be at least 0 and below 1")
        try:
            outcome = simulate(batch, leave_share=options["leave_share"], seed=options["seed"])
        except ServiceError as error:
            raise CommandError(f"{batch.slug}: {error}") from error
        for line in outcome.lines(batch):
            self.stdout.write(line)
        if outcome.items_exactly_n != outcome.items:
            raise CommandError("not every item has exactly N counted labels")
