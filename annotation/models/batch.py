"""The batch: one study of one task kind, its design settings and its state."""

import secrets

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
