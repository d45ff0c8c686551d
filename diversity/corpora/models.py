"""What a corpus keeps: its queries, models and responses, where its embeddings are, and
which batches were made from it.

A ``Corpus`` is a pool of model responses to open-ended queries (FORMATS.md, "Response
pools"), imported once, all or nothing. Each ``CorpusResponse`` has a dense ``row_index``
(0, 1, ... in the imported file's order): the row of the corpus's embedding array, a
``.npy`` file under ``DATA_DIR/corpora/<corpus id>/`` (``Corpus.embedding_file``), never
the database. Analyses are jobs (``core.Job``) whose report, per-query table and
typicality array are job files. ``CorpusSelection`` records the rule by which a batch was
made from the corpus, for the batch's data card.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models import Batch
from core.models import StudySubject


class EmbeddingSource(models.TextChoices):
    IMPORTED = "imported", "imported file"
    LOCAL_MODEL = "local_model", "local model"


class Corpus(StudySubject):
    """A pool of responses of several models to a set of queries."""

    name = models.SlugField(max_length=100, unique=True)
    title = models.CharField(max_length=300, blank=True, default="")
    file_name = models.CharField(max_length=255)
    file_bytes = models.PositiveBigIntegerField()
    file_sha256 = models.CharField(max_length=64)
    n_queries = models.PositiveIntegerField(default=0)
    n_models = models.PositiveIntegerField(default=0)
    n_responses = models.PositiveIntegerField(default=0)
    # the embeddings in use (none until imported or computed)
    embedding_source = models.CharField(
        max_length=16, choices=EmbeddingSource.choices, blank=True, default=""
    )
    embedding_file = models.CharField(
        max_length=200,
        blank=True,
        default="",
        help_text="The .npy file (n_responses x dimension) in the corpus's folder.",
    )
    embedding_dimension = models.PositiveIntegerField(null=True, blank=True)
    embedding_dtype = models.CharField(max_length=8, blank=True, default="")
    embedding_origin = models.CharField(
        max_length=300,
        blank=True,
        default="",
        help_text="The imported file's name, or the local model's name.",
    )
    embedding_sha256 = models.CharField(max_length=64, blank=True, default="")
    embedded_at = models.DateTimeField(null=True, blank=True)
    # a local-model run that has not finished (embed_corpus resumes it)
    local_rows_done = models.PositiveIntegerField(default=0)
    local_done = models.JSONField(
        default=list,
        blank=True,
        help_text="The rows of the unfinished run already embedded, as [start, stop) ranges "
        "(parts finish in any order on several workers); local_rows_done counts them.",
    )
    local_dtype = models.CharField(max_length=8, blank=True, default="")
    local_origin = models.CharField(
        max_length=300,
        blank=True,
        default="",
        help_text="The model of the unfinished run (a run by another model starts over).",
    )

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "corpora"
        permissions = [("analyse_corpus", "Can run corpus analyses")]
        constraints = [
            models.CheckConstraint(
                condition=Q(embedding_source__in=["", "imported", "local_model"]),
                name="corpus_embedding_source_known",
            ),
            models.CheckConstraint(
                condition=(Q(embedding_source="") & Q(embedding_file=""))
                | (~Q(embedding_source="") & ~Q(embedding_file="") & Q(embedding_dimension__gt=0)),
                name="corpus_embedding_file_with_source",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def has_embeddings(self) -> bool:
        return bool(self.embedding_source)

    def embedding_facts(self) -> dict:
        """What identifies the stored embeddings: in reports, job results and the API."""
        return {
            "source": self.embedding_source,
            "origin": self.embedding_origin,
            "dimension": self.embedding_dimension,
            "dtype": self.embedding_dtype,
            "sha256": self.embedding_sha256,
        }


class CorpusQuery(models.Model):
    """A query of the corpus; ``position`` is its order of first appearance in the file."""

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="queries")
    query_id = models.CharField(max_length=200)
    text = models.TextField()
    category = models.CharField(max_length=200, blank=True, default="")
    subcategory = models.CharField(max_length=200, blank=True, default="")
    position = models.PositiveIntegerField()
    n_responses = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["corpus", "query_id"], name="corpus_query_id_unique"),
            models.UniqueConstraint(fields=["corpus", "position"], name="corpus_query_position"),
            models.CheckConstraint(
                condition=Q(subcategory="") | ~Q(category=""),
                name="corpus_query_subcategory_needs_category",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.corpus_id}:{self.query_id}"


class CorpusModel(models.Model):
    """A model that answered in the corpus."""

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="corpus_models")
    name = models.CharField(max_length=200)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["corpus", "name"], name="corpus_model_name_unique"),
        ]

    def __str__(self) -> str:
        return self.name


class CorpusResponse(models.Model):
    """One sample of one model's response to one query; ``row_index`` is its embedding row.

    The foreign keys carry no index of their own: the unique constraints below start with
    them, and every extra index slows the bulk load of millions of rows.
    """

    corpus = models.ForeignKey(
        Corpus, on_delete=models.CASCADE, related_name="responses", db_index=False
    )
    query = models.ForeignKey(
        CorpusQuery, on_delete=models.CASCADE, related_name="responses", db_index=False
    )
    model = models.ForeignKey(
        CorpusModel, on_delete=models.CASCADE, related_name="responses", db_index=False
    )
    sample = models.PositiveIntegerField()
    response_id = models.CharField(max_length=200)
    text = models.TextField()
    row_index = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["corpus", "response_id"], name="corpus_response_id_unique"
            ),
            models.UniqueConstraint(fields=["corpus", "row_index"], name="corpus_response_row"),
            models.UniqueConstraint(
                fields=["query", "model", "sample"], name="corpus_response_sample_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.corpus_id}:{self.response_id}"


class SelectionRule(models.TextChoices):
    TYPICALITY = "typicality", "most and least typical per query"
    RANDOM = "random", "random sample per model and query"


class CorpusSelection(models.Model):
    """How a batch was made from a corpus: the rule and its parameters, for its data card."""

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="selections")
    batch = models.OneToOneField(Batch, on_delete=models.CASCADE, related_name="+")
    rule = models.CharField(max_length=16, choices=SelectionRule.choices)
    per_query = models.PositiveIntegerField(
        help_text="k (most and k least typical per query) or r (per model and query)."
    )
    seed = models.PositiveBigIntegerField(null=True, blank=True)
    categories = models.JSONField(default=list, blank=True)
    analysis_job = models.ForeignKey(
        "core.Job", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    counts = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(rule__in=["typicality", "random"]), name="corpus_selection_rule_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.corpus_id}:{self.rule}"
