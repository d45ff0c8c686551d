"""``manage.py import_genie NAME FILE [--population FILE] [--questions FILE]
[--model-map FILE] [--description TEXT]``"""

from core.commands import ImportCommand
from diversity.genie.services.imports import import_genie, import_summary, read_model_table


class Command(ImportCommand):
    help = (
        "Import a Genie set: similarity judgments of target and population answers from a "
        ".jsonl, .json or .csv file, in the platform's layout or GENIE's own (its similarity "
        "file; or a target answers file with --population) (FORMATS.md, 'Genie judgments'). "
        "All or nothing: on any problem nothing is imported and every problem is listed as "
        "FILE:LINE: field: message."
    )
    name_help = "the set's name (lower-case letters, digits, -)"
    file_help = "a .jsonl, .json or .csv file of judgments"

    def add_options(self, parser):
        parser.add_argument(
            "--population", help="GENIE: the population's answers file (FILE is the targets')"
        )
        parser.add_argument("--questions", help="GENIE's questions file (configs/questions.json)")
        parser.add_argument(
            "--model-map",
            help='a JSON table {"NAME": {"model": ..., "method": ...}} (default: NAME+METHOD)',
        )
        parser.add_argument("--description", default="")

    def import_file(
        self, name, file, *, actor, progress, population, questions, model_map, description, **_
    ) -> str:
        genie_set = import_genie(
            name,
            file,
            description=description,
            actor=actor,
            population=(population, None) if population else None,
            questions=(questions, None) if questions else None,
            models=read_model_table(model_map) if model_map else None,
        )
        return import_summary(genie_set)
