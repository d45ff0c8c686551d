"""``manage.py export_genie NAME [--genie FILE] [--q-genie FILE] [--source llm|human]``"""

from django.core.management.base import BaseCommand, CommandError

from core.commands import existing
from diversity.genie.core import exports
from diversity.genie.models import GenieSet
from diversity.genie.services.analyses import latest_report


class Command(BaseCommand):
    help = (
        "Write the newest Genie report's scores in GENIE's own shape: genie.jsonl (Prompt, "
        "DocID_1, Model_1, Feature, GENIE) and q_genie.jsonl (Prompt, DocID_1, Model_1, "
        "Question, Answer_1, Feature, Q_GENIE), as GENIE's compute_genie writes them."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--genie", metavar="FILE", help="write genie.jsonl here")
        parser.add_argument("--q-genie", metavar="FILE", help="write q_genie.jsonl here")
        parser.add_argument("--source", choices=["llm", "human"], default="llm")

    def handle(self, *args, name, genie, q_genie, source, **options):
        genie_set = existing(GenieSet, "Genie set", name=name)
        found = latest_report(genie_set)
        if found is None:
            raise CommandError(f"Genie set {name!r} has no finished analysis; run analyze_genie")
        if not genie and not q_genie:
            raise CommandError("give --genie FILE and/or --q-genie FILE")
        for path, records_of in (
            (genie, exports.genie_records),
            (q_genie, exports.q_genie_records),
        ):
            if not path:
                continue
            records = records_of(found[1], source)
            try:
                with open(path, "w", encoding="utf-8") as handle:
                    handle.writelines(exports.jsonl_lines(records))
            except OSError as error:
                raise CommandError(f"cannot write {path}: {error.strerror}") from error
            self.stdout.write(f"{len(records)} records written to {path}")
