"""The API of every study type (``core.jobs.study_types``; API.md, "Analyses of a study
type"): start an analysis of a subject as a job (202 with the job to poll) and answer its
newest finished report (404 until there is one). The subject is named in the URL
(``<slug:name>``). A type's own API views (its list, its import, its exports) subclass
``SubjectAnalysisView`` for the subject and its report."""

from django import forms
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.access import permission_class
from core.api.jobs import start_job_response
from core.api.shapes import JOB_EXAMPLE, JobResponse, error_responses
from core.errors import InvalidInput, NotFound
from core.jobs.study_jobs import latest_report


def analysis_request(name: str, default_draws: int, default_seed: int) -> type:
    """A serializer class ``name`` (its schema component's name) of an analysis's settings:
    ``bootstrap``, ``seed`` and an optional ``human_batch`` slug, checked by the service."""
    fields = {
        "bootstrap": serializers.IntegerField(required=False, default=default_draws),
        "seed": serializers.IntegerField(required=False, default=default_seed),
        "human_batch": serializers.CharField(required=False, allow_blank=True, allow_null=True),
    }
    return type(name, (serializers.Serializer,), fields)


def request_of_form(study) -> type:
    """The API's request body of ``study`` when it names none: one optional field per field
    of its run form (whole numbers as integers, the rest as text), defaulting like the form."""
    fields = {}
    for name, form_field in study.run_form.base_fields.items():
        if isinstance(form_field, forms.IntegerField):
            fields[name] = serializers.IntegerField(
                required=False, default=form_field.initial, help_text=form_field.help_text
            )
        elif isinstance(form_field, forms.BooleanField):
            fields[name] = serializers.BooleanField(
                required=False, default=bool(form_field.initial), help_text=form_field.help_text
            )
        else:
            fields[name] = serializers.CharField(
                required=False, allow_blank=True, allow_null=True, help_text=form_field.help_text
            )
    component = study.class_stem + "AnalysisRequest"
    return type(component, (serializers.Serializer,), fields)


def start_analysis(request, subject, settings_serializer, params, job_kind: str):
    """Start a ``job_kind`` analysis of ``subject`` with the request body's settings
    (``settings_serializer``, then the type's ``params`` check): 202 with the job. A setting
    the analysis does not have is refused (400 naming it): misspelt, it would otherwise run
    at its default, unnoticed."""
    known = settings_serializer().fields
    unknown = sorted(str(key) for key in request.data if key not in known)
    if unknown:
        settings = ", ".join(known) or "none"
        raise InvalidInput(unknown[0], f"is not a setting of this analysis; settings: {settings}")
    settings = settings_serializer(data=request.data)
    settings.is_valid(raise_exception=True)
    return start_job_response(request, job_kind, subject, params(**settings.validated_data))


class SubjectAnalysisView(APIView):
    """Base of the views about one subject's analyses; ``study`` is its ``StudyType``."""

    study = None

    def subject(self, name: str):
        """The subject ``name``, or a 404 saying which is missing."""
        found = self.study.subject_model.objects.filter(name=name).first()
        if found is None:
            raise NotFound(f"{self.study.api_label} {name!r} does not exist")
        return found

    def report(self, name: str) -> dict:
        """The newest finished report of the subject ``name``, or a 404 saying to start one."""
        found = latest_report(self.study, self.subject(name))
        if found is None:
            raise NotFound(
                f"{self.study.api_label}: {name} has no finished analysis yet; start one first"
            )
        return found[1]

    @classmethod
    def of_study(cls, study, **attributes) -> type:
        """This view for ``study``: its subject, and its permission (analysing; reading needs
        only the right to view)."""
        permission = permission_class(study.can_analyse, read_check=study.can_view)
        name = study.class_stem + cls.__name__
        return type(
            name, (cls,), {"study": study, "permission_classes": [permission], **attributes}
        )


class StartAnalysisView(SubjectAnalysisView):
    """Start an analysis job; poll ``status_url``, then fetch the report."""

    settings_serializer = None

    def post(self, request, name: str):
        return start_analysis(
            request,
            self.subject(name),
            self.settings_serializer,
            self.study.params,
            self.study.job_kind,
        )

    @classmethod
    def for_study(cls, study) -> type:
        request = study.api_request or request_of_form(study)
        words = study.api_words
        view = cls.of_study(study, settings_serializer=request)
        return extend_schema_view(
            post=extend_schema(
                tags=[study.tag],
                summary=words.start_summary,
                description=words.start_description,
                request=request,
                responses={202: JobResponse, **error_responses(400, 401, 403, 404)},
                examples=[JOB_EXAMPLE],
            )
        )(view)


class ReportView(SubjectAnalysisView):
    """The newest finished report of the subject."""

    def get(self, request, name: str):
        return Response(self.report(name))

    @classmethod
    def for_study(cls, study) -> type:
        words = study.api_words
        return extend_schema_view(
            get=extend_schema(
                tags=[study.tag],
                summary=words.report_summary,
                description=words.report_description,
                responses={200: study.api_report or dict, **error_responses(401, 403, 404)},
            )
        )(cls.of_study(study))
