"""Data of the annotation study and the invariants the database holds by itself.

The exactly-N guarantee rests on two counters per item, changed only by
``annotation.services.slots``, in the same transaction as the rows they count:

* ``reserved_count`` = counted labels + open leases: a slot is taken when an item is
  leased and given back when the lease expires unsubmitted;
* ``counted_count`` = counted labels.

Check constraints keep ``0 <= counted_count <= reserved_count <= target`` where ``target``
is the batch's N copied onto the item (a check constraint cannot look at another table);
``slots.change_target`` updates it together with the batch. Leasing takes a slot with a
conditional ``UPDATE ... WHERE reserved_count < target``, so even a bug in the Python code
cannot push an item over N.
"""

import secrets
import uuid

from django.conf import settings
from django.contrib.contenttypes.fields import GenericRelation
from django.db import models
from django.db.models import F, Q

from annotation.kinds import get_kind
from annotation.kinds.base import TaskKind

DEFAULT_ANNOTATIONS_PER_ITEM = 25
DEFAULT_LEASE_SECONDS = 600


def label_values(kind: str) -> list[int]:
    """The fixed label set of a choice kind, in the order the analysis uses."""
    return get_kind(kind).label_set


class BatchState(models.TextChoices):
    DRAFT = "draft", "Draft"
    LIVE = "live", "Live"
    PAUSED = "paused", "Paused"
    CLOSED = "closed", "Closed"


def new_completion_code() -> str:
    return secrets.token_hex(4).upper()


class Query(models.Model):
    """A user prompt. ``query_id`` is project-wide: the same id always means the same text.

    ``category`` and ``subcategory`` place it in the study's taxonomy (empty: none); a
    sub-category belongs to a category (imports refuse one without the other, and so does
    the database).
    """

    query_id = models.CharField(max_length=200, unique=True)
    text = models.TextField()
    category = models.CharField(max_length=200, blank=True, default="")
    subcategory = models.CharField(max_length=200, blank=True, default="", db_default="")

    class Meta:
        verbose_name_plural = "queries"
        indexes = [models.Index(fields=["category", "subcategory"], name="query_taxonomy")]
        constraints = [
            models.CheckConstraint(
                condition=Q(subcategory="") | ~Q(category=""),
                name="query_subcategory_needs_category",
            ),
        ]

    def __str__(self) -> str:
        return self.query_id


class Response(models.Model):
    """One model's answer to a query; ``response_id`` is project-wide."""

    response_id = models.CharField(max_length=200, unique=True)
    query = models.ForeignKey(Query, on_delete=models.PROTECT, related_name="responses")
    model = models.CharField(max_length=200, blank=True, default="")
    text = models.TextField()

    def __str__(self) -> str:
        return self.response_id


