"""The Genie API's list and import (API.md, "Genie"): what a set looks like in the list and
how the upload imports one (``LIST_API``, made a view by ``core.jobs.study_list_api``)."""

from rest_framework import serializers

from core.audit import Actor
from core.errors import InvalidInput
from core.jobs.study_list_api import ListApi
from diversity.genie.services.imports import companion_files, import_genie


class GenieUploadRequest(serializers.Serializer):
    name = serializers.CharField(help_text="lower-case letters, digits and hyphens")
    file = serializers.FileField(
        help_text="judgments as .jsonl, .json or .csv, the platform's layout or GENIE's "
        "(FORMATS.md, 'Genie')"
    )
    population = serializers.FileField(
        required=False, help_text="GENIE: the population's answers file"
    )
    questions = serializers.FileField(required=False, help_text="GENIE's questions file")
    model_map = serializers.FileField(
        required=False, help_text='{"NAME": {"model": ..., "method": ...}} (JSON)'
    )
    description = serializers.CharField(required=False)


GENIE_SUMMARY_FIELDS = {
    "name": serializers.CharField(),
    "description": serializers.CharField(),
    "created_at": serializers.DateTimeField(),
    "file": serializers.DictField(),
    "n_judgments": serializers.IntegerField(),
    "n_llm": serializers.IntegerField(),
    "n_human": serializers.IntegerField(),
    "layout": serializers.CharField(help_text="platform, genie-similarity or genie-answers"),
    "left_out": serializers.DictField(
        child=serializers.IntegerField(), help_text="pairs left out of the scores, by reason"
    ),
    "repeated_pairs": serializers.IntegerField(
        help_text="rows of GENIE's similarity file judging a pair judged before (kept)"
    ),
    "human_batch": serializers.CharField(allow_null=True),
    "analysed_at": serializers.DateTimeField(allow_null=True),
}


def genie_payload(row: dict) -> dict:
    genie_set = row["genie_set"]
    return {
        "name": genie_set.name,
        "description": genie_set.description,
        "created_at": genie_set.created_at,
        "file": {
            "name": genie_set.file_name,
            "bytes": genie_set.file_bytes,
            "sha256": genie_set.file_sha256,
        },
        "n_judgments": row["n_judgments"],
        "n_llm": row["n_llm"],
        "n_human": row["n_human"],
        "layout": genie_set.layout,
        "left_out": genie_set.left_out,
        "repeated_pairs": genie_set.repeated_pairs,
        "human_batch": genie_set.human_batch.slug if genie_set.human_batch else None,
        "analysed_at": row["analysed_at"],
    }


def import_from_request(request, actor: Actor):
    """A Genie set from the API's multipart upload: ``name``, ``file`` and GENIE's
    companion files."""
    upload = request.FILES.get("file")
    if upload is None:
        raise InvalidInput("file", "attach the judgments file as 'file' (multipart)")
    return import_genie(
        request.data.get("name", ""),
        upload,
        filename=upload.name,
        description=request.data.get("description", "") or "",
        actor=actor,
        **companion_files(request.FILES),
    )


LIST_API = ListApi(
    component="GenieSummary",
    fields=GENIE_SUMMARY_FIELDS,
    payload=genie_payload,
    import_subject=import_from_request,
    import_request=GenieUploadRequest,
    list_summary="List Genie sets",
    list_description="Every Genie set with its file (size, SHA-256), its judgments by source, "
    "its similarity batch and when it was last analysed.",
    import_summary="Import a Genie set",
    import_description="Similarity judgments from a JSONL or CSV file (`file`), all or nothing: "
    "400 with every `FILE:LINE: field: message` in `problems` (FORMATS.md, Genie).",
)
