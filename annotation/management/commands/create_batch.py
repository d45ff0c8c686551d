"""``manage.py create_batch SLUG --kind KIND [...]``: create a batch (kinds: ``TASK_KINDS``)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation import settings_spec
from annotation.kinds import all_kinds
from annotation.models import DEFAULT_ANNOTATIONS_PER_ITEM, DEFAULT_LEASE_SECONDS
from annotation.services import languages, questionnaire
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
        design = parser.add_argument_group("study design, quality control, crowd platforms")
        for setting in settings_spec.DESIGN:
            setting.add_flag(design)
        design.add_argument(
            "--questionnaire", metavar="FILE", help="a YAML or JSON list of background questions"
        )
        parser.add_argument(
            "--translations",
            metavar="FILE",
            help="YAML or JSON: per language code, the batch's texts in it (docs/FORMATS.md)",
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


def _design(options: dict) -> dict:
    """The design settings given as flags (``settings_spec``), the reward and the
    questionnaire file."""
    design = {}
    for setting in settings_spec.DESIGN:
        value = setting.flag_value(options)
        if value is not None:
            design[setting.name] = value
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
    if options.get("translations"):
        path = Path(options["translations"])
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"--translations: cannot read {path}: {error}") from error
        try:
            design["translations"] = languages.parse_translations(text)
        except ServiceError as error:
            raise CommandError(f"--translations: {error}") from error
    return design
