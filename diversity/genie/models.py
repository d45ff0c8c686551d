"""What a Genie set keeps: its judgment file, row by row, and the human batch made from it.

Each ``GenieJudgment`` is one row of the imported file (FORMATS.md, "Genie judgments"), kept
as given: the analysis turns the rows back into ``diversity.genie.records.Judgment`` and
scores them with the pure code. Human similarity labels collected on the platform live in
a ``similarity`` batch (``GenieSet.human_batch``, made by ``genie_batch``), not here.
"""

from django.db import models
from django.db.models import Q

from annotation.models import Batch
from core.models import StudySubject


class GenieSet(StudySubject):
    """An imported set of Genie similarity judgments (one file)."""

    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True, default="")
    file_name = models.CharField(max_length=255)
    file_bytes = models.PositiveBigIntegerField()
    file_sha256 = models.CharField(max_length=64)
    layout = models.CharField(
        max_length=20,
        default="platform",
        help_text="The file's layout: platform, genie-similarity or genie-answers.",
    )
    left_out = models.JSONField(
        default=dict,
        blank=True,
        help_text="Pairs of the file left out of the scores, by reason (GENIE layouts).",
    )
    repeated_pairs = models.PositiveIntegerField(
        default=0,
        help_text="Rows of GENIE's similarity file judging a pair an earlier row judged "
        "(kept: each judgment counts, as in compute_genie).",
    )
    human_batch = models.ForeignKey(
        Batch,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The similarity batch made from this set (genie_batch), if any.",
    )

    class Meta:
        ordering = ["name"]
        permissions = [("analyse_genie", "Can run Genie analyses")]

    def __str__(self) -> str:
        return self.name


class GenieJudgment(models.Model):
    """One row of the file: a similarity judgment of a (target, population) answer pair."""

    genie_set = models.ForeignKey(GenieSet, on_delete=models.CASCADE, related_name="judgments")
    position = models.PositiveIntegerField(help_text="The row's order in the imported file.")
    prompt_id = models.CharField(max_length=200)
    question_id = models.CharField(max_length=200)
    feature = models.CharField(max_length=200)
    question = models.TextField(null=True, blank=True, help_text="The question's text, if given.")
    document_id = models.CharField(max_length=200)
    population_id = models.CharField(max_length=200)
    target_answer = models.TextField(null=True, blank=True, help_text="Empty: no answer.")
    population_answer = models.TextField(null=True, blank=True, help_text="Empty: no answer.")
    similarity = models.FloatField(null=True, blank=True)
    source = models.CharField(max_length=8)
    prompt = models.TextField(null=True, blank=True, help_text="The prompt's text, if given.")
    model = models.CharField(max_length=200, null=True, blank=True)
    method = models.CharField(max_length=200, null=True, blank=True)
    source_model = models.CharField(
        max_length=200, null=True, blank=True, help_text="The model's name as given (Model_1)."
    )
    source_document_id = models.CharField(
        max_length=200, null=True, blank=True, help_text="The file's document id (DocID_1)."
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(source__in=["llm", "human"]), name="genie_judgment_source_known"
            ),
            models.CheckConstraint(
                condition=Q(similarity__isnull=True) | Q(similarity__gte=1, similarity__lte=4),
                name="genie_judgment_similarity_1_to_4",
            ),
        ]
        indexes = [
            models.Index(fields=["genie_set", "prompt_id", "question_id"], name="genie_question"),
        ]

    def __str__(self) -> str:
        return f"{self.genie_set_id}:{self.position}"
