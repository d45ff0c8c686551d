"""``manage.py analyze_genie NAME [--json FILE] [--bootstrap B] [--seed S]
[--human-batch SLUG]``"""

import time

from django.core.management.base import BaseCommand, CommandError

from core.audit import Actor
from core.errors import ServiceError
from core.files import write_json
from core.models import Job
from diversity.genie.models import GenieSet
from diversity.genie.services.analyses import (
    DEFAULT_DRAWS,
    DEFAULT_SEED,
    analyse_now,
    analysis_params,
    latest_report,
)


class Command(BaseCommand):
    help = (
        "Analyse a Genie set (ANALYSIS.md, 'Genie'): novelty per document and feature, per "
        "feature across documents with bootstrap intervals, and the agreement of human and "
        "LLM similarity judgments. The analysis is recorded like one started on the page."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--json", dest="json_path", help="write the report here")
        parser.add_argument("--bootstrap", type=int, default=DEFAULT_DRAWS)
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
        parser.add_argument(
            "--human-batch",
            metavar="SLUG",
            help="a similarity batch of the set's pairs (default: the set's own, if any)",
        )

    def handle(self, *args, name, json_path, bootstrap, seed, human_batch, **options):
        genie_set = GenieSet.objects.filter(name=name).first()
        if genie_set is None:
            raise CommandError(f"Genie set {name!r} does not exist")
        started = time.perf_counter()
        try:
            params = analysis_params(bootstrap, seed, human_batch)
        except ServiceError as error:
            raise CommandError(str(error)) from error
        job = analyse_now(genie_set, params, Actor.command_line())
        if job.state != Job.State.SUCCEEDED:
            problems = (job.result or {}).get("problems") or []
            raise CommandError("\n".join([f"analysis failed: {job.message}", *problems]))
        _, report = latest_report(genie_set)
        if json_path:
            try:
                write_json(json_path, report)  # a FIFO or a device is written directly
            except OSError as error:
                raise CommandError(f"--json: cannot write {json_path}: {error.strerror}") from error
        lines = [
            f"Analysed Genie set {genie_set.name}: {report['n_documents']} documents, "
            f"{len(report['features'])} features, judged pairs: "
            f"{report['n_judged_pairs']['llm']} llm, {report['n_judged_pairs']['human']} human "
            f"({report['settings']['human_source'] or 'no human judgments'}) "
            f"in {time.perf_counter() - started:.1f} s"
        ]
        for source, scores in report["scores"].items():
            for feature, summary in (scores or {}).get("per_feature", {}).items():
                low, high = summary["ci"]
                lines.append(
                    f"  {source} {feature}: {summary['mean']:.3f} [{low:.3f}, {high:.3f}] "
                    f"over {summary['n_documents']} documents"
                )
        overall = (report.get("agreement") or {}).get("overall")
        if overall:
            rho = overall["spearman"]
            lines.append(
                f"  human vs llm on {overall['n_pairs']} pairs: Spearman "
                + (f"{rho['rho']:.3f}" if rho else "undefined")
                + ", Krippendorff alpha (interval) "
                + (
                    f"{overall['alpha_interval']:.3f}"
                    if overall["alpha_interval"] is not None
                    else "undefined"
                )
            )
        if json_path:
            lines.append(f"report written to {json_path}")
        self.stdout.write("\n".join(lines))
