"""The batch: one study of one task kind, its design settings and its state."""

import secrets

from django.contrib.contenttypes.fields import GenericRelation
from django.db import models
from django.db.models import F, Q

from annotation.kinds import get_kind
from annotation.kinds.base import TaskKind
from annotation.settings_spec import model_options

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
    check_every = models.PositiveIntegerField(null=True, blank=True, **model_options("check_every"))
    exclude_after_failed_checks = models.PositiveIntegerField(
        null=True, blank=True, **model_options("exclude_after_failed_checks")
    )
    screen_out_code = models.CharField(
        max_length=100, blank=True, **model_options("screen_out_code")
    )
    full_code = models.CharField(max_length=100, blank=True, **model_options("full_code"))
    min_seconds_per_item = models.PositiveIntegerField(
        null=True, blank=True, **model_options("min_seconds_per_item")
    )
    straightline_run = models.PositiveIntegerField(
        null=True, blank=True, **model_options("straightline_run")
    )
    flag_policy = models.CharField(max_length=16, **model_options("flag_policy"))
    flagged_share_to_exclude = models.FloatField(
        null=True, blank=True, **model_options("flagged_share_to_exclude")
    )
    max_concurrent_annotators = models.PositiveIntegerField(
        null=True, blank=True, **model_options("max_concurrent_annotators")
    )
    max_lease_seconds = models.PositiveIntegerField(
        null=True, blank=True, **model_options("max_lease_seconds")
    )
    questionnaire = models.JSONField(blank=True, **model_options("questionnaire"))
    repeat_every = models.PositiveIntegerField(
        null=True, blank=True, **model_options("repeat_every")
    )
    invitations_required = models.BooleanField(**model_options("invitations_required"))
    review_lowest_competence = models.PositiveIntegerField(
        null=True, blank=True, **model_options("review_lowest_competence")
    )
    # --- crowd platforms (docs/SPEC.md, "Crowd platforms")
    accept_platforms = models.JSONField(blank=True, **model_options("accept_platforms"))
    screen_out_url = models.URLField(max_length=500, blank=True, **model_options("screen_out_url"))
    wait_for_release_seconds = models.PositiveIntegerField(
        **model_options("wait_for_release_seconds")
    )
    prolific_study_id = models.CharField(
        max_length=100, blank=True, **model_options("prolific_study_id")
    )
    reward_per_participant = models.DecimalField(
        max_digits=10,
        decimal_places=2,
        null=True,
        blank=True,
        **model_options("reward_per_participant"),
    )
    reward_currency = models.CharField(max_length=3, blank=True, **model_options("reward_currency"))
    # --- bundles: the alternatives of one query rated together (docs/SPEC.md, "Bundles")
    bundle_by = models.CharField(max_length=210, **model_options("bundle_by"))
    bundles_per_participant = models.PositiveIntegerField(
        null=True, blank=True, **model_options("bundles_per_participant")
    )
    bundle_order = models.CharField(max_length=16, **model_options("bundle_order"))
    # --- what an annotator may say besides a label
    allow_cant_judge = models.BooleanField(**model_options("allow_cant_judge"))
    comment_box = models.CharField(max_length=16, **model_options("comment_box"))
    # --- languages (docs/SPEC.md, "Languages")
    languages = models.JSONField(blank=True, **model_options("languages"))
    language = models.CharField(max_length=16, blank=True, **model_options("language"))
    translations = models.JSONField(blank=True, **model_options("translations"))
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
