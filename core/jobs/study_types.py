"""One declaration per study type: what the platform must know to import, analyse and show
a kind of analysed subject (a census, a Genie set, a corpus's length statistics …).

A study type's package writes its pure core, a function that turns one subject into a
report, and how the report is shown; it declares them in one ``StudyType`` and registers
it from its ``AppConfig.ready()``::

    register_study_type(StudyType(slug="lengths", label="Lengths", ...))

From that declaration the scaffold makes everything else, the same for every type:

* the job kind (``job_kind``) and its runner: check the parameters, build the report,
  keep it as a JSON job file, draw the page's charts once (``core.jobs.study_jobs``);
* the staff pages under ``/manage/<slug>/`` (the list, the upload when the type imports
  its subjects, a subject's page, its "Run" form, the JSON and CSV downloads) and an entry
  in the staff navigation (``core.jobs.study_views``, ``core.jobs.study_urls``);
* the API's ``POST /api/v1/<slug>/<name>/analyses`` and ``GET …/report``
  (``core.jobs.study_api``);
* ``manage.py analyze_study <slug> NAME`` (``core.management.commands.analyze_study``).

What stays the type's own: its subject model (a unique ``name`` and a ``jobs``
GenericRelation to ``core.Job``), its parameters (``params``, the one check shared by
page, API and command, and the ``run_form`` that asks for them), its report and its page's
sections (``page_context`` and the page template, which extends ``core/study_page.html``).
"""

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.db.models import Model

# (subject, checked parameters, progress(step, total, message)) -> the report (plain JSON)
Analyse = Callable[[Model, dict, Callable[..., None]], dict]
# a report -> (column names, rows): one table of the report, downloaded as CSV
Table = Callable[[dict], tuple[list[str], list[list]]]


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
    analyse: Analyse
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
    # the report's tables, downloaded as <slug>-<name>-<table>.csv
    tables: Mapping[str, Table] = field(default_factory=dict)
    # what the job's result keeps of the report (beside the report file)
    summary: Callable[[dict], dict] = _nothing
    # what ``manage.py analyze_study`` prints: (subject, report, seconds taken) -> lines
    command_lines: Callable[[Model, dict, float], list[str]] = _analysed
    # the list page's upload, when the type imports its own subjects:
    # (request, actor) -> (the new subject, the message); raises ImportRejected/ServiceError
    upload: Callable[..., tuple[Model, str]] | None = None
    can_import: Callable[[object], bool] | None = None
    nav_order: int = 100
    # the API's words: its tag, the subject in its 404s ("genie"), its summaries
    api_tag: str = ""
    api_subject: str = ""
    api_text: ApiWords | None = None
    # the API's request body (a serializer class); by default one field per run-form field
    api_request: Any = None
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
    register_runner(study)
    register_nav(
        NavLink(study.label, study.url_name("list"), study.can_view, order=study.nav_order)
    )
    return study


SLUG = re.compile(r"^[a-z][a-z0-9-]{0,39}$")
# the scaffold's own pages of a subject, and the command's own arguments
PAGES = {"list", "upload", "run", "json"}
COMMAND_ARGUMENTS = {"study", "name", "json_path", "settings"}


def _check(study: StudyType) -> None:
    """Refuse a declaration the scaffold cannot serve, at start-up rather than at a
    request."""
    problems = []
    if not SLUG.match(study.slug):
        problems.append("slug: lower-case letters, digits and hyphens, a letter first")
    if study.upload is not None and study.can_import is None:
        problems.append("upload needs can_import (who may import)")
    problems += [f"table {table!r} is a page of every type" for table in PAGES & set(study.tables)]
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
