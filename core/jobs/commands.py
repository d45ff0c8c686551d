"""What every ``manage.py analyze_study``-like command does: find the subject of a study type
(``core.jobs.study_types``) by name, check the settings, run the analysis as a job in this
process (recorded like one started on the subject's page), write the report as JSON and
every table as CSV if asked, and say what it found (the type's ``command_lines``).

``manage.py analyze_study TYPE NAME [--set SETTING=VALUE …]`` serves every type; a type may keep
a command of its own (``analyze_census``) whose options are its run form's fields
(``--bootstrap 200 --human-batch people --lexical``): a subclass naming ``study_slug``."""

import shutil
import time
from pathlib import Path

from django import forms
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.http import Http404

from core import csv_files
from core.audit import Actor
from core.commands import existing
from core.errors import ServiceError
from core.files import write_json
from core.jobs.execution import job_report
from core.jobs.queue import run_now
from core.jobs.study_types import study_type, study_types
from core.models import Job


def analysed_report(job_kind: str, subject, params: dict) -> tuple[Job, dict]:
    """Run a ``job_kind`` analysis of ``subject`` as a job in this process, recorded like one
    started on its page (so the page shows it); the job and its report (this run's, even
    when another finished meanwhile). A failed job ends the command with its message and
    every problem."""
    job = run_now(job_kind, subject, params, Actor.command_line())
    if job.state != Job.State.SUCCEEDED:
        problems = (job.result or {}).get("problems") or []
        raise CommandError("\n".join([f"analysis failed: {job.message}", *problems]))
    return job, job_report(job)


def write_report_json(json_path: str, report: dict) -> None:
    """``--json``: the report written to ``json_path`` (a FIFO or a device directly)."""
    try:
        write_json(json_path, report)
    except OSError as error:
        raise CommandError(f"--json: cannot write {json_path}: {error.strerror}") from error


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


class AnalyzeCommand(BaseCommand):
    """``manage.py analyze_<slug> NAME [--json FILE] [--<setting> VALUE …]``, or, without
    ``study_slug``, ``manage.py analyze_study TYPE NAME [--json FILE] [--set SETTING=VALUE …]``."""

    study_slug = ""

    def add_arguments(self, parser):
        if not self.study_slug:
            parser.add_argument("study", metavar="TYPE", help="the study type: census, genie, …")
        parser.add_argument("name")
        parser.add_argument("--json", dest="json_path", help="write the report here")
        parser.add_argument(
            "--csv", dest="csv_dir", metavar="DIR", help="write every table as CSV here"
        )
        if self.study_slug:
            for name, form_field in study_type(self.study_slug).run_form.base_fields.items():
                said = {"help": str(form_field.help_text).replace("%", "%%") or None}
                if isinstance(form_field, forms.BooleanField):
                    said.update(action="store_true", default=None)
                else:
                    integer = isinstance(form_field, forms.IntegerField)
                    said["type"] = int if integer else str
                parser.add_argument(_option(name), dest=name, **said)
        else:
            parser.add_argument(
                "--set",
                # not "settings": Django reads that option as the settings module's path
                dest="set_values",
                action="append",
                default=[],
                metavar="SETTING=VALUE",
                help="a setting of the type's analysis (its run form's fields), repeatable",
            )

    def handle(self, *args, name, json_path, csv_dir=None, **options):
        study = self._study(options.get("study") or self.study_slug)
        subject = existing(study.subject_model, study.subject_label, name=name)
        started = time.perf_counter()
        try:
            params = study.params(**self._settings(study, options))
        except ServiceError as error:
            raise CommandError(str(error)) from error
        job, report = analysed_report(study.job_kind, subject, params)
        if json_path:
            write_report_json(json_path, report)
        if csv_dir:
            try:
                self._write_tables(study, subject, job, report, Path(csv_dir))
            except OSError as error:
                raise CommandError(f"--csv: cannot write {csv_dir}: {error.strerror}") from error
            except Http404 as gone:  # a table kept beside an older report, since removed
                raise CommandError(f"--csv: {gone}") from gone
        lines = study.command_lines(subject, report, time.perf_counter() - started)
        if json_path:
            lines.append(f"report written to {json_path}")
        if csv_dir:
            lines.append(f"tables written to {csv_dir}")
        self.stdout.write("\n".join(lines))

    @staticmethod
    def _write_tables(study, subject, job: Job, report: dict, folder: Path) -> None:
        """Every table of the report, and those kept beside it, as ``<name>-<table>.csv``;
        none when one of them is no longer kept (each is asked for before any is written)."""
        tables = {
            table: study.tables[table](report)
            if table in study.tables
            else study.job_tables[table](subject, job, {})
            for table in study.table_names
        }
        folder.mkdir(parents=True, exist_ok=True)
        for table, kept in tables.items():
            path = folder / f"{subject.name}-{table}.csv"
            if isinstance(kept, Path):
                shutil.copyfile(kept, path)
                continue
            if isinstance(kept, str):
                path.write_text(kept, encoding="utf-8")
                continue
            with open(path, "w", encoding="utf-8", newline="") as stream:
                csv_files.write_table(stream, *kept)

    @staticmethod
    def _study(slug: str):
        study = study_type(slug)
        if study is None:
            known = ", ".join(known.slug for known in study_types())
            raise CommandError(f"no study type {slug!r}; known: {known}")
        return study

    def _settings(self, study, options: dict) -> dict:
        """The settings given: the type's own options, or each ``--set SETTING=VALUE`` read
        as its run-form field reads it; the others keep their defaults."""
        fields = study.run_form.base_fields
        if self.study_slug:
            return {name: options[name] for name in fields if options.get(name) is not None}
        settings = {}
        for given in options["set_values"]:
            name, equals, value = given.partition("=")
            if not equals or name.replace("-", "_") not in fields:
                known = ", ".join(fields) or "none"
                raise CommandError(f"--set {given!r}: expected SETTING=VALUE; settings: {known}")
            name = name.replace("-", "_")
            try:
                settings[name] = fields[name].to_python(value)
            except ValidationError as error:
                raise CommandError(f"--set {name}: {' '.join(error.messages)}") from error
        return settings
