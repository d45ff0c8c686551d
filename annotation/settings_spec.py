"""One declaration per study-design setting of a batch (docs/SPEC.md, "Measurement
validity" and "Crowd platforms").

Each ``BatchSetting`` names the setting (the model field, the API field and the page's
form field all carry this name), its default, its value rule (``annotation.setting_rules``),
the label and help of its form field, and its ``create_batch`` flag. From these:

* ``services.batches`` takes the rules and defaults (``DESIGN_SETTINGS``,
  ``DESIGN_DEFAULTS``), so every interface accepts and refuses the same values;
* ``annotation.forms`` makes the create and edit pages' fields (``form_field``);
* the ``create_batch`` command makes its flags (``add_flag``, ``flag_value``);
* the API's batch serializer lists them (``DESIGN_SETTING_NAMES``);
* the model's fields take their help and default (``model_options``).

A new setting is one entry here plus its model field, which takes its help and default
from here (``model_options``) and says only how the value is stored.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from django import forms
from django.conf import settings

from annotation import setting_rules as rules


@dataclass(frozen=True)
class BatchSetting:
    name: str
    label: str
    help: str
    rule: Callable[[str, object], None]
    default: object = None
    # the form field: "count" (a positive integer or empty), "seconds", "code", "url",
    # "flag", "share", "choice", "platforms", "amount", "currency", "questionnaire",
    # "languages" (ticked codes; the flag takes them comma separated), "translations"
    # (a YAML or JSON text on the pages; the flag names a file)
    shape: str = "count"
    minimum: int | None = None  # the form field's least value (counts)
    choices: tuple[tuple[str, str], ...] = ()
    flag_help: str = ""  # the create_batch flag's help; empty: no plain flag
    normalise: Callable[[object], object] | None = None  # applied to the form's value
    extra: dict = field(default_factory=dict)  # further form field arguments

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    # ----------------------------------------------------------------- the pages

    def form_field(self) -> forms.Field:
        """The field of the create and edit pages (never required: empty = default)."""
        common = {"label": self.label, "help_text": self.help, "required": False, **self.extra}
        shape = self.shape
        if shape == "count":
            return forms.IntegerField(min_value=self.minimum or 1, **common)
        if shape == "seconds":
            return forms.IntegerField(
                min_value=0, max_value=rules.MAX_WAIT_SECONDS, initial=self.default, **common
            )
        if shape in ("code", "currency"):
            limit = 3 if shape == "currency" else rules.MAX_CODE_CHARS
            return forms.CharField(max_length=limit, **common)
        if shape == "url":
            return forms.URLField(max_length=rules.MAX_URL_CHARS, assume_scheme="https", **common)
        if shape == "flag":
            return forms.BooleanField(**common)
        if shape == "share":
            return forms.FloatField(min_value=0.01, max_value=1, **common)
        if shape == "choice":
            return forms.ChoiceField(choices=self.choices, initial=self.default, **common)
        if shape == "platforms":
            return forms.MultipleChoiceField(
                choices=self.choices, widget=forms.CheckboxSelectMultiple, **common
            )
        if shape == "amount":
            return forms.DecimalField(min_value=0, max_digits=10, decimal_places=2, **common)
        if shape == "languages":
            return forms.MultipleChoiceField(
                choices=self.choices, widget=forms.CheckboxSelectMultiple, **common
            )
        if shape in ("questionnaire", "translations"):
            return forms.CharField(
                widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}), **common
            )
        raise ValueError(f"{self.name}: unknown form shape {shape!r}")

    def from_form(self, value):
        """The form's cleaned value as the setting's value: empty is the default."""
        if value in (None, "") and self.default is not None:
            value = self.default
        return self.normalise(value) if self.normalise and value is not None else value

    # ----------------------------------------------------------------- the model

    def model_options(self) -> dict:
        """The model field's help and default, as declared here: ``help_text``, and for a
        setting with a default, ``default`` and ``db_default`` (an empty list or dict as
        its type, so that no two batches share one). The field itself says only how the
        value is stored (its type, length, null)."""
        options = {"help_text": self.help}
        if self.default is not None:
            empty_container = isinstance(self.default, list | dict) and not self.default
            default = type(self.default) if empty_container else self.default
            options.update(default=default, db_default=self.default)
        return options

    # ----------------------------------------------------------------- the command line

    def add_flag(self, group) -> None:
        """Add the plain ``create_batch`` flag of this setting (if it has one)."""
        if not self.flag_help:
            return
        if self.shape == "flag":
            group.add_argument(self.flag, action="store_true", help=self.flag_help)
        elif self.shape == "platforms":
            group.add_argument(
                self.flag.removesuffix("s"),
                dest=self.name,
                action="append",
                choices=[value for value, _ in self.choices],
                help=self.flag_help,
            )
        elif self.shape == "languages":
            group.add_argument(self.flag, type=_codes, metavar="CODE,CODE", help=self.flag_help)
        elif self.shape == "choice":
            group.add_argument(
                self.flag, choices=[value for value, _ in self.choices], help=self.flag_help
            )
        else:
            kind = {"count": int, "seconds": int, "share": float}.get(self.shape, str)
            group.add_argument(self.flag, type=kind, help=self.flag_help)

    def flag_value(self, options: dict):
        """The flag's value from parsed options, or ``None`` when it was not given."""
        value = options.get(self.name)
        if self.shape == "flag":
            return True if value else None
        return value


