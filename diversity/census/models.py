"""What a census keeps: the imported replies, the files they came from, and human norms.

Replies are stored **verbatim** (``CensusAnswer.reply``, ``None`` for a missing one): the
junk guard, the normalisation to one answer and the plural merge of docs/CENSUS.md run at
analysis time through the pure ``diversity.census`` modules, so a change of those rules
applies to every stored census on its next analysis and nothing needs re-importing.
"""

from django.db import models
from django.db.models import Q

from core.models import StudySubject


class Census(StudySubject):
    """One imported census: model replies to the same "Name a ..." categories."""

    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True, default="")
    norms_source = models.TextField(
        blank=True, default="", help_text="The imported norms file's own 'source' text."
    )

    class Meta:
        verbose_name_plural = "censuses"
        ordering = ["name"]
        permissions = [("analyse_census", "Can run census analyses")]

    def __str__(self) -> str:
        return self.name


class CensusFile(models.Model):
    """A file a census was imported from, with its size and SHA-256 (provenance)."""

    class Role(models.TextChoices):
        TRANSCRIPT = "transcript", "Transcript (JSON, one model)"
        FLAT = "flat", "Flat replies (JSONL/CSV)"
        NORMS = "norms", "Human norms (JSON)"

    census = models.ForeignKey(Census, on_delete=models.CASCADE, related_name="files")
    position = models.PositiveIntegerField(help_text="Order in which the files were read.")
    role = models.CharField(max_length=16, choices=Role.choices)
    name = models.CharField(max_length=255)
    size_bytes = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    n_rows = models.PositiveIntegerField(help_text="Replies (or norm rows) the file gave.")

    class Meta:
        ordering = ["census", "position"]
        constraints = [
            models.CheckConstraint(
                condition=Q(role__in=["transcript", "flat", "norms"]), name="census_file_role_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.census_id}: {self.name}"


class CensusAnswer(models.Model):
    """One cell of the census: what ``answerer`` replied in run ``run`` of ``category``."""

    census = models.ForeignKey(Census, on_delete=models.CASCADE, related_name="answers")
    answerer = models.CharField(max_length=200)
    category = models.CharField(max_length=200)
    run = models.PositiveIntegerField()
    reply = models.TextField(null=True, blank=True, help_text="Verbatim; empty: no reply.")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["census", "answerer", "category", "run"], name="census_answer_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.answerer}/{self.category}/{self.run}"


class CensusNorm(models.Model):
    """Imported human norms of one category, and the model columns published with them.

    ``model_*`` is the model field *as published* next to the norms (some categories were
    run with the norms' own wording: ``wording_mismatch``); the analysis shows it beside
    the field it computes from the stored replies and says which is which.
    """

    census = models.ForeignKey(Census, on_delete=models.CASCADE, related_name="norms")
    position = models.PositiveIntegerField()
    category = models.CharField(max_length=200)
    human_modal = models.CharField(max_length=200)
    human_share = models.FloatField(help_text="Share of first responses that are the modal one.")
    human_n_ge5 = models.PositiveIntegerField(help_text="Answers given by at least 5 %.")
    model_modal = models.CharField(max_length=200)
    model_share = models.FloatField()
    model_n_ge5 = models.PositiveIntegerField()
    wording_mismatch = models.BooleanField(default=False)

    class Meta:
        ordering = ["census", "position"]
        constraints = [
            models.UniqueConstraint(fields=["census", "category"], name="census_norm_once"),
            models.CheckConstraint(
                condition=Q(human_share__gte=0, human_share__lte=1)
                & Q(model_share__gte=0, model_share__lte=1),
                name="census_norm_shares_in_unit_interval",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.census_id}: {self.category}"