class Batch(models.Model):
    """A set of items of one kind published to annotators as one study."""

    slug = models.SlugField(max_length=100, unique=True)
    title = models.CharField(max_length=300)
    # a name in the TASK_KINDS registry (annotation.kinds), checked by the services
    kind = models.CharField(max_length=32)
    kind_settings = models.JSONField(
        default=dict, blank=True, help_text="The kind's own settings (e.g. max_words)."
    )
    instructions = models.TextField(blank=True, default="", help_text="Markdown")
    consent_text = models.TextField(blank=True, default="", help_text="Markdown")
    scale_labels = models.JSONField(
        default=dict,
        blank=True,
        help_text="Label value → text shown on its button; empty uses the default scale.",
    )
    annotations_per_item = models.PositiveIntegerField(default=DEFAULT_ANNOTATIONS_PER_ITEM)
    state = models.CharField(max_length=16, choices=BatchState.choices, default=BatchState.DRAFT)
    lease_seconds = models.PositiveIntegerField(default=DEFAULT_LEASE_SECONDS)
    quota_per_annotator = models.PositiveIntegerField(
        null=True, blank=True, help_text="Most items one annotator may label; empty = unlimited."
    )
    completion_code = models.CharField(max_length=100, default=new_completion_code)
    completion_url = models.URLField(max_length=500, blank=True, default="")
    # --- study design and quality control (docs/SPEC.md, "Measurement validity")
    check_every = models.PositiveIntegerField(
        null=True, blank=True, help_text="One attention check after about every K items."
    )
    exclude_after_failed_checks = models.PositiveIntegerField(
        null=True, blank=True, help_text="Exclude an annotator at their F-th failed check."
    )
    screen_out_code = models.CharField(
        max_length=100,
        blank=True,
        default="",
        db_default="",
        help_text="Code for screened-out participants.",
    )
    full_code = models.CharField(
        max_length=100,
        blank=True,
        default="",
        db_default="",
        help_text="Code shown to a worker who arrives when nothing is left for them.",
    )
    min_seconds_per_item = models.PositiveIntegerField(
        null=True, blank=True, help_text="Labels faster than this are flagged."
    )
    straightline_run = models.PositiveIntegerField(
        null=True, blank=True, help_text="A run of this many identical labels is flagged."
    )
    flag_policy = models.CharField(max_length=16, default="flag", db_default="flag")
    flagged_share_to_exclude = models.FloatField(
        null=True, blank=True, help_text="With flag_policy=exclude: the share that excludes."
    )
    max_concurrent_annotators = models.PositiveIntegerField(
        null=True, blank=True, help_text="Most workers holding a lease at once."
    )
    max_lease_seconds = models.PositiveIntegerField(
        null=True, blank=True, help_text="Heartbeats extend a lease up to this (3 × lease)."
    )
    questionnaire = models.JSONField(default=list, blank=True, db_default=[])
    repeat_every = models.PositiveIntegerField(
        null=True, blank=True, help_text="Show an earlier item again after about every R items."
    )
    invitations_required = models.BooleanField(
        default=False, db_default=False, help_text="Refuse invitation links without a token."
    )
    review_lowest_competence = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="The analysis lists this many annotators of lowest competence for review.",
    )
    # --- crowd platforms (docs/SPEC.md, "Crowd platforms")
    accept_platforms = models.JSONField(
        default=list,
        blank=True,
        db_default=[],
        help_text="With invitations_required: the platforms whose links are still admitted.",
    )
    screen_out_url = models.URLField(
        max_length=500,
        blank=True,
        default="",
        db_default="",
        help_text="Where the button on the screen-out page leads.",
    )
    wait_for_release_seconds = models.PositiveIntegerField(
        default=120,
        db_default=120,
        help_text="How long a worker waits for a slot held by another's lease before giving up.",
    )
    prolific_study_id = models.CharField(
        max_length=100,
        blank=True,
        default="",
        db_default="",
        help_text="The Prolific study this batch runs as (its STUDY_ID).",
    )
    reward_per_participant = models.DecimalField(
        max_digits=10,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="What one participant is paid for taking part (for the fair-pay figures).",
    )
    reward_currency = models.CharField(
        max_length=3, blank=True, default="", db_default="", help_text="ISO 4217, e.g. GBP."
    )
    # --- bundles: the alternatives of one query rated together (docs/SPEC.md, "Bundles")
    bundle_by = models.CharField(
        max_length=210,
        default="none",
        db_default="none",
        help_text="none, query, or meta:KEY (an item metadata key).",
    )
    bundles_per_participant = models.PositiveIntegerField(null=True, blank=True)
    bundle_order = models.CharField(max_length=16, default="random", db_default="random")
    # --- what an annotator may say besides a label
    allow_cant_judge = models.BooleanField(default=False, db_default=False)
    comment_box = models.CharField(max_length=16, default="none", db_default="none")
    # --- languages (docs/SPEC.md, "Languages")
    languages = models.JSONField(
        default=list, blank=True, db_default=[], help_text="Language codes the batch offers."
    )
    language = models.CharField(
        max_length=16, blank=True, default="", db_default="", help_text="The default language."
    )
    translations = models.JSONField(
        default=dict,
        blank=True,
        db_default={},
        help_text="Per language code: instructions, consent_text, scale_labels, questionnaire.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    # The batch's jobs (core.models.Job), deleted with it. Its audit events are kept:
    # they outlive what they describe, under their subject_label. No related_query_name:
    # Job.objects.filter(batch=...) would prepare the batch's id with Job's UUID key
    # (a wrong query, an error on PostgreSQL); ask batch.jobs instead.
    jobs = GenericRelation(
        "core.Job",
        content_type_field="subject_type",
        object_id_field="subject_id",
    )

    class Meta:
        verbose_name_plural = "batches"
        permissions = [
            ("export_batch", "Can export a batch's labels"),
            ("manage_annotators", "Can exclude and re-include annotators"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(state__in=BatchState.values), name="batch_state_known"
            ),
            models.CheckConstraint(
                condition=Q(annotations_per_item__gte=1), name="batch_n_positive"
            ),
            models.CheckConstraint(condition=Q(lease_seconds__gte=1), name="batch_lease_positive"),
            models.CheckConstraint(
                condition=Q(flag_policy__in=["flag", "exclude"]), name="batch_flag_policy_known"
            ),
            models.CheckConstraint(
                condition=Q(max_lease_seconds__isnull=True)
                | Q(max_lease_seconds__gte=F("lease_seconds")),
                name="batch_max_lease_not_below_lease",
            ),
        ]

    def __str__(self) -> str:
        return self.slug

    @property
    def lease_cap_seconds(self) -> int:
        """How long heartbeats may keep one lease alive (default: 3 × the lease time)."""
        return self.max_lease_seconds or 3 * self.lease_seconds

    @property
    def task_kind(self) -> TaskKind:
        """The batch's kind plug-in (``annotation.kinds``)."""
        return get_kind(self.kind)

    @property
    def label_set(self) -> list[int]:
        """The values a choice kind's labels take (empty for kinds that write text)."""
        return sorted(option.value for option in self.task_kind.options(self))

    def scale(self) -> list[tuple[int, str]]:
        """(value, button text) in key order, for kinds that choose."""
        return [(option.value, option.text) for option in self.task_kind.options(self)]


class Item(models.Model):
    """The unit one annotator judges once: a query and what its kind shows with it —
    a response, two responses (A, B), or texts kept in ``content`` — see annotation.kinds."""

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="items")
    item_id = models.CharField(max_length=200)
    position = models.PositiveIntegerField(help_text="Order of import; ties in leasing go first.")
    query = models.ForeignKey(Query, on_delete=models.PROTECT, related_name="+")
    response = models.ForeignKey(
        Response, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    response_a = models.ForeignKey(
        Response, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    response_b = models.ForeignKey(
        Response, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    content = models.JSONField(
        default=dict, blank=True, help_text="Texts of kinds that show more than responses."
    )
    gold = models.JSONField(
        null=True, blank=True, help_text="Accepted answers of an attention-check item."
    )
    metadata = models.JSONField(default=dict, blank=True)
    # the bundle the item belongs to (from the batch's bundle_by; "" when not bundled)
    bundle = models.CharField(max_length=200, blank=True, default="", db_default="")
    is_check = models.BooleanField(
        default=False, db_default=False, help_text="An attention check: never counted toward N."
    )
    target = models.PositiveIntegerField(help_text="The batch's N, copied for the constraints.")
    reserved_count = models.PositiveIntegerField(default=0)
    counted_count = models.PositiveIntegerField(default=0)
    # Of reserved_count, the slots of each presentation order of a pair (A first / B first):
    # each order holds at most ceil(N / 2), so a complete item is balanced (|ab - ba| <= 1).
    reserved_ab = models.PositiveIntegerField(default=0, db_default=0)
    reserved_ba = models.PositiveIntegerField(default=0, db_default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["batch", "item_id"], name="item_id_unique_in_batch"),
            models.CheckConstraint(
                condition=Q(counted_count__lte=F("reserved_count")),
                name="item_counted_within_reserved",
            ),
            models.CheckConstraint(
                condition=Q(reserved_count__lte=F("target")), name="item_reserved_within_n"
            ),
            models.CheckConstraint(
                condition=Q(reserved_ab__lte=(F("target") + 1) / 2)
                & Q(reserved_ba__lte=(F("target") + 1) / 2)
                & Q(reserved_ab__lte=F("reserved_count") - F("reserved_ba")),
                name="item_orders_balanced",
            ),
            models.CheckConstraint(
                condition=Q(is_check=False) | Q(target=0, gold__isnull=False),
                name="item_check_has_gold_and_no_slots",
            ),
            # one response, a pair, or none (kinds whose texts are in content)
            models.CheckConstraint(
                condition=(
                    Q(response__isnull=False, response_a__isnull=True, response_b__isnull=True)
                    | Q(response__isnull=True, response_a__isnull=False, response_b__isnull=False)
                    | Q(response__isnull=True, response_a__isnull=True, response_b__isnull=True)
                ),
                name="item_one_two_or_no_responses",
            ),
        ]
        indexes = [
            models.Index(fields=["batch", "position"], name="item_batch_position"),
            models.Index(fields=["batch", "bundle"], name="item_batch_bundle"),
            # The leasing order (closest to completion first), over items with a free slot
            # only: the candidate query walks this index and stops at the first item the
            # annotator has not seen, instead of sorting the batch or stepping over the
            # full items (most of them, late in a study).
            models.Index(
                fields=["batch", "-reserved_count", "-counted_count", "position"],
                name="item_leasing_order",
                condition=Q(reserved_count__lt=F("target")),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.batch.slug}/{self.item_id}"


class Annotator(models.Model):
    """A person; identified by crowd platform id (or a staff user), exported by pseudonym."""

    class Platform(models.TextChoices):
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "Amazon Mechanical Turk"
        GENERIC = "generic", "Invitation link"
        STAFF = "staff", "Staff user"

    platform = models.CharField(max_length=16, choices=Platform.choices)
    platform_id = models.CharField(max_length=200)
    pseudonym = models.CharField(max_length=32, unique=True, editable=False)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["platform", "platform_id"], name="annotator_unique_platform_id"
            )
        ]

    def __str__(self) -> str:
        return self.pseudonym

    def save(self, *args, **kwargs):
        if not self.pseudonym:
            self.pseudonym = "ann-" + secrets.token_hex(6)
        super().save(*args, **kwargs)


class Participation(models.Model):
    """An annotator's membership of one batch: entry parameters, consent, exclusion."""

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        EXCLUDED = "excluded", "Excluded"

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="participations")
    annotator = models.ForeignKey(
        Annotator, on_delete=models.CASCADE, related_name="participations"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    entry_params = models.JSONField(default=dict, blank=True)
    consented_at = models.DateTimeField(null=True, blank=True)
    questionnaire_answers = models.JSONField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    # quality control: when the next attention check / repeated item is due (regular items
    # done), and why the annotator was excluded when a policy did it
    next_check_after = models.PositiveIntegerField(null=True, blank=True)
    next_repeat_after = models.PositiveIntegerField(null=True, blank=True)
    # the participant's labels of regular items (counted, surplus or excluded): what
    # quotas, progress and due checks count; written only by annotation.services.labelling
    # with each label it stores, so that asking for work never counts label rows
    regular_labels = models.PositiveIntegerField(default=0, db_default=0)
    excluded_automatically = models.BooleanField(default=False, db_default=False)
    exclusion_reason = models.TextField(blank=True, default="", db_default="")
    # integrity: where the participation was opened, and the browser it is bound to
    entry_ip = models.GenericIPAddressField(null=True, blank=True)
    device_id = models.CharField(max_length=64, blank=True, default="", db_default="")
    browser_key = models.CharField(max_length=64, blank=True, default="", db_default="")
    browser_switches = models.PositiveIntegerField(default=0, db_default=0)
    # the language the participant's pages were shown in (a code of settings.LANGUAGES)
    language = models.CharField(max_length=16, blank=True, default="", db_default="")
    # the crowd platform's own word on this person's submission (e.g. Prolific's
    # RETURNED, APPROVED), kept in step by the platform's sync; empty: not known
    platform_status = models.CharField(max_length=32, blank=True, default="", db_default="")
    platform_status_at = models.DateTimeField(null=True, blank=True)
    first_seen_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["batch", "annotator"], name="participation_unique_annotator"
            )
        ]
        indexes = [
            models.Index(fields=["batch", "entry_ip"], name="participation_batch_ip"),
            models.Index(fields=["batch", "device_id"], name="participation_batch_device"),
        ]

    def __str__(self) -> str:
        return f"{self.annotator_id} in {self.batch_id}"


