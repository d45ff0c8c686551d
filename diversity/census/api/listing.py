"""The census API (API.md, "One-Word Census"): what a census looks like in the list and how
the upload imports one (``LIST_API``, made a view by ``core.jobs.study_list_api``). Its
analyses and reports are every study type's (``core.jobs.study_api``)."""

from rest_framework import serializers

from core.audit import Actor
from core.errors import InvalidInput
from core.jobs.study_list_api import ListApi
from diversity.census.services.imports import CensusUpload, import_census


class CensusUploadRequest(serializers.Serializer):
    name = serializers.CharField(help_text="lower-case letters, digits and hyphens")
    files = serializers.ListField(
        child=serializers.FileField(),
        help_text="transcript .json files (one per model) and/or flat .jsonl/.csv files",
    )
    norms = serializers.FileField(required=False, help_text="human norms (.json)")
    description = serializers.CharField(required=False)


CENSUS_SUMMARY_FIELDS = {
    "name": serializers.CharField(),
    "description": serializers.CharField(),
    "created_at": serializers.DateTimeField(),
    "n_replies": serializers.IntegerField(),
    "n_models": serializers.IntegerField(),
    "n_categories": serializers.IntegerField(),
    "has_norms": serializers.BooleanField(),
    "analysed_at": serializers.DateTimeField(allow_null=True),
    "files": serializers.ListField(child=serializers.DictField()),
}


def census_payload(row: dict) -> dict:
    census = row["census"]
    return {
        "name": census.name,
        "description": census.description,
        "created_at": census.created_at,
        "n_replies": row["n_replies"],
        "n_models": row["n_models"],
        "n_categories": row["n_categories"],
        "has_norms": row["has_norms"],
        "analysed_at": row["analysed_at"],
        "files": [
            {
                "name": f.name,
                "role": f.role,
                "bytes": f.size_bytes,
                "sha256": f.sha256,
                "rows": f.n_rows,
            }
            for f in census.files.all()
        ],
    }


def import_from_request(request, actor: Actor):
    """A census from the API's multipart upload: ``name``, ``files``, optional ``norms``."""
    uploads = request.FILES.getlist("files")
    if not uploads:
        raise InvalidInput("files", "attach one or more reply files as 'files' (multipart)")
    norms = request.FILES.get("norms")
    return import_census(
        request.data.get("name", ""),
        [CensusUpload(upload, upload.name) for upload in uploads],
        norms=CensusUpload(norms, norms.name) if norms else None,
        description=request.data.get("description", "") or "",
        actor=actor,
    )


LIST_API = ListApi(
    component="CensusSummary",
    fields=CENSUS_SUMMARY_FIELDS,
    payload=census_payload,
    import_subject=import_from_request,
    import_request=CensusUploadRequest,
    list_summary="List censuses",
    list_description="Every One-Word Census with its size, whether it has human norms, its "
    "imported files (size, SHA-256) and when it was last analysed.",
    import_summary="Import a census",
    import_description="Model replies from transcript JSON files and/or flat JSONL/CSV files "
    "(`files`, one or more) and optional human norms (`norms`), all or nothing: 400 with "
    "every problem in `problems` (FORMATS.md, One-Word Census).",
)
