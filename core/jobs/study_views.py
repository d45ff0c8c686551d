"""The staff pages of every study type (``core.jobs.study_types``), under ``/manage/<slug>/``:

* the list: every subject with when it was last analysed, a button that analyses one at
  the default settings and, when the type imports its subjects, the upload form (all or
  nothing: its problems are listed on the list page, answered 400; an import that runs as
  a job sends the page to ``?job=<id>``, which follows it to the new subject or the file's
  problems);
* a subject's page: the newest finished report with the type's own sections, its charts
  (stored by the job, else drawn once and cached), the running job's progress, the newest
  failure, and the form that runs the analysis again;
* the "Run" form's target (JSON for the page's script, else a redirect), the report's JSON
  file, each of its tables as CSV, and each figure as SVG or PDF with all of them in one
  zip (with the captions and the report's tables).

Views stay thin: each is made for one type by ``StudyViews(study)``; a type's own views
show the subject's page with something of their own through ``render_subject_page``."""

import io
import zipfile
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_POST

from core import csv_files
from core.access import staff_page
from core.audit import Actor
from core.errors import ServiceError
from core.jobs.pages import job_status, start_job_from_page
from core.jobs.study_jobs import latest_report
from core.jobs.study_types import study_type
from core.jobs.subject_pages import (
    RUNNING_STATES,
    analysis_context,
    cached_charts,
    csv_download,
    followed_job,
    job_problems,
    report_file,
    report_or_404,
    text_csv_download,
    with_job,
)
from core.models import Job
from core.tabular import ImportRejected

FIGURE_FORMATS = {"svg": "image/svg+xml", "pdf": "application/pdf"}
# a downloaded SVG opened in the browser runs nothing and loads nothing
FIGURE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


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
    """The buttons above the report: its JSON file, the figures' zip, then each listed
    table as CSV."""
    found = [{"label": "Report JSON", "url": reverse(study.url_name("json"), args=[subject.name])}]
    if study.figures is not None:
        url = reverse(study.url_name("figures"), args=[subject.name])
        found.append({"label": "Figures and tables (zip)", "url": url})
    listed = study.table_names if study.listed_tables is None else study.listed_tables
    for table in listed:
        url = reverse(study.url_name(table), args=[subject.name])
        found.append({"label": study.table_label(table), "url": url})
    return found


def figure_response(content: bytes, fmt: str, filename: str) -> HttpResponse:
    """A figure file (``fmt`` one of ``FIGURE_FORMATS``) as a download named ``filename``; an
    SVG opened in the browser runs nothing and loads nothing."""
    response = HttpResponse(content, content_type=FIGURE_FORMATS[fmt])
    response["Content-Disposition"] = content_disposition_header(True, filename)
    if fmt == "svg":
        response["Content-Security-Policy"] = FIGURE_CSP
    return response


def chart_files(study, subject, charts: list[dict]) -> list[dict]:
    """Each chart with links to its figure files (and the table it draws) when the type
    has figures."""
    if study.figures is None:
        return charts
    figure = study.url_name("figure")
    linked = []
    for chart in charts:
        files = [
            {"label": fmt.upper(), "url": reverse(figure, args=[subject.name, chart["key"], fmt])}
            for fmt in FIGURE_FORMATS
        ]
        table = study.figure_tables.get(chart["key"])
        if table:
            files.append(
                {"label": "CSV", "url": reverse(study.url_name(table), args=[subject.name])}
            )
        linked.append({**chart, "files": files})
    return linked


def import_outcome(study, job: Job) -> dict:
    """The list page's account of the import job it follows: its progress while it runs,
    then the new subject, or the file's problems (with what was typed, to try again)."""
    params = job.params or {}
    outcome = {"followed_job": job, "upload_name": params.get("filename", "")}
    if job.state in RUNNING_STATES:
        outcome["followed_status"] = job_status(job)
    elif job.state == Job.State.SUCCEEDED:
        outcome["imported"] = job.result or {}
        subjects = study.subject_model.objects
        outcome["imported_subject"] = subjects.filter(name=params.get("name")).first()
    else:
        outcome["problems"] = job_problems(job)
        outcome["form_values"] = {
            key: value for key, value in params.items() if isinstance(value, str)
        }
    return outcome