class AssignmentState(models.TextChoices):
    OPEN = "open", "Open (holds a slot)"
    EXPIRED = "expired", "Expired (slot given back)"
    SUBMITTED = "submitted", "Submitted"


class Purpose(models.TextChoices):
    """Why an item was handed out: only regular leases hold a slot of the item's N."""

    REGULAR = "regular", "Regular item"
    CHECK = "check", "Attention check"
    REPEAT = "repeat", "Repeat of an item labelled earlier"


class ShownOrder(models.TextChoices):
    AB = "ab", "A shown first"
    BA = "ba", "B shown first"


class Assignment(models.Model):
    """A lease of one item to one annotator. Submitting it produces exactly one label.

    An annotator is never leased the same item twice, even after a lease expired:
    a late answer to the old lease is still accepted, and a second lease would let
    one person contribute two judgments of the same item.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="assignments")
    state = models.CharField(
        max_length=16, choices=AssignmentState.choices, default=AssignmentState.OPEN
    )
    purpose = models.CharField(
        max_length=16, choices=Purpose.choices, default=Purpose.REGULAR, db_default="regular"
    )
    shown_order = models.CharField(
        max_length=2, choices=ShownOrder.choices, blank=True, default="", db_default=""
    )
    # a bundle's leases are taken together: the position the item is shown at (0 first)
    position_in_bundle = models.PositiveSmallIntegerField(null=True, blank=True)
    leased_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # one judgment per person and item; a repeat (shown again on purpose, never
            # counted) is the only second look, and at most one per item
            models.UniqueConstraint(
                fields=["annotator", "item"],
                condition=~Q(purpose="repeat"),
                name="assignment_once_per_annotator_item",
            ),
            models.UniqueConstraint(
                fields=["annotator", "item"],
                condition=Q(purpose="repeat"),
                name="assignment_one_repeat_per_annotator_item",
            ),
            # one open lease per person and batch — or one bundle's, one per position
            models.UniqueConstraint(
                fields=["annotator", "batch"],
                condition=Q(state="open", position_in_bundle__isnull=True),
                name="assignment_one_open_lease_per_batch",
            ),
            models.UniqueConstraint(
                fields=["annotator", "batch", "position_in_bundle"],
                condition=Q(state="open", position_in_bundle__isnull=False),
                name="assignment_one_open_lease_per_bundle_position",
            ),
            models.CheckConstraint(
                condition=Q(state__in=AssignmentState.values), name="assignment_state_known"
            ),
            models.CheckConstraint(
                condition=Q(purpose__in=Purpose.values), name="assignment_purpose_known"
            ),
        ]
        indexes = [
            models.Index(fields=["batch", "state", "expires_at"], name="assignment_open_expiry"),
        ]

    def __str__(self) -> str:
        return str(self.pk)


class LabelStatus(models.TextChoices):
    COUNTED = "counted", "Counted"
    SURPLUS = "surplus", "Surplus (item was already full)"
    EXCLUDED = "excluded", "Excluded (annotator excluded)"
    CHECK = "check", "Attention check (never counted)"
    REPEAT = "repeat", "Repeat of an earlier item (never counted)"
    CANT_JUDGE = "cant_judge", "I can't judge this (never counted; the slot went back)"


# The statuses of labels of regular items (what quotas and progress count).
REGULAR_STATUSES = (LabelStatus.COUNTED, LabelStatus.SURPLUS, LabelStatus.EXCLUDED)


# The value rule of each built-in kind, so that the database checks it too. A kind added
# later is checked by its own clean_label (its value or text must be there).
BUILT_IN_LABEL_RULES = {
    "absolute": Q(value__gte=1, value__lte=5, text__isnull=True),
    "pairwise": Q(value__gte=-2, value__lte=2, text__isnull=True),
    "similarity": Q(value__gte=1, value__lte=4, text__isnull=True),
    "short_text": Q(value__isnull=True, text__isnull=False, answer__isnull=False),
}


def _label_value_rule() -> Q:
    # "I can't judge this" carries no value; every other label carries its kind's value
    rule = Q(status="cant_judge", value__isnull=True, text__isnull=True)
    rule |= ~Q(kind__in=sorted(BUILT_IN_LABEL_RULES)) & (
        Q(value__isnull=False) | Q(text__isnull=False)
    )
    for kind, condition in sorted(BUILT_IN_LABEL_RULES.items()):
        rule |= Q(kind=kind) & condition
    return rule


class Label(models.Model):
    """One judgment. ``kind`` is copied from the batch so the database can check the value:
    ``value`` for kinds that choose, ``text`` (verbatim) and ``answer`` (normalised) for
    kinds that write."""

    assignment = models.OneToOneField(Assignment, on_delete=models.PROTECT, related_name="label")
    # PROTECT: a batch or item that holds labels cannot be deleted by accident.
    batch = models.ForeignKey(Batch, on_delete=models.PROTECT, related_name="labels")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="labels")
    annotator = models.ForeignKey(Annotator, on_delete=models.PROTECT, related_name="labels")
    kind = models.CharField(max_length=32)
    value = models.SmallIntegerField(null=True, blank=True)
    text = models.TextField(null=True, blank=True)
    answer = models.CharField(max_length=200, null=True, blank=True)
    status = models.CharField(max_length=16, choices=LabelStatus.choices)
    shown_order = models.CharField(
        max_length=2, choices=ShownOrder.choices, blank=True, default="", db_default=""
    )
    position_in_bundle = models.PositiveSmallIntegerField(null=True, blank=True)
    check_passed = models.BooleanField(null=True, blank=True)
    # the annotator's optional note on the item (the batch's comment_box)
    comment = models.TextField(blank=True, default="", db_default="")
    too_fast = models.BooleanField(default=False, db_default=False)
    straightlined = models.BooleanField(default=False, db_default=False)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    submitted_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["annotator", "item"],
                condition=~Q(status="repeat"),
                name="label_once_per_annotator",
            ),
            models.UniqueConstraint(
                fields=["annotator", "item"],
                condition=Q(status="repeat"),
                name="label_one_repeat_per_annotator",
            ),
            models.CheckConstraint(
                condition=Q(status="check", check_passed__isnull=False)
                | (~Q(status="check") & Q(check_passed__isnull=True)),
                name="label_check_passed_only_on_checks",
            ),
            models.CheckConstraint(condition=_label_value_rule(), name="label_value_fits_kind"),
            models.CheckConstraint(
                condition=Q(status__in=LabelStatus.values), name="label_status_known"
            ),
        ]
        indexes = [
            models.Index(fields=["batch", "status", "submitted_at"], name="label_batch_status"),
            # an annotator's progress in a batch is counted on every lease
            models.Index(fields=["annotator", "batch"], name="label_annotator_batch"),
        ]

    def __str__(self) -> str:
        shown = self.value if self.value is not None else repr(self.text)
        return f"{shown} ({self.status})"


class BatchSnapshot(models.Model):
    """Batch figures recorded by the periodic task: progress over time for the admins."""

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="snapshots")
    taken_at = models.DateTimeField()
    items_complete = models.PositiveIntegerField()
    labels_counted = models.PositiveIntegerField()
    labels_surplus = models.PositiveIntegerField()
    labels_excluded = models.PositiveIntegerField()
    active_annotators = models.PositiveIntegerField()

    class Meta:
        indexes = [models.Index(fields=["batch", "taken_at"], name="snapshot_batch_time")]

    def __str__(self) -> str:
        return f"{self.batch_id} at {self.taken_at:%Y-%m-%d %H:%M}"
