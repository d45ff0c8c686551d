"""The corpus reading API (API.md, "Corpora"): list corpora, one corpus, the per-query table,
one query's projection; make a batch from a selection. The import endpoints live beside
these (``api/imports.py``); starting an analysis and reading its report are the study
type's (``core.jobs.study_api``), with this module's request and report shapes."""

from django.http import FileResponse, HttpResponse
from django.urls import reverse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.shapes import error_responses
from core.audit import Actor
from core.errors import NotFound
from diversity.corpora import downloads, selectors
from diversity.corpora.access import CanAnalyseCorpora, CanMakeBatches
from diversity.corpora.models import Corpus, SelectionRule
from diversity.corpora.services import analyses
from diversity.corpora.services.batches import MAX_PER_QUERY, make_batch

__all__ = [
    "CorpusBatchesView",
    "CorpusDetailView",
    "CorpusListView",
    "CorpusQueryProjectionView",
    "CorpusQueryTableView",
]

TAG = "corpora"


def _corpus(name: str) -> Corpus:
    corpus = Corpus.objects.filter(name=name).first()
    if corpus is None:
        raise NotFound(f"corpus {name!r} does not exist")
    return corpus


CORPUS_FIELDS = {
    "name": serializers.CharField(),
    "title": serializers.CharField(),
    "file_name": serializers.CharField(),
    "file_sha256": serializers.CharField(),
    "n_queries": serializers.IntegerField(),
    "n_models": serializers.IntegerField(),
    "n_responses": serializers.IntegerField(),
    "created_at": serializers.DateTimeField(),
    "embeddings": serializers.DictField(allow_null=True),
    "analysed_at": serializers.DateTimeField(allow_null=True),
    "report_url": serializers.CharField(allow_null=True),
}
CorpusSummary = inline_serializer("CorpusSummary", fields=CORPUS_FIELDS)
# the same component as a list: a second inline serializer of that name would not be the
# same component, and the list's body went undocumented
CorpusSummaryList = type(CorpusSummary)(many=True)


def corpus_payload(request, corpus: Corpus, analysed_at=None) -> dict:
    embeddings = None
    if corpus.has_embeddings:
        embeddings = {**corpus.embedding_facts(), "embedded_at": corpus.embedded_at}
    return {
        "name": corpus.name,
        "title": corpus.title,
        "file_name": corpus.file_name,
        "file_sha256": corpus.file_sha256,
        "n_queries": corpus.n_queries,
        "n_models": corpus.n_models,
        "n_responses": corpus.n_responses,
        "created_at": corpus.created_at,
        "embeddings": embeddings,
        "analysed_at": analysed_at,
        "report_url": request.build_absolute_uri(reverse("api-corpora-report", args=[corpus.name]))
        if analysed_at
        else None,
    }


class CorpusListView(APIView):
    permission_classes = [CanAnalyseCorpora]

    @extend_schema(
        tags=[TAG],
        summary="List corpora",
        description="Every corpus (pool of model responses) with its size, its embeddings "
        "and when it was last analysed.",
        responses={200: CorpusSummaryList, **error_responses(401, 403)},
    )
    def get(self, request):
        return Response(
            [
                corpus_payload(request, row["subject"], row["analysed_at"])
                for row in selectors.corpus_rows()
            ]
        )


class CorpusDetailView(APIView):
    permission_classes = [CanAnalyseCorpora]

    @extend_schema(
        tags=[TAG],
        summary="One corpus",
        description="The corpus's size, embeddings, categories (with their query counts) and "
        "models, and when it was last analysed.",
        responses={200: CorpusSummary, **error_responses(401, 403, 404)},
    )
    def get(self, request, name: str):
        corpus = _corpus(name)
        job = analyses.latest_job(corpus)
        payload = corpus_payload(request, corpus, job.finished_at if job else None)
        categories: dict[str, int] = {}
        for category in corpus.queries.values_list("category", flat=True):
            categories[category] = categories.get(category, 0) + 1
        payload["categories"] = [
            {"category": category, "queries": count}
            for category, count in sorted(categories.items())
        ]
        payload["models"] = sorted(corpus.corpus_models.values_list("name", flat=True))
        return Response(payload)


ReportResponse = inline_serializer(
    "CorpusReport",
    {
        name: serializers.DictField(help_text=meaning)
        for name, meaning in [
            ("intra_model", "Per model and `pooled`: mean, 10-bin histogram, shares above."),
            ("inter_model", "`models`, `matrix` (diagonal: intra-model), pairs, order."),
            ("top_n", "`n` = 1..50 and `mean_unique_models` with its CI."),
            ("lexical", "distinct-1..3 per model and pooled; exact-duplicate share."),
            ("by_category", "The same figures per category, with counts, small marked."),
            ("by_subcategory", "The same per sub-category."),
            ("human_judgments", "Typicality against ratings and entropy (Spearman, CI)."),
        ]
    },
)


