"""``manage.py analyze_corpus NAME --json FILE [--bootstrap B] [--seed S] [--lexical]
[--human-batch SLUG] [--csv DIR]``"""

import csv
import shutil
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.audit import Actor
from core.commands import existing
from core.errors import ServiceError
from core.files import output_path, write_json
from core.models import Job
from diversity.corpora.models import Corpus
from diversity.corpora.presentation import TABLES
from diversity.corpora.services.analyses import (
    DEFAULT_DRAWS,
    DEFAULT_SEED,
    analyse_now,
    analysis_params,
    job_file,
    latest_analysis,
)


class Command(BaseCommand):
    help = (
        "Analyse the homogeneity of a corpus (ANALYSIS.md, 'Response pools'): intra-model "
        "repetition, the inter-model matrix, the top-N unique-models curve, lexical "
        "diversity, per category, and typicality against the ratings of linked batches. "
        "The analysis is recorded like one started on the page."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--json", dest="json_path", required=True, help="write the report")
        parser.add_argument("--bootstrap", type=int, default=DEFAULT_DRAWS)
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
        parser.add_argument(
            "--lexical",
            action="store_true",
            help="compare TF-IDF vectors of the texts instead of the embeddings",
        )
        parser.add_argument(
            "--human-batch", metavar="SLUG", help="an absolute batch to link (besides selections)"
        )
        parser.add_argument("--csv", dest="csv_dir", help="write every table as CSV here")

    def handle(self, *args, name, json_path, bootstrap, seed, lexical, human_batch, csv_dir, **_):
        corpus = existing(Corpus, "corpus", name=name)
        started = time.perf_counter()
        try:
            params = analysis_params(bootstrap, seed, lexical, human_batch)
        except ServiceError as error:
            raise CommandError(str(error)) from error
        job = analyse_now(corpus, params, Actor.command_line())
        if job.state != Job.State.SUCCEEDED:
            problems = (job.result or {}).get("problems") or []
            raise CommandError("\n".join([f"analysis failed: {job.message}", *problems]))
        _, report = latest_analysis(corpus)
        try:
            write_json(json_path, report)
        except OSError as error:
            raise CommandError(f"--json: cannot write {json_path}: {error.strerror}") from error
        if csv_dir:
            self._write_tables(corpus, job, report, Path(csv_dir))
        pooled = report["intra_model"]["pooled"]["mean"]
        top = report["top_n"]["mean_unique_models"]
        lines = [
            f"Analysed corpus {corpus.name} ({report['basis']}): {report['n_queries']} queries, "
            f"{report['n_models']} models, {report['n_responses']} responses in "
            f"{time.perf_counter() - started:.1f} s",
            f"  intra-model mean {_text(pooled)}; unique models among 1 / 10 nearest: "
            f"{_text(top[0])} / {_text(top[9] if len(top) > 9 else None)}",
            f"report written to {json_path}",
        ]
        if csv_dir:
            lines.append(f"tables written to {csv_dir}")
        self.stdout.write("\n".join(lines))

    def _write_tables(self, corpus: Corpus, job: Job, report: dict, folder: Path) -> None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for key, table in TABLES.items():
                columns, rows = table(report)
                with output_path(folder / f"{corpus.name}-{key}.csv") as path:
                    with open(path, "w", encoding="utf-8", newline="") as stream:
                        writer = csv.writer(stream)
                        writer.writerow(columns)
                        writer.writerows(["" if v is None else v for v in row] for row in rows)
            queries = job_file(job, "queries")
            if queries is not None:
                shutil.copyfile(queries, folder / f"{corpus.name}-queries.csv")
        except OSError as error:
            raise CommandError(f"--csv: cannot write {folder}: {error.strerror}") from error


def _text(value) -> str:
    return "—" if value is None else f"{value:.3f}"
