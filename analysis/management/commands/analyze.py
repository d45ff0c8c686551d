"""manage.py analyze SLUG [--json FILE] [--bootstrap N] [--seed S] [--group-by QUESTION]"""

import time

from django.core.management.base import BaseCommand, CommandError

from analysis.services.analyses import (
    DEFAULT_RESAMPLES,
    JOB_KIND,
    validate_group_by,
    validate_settings,
)
from annotation.models import Batch
from core.commands import existing
from core.errors import ServiceError
from core.jobs.commands import analysed_report, write_report_json


class Command(BaseCommand):
    help = (
        "Analyse a batch's counted labels and imported model scores (ANALYSIS.md) as a job in "
        "this process, recorded like one started on the report page (which then shows it)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--json", dest="json_path", help="write the report here")
        parser.add_argument("--bootstrap", type=int, default=DEFAULT_RESAMPLES)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--group-by",
            default=None,
            help="a choice question of the batch's questionnaire to break the figures down by",
        )

    def handle(self, *args, slug, json_path, bootstrap, seed, group_by, **options):
        batch = existing(Batch, "batch", slug=slug)
        started = time.perf_counter()
        try:  # the settings the page, the API and the job check alike
            bootstrap, seed = validate_settings(bootstrap, seed)
            params = {
                "bootstrap": bootstrap,
                "seed": seed,
                "group_by": validate_group_by(batch, group_by),
            }
        except ServiceError as error:
            raise CommandError(str(error)) from error
        _, report = analysed_report(JOB_KIND, batch, params)
        if json_path:
            write_report_json(json_path, report)
        full = [
            entry
            for entry in report["correlations"]
            if entry["subset"] == "full" and entry["spearman"] is not None
        ]
        headline = ", ".join(f"{e['source']} ρ={e['spearman']['r']:.3f}" for e in full[:4])
        self.stdout.write(
            f"Analysed {batch.slug}: {report['n_items']} items, {report['n_labels']} labels, "
            f"{report['n_annotators']} annotators, {len(report['sources'])} score sources"
            + (f" ({headline})" if headline else "")
            + f" in {time.perf_counter() - started:.1f} s"
            + (f"; report written to {json_path}" if json_path else "")
        )
