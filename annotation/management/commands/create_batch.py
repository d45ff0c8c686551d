"""``manage.py create_batch SLUG --kind KIND [...]``: create a batch (kinds: ``TASK_KINDS``)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.kinds import all_kinds
from annotation.models import DEFAULT_ANNOTATIONS_PER_ITEM, DEFAULT_LEASE_SECONDS
from annotation.services import questionnaire
from annotation.services.batches import change_state, create_batch
from core.audit import Actor
from core.errors import ServiceError


class Command(BaseCommand):
    help = "Create a batch (a draft unless --live is given and it can be published)."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="lower-case letters, digits and hyphens")
        parser.add_argument("--kind", required=True, choices=list(all_kinds()))
        parser.add_argument(
            "--kind-setting",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="a setting of the kind, e.g. max_words=1 (repeatable)",
        )
        parser.add_argument(
            "--per-item",
            type=int,
            default=DEFAULT_ANNOTATIONS_PER_ITEM,
            help=f"labels per item, N (default {DEFAULT_ANNOTATIONS_PER_ITEM})",
        )
        parser.add_argument("--title", default="", help="shown to annotators (default: slug)")
        parser.add_argument("--instructions", metavar="FILE", help="a Markdown file")
        parser.add_argument(
            "--lease-seconds",
            type=int,
            default=DEFAULT_LEASE_SECONDS,
            help=f"how long an annotator holds an item (default {DEFAULT_LEASE_SECONDS})",
        )
        parser.add_argument("--quota", type=int, help="most items one annotator may label")
        parser.add_argument("--completion-url", default="", help="where finished workers go")
        parser.add_argument("--completion-code", default="", help="default: a random code")
        design = parser.add_argument_group("study design and quality control")
        for flag, kind, text in DESIGN_FLAGS:
            design.add_argument(flag, type=kind, help=text)
        design.add_argument(
            "--flag-policy", choices=["flag", "exclude"], help="what flags lead to (default flag)"
        )
        design.add_argument(
            "--questionnaire", metavar="FILE", help="a YAML or JSON list of background questions"
        )
        design.add_argument(
            "--invitations-required",
            action="store_true",
            help="refuse ?worker= links: only signed invitation links (manage.py invitations)",
        )
        design.add_argument(
            "--accept-platform",
            action="append",
            choices=["prolific", "mturk"],
            help="with --invitations-required: also admit this platform's links (repeatable)",
        )
        design.add_argument(
            "--reward-per-participant",
            nargs=2,
            metavar=("AMOUNT", "CURRENCY"),
            help="what one participant is paid, e.g. 2.50 GBP (for the fair-pay figures)",
        )
        parser.add_argument(
            "--live",
            action="store_true",
            help="publish at once (needs items, so only for a batch that already has some)",
        )

    def handle(self, *args, **options):
        slug = options["slug"]
        instructions = ""
        if options["instructions"]:
            path = Path(options["instructions"])
            try:
                instructions = path.read_text(encoding="utf-8")
            except OSError as error:
                raise CommandError(
                    f"--instructions: cannot read {path}: {error.strerror}"
                ) from error
            except UnicodeDecodeError as error:
                raise CommandError(f"--instructions: {path} is not UTF-8 text") from error
        try:
            batch = create_batch(
                slug=slug,
                kind=options["kind"],
                title=options["title"],
                annotations_per_item=options["per_item"],
                instructions=instructions,
                lease_seconds=options["lease_seconds"],
                quota_per_annotator=options["quota"],
                completion_url=options["completion_url"],
                completion_code=options["completion_code"],
                kind_settings=_kind_settings(options["kind_setting"]),
                actor=Actor.command_line(),
                **_design(options),
            )
        except ServiceError as error:
            raise CommandError(str(error)) from error
        if options["live"]:
            try:
                batch = change_state(batch, "live", actor=Actor.command_line())
            except ServiceError as error:
                raise CommandError(
                    f"batch '{batch.slug}' was created as a draft but not published: {error}"
                ) from error
        self.stdout.write(
            f"Created {batch.kind} batch {batch.slug} ({batch.state}, "
            f"{batch.annotations_per_item} labels per item, "
            f"completion code {batch.completion_code})"
        )


def _kind_settings(pairs: list[str]) -> dict:
    settings = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name.strip():
            raise CommandError(f"--kind-setting: give NAME=VALUE, got {pair!r}")
        settings[name.strip()] = value.strip()
    return settings


# (flag, type, help) of the design settings given as numbers or text
DESIGN_FLAGS = [
    ("--check-every", int, "one attention check after about every K items"),
    ("--exclude-after-failed-checks", int, "exclude a worker at their F-th failed check"),
    ("--screen-out-code", str, "the code shown to excluded (screened-out) workers"),
    ("--full-code", str, "a code for workers who got no item (if the platform needs one)"),
    ("--min-seconds-per-item", int, "flag labels faster than this"),
    ("--straightline-run", int, "flag runs of this many identical labels"),
    ("--flagged-share-to-exclude", float, "with --flag-policy exclude: the share that excludes"),
    ("--max-concurrent-annotators", int, "most workers holding a lease at once"),
    ("--max-lease-seconds", int, "longest a visible page keeps its item (default 3 x lease)"),
    ("--repeat-every", int, "show an earlier item again after about every R items"),
    ("--screen-out-url", str, "where the screen-out page's button leads"),
    ("--wait-for-release-seconds", int, "how long a newcomer waits for a held slot (default 120)"),
    ("--prolific-study-id", str, "the Prolific study this batch runs as (its STUDY_ID)"),
]


def _design(options: dict) -> dict:
    design = {}
    for flag, _, _ in DESIGN_FLAGS:
        name = flag.removeprefix("--").replace("-", "_")
        if options.get(name) is not None:
            design[name] = options[name]
    if options.get("flag_policy"):
        design["flag_policy"] = options["flag_policy"]
    if options.get("invitations_required"):
        design["invitations_required"] = True
    if options.get("accept_platform"):
        design["accept_platforms"] = options["accept_platform"]
    if options.get("reward_per_participant"):
        amount, currency = options["reward_per_participant"]
        design["reward_per_participant"] = amount
        design["reward_currency"] = currency.upper()
    if options.get("questionnaire"):
        path = Path(options["questionnaire"])
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"--questionnaire: cannot read {path}: {error}") from error
        try:
            design["questionnaire"] = questionnaire.parse_file_text(text, str(path))
        except ServiceError as error:
            raise CommandError(f"--questionnaire: {error}") from error
    return design
