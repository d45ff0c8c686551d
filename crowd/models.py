"""What the crowd app keeps of the platforms: their view of each submission, the webhook
events received, every outgoing call, review decisions and the bonus ledger.

Invariants held by the database:

* one mirror row per (batch, platform, submission) — ``PlatformSubmission``;
* one webhook event per ``X-Event-ID`` — a repeated delivery cannot be applied twice;
* one review decision per (batch, platform, submission) — a re-run never acts twice;
* a bonus line per (run, participant) and a run's state from a fixed set: what was owed
  is always the amounts computed minus the lines of runs that may have paid
  (``BonusRun.MAY_HAVE_PAID``), so a retried or repeated run never pays anyone twice.
"""

from django.db import models
from django.db.models import Q


class Platform(models.TextChoices):
    PROLIFIC = "prolific", "Prolific"
    MTURK = "mturk", "Amazon Mechanical Turk"


class PlatformSubmission(models.Model):
    """The platform's record of one person's submission (Prolific) or assignment (MTurk),
    as last synced."""

    batch = models.ForeignKey(
        "annotation.Batch", on_delete=models.CASCADE, related_name="platform_submissions"
    )
    platform = models.CharField(max_length=16, choices=Platform.choices)
    submission_id = models.CharField(max_length=100)
    participant_id = models.CharField(max_length=200)
    status = models.CharField(max_length=32)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    # MTurk: the HIT the assignment belongs to (empty for Prolific)
    hit_id = models.CharField(max_length=100, blank=True, default="")
    synced_at = models.DateTimeField()

    class Meta:
        permissions = [
            ("act_on_platforms", "Can approve, reject, pay and change places on crowd platforms")
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["batch", "platform", "submission_id"], name="crowd_submission_once"
            )
        ]
        indexes = [
            models.Index(fields=["platform", "participant_id"], name="crowd_submission_person")
        ]

    def __str__(self) -> str:
        return f"{self.platform}:{self.submission_id} ({self.status})"


class WebhookEvent(models.Model):
    """One webhook request received, whatever became of it (for the record)."""

    class Outcome(models.TextChoices):
        APPLIED = "applied", "Applied"
        DUPLICATE = "duplicate", "Repeated X-Event-ID: nothing changed"
        BAD_SIGNATURE = "bad_signature", "Bad or missing signature: refused"
        STALE = "stale", "Timestamp too old or in the future: refused"
        UNUSABLE = "unusable", "Not a usable event: nothing changed"
        UNKNOWN_SUBMISSION = "unknown_submission", "No participation matches: nothing changed"

    platform = models.CharField(max_length=16, choices=Platform.choices)
    # NULL for refused requests, whose id cannot be trusted (and may repeat)
    event_id = models.CharField(max_length=200, null=True, blank=True)
    outcome = models.CharField(max_length=32, choices=Outcome.choices)
    event_type = models.CharField(max_length=100, blank=True, default="")
    resource_id = models.CharField(max_length=200, blank=True, default="")
    status = models.CharField(max_length=32, blank=True, default="")
    detail = models.TextField(blank=True, default="")
    body = models.TextField(blank=True, default="")
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["platform", "event_id"],
                condition=Q(event_id__isnull=False),
                name="crowd_webhook_event_once",
            )
        ]

    def __str__(self) -> str:
        return f"{self.platform} event {self.event_id or '-'}: {self.outcome}"


class PlatformCall(models.Model):
    """One HTTP request (or boto3 call) sent to a platform, with its answer or failure."""

    platform = models.CharField(max_length=16, choices=Platform.choices)
    method = models.CharField(max_length=64, help_text="HTTP method, or the boto3 operation")
    path = models.CharField(max_length=500)
    request_body = models.JSONField(null=True, blank=True)
    attempt = models.PositiveIntegerField(default=1)
    status_code = models.PositiveIntegerField(null=True, blank=True)
    response_body = models.TextField(blank=True, default="")
    error = models.TextField(blank=True, default="")
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["platform", "started_at"], name="crowd_call_time")]

    def __str__(self) -> str:
        return f"{self.method} {self.path} → {self.status_code or self.error[:40]}"


class ReviewAction(models.TextChoices):
    APPROVE = "approve", "Approve"
    SCREEN_OUT = "screen_out", "Screen out"
    REJECT = "reject", "Reject"
    MANUAL = "manual", "Leave for manual review"


