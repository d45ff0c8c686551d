"""What every ``manage.py analyze_*`` command of an analysed subject does: find the subject
by name, check the settings, run the analysis as a job in this process (recorded like one
started on the subject's page), write the report as JSON if asked, and say what it found.

A study type's command keeps only what is its own: which subjects it analyses, its
analysis service, and the lines that sum up its report (``summary``)."""

import time

from django.core.management.base import BaseCommand, CommandError

from core.audit import Actor
from core.errors import ServiceError
from core.files import write_json
from core.models import Job


class AnalyzeCommand(BaseCommand):
    """``manage.py analyze_… NAME [--json FILE] [--bootstrap B] [--seed S]
    [--human-batch SLUG]``; subclasses set the class attributes and ``summary``."""

    subject_model = None  # a model with a unique ``name``
    subject_label = ""  # the subject in messages: "census", "Genie set"
    human_batch_help = ""
    # The analysis service module: ``DEFAULT_DRAWS``, ``DEFAULT_SEED``,
    # ``analysis_params(bootstrap, seed, human_batch)``, ``analyse_now(subject, params,
    # actor)`` and ``latest_report(subject)``.
    analyses = None

    def summary(self, subject, report: dict, seconds: float) -> list[str]:
        """The lines that tell what the analysis found, its time (``seconds``) on the first."""
        raise NotImplementedError

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--json", dest="json_path", help="write the report here")
        parser.add_argument("--bootstrap", type=int, default=self.analyses.DEFAULT_DRAWS)
        parser.add_argument("--seed", type=int, default=self.analyses.DEFAULT_SEED)
        parser.add_argument("--human-batch", metavar="SLUG", help=self.human_batch_help)

    def handle(self, *args, name, json_path, bootstrap, seed, human_batch, **options):
        subject = self.subject_model.objects.filter(name=name).first()
        if subject is None:
            raise CommandError(f"{self.subject_label} {name!r} does not exist")
        started = time.perf_counter()
        try:
            params = self.analyses.analysis_params(bootstrap, seed, human_batch)
        except ServiceError as error:
            raise CommandError(str(error)) from error
        job = self.analyses.analyse_now(subject, params, Actor.command_line())
        if job.state != Job.State.SUCCEEDED:
            problems = (job.result or {}).get("problems") or []
            raise CommandError("\n".join([f"analysis failed: {job.message}", *problems]))
        _, report = self.analyses.latest_report(subject)
        if json_path:
            try:
                write_json(json_path, report)  # a FIFO or a device is written directly
            except OSError as error:
                raise CommandError(f"--json: cannot write {json_path}: {error.strerror}") from error
        lines = self.summary(subject, report, time.perf_counter() - started)
        if json_path:
            lines.append(f"report written to {json_path}")
        self.stdout.write("\n".join(lines))
