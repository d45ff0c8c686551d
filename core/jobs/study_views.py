"""The staff pages of every study type (``core.jobs.study_types``), under ``/manage/<slug>/``:

* the list: every subject with when it was last analysed, a button that analyses one at
  the default settings and, when the type imports its subjects, the upload form (all or
  nothing: its problems are listed on the list page, answered 400);
* a subject's page: the newest finished report with the type's own sections, its charts
  (stored by the job, else drawn once and cached), the running job's progress, the newest
  failure, and the form that runs the analysis again;
* the "Run" form's target (JSON for the page's script, else a redirect), the report's JSON
  file and each of its tables as CSV.

Views stay thin: each is made for one type by ``study_views(study)``."""

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from core.access import staff_page
from core.audit import Actor
from core.errors import ServiceError
from core.jobs.pages import start_job_from_page
from core.jobs.study_jobs import latest_report
from core.jobs.study_types import study_type
from core.jobs.subject_pages import (
    analysis_context,
    cached_charts,
    csv_download,
    report_file,
    report_or_404,
)
from core.tabular import ImportRejected


def run_defaults(study) -> dict:
    """The run form's fields at their initial values ("" where a field has none): what the
    list's button posts, and the form's values where the newest report's parameters lack
    one."""
    return {
        name: "" if form_field.initial is None else form_field.initial
        for name, form_field in study.run_form.base_fields.items()
    }


def params_of(study, data: dict) -> dict:
    """Checked job parameters from a valid run form's ``cleaned_data`` (an empty choice is
    none)."""
    return study.params(**{name: None if value == "" else value for name, value in data.items()})


def downloads(study, subject) -> list[dict]:
    """The report's downloads: its JSON file, then each table as CSV."""
    found = [{"label": "Report JSON", "url": reverse(study.url_name("json"), args=[subject.name])}]
    for table in study.tables:
        url = reverse(study.url_name(table), args=[subject.name])
        found.append({"label": f"{table.replace('_', ' ').capitalize()} CSV", "url": url})
    return found


class StudyViews:
    """The page views of one study type."""

    def __init__(self, study):
        self.slug = study.slug
        # each guard asks the type as registered at the request, like the views themselves
        guard_view = staff_page(lambda user: self.study.can_view(user))
        guard_analyse = staff_page(lambda user: self.study.can_analyse(user))
        self.list = guard_view(require_GET(self._list))
        self.page = guard_view(require_GET(self._page))
        self.run = guard_analyse(require_POST(self._run))
        self.report_json = guard_view(require_GET(self._report_json))
        self.table_csv = guard_view(require_GET(self._table_csv))
        self.upload = None
        if study.upload is not None:
            guard_import = staff_page(lambda user: self.study.can_import(user))
            self.upload = guard_import(require_POST(self._upload))

    # ------------------------------------------------------------------ helpers

    @property
    def study(self):
        """The type as registered now (read at each request: a test may swap it)."""
        return study_type(self.slug)

    def subject(self, name: str):
        return get_object_or_404(self.study.subject_model, name=name)

    def found_report(self, subject):
        return report_or_404(
            latest_report(self.study, subject), f"{self.study.subject_title} {subject.name}"
        )

    def list_context(self, request: HttpRequest, **extra) -> dict:
        study = self.study
        return {
            "study": study,
            "rows": study.rows(),
            # the upload form: for a type that imports its own subjects, to who may import
            "can_import": study.upload is not None and study.can_import(request.user),
            "can_analyse": study.can_analyse(request.user),
            "run_defaults": run_defaults(study),
            "run_url_name": study.url_name("run"),
            "upload_url_name": study.url_name("upload"),
            **extra,
        }

    # ------------------------------------------------------------------ the list

    def _list(self, request: HttpRequest) -> HttpResponse:
        return render(request, self.study.list_template, self.list_context(request))

    def _upload(self, request: HttpRequest) -> HttpResponse:
        name = request.POST.get("name", "")
        description = request.POST.get("description", "")
        try:
            subject, message = self.study.upload(request, Actor.of(request.user))
        except ImportRejected as rejected:
            problems = list(rejected.problems)
        except ServiceError as error:
            problems = [str(error)]
        else:
            messages.success(request, message)
            return redirect(self.study.url_name(), name=subject.name)
        context = self.list_context(
            request, problems=problems, form_values={"name": name, "description": description}
        )
        return render(request, self.study.list_template, context, status=400)

    # ------------------------------------------------------------------ a subject

    def _page(self, request: HttpRequest, name: str) -> HttpResponse:
        study = self.study
        subject = self.subject(name)
        found = latest_report(study, subject)
        context = {
            "study": study,
            "subject": subject,
            **analysis_context(subject, study.job_kind, found, study.run_form, run_defaults(study)),
            "run_url": reverse(study.url_name("run"), args=[subject.name]),
            "can_analyse": study.can_analyse(request.user),
            "list_url_name": study.url_name("list"),
            "downloads": downloads(study, subject),
            "rerun_note": study.rerun_note,
        }
        job, report = context["job"], context["report"]
        if report is not None:
            context["settings"] = report.get("settings", {})
            if study.charts is not None:
                context["charts"] = cached_charts(study.slug, job, lambda: study.charts(report))
        context.update(study.page_context(request, subject, job, report))
        status = context.pop("status", 200)  # a type's own form on the page may refuse
        return render(request, study.page_template, context, status=status)

    def _run(self, request: HttpRequest, name: str) -> HttpResponse:
        study = self.study
        subject = self.subject(name)
        return start_job_from_page(
            request,
            study.job_kind,
            subject,
            study.run_form(request.POST),
            lambda data: params_of(study, data),
            back_to=reverse(study.url_name(), args=[subject.name]),
            finished=f"{study.subject_title} {subject.name} analysed.",
        )

    # ------------------------------------------------------------------ downloads

    def _report_json(self, request: HttpRequest, name: str) -> HttpResponse:
        subject = self.subject(name)
        job, _ = self.found_report(subject)
        return report_file(job, f"{self.study.slug}-{subject.name}-report.json")

    def _table_csv(self, request: HttpRequest, name: str, table: str) -> HttpResponse:
        make_table = self.study.tables.get(table)
        if make_table is None:
            raise Http404(f"{self.study.subject_label} reports have no table {table!r}")
        subject = self.subject(name)
        _, report = self.found_report(subject)
        columns, rows = make_table(report)
        return csv_download(columns, rows, f"{self.study.slug}-{subject.name}-{table}.csv")
