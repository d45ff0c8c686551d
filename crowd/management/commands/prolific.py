"""``manage.py prolific sync|review|bonus|places SLUG``: the batch's Prolific study.

* ``sync SLUG`` — read every submission's status; returned, timed-out and rejected
  participants give back their open lease at once;
* ``review SLUG [--reject-failed-checks] [--apply]`` — the proposed action for every
  submission awaiting review; ``--apply`` performs it (bulk approval, transitions);
* ``bonus SLUG (--per-item AMOUNT | --top-up-hourly RATE) [--apply]`` — preview (with the
  total) or pay through Prolific's two steps; ``--resolve RUN paid|unpaid`` settles a run
  whose outcome was lost, after checking on Prolific;
* ``places SLUG [--margin 0.1] [--apply]`` — the places the study needs, and pause/resume
  with the batch.

Without ``--apply`` nothing is changed on Prolific. Every change is in the batch's History.
"""

from django.core.management.base import BaseCommand, CommandError

from core.audit import Actor
from core.errors import ServiceError
from crowd import commands
from crowd.models import BonusRun, Platform
from crowd.services import bonuses, places
from crowd.services.prolific_client import Ambiguous, NotConfigured, ProlificClient, ProlificError
from crowd.services.review import apply_prolific, propose
from crowd.services.submissions import sync_prolific


class Command(BaseCommand):
    help = "Sync, review, pay bonuses and set places of a batch's Prolific study."

    def add_arguments(self, parser):
        actions = commands.action_parsers(parser, ("sync", "review", "bonus", "places"), "Prolific")
        actions["review"].add_argument("--reject-failed-checks", action="store_true")
        group = commands.bonus_basis_arguments(actions["bonus"], required=False)
        group.add_argument("--resolve", nargs=2, metavar=("RUN", "paid|unpaid"))
        actions["places"].add_argument("--margin", type=float, default=None)

    def handle(self, *args, action: str, slug: str, **options):
        batch = commands.batch_or_error(slug)
        if not batch.prolific_study_id and not options.get("resolve"):
            raise CommandError(
                f"prolific_study_id: {batch.slug} has none; set it (Edit tab, the API, or "
                "create_batch --prolific-study-id)"
            )
        actor = Actor.command_line()
        try:
            getattr(self, f"_{action}")(batch, actor, options)
        except (NotConfigured, ProlificError, Ambiguous, ServiceError) as failed:
            raise CommandError(str(failed)) from failed

    def _client(self):
        return ProlificClient()

    def _sync(self, batch, actor, options):
        summary = sync_prolific(batch, self._client(), actor=actor)
        statuses = ", ".join(f"{s} {n}" for s, n in sorted(summary["statuses"].items())) or "none"
        self.stdout.write(
            f"Synced {summary['submissions']} submissions of {batch.slug} ({statuses}); "
            f"{summary['released']} lease(s) released."
        )

    def _review(self, batch, actor, options):
        reject = options["reject_failed_checks"]
        client = self._client()
        if options["apply"]:
            outcome = apply_prolific(batch, client, actor=actor, reject_failed_checks=reject)
            self.stdout.write(
                f"Approved {outcome['approved']}, screened out {outcome['screened_out']}, "
                f"rejected {outcome['rejected']}; refused {outcome['refused']}, "
                f"no answer {outcome['unknown']}."
            )
            return
        sync_prolific(batch, client, actor=actor)
        for line in commands.review_table(
            propose(batch, Platform.PROLIFIC, reject_failed_checks=reject)
        ):
            self.stdout.write(line)
        self.stdout.write("Dry run: nothing changed on Prolific (add --apply).")

    def _bonus(self, batch, actor, options):
        if options.get("resolve"):
            run_id, outcome = options["resolve"]
            run = bonuses.resolve(batch, int(run_id), outcome, actor=actor)
            self.stdout.write(f"Bonus run {run.pk} is now {run.state}.")
            return
        basis, rate = commands.basis_and_rate(options)
        client = self._client()
        sync_prolific(batch, client, actor=actor)
        if not options["apply"]:
            pending = bonuses.unsettled_run(batch, Platform.PROLIFIC)
            if pending is not None:
                self.stdout.write(bonuses.how_to_settle(batch, pending))
            for line in commands.bonus_table(
                bonuses.compute(batch, Platform.PROLIFIC, basis, rate), batch.reward_currency
            ):
                self.stdout.write(line)
            self.stdout.write("Preview: nothing paid (add --apply).")
            return
        rows, run = bonuses.pay_owed(
            batch, Platform.PROLIFIC, basis, rate, client=client, actor=actor
        )
        for line in commands.bonus_table(rows, batch.reward_currency) if rows else []:
            self.stdout.write(line)
        if run is None:
            self.stdout.write("Nobody is owed anything: nothing paid.")
            return
        total = sum(line.amount for line in run.lines.all())
        fees = (
            f" (Prolific's total with fees: {run.platform_total} minor units)"
            if run.platform_total is not None
            else ""
        )
        currency = f" {batch.reward_currency}" if batch.reward_currency else ""
        self.stdout.write(f"Bonus run {run.pk}: {run.state}, {total:.2f}{currency}{fees}.")
        if run.state == BonusRun.State.UNKNOWN:
            raise CommandError(run.detail)
        if run.state in (BonusRun.State.FAILED, BonusRun.State.ABANDONED):
            raise CommandError(f"nothing paid: {run.detail}")

    def _places(self, batch, actor, options):
        client = self._client()
        sync_prolific(batch, client, actor=actor)
        plan = places.plan_places(batch, options["margin"])
        study = client.study(batch.prolific_study_id)
        self.stdout.write(
            f"Study {batch.prolific_study_id}: {study.get('status')}, places "
            f"{study.get('total_available_places')} (taken {study.get('places_taken')})."
        )
        self.stdout.write(
            f"Needed: {plan.total if plan.total is not None else 'unknown'} — {plan.why}."
        )
        wanted = places.desired_study_status(batch)
        self.stdout.write(f"The study should be {wanted} (batch {batch.state}).")
        if not options["apply"]:
            self.stdout.write("Dry run: nothing changed on Prolific (add --apply).")
            return
        done = places.follow_batch(
            batch, client, actor=actor, places=True, margin=options["margin"], study=study
        )
        self.stdout.write(
            f"Places: {done['places'] if done['places'] is not None else 'unchanged'}; "
            f"study: {done['transition'] or 'unchanged'}."
        )