def render_subject_page(request: HttpRequest, study, subject, *, status: int = 200, **extra):
    """A subject's page; ``extra`` adds to (or replaces) what the page shows, e.g. the
    problems of a type's own form that refused (``status`` 400)."""
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
        if study.draw_charts is not None:
            charts = cached_charts(study.slug, job, lambda: study.draw_charts(report))
            context["charts"] = chart_files(study, subject, charts)
    context.update(study.page_context(request, subject, job, report))
    context.update(extra)
    status = context.pop("status", status)  # a type's own form on the page may refuse
    return render(request, study.page_template, context, status=status)


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
        self.figure = guard_view(require_GET(self._figure))
        self.figures_zip = guard_view(require_GET(self._figures_zip))
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
            "upload_max_mb": settings.UPLOAD_MAX_BYTES // (1024 * 1024),
            **extra,
        }

    # ------------------------------------------------------------------ the list

    def _list(self, request: HttpRequest) -> HttpResponse:
        study = self.study
        outcome = {}
        if study.import_job_kind is not None and study.can_import(request.user):
            job = followed_job(request.GET.get("job"), study.import_job_kind, user=request.user)
            if job is not None:
                outcome = import_outcome(study, job)
        return render(request, study.list_template, self.list_context(request, **outcome))

    def _upload(self, request: HttpRequest) -> HttpResponse:
        study = self.study
        typed = {key: request.POST.get(key, "") for key in request.POST}
        typed.pop("csrfmiddlewaretoken", None)
        upload = next(iter(request.FILES.values()), None)
        try:
            started = study.upload(request, Actor.of(request.user))
        except ImportRejected as rejected:
            problems = list(rejected.problems)
        except ServiceError as error:
            problems = [str(error)]
        else:
            if study.import_job_kind is not None:
                return redirect(with_job(reverse(study.url_name("list")), started))
            subject, message = started
            messages.success(request, message)
            return redirect(study.url_name(), name=subject.name)
        context = self.list_context(
            request,
            problems=problems,
            form_values=typed,
            upload_name=upload.name if upload is not None else "",
        )
        return render(request, study.list_template, context, status=400)

    # ------------------------------------------------------------------ a subject

    def _page(self, request: HttpRequest, name: str) -> HttpResponse:
        return render_subject_page(request, self.study, self.subject(name))

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
        return report_file(job, f"{self.study.stem}-{subject.name}-report.json")

    def _table_csv(self, request: HttpRequest, name: str, table: str) -> HttpResponse:
        study = self.study
        if table not in study.table_names:
            raise Http404(f"{study.subject_label} reports have no table {table!r}")
        subject = self.subject(name)
        job, report = self.found_report(subject)
        filename = f"{study.stem}-{subject.name}-{table}.csv"
        if table in study.tables:
            columns, rows = study.tables[table](report)
            return csv_download(columns, rows, filename)
        kept = study.job_tables[table](subject, job, request.GET)
        if isinstance(kept, str):
            return text_csv_download(kept, filename)
        if isinstance(kept, Path):
            return FileResponse(
                open(kept, "rb"),  # FileResponse closes it
                as_attachment=True,
                filename=filename,
                content_type="text/csv; charset=utf-8",
            )
        return csv_download(*kept, filename)

    def _figures(self, subject) -> tuple[Job, dict, dict]:
        """The newest report's job, the report and its figures."""
        if self.study.figures is None:
            raise Http404(f"{self.study.subject_label} reports have no figures")
        job, report = self.found_report(subject)
        return job, report, self.study.figures(report)

    def _figure(self, request: HttpRequest, name: str, key: str, fmt: str) -> HttpResponse:
        """One figure of the report as a standalone SVG or PDF file, for a paper."""
        subject = self.subject(name)
        found = self._figures(subject)[2].get(key)
        if found is None or fmt not in FIGURE_FORMATS:
            raise Http404(f"The report of {subject.name} has no figure {key}.{fmt}.")
        return figure_response(found[2].file(fmt), fmt, f"{subject.name}-{key}.{fmt}")

    def _figures_zip(self, request: HttpRequest, name: str) -> HttpResponse:
        """Every figure as SVG and PDF, and every table of the report as CSV, in one zip
        with the captions."""
        study = self.study
        subject = self.subject(name)
        job, report, figures = self._figures(subject)
        buffer = io.BytesIO()
        stem = subject.name
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            finished = f"{job.finished_at:%Y-%m-%d %H:%M} UTC"
            captions = [f"Figures of {study.subject_label} {stem} ({finished})\n"]
            for key, (title, caption, drawing) in figures.items():
                for fmt in FIGURE_FORMATS:
                    archive.writestr(f"{stem}-{key}.{fmt}", drawing.file(fmt))
                captions.append(f"{stem}-{key}: {title}\n{caption}\n")
            archive.writestr("captions.txt", "\n".join(captions))
            for key, table in study.tables.items():
                archive.writestr(f"{stem}-{key}.csv", csv_files.table_text(*table(report)))
        response = HttpResponse(buffer.getvalue(), content_type="application/zip")
        filename = f"{study.stem}-{stem}-figures.zip"
        response["Content-Disposition"] = content_disposition_header(True, filename)
        return response