class ReviewDecision(models.Model):
    """What was (or is being) done to one submission awaiting review."""

    class State(models.TextChoices):
        SENT = "sent", "Sent, answer not yet known"
        DONE = "done", "Done"
        FAILED = "failed", "Refused by the platform (nothing changed there)"

    batch = models.ForeignKey(
        "annotation.Batch", on_delete=models.CASCADE, related_name="review_decisions"
    )
    platform = models.CharField(max_length=16, choices=Platform.choices)
    submission_id = models.CharField(max_length=100)
    participant_id = models.CharField(max_length=200)
    action = models.CharField(max_length=16, choices=ReviewAction.choices)
    reason = models.TextField()
    state = models.CharField(max_length=16, choices=State.choices)
    detail = models.TextField(blank=True, default="")
    decided_by = models.CharField(max_length=200)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["batch", "platform", "submission_id"], name="crowd_review_once"
            ),
            models.CheckConstraint(
                condition=Q(state__in=["sent", "done", "failed"]), name="crowd_review_state_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.submission_id}: {self.state}"


class BonusRun(models.Model):
    """One payment of bonuses to many participants (one Prolific bulk bonus payment, or
    one set of MTurk ``send_bonus`` calls).

    Prolific: ``planned`` (intent stored, nothing sent) → ``created`` (set up, nothing
    paid) → ``paying`` (the pay request is being sent) → ``paid``; a definite refusal is
    ``failed``; a pay request whose answer never came is ``unknown`` until a person
    resolves it from Prolific's own records (``--resolve RUN paid|unpaid``): it is never
    re-sent blindly. ``abandoned``: set up (or maybe set up) but never paid.
    """

    class State(models.TextChoices):
        PLANNED = "planned", "Planned"
        CREATED = "created", "Set up, not paid"
        PAYING = "paying", "Pay request sent"
        PAID = "paid", "Paid"
        FAILED = "failed", "Refused (nothing paid)"
        UNKNOWN = "unknown", "Outcome unknown: reconcile before paying again"
        ABANDONED = "abandoned", "Abandoned (never paid)"

    # the states in which the run's lines may have reached participants
    MAY_HAVE_PAID = ("paying", "paid", "unknown")

    class Basis(models.TextChoices):
        PER_ITEM = "per_item", "Per counted or surplus label"
        TOP_UP_HOURLY = "top_up_hourly", "Top-up to an hourly rate"

    batch = models.ForeignKey(
        "annotation.Batch", on_delete=models.CASCADE, related_name="bonus_runs"
    )
    platform = models.CharField(max_length=16, choices=Platform.choices)
    basis = models.CharField(max_length=16, choices=Basis.choices)
    # as given (crowd.services.bonuses.RATE_DECIMALS); only what is paid is in cents
    rate = models.DecimalField(max_digits=12, decimal_places=4)
    currency = models.CharField(max_length=3, blank=True, default="")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PLANNED)
    remote_id = models.CharField(max_length=100, blank=True, default="")
    # what the platform says it will deduct (Prolific: in the currency's minor unit)
    platform_total = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    detail = models.TextField(blank=True, default="")
    created_by = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    state__in=[
                        "planned", "created", "paying", "paid", "failed", "unknown", "abandoned"
                    ]
                ),
                name="crowd_bonus_run_state_known",
            ),
        ]  # fmt: skip

    def __str__(self) -> str:
        return f"bonus run {self.pk} ({self.state})"


class BonusLine(models.Model):
    """One participant's amount in a run. MTurk pays line by line: each line has its own
    state and the ``UniqueRequestToken`` that makes a retried ``send_bonus`` harmless."""

    run = models.ForeignKey(BonusRun, on_delete=models.CASCADE, related_name="lines")
    participant_id = models.CharField(max_length=200)
    assignment_id = models.CharField(max_length=100, blank=True, default="")
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    request_token = models.CharField(max_length=64, blank=True, default="")
    state = models.CharField(max_length=16, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "participant_id"], name="crowd_bonus_line_once"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="crowd_bonus_line_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.participant_id}: {self.amount}"


class MTurkHIT(models.Model):
    """A HIT created for a batch, and the qualification that keeps earlier workers out."""

    batch = models.ForeignKey(
        "annotation.Batch", on_delete=models.CASCADE, related_name="mturk_hits"
    )
    hit_id = models.CharField(max_length=100, unique=True)
    hit_type_id = models.CharField(max_length=100, blank=True, default="")
    qualification_type_id = models.CharField(max_length=100, blank=True, default="")
    max_assignments = models.PositiveIntegerField()
    reward = models.DecimalField(max_digits=10, decimal_places=2)
    sandbox = models.BooleanField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.hit_id
