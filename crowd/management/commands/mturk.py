"""``manage.py mturk create-hit|sync|review|bonus SLUG``: the batch on Amazon Mechanical Turk.

* ``create-hit SLUG --base-url https://… --reward 1.50 [--frame-height 800]
  [--max-assignments N] [--lifetime-days 7] [--apply]`` — a HIT showing the batch's link,
  as many assignments as the batch needs, and a qualification keeping earlier workers out;
* ``sync SLUG`` — the assignments' statuses (and the qualification for new workers);
* ``review SLUG [--reject-failed-checks] [--apply]`` — approve / reject as proposed;
* ``bonus SLUG (--per-item AMOUNT | --top-up-hourly RATE) [--apply]`` — one
  ``send_bonus`` per worker with a ``UniqueRequestToken``.

The sandbox unless ``MTURK_SANDBOX=0``. Without ``--apply`` nothing changes on MTurk.
"""

from django.core.management.base import BaseCommand, CommandError

from core.audit import Actor
from core.errors import ServiceError
from crowd import commands
from crowd.models import BonusRun, Platform
from crowd.services import bonuses, mturk
from crowd.services.places import plan_places
from crowd.services.review import propose


class Command(BaseCommand):
    help = "Create HITs, sync, review and pay bonuses of a batch on Amazon Mechanical Turk."

    def add_arguments(self, parser):
        actions = commands.action_parsers(
            parser, ("create-hit", "sync", "review", "bonus"), "MTurk"
        )
        hit = actions["create-hit"]
        hit.add_argument("--base-url", required=True, help="the site's https:// address")
        hit.add_argument("--reward", type=commands.amount, required=True, help="USD per assignment")
        hit.add_argument("--frame-height", type=int, default=800)
        hit.add_argument("--max-assignments", type=int, default=None)
        hit.add_argument("--lifetime-days", type=int, default=7)
        hit.add_argument("--title", default="")
        actions["review"].add_argument("--reject-failed-checks", action="store_true")
        commands.bonus_basis_arguments(actions["bonus"], required=True)

    def handle(self, *args, action: str, slug: str, **options):
        from botocore.exceptions import BotoCoreError, ClientError

        batch = commands.batch_or_error(slug)
        try:
            getattr(self, "_" + action.replace("-", "_"))(batch, Actor.command_line(), options)
        except (ServiceError, ClientError, BotoCoreError) as failed:
            raise CommandError(str(failed)) from failed

    def _client(self):
        return mturk.make_client()

    def _where(self) -> str:
        return f"MTurk {'sandbox' if 'sandbox' in mturk.endpoint_url() else 'production'}"

    def _create_hit(self, batch, actor, options):
        needed = options["max_assignments"]
        if needed is None:
            plan = plan_places(batch)
            needed = plan.needed
            self.stdout.write(
                f"Assignments needed: {needed if needed is not None else 'unknown'} — {plan.why}."
            )
        url = mturk.hit_url(batch, options["base_url"])
        self.stdout.write(
            f"HIT on {self._where()}: {url} in a {options['frame_height']} px frame, reward "
            f"{options['reward']:.2f} USD, {needed} assignments, earlier workers kept out."
        )
        if not options["apply"]:
            self.stdout.write("Dry run: nothing created (add --apply).")
            return
        hit = mturk.create_hit(
            batch,
            self._client(),
            base_url=options["base_url"],
            reward=options["reward"],
            actor=actor,
            frame_height=options["frame_height"],
            lifetime_seconds=options["lifetime_days"] * 24 * 3600,
            max_assignments=needed,
            title=options["title"],
        )
        self.stdout.write(f"Created HIT {hit.hit_id} ({hit.max_assignments} assignments).")

    def _sync(self, batch, actor, options):
        summary = mturk.sync(batch, self._client(), actor=actor)
        self.stdout.write(
            f"Synced {summary['assignments']} assignments of {batch.slug}; "
            f"{summary['released']} lease(s) released."
        )

    def _review(self, batch, actor, options):
        client = self._client()
        reject = options["reject_failed_checks"]
        if options["apply"]:
            outcome = mturk.apply_review(batch, client, actor=actor, reject_failed_checks=reject)
            self.stdout.write(
                f"Approved {outcome['approved']}, rejected {outcome['rejected']}; refused "
                f"{outcome['refused']}, no answer {outcome['unknown']}."
            )
            return
        mturk.sync(batch, client, actor=actor)
        for line in commands.review_table(
            propose(batch, Platform.MTURK, reject_failed_checks=reject)
        ):
            self.stdout.write(line)
        self.stdout.write("Dry run: nothing changed on MTurk (add --apply).")

    def _bonus(self, batch, actor, options):
        basis, rate = commands.basis_and_rate(options)
        client = self._client()
        mturk.sync(batch, client, actor=actor)
        if not options["apply"]:
            for line in commands.bonus_table(
                bonuses.compute(batch, Platform.MTURK, basis, rate), "USD"
            ):
                self.stdout.write(line)
            self.stdout.write("Preview: nothing paid (add --apply).")
            return
        pending = bonuses.unsettled_run(batch, Platform.MTURK)
        if pending is not None:
            self.stdout.write(f"Resuming bonus run {pending.pk} (same request tokens).")
        rows, run = bonuses.pay_owed(batch, Platform.MTURK, basis, rate, client=client, actor=actor)
        for line in commands.bonus_table(rows, "USD") if rows else []:
            self.stdout.write(line)
        if run is None:
            self.stdout.write("Nobody is owed anything: nothing paid.")
            return
        self.stdout.write(f"Bonus run {run.pk}: {run.state} ({run.detail}).")
        if run.state == BonusRun.State.UNKNOWN:
            raise CommandError(
                "some bonuses got no answer: run the same command again within 24 hours "
                "(their tokens make a repeat harmless)"
            )
