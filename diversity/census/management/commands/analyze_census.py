"""``manage.py analyze_census NAME [--json FILE] [--bootstrap B] [--seed S]
[--human-batch SLUG]``"""

import time

from django.core.management.base import BaseCommand, CommandError

from core.audit import Actor
from core.errors import ServiceError
from core.files import write_json
from core.models import Job
from diversity.census.models import Census
from diversity.census.services.analyses import (
    DEFAULT_DRAWS,
    DEFAULT_SEED,
    analyse_now,
    analysis_params,
    latest_report,
)


class Command(BaseCommand):
    help = (
        "Analyse a census (ANALYSIS.md, 'One-Word Census'): per-model surprisal, modal "
        "avoidance, novelty, self-distinctness and type; per-category concentration; the "
        "comparison with human norms. The analysis is recorded like one started on the page."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--json", dest="json_path", help="write the report here")
        parser.add_argument("--bootstrap", type=int, default=DEFAULT_DRAWS)
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
        parser.add_argument(
            "--human-batch", metavar="SLUG", help="a short_text batch of human answers"
        )

    def handle(self, *args, name, json_path, bootstrap, seed, human_batch, **options):
        census = Census.objects.filter(name=name).first()
        if census is None:
            raise CommandError(f"census {name!r} does not exist")
        started = time.perf_counter()
        try:
            params = analysis_params(bootstrap, seed, human_batch)
        except ServiceError as error:
            raise CommandError(str(error)) from error
        job = analyse_now(census, params, Actor.command_line())
        if job.state != Job.State.SUCCEEDED:
            problems = (job.result or {}).get("problems") or []
            raise CommandError("\n".join([f"analysis failed: {job.message}", *problems]))
        _, report = latest_report(census)
        if json_path:
            try:
                write_json(json_path, report)  # a FIFO or a device is written directly
            except OSError as error:
                raise CommandError(f"--json: cannot write {json_path}: {error.strerror}") from error
        lines = [
            f"Analysed census {census.name}: {report['n_models']} models, "
            f"{report['n_categories']} categories, {report['n_answers']} answers "
            f"({report['n_failed']} failed cells) in {time.perf_counter() - started:.1f} s"
        ]
        for key, label in (("published", "published model column"), ("computed", "computed")):
            comparison = (report.get("norms") or {}).get(key)
            if comparison and comparison["n_categories"]:
                lines.append(_comparison_line(f"against the imported norms ({label})", comparison))
        if report.get("human_batch"):
            comparison = report["human_batch"]["computed"]
            if comparison["n_categories"]:
                lines.append(
                    _comparison_line(f"against batch {report['human_batch']['batch']}", comparison)
                )
        if json_path:
            lines.append(f"report written to {json_path}")
        self.stdout.write("\n".join(lines))


def _comparison_line(title: str, comparison: dict) -> str:
    return (
        f"  {title}: model field more concentrated in {comparison['n_model_more_concentrated']} "
        f"of {comparison['n_categories']} categories, mean modal share "
        f"{comparison['mean_model_share']:.3f} versus {comparison['mean_human_share']:.3f}"
    )