class CorpusQueryTableView(APIView):
    permission_classes = [CanAnalyseCorpora]

    @extend_schema(
        tags=[TAG],
        summary="The per-query table (CSV)",
        description="One row per query of the newest analysis: counts, intra- and "
        "inter-model means, mean typicality, unique models at N = 1, 5, 10, 50, distinct-n "
        "and the duplicate share. `category=` keeps that category's queries only.",
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR),
            **error_responses(401, 403, 404),
        },
    )
    def get(self, request, name: str):
        corpus = _corpus(name)
        job = analyses.latest_job(corpus)
        if job is None or analyses.job_file(job, "queries") is None:
            raise NotFound(f"corpus: {name} has no finished analysis yet; start one first")
        table = downloads.queries_table(corpus, job, request.query_params)
        filename = f"corpus-{corpus.name}-queries.csv"
        if isinstance(table, str):
            response = HttpResponse(table, content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = content_disposition_header(True, filename)
            return response
        return FileResponse(
            open(table, "rb"),
            as_attachment=True,
            filename=filename,
            content_type="text/csv; charset=utf-8",
        )


ProjectionResponse = inline_serializer(
    "CorpusQueryProjection",
    {
        "corpus": serializers.CharField(),
        "query_id": serializers.CharField(),
        "query": serializers.CharField(),
        "category": serializers.CharField(),
        "subcategory": serializers.CharField(),
        "basis": serializers.CharField(
            help_text="`embeddings` (the corpus's embeddings) or `tfidf` (TF-IDF vectors of the "
            "texts)"
        ),
        "explained_variance": serializers.ListField(
            child=serializers.FloatField(allow_null=True),
            help_text="Share of variance on each of the two axes.",
        ),
        "inter_model_mean": serializers.FloatField(allow_null=True),
        "models": serializers.ListField(
            child=serializers.DictField(), help_text="The query's figures per model."
        ),
        "unique_models": serializers.ListField(
            child=serializers.FloatField(allow_null=True),
            help_text="Mean distinct models among the N nearest neighbours, N = 1, 2, ...",
        ),
        "responses": serializers.ListField(
            child=serializers.DictField(),
            help_text="Each response: x, y, model, sample, typicality, text.",
        ),
    },
)


class CorpusQueryProjectionView(APIView):
    permission_classes = [CanAnalyseCorpora]

    @extend_schema(
        tags=[TAG],
        summary="One query's responses in two dimensions",
        description="The query's responses projected on their first two principal axes "
        "(PCA of the unit-length embeddings, or TF-IDF vectors when the newest analysis was "
        "lexical), with model, sample, typicality and text; the per-model figures of the "
        "query.",
        responses={200: ProjectionResponse, **error_responses(401, 403, 404)},
    )
    def get(self, request, name: str, query_id: str):
        corpus = _corpus(name)
        detail = selectors.query_detail(corpus, query_id)
        if detail is None:
            raise NotFound(f"query: corpus {name} has no query {query_id!r}")
        return Response(selectors.projection_payload(corpus, detail))


class CorpusAnalysisRequest(serializers.Serializer):
    bootstrap = serializers.IntegerField(required=False, default=analyses.DEFAULT_DRAWS)
    seed = serializers.IntegerField(required=False, default=analyses.DEFAULT_SEED)
    lexical = serializers.BooleanField(required=False, default=False)
    human_batch = serializers.CharField(required=False, allow_blank=True, allow_null=True)


class SelectionRequest(serializers.Serializer):
    slug = serializers.CharField(help_text="the new batch's slug")
    rule = serializers.ChoiceField(choices=SelectionRule.choices)
    per_query = serializers.IntegerField(
        min_value=1,
        max_value=MAX_PER_QUERY,
        help_text="typicality: k most and k least typical per query; random: r per model and query",
    )
    seed = serializers.IntegerField(required=False, allow_null=True, min_value=0)
    categories = serializers.ListField(child=serializers.CharField(), required=False)
    title = serializers.CharField(required=False, allow_blank=True)
    annotations_per_item = serializers.IntegerField(required=False, min_value=1)


SelectionResponse = inline_serializer(
    "CorpusSelection",
    fields={
        "batch": serializers.CharField(),
        "batch_url": serializers.CharField(),
        "rule": serializers.CharField(),
        "per_query": serializers.IntegerField(),
        "seed": serializers.IntegerField(allow_null=True),
        "categories": serializers.ListField(child=serializers.CharField()),
        "analysis_job": serializers.CharField(allow_null=True),
        "counts": serializers.DictField(),
    },
)


class CorpusBatchesView(APIView):
    permission_classes = [CanMakeBatches]

    @extend_schema(
        tags=[TAG],
        summary="Make a batch from a selection",
        description="Creates a draft absolute batch of the corpus's responses chosen by "
        "`rule` (`typicality`: per query the k most and k least typical of the newest "
        "analysis; `random`: r per model and query with `seed`), optionally only of some "
        "`categories`; the rule goes into the batch's data card. 201 with the selection; "
        "400 (field `per_query`) when it would have more than `SELECTION_MAX_ITEMS` "
        "(default 20,000) responses.",
        request=SelectionRequest,
        responses={201: SelectionResponse, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request, name: str):
        corpus = _corpus(name)
        body = SelectionRequest(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        # the request's fields are make_batch's settings, by name; absent ones its defaults
        batch, selection = make_batch(corpus, **data, actor=Actor.of(request.user))
        return Response(
            {
                "batch": batch.slug,
                "batch_url": request.build_absolute_uri(reverse("api-batch", args=[batch.slug])),
                "rule": selection.rule,
                "per_query": selection.per_query,
                "seed": selection.seed,
                "categories": selection.categories,
                "analysis_job": str(selection.analysis_job_id)
                if selection.analysis_job_id
                else None,
                "counts": selection.counts,
            },
            status=status.HTTP_201_CREATED,
        )