def _codes(value: str) -> list[str]:
    return [code.strip() for code in value.split(",") if code.strip()]


def _upper(value):
    return str(value).strip().upper()


PLATFORM_CHOICES = (("prolific", "Prolific links"), ("mturk", "MTurk links"))
LANGUAGE_CHOICES = tuple((code, f"{name} ({code})") for code, name in settings.LANGUAGES)

DESIGN = (
    BatchSetting(
        "check_every",
        "Attention check every K items",
        "Each worker meets one check item after about every K items; empty: none.",
        rules.optional_positive,
        flag_help="one attention check after about every K items",
    ),
    BatchSetting(
        "exclude_after_failed_checks",
        "Exclude after F failed checks",
        "At the F-th failed check the worker is excluded and their slots reopen.",
        rules.optional_positive,
        flag_help="exclude a worker at their F-th failed check",
    ),
    BatchSetting(
        "screen_out_code",
        "Screen-out code",
        "Shown to excluded workers (Prolific's code for screened-out participants).",
        rules.code,
        default="",
        shape="code",
        flag_help="the code shown to excluded (screened-out) workers",
    ),
    BatchSetting(
        "full_code",
        "Code when full",
        "Only if your platform requires a code from workers who got no item.",
        rules.code,
        default="",
        shape="code",
        flag_help="a code for workers who got no item (if the platform needs one)",
    ),
    BatchSetting(
        "min_seconds_per_item",
        "Minimum seconds per item",
        "Faster labels are flagged as too fast.",
        rules.optional_positive,
        flag_help="flag labels faster than this",
    ),
    BatchSetting(
        "straightline_run",
        "Straight-line run",
        "A run of this many identical labels in a row is flagged.",
        rules.optional_positive,
        minimum=2,
        flag_help="flag runs of this many identical labels",
    ),
    BatchSetting(
        "flag_policy",
        "Flag policy",
        "",
        rules.flag_policy,
        default="flag",
        shape="choice",
        choices=(("flag", "Flag only"), ("exclude", "Exclude when too many are flagged")),
        flag_help="what flags lead to (default flag)",
    ),
    BatchSetting(
        "flagged_share_to_exclude",
        "Flagged share that excludes",
        "With “exclude”: more than this share of flagged labels excludes (e.g. 0.5).",
        rules.share,
        shape="share",
        flag_help="with --flag-policy exclude: the share that excludes",
    ),
    BatchSetting(
        "max_concurrent_annotators",
        "Most workers at once",
        "Others are asked to wait, then to come back later; empty: no limit.",
        rules.optional_positive,
        flag_help="most workers holding a lease at once",
    ),
    BatchSetting(
        "max_lease_seconds",
        "Longest lease with heartbeats (seconds)",
        "A visible page keeps its item up to this long; empty: 3 × the lease time.",
        rules.optional_positive,
        flag_help="longest a visible page keeps its item (default 3 x lease)",
    ),
    BatchSetting(
        "questionnaire",
        "Background questionnaire",
        "YAML or JSON list of questions (id, text, type choice|number|text, options, "
        "required); asked once after consent. See docs/FORMATS.md.",
        lambda field, value: None,  # services.questionnaire.clean_definition checks it
        default=[],
        shape="questionnaire",
    ),  # create_batch: --questionnaire FILE
    BatchSetting(
        "repeat_every",
        "Repeat an item every R items",
        "Shows a worker an item they labelled before, for test–retest; empty: none.",
        rules.optional_positive,
        flag_help="show an earlier item again after about every R items",
    ),
    BatchSetting(
        "review_lowest_competence",
        "Competence review list",
        "The analysis lists this many annotators of lowest competence (MACE) for someone to "
        "read their labels — never an exclusion: disagreement is expected. Empty: no list.",
        rules.optional_positive,
        flag_help="list the K annotators of lowest competence for review (never excludes)",
    ),
    BatchSetting(
        "invitations_required",
        "Personal invitations only",
        "Only signed invitation links work: ?worker= links and the crowd platforms' links "
        "are refused, unless a platform is ticked below.",
        rules.flag,
        default=False,
        shape="flag",
        flag_help="only signed invitation links (manage.py invitations) enter",
    ),
    BatchSetting(
        "accept_platforms",
        "Also admit, with invitations only",
        "An invitation-only batch admits invitation links only, unless a platform is "
        "ticked here (a Prolific link must then carry this batch's Prolific study id).",
        rules.platforms,
        default=[],
        shape="platforms",
        choices=PLATFORM_CHOICES,
        flag_help="with --invitations-required: also admit this platform's links (repeatable)",
    ),
    BatchSetting(
        "screen_out_url",
        "Screen-out URL",
        "Where the button on the screen-out page leads (Prolific: the link with the "
        "screen-out code).",
        rules.url,
        default="",
        shape="url",
        flag_help="where the screen-out page's button leads",
    ),
    BatchSetting(
        "wait_for_release_seconds",
        "Wait for a slot (seconds)",
        "When every remaining slot is held by others' leases, a newcomer waits this long "
        "for one to come back before being told the study is full.",
        rules.seconds,
        default=120,
        shape="seconds",
        flag_help="how long a newcomer waits for a held slot (default 120)",
    ),
    BatchSetting(
        "prolific_study_id",
        "Prolific study id",
        "The study's id on Prolific (its STUDY_ID): links must carry it, and the "
        "platform's API is used for it when configured.",
        rules.study_id,
        default="",
        shape="code",
        flag_help="the Prolific study this batch runs as (its STUDY_ID)",
    ),
    BatchSetting(
        "bundle_by",
        "Bundles",
        "none: items one at a time; query: each participant rates all the responses to "
        "one query together; meta:KEY: the items sharing an item metadata value.",
        rules.bundle_by,
        default="none",
        shape="code",
        flag_help="none (default), query, or meta:KEY: rate these items together",
    ),
    BatchSetting(
        "bundles_per_participant",
        "Bundles per participant",
        "Most bundles one person rates; empty: no limit (the Infinity-Chat design: 1).",
        rules.optional_positive,
        flag_help="most bundles one participant rates",
    ),
    BatchSetting(
        "bundle_order",
        "Order within a bundle",
        "random: shuffled per participant; balanced: each item at each position equally "
        "often over a bundle's participants; imported: the file's order.",
        rules.bundle_order,
        default="random",
        shape="choice",
        choices=(("random", "Random"), ("balanced", "Balanced"), ("imported", "Imported")),
        flag_help="random (default), balanced or imported",
    ),
    BatchSetting(
        "allow_cant_judge",
        "Offer “I can't judge this”",
        "Annotators may pass on an item they cannot judge: stored as cant_judge, never "
        "counted, and its slot goes to someone else.",
        rules.flag,
        default=False,
        shape="flag",
        flag_help="offer an “I can't judge this” choice (never counted; the slot is refilled)",
    ),
    BatchSetting(
        "comment_box",
        "Comment box",
        "optional: a box under each item for a short note on why (exported as comment).",
        rules.comment_box,
        default="none",
        shape="choice",
        choices=(("none", "None"), ("optional", "Optional comment")),
        flag_help="none (default) or optional: a note per item",
    ),
    BatchSetting(
        "reward_per_participant",
        "Reward per participant",
        "What one participant is paid, for the effective hourly pay shown here.",
        rules.reward,
        shape="amount",
    ),  # create_batch: --reward-per-participant AMOUNT CURRENCY sets it with the next
    BatchSetting(
        "reward_currency",
        "Reward currency",
        "Three letters, e.g. GBP or USD.",
        rules.currency,
        default="",
        shape="currency",
        normalise=_upper,
    ),
    BatchSetting(
        "languages",
        "Languages offered",
        "A participant gets the first of these their browser asks for, else the default "
        "language; none ticked: the default language only. See docs/SPEC.md, “Languages”.",
        rules.languages,
        default=[],
        shape="languages",
        choices=LANGUAGE_CHOICES,
        flag_help="the languages participants may get, e.g. en,ja,ar (default: --language)",
    ),
    BatchSetting(
        "language",
        "Default language",
        "The language of the batch's own texts, for participants whose browser asks for "
        "none of the offered ones; empty: the first offered, else English.",
        rules.language,
        default="",
        shape="choice",
        choices=(("", "—"), *LANGUAGE_CHOICES),
        flag_help="the default language's code (default: the first offered, else en)",
    ),
    BatchSetting(
        "translations",
        "Translations of the batch's texts",
        "YAML or JSON: per language code, any of instructions, consent_text, scale_labels "
        "(value: text) and questionnaire (the same questions, their texts and options "
        "translated). A text not given is shown as written above. See docs/FORMATS.md.",
        lambda field, value: None,  # services.languages.clean_translations checks it
        default={},
        shape="translations",
    ),  # create_batch: --translations FILE
)

