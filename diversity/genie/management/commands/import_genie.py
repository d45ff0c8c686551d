"""``manage.py import_genie NAME FILE [--description TEXT]``"""

from django.core.management.base import BaseCommand

from core.audit import Actor
from core.commands import refused_input_as_command_error
from diversity.genie.services.imports import import_genie


class Command(BaseCommand):
    help = (
        "Import a Genie set: similarity judgments of target and population answers from a "
        ".jsonl or .csv file (FORMATS.md, 'Genie judgments'). All or nothing: on any problem "
        "nothing is imported and every problem is listed as FILE:LINE: field: message."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the set's name (lower-case letters, digits, -)")
        parser.add_argument("file", help="a .jsonl or .csv file of judgments")
        parser.add_argument("--description", default="")

    def handle(self, *args, name, file, description, **options):
        with refused_input_as_command_error(file):
            genie_set = import_genie(
                name, file, description=description, actor=Actor.command_line()
            )
        judgments = genie_set.judgments
        self.stdout.write(
            f"Imported Genie set {genie_set.name}: {judgments.count()} judgments "
            f"({judgments.filter(source='llm').count()} llm, "
            f"{judgments.filter(source='human').count()} human)"
        )
