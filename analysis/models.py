"""Model scores: who scored (``ScoreSource``) and what they gave (``Score``).

A score belongs to exactly one response (project-wide, usable in every batch that shows
the response) or exactly one item (a pairwise judge's verdict on a pair). Higher always
means better: sources whose scores run the other way are negated on import. One source
gives at most one score per response and per item (conditional unique constraints).
A score may carry a ``distribution``: the source's probabilities over the kind's labels
(e.g. a judge's normalised probabilities of "1" … "5"), checked on import.
"""

from django.db import models
from django.db.models import Q

from annotation.models import Item, Response


class ScoreKind(models.TextChoices):
    LM = "lm", "Language model"
    REWARD_MODEL = "reward_model", "Reward model"
    JUDGE = "judge", "LLM judge"
    OTHER = "other", "Other"


class ScoreSource(models.Model):
    """A scorer, e.g. ``Skywork-Reward-Gemma-2-27B`` or ``gpt-4o:overall``."""

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=16, choices=ScoreKind.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=ScoreKind.values), name="score_source_kind_known"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Score(models.Model):
    """One source's score of one response or one item (never both)."""

    source = models.ForeignKey(ScoreSource, on_delete=models.CASCADE, related_name="scores")
    response = models.ForeignKey(
        Response, on_delete=models.CASCADE, null=True, blank=True, related_name="scores"
    )
    item = models.ForeignKey(
        Item, on_delete=models.CASCADE, null=True, blank=True, related_name="scores"
    )
    value = models.FloatField(help_text="Higher is better (negated on import if needed).")
    distribution = models.JSONField(
        null=True,
        blank=True,
        help_text="Probabilities over the kind's labels in label order (summing to 1), or null.",
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(response__isnull=False, item__isnull=True)
                    | Q(response__isnull=True, item__isnull=False)
                ),
                name="score_response_or_item",
            ),
            models.UniqueConstraint(
                fields=["source", "response"],
                condition=Q(response__isnull=False),
                name="score_once_per_source_response",
            ),
            models.UniqueConstraint(
                fields=["source", "item"],
                condition=Q(item__isnull=False),
                name="score_once_per_source_item",
            ),
        ]

    def __str__(self) -> str:
        target = f"response {self.response_id}" if self.response_id else f"item {self.item_id}"
        return f"{self.source_id}: {target} = {self.value}"


class AnalysisPermissions(models.Model):
    """Holds the analysis app's own permission; no table (``managed = False``)."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [("analyse_batch", "Can import scores and run analyses")]

    def __str__(self) -> str:
        return "analysis permissions"
