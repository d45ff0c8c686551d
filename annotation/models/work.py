"""Leases and labels (the exactly-N counters they move live on ``Item``), and the
periodic batch snapshots."""

import uuid

from django.db import models
from django.db.models import Q

from annotation.models.batch import Batch
from annotation.models.content import Item
from annotation.models.people import Annotator


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
    # batch and annotator are indexed by assignment_open_expiry (batch, state, expires_at)
    # and assignment_annotator_state (annotator, state), which lead with them: indexes of
    # their own would be two more to update with every lease and every label.
    batch = models.ForeignKey(
        Batch, on_delete=models.CASCADE, related_name="assignments", db_index=False
    )
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        Annotator, on_delete=models.CASCADE, related_name="assignments", db_index=False
    )
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
            # A batch's open leases by expiry, and a person's leases by state. Neither is
            # partial: PostgreSQL's statistics always see open leases as rare, and would
            # take a scan of a whole partial index over them as nearly free for any
            # question about open leases; whole indexes are chosen by the columns the
            # question names (annotation.services.work_state).
            models.Index(fields=["batch", "state", "expires_at"], name="assignment_open_expiry"),
            models.Index(fields=["annotator", "state"], name="assignment_annotator_state"),
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
    # "I can't judge this" carries no value (a pass on a repeat or an attention check is
    # kept as that label); every other label carries its kind's value
    rule = Q(status__in=["cant_judge", "repeat", "check"], value__isnull=True, text__isnull=True)
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
    # batch and annotator are indexed by label_batch_status (batch, status, submitted_at)
    # and label_annotator_batch (annotator, batch), which lead with them (one index fewer
    # each to write with every label).
    batch = models.ForeignKey(
        Batch, on_delete=models.PROTECT, related_name="labels", db_index=False
    )
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="labels")
    annotator = models.ForeignKey(
        Annotator, on_delete=models.PROTECT, related_name="labels", db_index=False
    )
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
