"""A study type's API list and import (``GET`` / ``POST /api/v1/<slug>/``; API.md): every
subject with its size and newest analysis, and a multipart upload that imports one, all or
nothing (400 with every problem). The type declares what differs in a ``ListApi`` — the
fields of one subject, how a row of its list becomes them, how an upload becomes a
subject, and the schema's words — and the scaffold makes the view (``core.jobs.study_urls``
names it ``api-<slug>-list``)."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from drf_spectacular.utils import extend_schema, extend_schema_view, inline_serializer
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from core.access import permission_class
from core.audit import Actor


@dataclass(frozen=True)
class ListApi:
    # the schema component of one subject ("CensusSummary") and its fields
    component: str
    fields: Mapping
    # one row of the type's ``rows`` (it holds the ``subject``) -> the subject's JSON
    payload: Callable[[dict], dict]
    # the multipart upload -> the new subject (request, actor); raises ServiceError
    import_subject: Callable
    # the upload's fields, a serializer class (for the schema)
    import_request: type
    list_summary: str
    list_description: str
    import_summary: str
    import_description: str


class SubjectListView(APIView):
    """List a study type's subjects; import one from a multipart upload."""

    study = None
    parser_classes = [MultiPartParser, FormParser]

    def get(self, request):
        listing = self.study.list_api
        return Response([listing.payload(row) for row in self.study.rows()])

    def post(self, request):
        subject = self.study.list_api.import_subject(request, Actor.of(request.user))
        row = next(row for row in self.study.rows() if row["subject"].pk == subject.pk)
        return Response(self.study.list_api.payload(row), status=status.HTTP_201_CREATED)

    @classmethod
    def for_study(cls, study) -> type:
        """The view of ``study``: listing and importing need the right to import (reading
        the list, the right to view)."""
        listing = study.list_api
        permission = permission_class(study.can_import, read_check=study.can_view)
        name = study.class_stem + cls.__name__
        view = type(name, (cls,), {"study": study, "permission_classes": [permission]})
        one = inline_serializer(listing.component, fields=dict(listing.fields))
        many = type(one)(many=True)  # the same component, as a list
        return extend_schema_view(
            get=extend_schema(
                tags=[study.tag],
                summary=listing.list_summary,
                description=listing.list_description,
                responses=many,
            ),
            post=extend_schema(
                tags=[study.tag],
                summary=listing.import_summary,
                description=listing.import_description,
                request={"multipart/form-data": listing.import_request},
                responses={201: one},
            ),
        )(view)
