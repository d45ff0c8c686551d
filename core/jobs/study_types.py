"""One declaration per study type: what the platform must know to import, analyse and show
a kind of analysed subject (a census, a Genie set, a corpus's length statistics …).

A study type's package writes its pure core, a function that turns one subject into a
report, and how the report is shown; it declares them in one ``StudyType`` and registers
it from its ``AppConfig.ready()``::

    register_study_type(StudyType(slug="lengths", label="Lengths", ...))

From that declaration the scaffold makes everything else, the same for every type:

* the job kind (``job_kind``) and its runner: check the parameters, build the report,
  keep it as a JSON job file, draw the page's charts once (``core.jobs.study_jobs``) — or,
  for a type whose analysis runs its own way (in parts over the workers, like a corpus's),
  nothing: the type registers that job kind itself and declares ``analyse=None``;
* the staff pages under ``/manage/<slug>/`` (the list, the upload when the type imports
  its subjects — at once, or as a job the list page follows —, a subject's page, its "Run"
  form, the JSON and CSV downloads, and each figure as SVG and PDF with all of them in one
  zip) and an entry in the staff navigation (``core.jobs.study_views``,
  ``core.jobs.study_urls``);
* the API's ``POST /api/v1/<slug>/<name>/analyses`` and ``GET …/report``
  (``core.jobs.study_api``);
* ``manage.py analyze_study <slug> NAME`` (``core.management.commands.analyze_study``).

What stays the type's own: its subject model (a unique ``name`` and a ``jobs``
GenericRelation to ``core.Job``), its parameters (``params``, the one check shared by
page, API and command, and the ``run_form`` that asks for them), its report and its page's
sections (``page_context`` and the page template, which extends ``core/study_page.html``).
"""

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django import forms
from django.db.models import Model

# (subject, checked parameters, progress(step, total, message)) -> the report (plain JSON)
Analyse = Callable[[Model, dict, Callable[..., None]], dict]
# a report -> (column names, rows): one table of the report, downloaded as CSV
Table = Callable[[dict], tuple[list[str], list[list]]]
# (subject, the report's job, the download's query parameters) -> a table kept beside the
# report: the path of its CSV file, CSV text already written, or (column names, rows);
# raises ``Http404`` when it is no longer kept
JobTable = Callable[[Model, Model, Mapping[str, str]], "Path | str | tuple[list[str], Iterable]"]
# a report -> its figures for a paper, {key: (title, caption, drawing)}, each drawing with
# ``svg()`` (the page's inline chart) and ``file(fmt)`` (the bytes of an SVG or PDF file)
Figures = Callable[[dict], Mapping[str, tuple[str, str, Any]]]


def _nothing(*args, **kwargs) -> dict:
    return {}


def _analysed(subject, report: dict, seconds: float) -> list[str]:
    return [f"Analysed {subject.name} in {seconds:.1f} s"]


@dataclass(frozen=True)
class ApiWords:
    """What the API's schema says of a type's two operations."""

    start_summary: str
    start_description: str
    report_summary: str
    report_description: str