BY_NAME = {setting.name: setting for setting in DESIGN}
DESIGN_SETTING_NAMES = tuple(BY_NAME)


def model_options(name: str) -> dict:
    """The model field options of the setting ``name`` (``BatchSetting.model_options``)."""
    return BY_NAME[name].model_options()


def design_summary(batch) -> list[tuple[str, str]]:
    """(label, value) of each study-design setting of ``batch`` that is not at its
    default, in declaration order, for the batch page's "Study design" list: what the
    study does beyond handing out items, at a glance before publishing."""
    rows = []
    for setting in DESIGN:
        value = getattr(batch, setting.name)
        if value in (None, "", [], False) or value == setting.default:
            continue
        if setting.name == "questionnaire":
            shown = f"{len(value)} question{'s' if len(value) != 1 else ''}"
        elif setting.shape == "choice":
            shown = dict(setting.choices).get(value, str(value))
        elif setting.shape in ("platforms", "languages"):
            shown = ", ".join(dict(setting.choices).get(name, name) for name in value)
        elif setting.shape == "translations":  # the languages it translates into
            shown = ", ".join(dict(LANGUAGE_CHOICES).get(code, code) for code in sorted(value))
        elif setting.shape == "flag":
            shown = "yes"
        else:
            shown = str(value)
        rows.append((setting.label, shown))
    return rows
