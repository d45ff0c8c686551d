"""``manage.py import_genie NAME FILE [--population FILE] [--questions FILE]
[--model-map FILE] [--description TEXT]``"""

from django.core.management.base import BaseCommand

from core.audit import Actor
from core.commands import refused_input_as_command_error
from diversity.genie.services.imports import import_genie, import_summary, read_model_table


class Command(BaseCommand):
    help = (
        "Import a Genie set: similarity judgments of target and population answers from a "
        ".jsonl, .json or .csv file, in the platform's layout or GENIE's own (its similarity "
        "file; or a target answers file with --population) (FORMATS.md, 'Genie judgments'). "
        "All or nothing: on any problem nothing is imported and every problem is listed as "
        "FILE:LINE: field: message."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the set's name (lower-case letters, digits, -)")
        parser.add_argument("file", help="a .jsonl, .json or .csv file of judgments")
        parser.add_argument(
            "--population", help="GENIE: the population's answers file (FILE is the targets')"
        )
        parser.add_argument("--questions", help="GENIE's questions file (configs/questions.json)")
        parser.add_argument(
            "--model-map",
            help='a JSON table {"NAME": {"model": ..., "method": ...}} (default: NAME+METHOD)',
        )
        parser.add_argument("--description", default="")

    def handle(self, *args, name, file, population, questions, model_map, description, **options):
        with refused_input_as_command_error(file):
            models = read_model_table(model_map) if model_map else None
            genie_set = import_genie(
                name,
                file,
                description=description,
                actor=Actor.command_line(),
                population=(population, None) if population else None,
                questions=(questions, None) if questions else None,
                models=models,
            )
        self.stdout.write(import_summary(genie_set))