@dataclass(frozen=True)
class StudyType:
    # the URL segment and the stem of every URL name: /manage/<slug>/, manage-<slug>-list
    slug: str
    # the navigation entry and the crumbs' link back to the list: "Census"
    label: str
    # the subject in messages: "census", "Genie set", "corpus"
    subject_label: str
    subject_model: type[Model]
    job_kind: str
    # who may see the pages, run an analysis, import a subject (a function of the user)
    can_view: Callable[[object], bool]
    can_analyse: Callable[[object], bool]
    # checked job parameters from the settings given on a page, the API or the command
    # (keyword arguments; each has a default): raises ``core.errors.InvalidInput``
    params: Callable[..., dict]
    # the report of one subject; None for a type that registers ``job_kind``'s runner itself
    # (its runner keeps the report as the job's ``result_path``, like the scaffold's)
    analyse: Analyse | None
    # the "Run" form of the subject's page, its fields named like ``params``' arguments
    run_form: type[forms.Form]
    # the list page's rows, each a dict with the ``subject`` and when it was last
    # ``analysed_at`` (``core.jobs.subject_pages.analysed_at``)
    rows: Callable[[], list[dict]]
    list_template: str
    page_template: str
    # what the subject's page shows beyond the scaffold's own: (request, subject, job,
    # report) -> context (job and report are None before a first analysis; a "status" key
    # answers the page with that status, e.g. 400 for a refused form of the type's own)
    page_context: Callable[..., dict] = _nothing
    # below a report, what running the analysis again may change
    rerun_note: str = "With other settings."
    # the report's charts as [{"title", "svg", …}], drawn by the job once
    charts: Callable[[dict], list[dict]] | None = None
    # the report's figures as files (SVG, PDF, and a zip of them with the tables and the
    # captions); when ``charts`` is None, the page's charts are drawn from them
    figures: Figures | None = None
    # the table whose numbers a figure draws (figure key -> table): a CSV link under it
    figure_tables: Mapping[str, str] = field(default_factory=dict)
    # the report's tables, downloaded as <stem>-<name>-<table>.csv
    tables: Mapping[str, Table] = field(default_factory=dict)
    # tables kept beside the report by its job, or read with it from the subject
    job_tables: Mapping[str, JobTable] = field(default_factory=dict)
    # the tables with a button above the report (default: every one), and their labels
    # (default: "<Table> CSV")
    listed_tables: tuple[str, ...] | None = None
    table_labels: Mapping[str, str] = field(default_factory=dict)
    # the stem of the downloads' names (default: the slug)
    file_stem: str = ""
    # what the job's result keeps of the report (beside the report file)
    summary: Callable[[dict], dict] = _nothing
    # what ``manage.py analyze_study`` prints: (subject, report, seconds taken) -> lines
    command_lines: Callable[[Model, dict, float], list[str]] = _analysed
    # the list page's upload, when the type imports its own subjects:
    # (request, actor) -> (the new subject, the message); raises ImportRejected/ServiceError
    upload: Callable[..., tuple[Model, str]] | None = None
    can_import: Callable[[object], bool] | None = None
    # an upload that runs as a job of this kind: ``upload`` then returns the job, and the
    # list page follows it (``?job=<id>``) to the new subject or the file's problems
    import_job_kind: str | None = None
    nav_order: int = 100
    # the API's words: its tag, the subject in its 404s ("genie"), its summaries
    api_tag: str = ""
    api_subject: str = ""
    api_text: ApiWords | None = None
    # the API's request body (a serializer class); by default one field per run-form field
    api_request: Any = None
    # the API's report (a serializer, for the schema); by default a plain object
    api_report: Any = None
    # other page URLs of the type (django ``path``s), e.g. its own exports
    extra_urls: tuple = ()
    # the API's list and import of subjects (``core.jobs.study_list_api.ListApi``), when the
    # type imports its own
    list_api: Any = None

    @property
    def subject_title(self) -> str:
        """The subject at the start of a sentence: "Census", "Genie set"."""
        return self.subject_label[:1].upper() + self.subject_label[1:]

    @property
    def class_stem(self) -> str:
        """The slug as the start of a class or schema component name: "genie" → "Genie",
        "one-word" → "OneWord"."""
        return "".join(part.capitalize() for part in self.slug.split("-"))

    @property
    def stem(self) -> str:
        """The start of every downloaded file's name."""
        return self.file_stem or self.slug

    @property
    def table_names(self) -> list[str]:
        """Every table with a CSV download: the report's, then those kept beside it."""
        return [*self.tables, *self.job_tables]

    def table_label(self, table: str) -> str:
        return self.table_labels.get(table) or f"{table.replace('_', ' ').capitalize()} CSV"

    @property
    def draw_charts(self) -> Callable[[dict], list[dict]] | None:
        """The page's charts of a report: ``charts``, else drawn from ``figures``."""
        if self.charts is not None or self.figures is None:
            return self.charts
        figures = self.figures
        return lambda report: [
            {"key": key, "title": title, "caption": caption, "svg": drawing.svg()}
            for key, (title, caption, drawing) in figures(report).items()
        ]

    @property
    def tag(self) -> str:
        return self.api_tag or self.slug

    @property
    def api_label(self) -> str:
        return self.api_subject or self.subject_label

    @property
    def api_words(self) -> ApiWords:
        """The API's summaries, ``api_text`` or said plainly from the label."""
        if self.api_text is not None:
            return self.api_text
        what = f"{self.label} analysis"
        return ApiWords(
            start_summary=f"Start a {what}",
            start_description=f"Runs the {what} as a job: 202 with the job; poll its "
            "`status_url`, then read `GET …/report`.",
            report_summary=f"The newest {self.label} report",
            report_description=f"The report of the newest finished {what}. 404 until an "
            "analysis has finished.",
        )

    def url_name(self, page: str = "") -> str:
        """``manage-<slug>`` (a subject's page) or ``manage-<slug>-<page>``."""
        return f"manage-{self.slug}-{page}" if page else f"manage-{self.slug}"


_TYPES: dict[str, StudyType] = {}


def register_study_type(study: StudyType) -> StudyType:
    """Register ``study`` (once per slug) and its job kind; returns it."""
    from core.extensions import NavLink, register_nav
    from core.jobs.study_jobs import register_runner

    known = _TYPES.get(study.slug)
    if known is study:
        return study
    if known is not None:
        raise ValueError(f"study type {study.slug!r} is already registered")
    _check(study)
    _TYPES[study.slug] = study
    if study.analyse is not None:
        register_runner(study)
    register_nav(
        NavLink(study.label, study.url_name("list"), study.can_view, order=study.nav_order)
    )
    return study


SLUG = re.compile(r"^[a-z][a-z0-9-]{0,39}$")
# the scaffold's own pages of a subject, and the command's own arguments
PAGES = {"list", "upload", "run", "json", "figure", "figures"}
COMMAND_ARGUMENTS = {"study", "name", "json_path", "csv_dir", "set_values", "settings"}


def _check(study: StudyType) -> None:
    """Refuse a declaration the scaffold cannot serve, at start-up rather than at a
    request."""
    problems = []
    if not SLUG.match(study.slug):
        problems.append("slug: lower-case letters, digits and hyphens, a letter first")
    if study.upload is not None and study.can_import is None:
        problems.append("upload needs can_import (who may import)")
    if study.import_job_kind is not None and study.upload is None:
        problems.append("import_job_kind needs upload (which starts the job)")
    tables = set(study.table_names)
    problems += [f"table {table!r} is a page of every type" for table in PAGES & tables]
    if len(tables) < len(study.table_names):
        problems.append("a table is both the report's and kept beside it")
    problems += [
        f"listed table {table!r} is not a table"
        for table in study.listed_tables or ()
        if table not in tables
    ]
    problems += [
        f"figure {figure!r} draws table {table!r}, which is not a table"
        for figure, table in study.figure_tables.items()
        if table not in tables
    ]
    fields = set(study.run_form.base_fields)
    problems += [
        f"run form field {field!r} is the command's own" for field in fields & COMMAND_ARGUMENTS
    ]
    if problems:
        raise ValueError(f"study type {study.slug!r}: " + "; ".join(problems))


def study_type(slug: str) -> StudyType | None:
    return _TYPES.get(slug)


def study_types() -> list[StudyType]:
    """Every registered study type, by navigation order then slug."""
    return sorted(_TYPES.values(), key=lambda study: (study.nav_order, study.slug))
