"""The corpus import API (API.md, "Corpora"): upload a response pool, upload its embeddings,
or compute them with the local model, each as a background job (``202`` with the job to
poll at its ``status_url``).

A refused file makes the job fail with ``result.problems`` listing every ``FILE:LINE:
field: message``; nothing is stored then."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.views import APIView

from core.api.jobs import started_job_response
from core.api.shapes import JOB_EXAMPLE, JobResponse, error_responses
from core.errors import InvalidInput, NotFound
from diversity.corpora.access import CanChangeCorpora, CanImportCorpora
from diversity.corpora.models import Corpus
from diversity.corpora.services import embedding_jobs, embeddings, imports
from diversity.corpora.storage import DTYPES

__all__ = ["CorpusEmbeddingComputeView", "CorpusEmbeddingImportView", "CorpusImportView"]


def _corpus(name: str) -> Corpus:
    corpus = Corpus.objects.filter(name=name).first()
    if corpus is None:
        raise NotFound(f"corpus {name!r} does not exist")
    return corpus


def _text(request, field: str, default: str = "") -> str:
    value = request.data.get(field, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise InvalidInput(field, "must be text")
    return value


def _dtype(request) -> str:
    return embeddings.check_dtype(_text(request, "dtype", "float32").strip() or "float32")


def _flag(request, field: str) -> bool:
    value = request.data.get(field, False)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("", "0", "false", "no", "off"):
        return False
    if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on"):
        return True
    raise InvalidInput(field, "must be true or false")


class CorpusUpload(serializers.Serializer):
    name = serializers.CharField(help_text="lower-case letters, digits and hyphens (at most 100)")
    file = serializers.FileField(help_text="responses as .jsonl or .csv (FORMATS.md)")
    title = serializers.CharField(required=False, help_text="shown on the corpus page")


class EmbeddingUpload(serializers.Serializer):
    file = serializers.FileField(
        help_text=".parquet or .npz keyed by response_id, or a .npy in the corpus's order"
    )
    dtype = serializers.ChoiceField(choices=sorted(DTYPES), required=False, default="float32")


class EmbeddingCompute(serializers.Serializer):
    dtype = serializers.ChoiceField(choices=sorted(DTYPES), required=False, default="float32")
    restart = serializers.BooleanField(
        required=False, default=False, help_text="discard an unfinished run and start over"
    )


class CorpusImportView(APIView):
    """Upload a response pool as a new corpus, imported by a background job."""

    permission_classes = [CanImportCorpora]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        tags=["corpora"],
        summary="Import a corpus (job)",
        description=(
            "Multipart `name`, `file` (`.jsonl`/`.csv`, FORMATS.md 'Response pools'), "
            "optional `title`. Answers 202 with the job at once; poll its `status_url`. "
            "All or nothing: a refused file makes the job fail with `result.problems` "
            "listing every `FILE:LINE: field: message`. 409 when the name is taken."
        ),
        request={"multipart/form-data": CorpusUpload},
        responses={202: JobResponse, **error_responses(400, 401, 403, 409)},
        examples=[JOB_EXAMPLE],
    )
    def post(self, request):
        job = imports.start_import(
            _text(request, "name"),
            request.FILES.get("file"),
            title=_text(request, "title"),
            user=request.user,
        )
        return started_job_response(request, job)


class CorpusEmbeddingImportView(APIView):
    """Upload a corpus's embeddings, imported by a background job."""

    permission_classes = [CanChangeCorpora]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        tags=["corpora"],
        summary="Import a corpus's embeddings (job)",
        description=(
            "Multipart `file` (`.parquet`/`.npz` keyed by `response_id`, or `.npy` rows in "
            "the corpus's order; FORMATS.md 'Response embeddings'), optional `dtype` "
            "(`float32`, default, or `float16`). Answers 202 with the job; a refused file "
            "(a missing, unknown, repeated or wrong-dimension row, a value that is not a "
            "finite number) makes it fail with `result.problems`, and the corpus keeps the "
            "embeddings it had. 409 while an embeddings job of the corpus is pending or "
            "running."
        ),
        request={"multipart/form-data": EmbeddingUpload},
        responses={202: JobResponse, **error_responses(400, 401, 403, 404, 409)},
        examples=[JOB_EXAMPLE],
    )
    def post(self, request, name: str):
        job = embedding_jobs.start_embeddings_import(
            _corpus(name), request.FILES.get("file"), dtype=_dtype(request), user=request.user
        )
        return started_job_response(request, job)


class CorpusEmbeddingComputeView(APIView):
    """Compute a corpus's embeddings with the local model, as a background job."""

    permission_classes = [CanChangeCorpora]
    parser_classes = [JSONParser, MultiPartParser, FormParser]

    @extend_schema(
        tags=["corpora"],
        summary="Compute a corpus's embeddings with the local model (job)",
        description=(
            "Optional `dtype` (`float32`, default, or `float16`) and `restart`. Answers 202 "
            "with the job; an unfinished earlier run is continued where it stopped unless "
            "`restart`. 409 when the local model (the optional `embed` extra) is not "
            "installed on the server, or while an embeddings job of the corpus is pending or "
            "running."
        ),
        request=EmbeddingCompute,
        responses={202: JobResponse, **error_responses(400, 401, 403, 404, 409)},
        examples=[JOB_EXAMPLE],
    )
    def post(self, request, name: str):
        job = embedding_jobs.start_embeddings_compute(
            _corpus(name),
            dtype=_dtype(request),
            restart=_flag(request, "restart"),
            user=request.user,
        )
        return started_job_response(request, job)
