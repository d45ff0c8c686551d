"""``manage.py import_census NAME PATH... [--human-norms FILE] [--description TEXT]``"""

from django.core.management.base import BaseCommand

from core.audit import Actor
from core.commands import plural, refused_input_as_command_error
from diversity.census.services.imports import CensusUpload, import_census, uploads_of_paths


class Command(BaseCommand):
    help = (
        "Import a One-Word Census: model replies from transcript JSON files (one per model), "
        "directories of them, or flat .jsonl/.csv files (FORMATS.md, 'One-Word Census'), and "
        "optional human norms. All or nothing: on any problem nothing is imported and every "
        "problem is listed."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the census's name (lower-case letters, digits, -)")
        parser.add_argument(
            "paths",
            nargs="+",
            metavar="PATH",
            help="a transcript .json, a directory, or a flat file",
        )
        parser.add_argument("--human-norms", metavar="FILE", help="a norms .json file")
        parser.add_argument("--description", default="")

    def handle(self, *args, name, paths, human_norms, description, **options):
        with refused_input_as_command_error(" ".join(paths)):
            uploads = uploads_of_paths(paths)
            norms = (
                CensusUpload(human_norms, human_norms.rsplit("/", 1)[-1]) if human_norms else None
            )
            census = import_census(
                name, uploads, norms=norms, description=description, actor=Actor.command_line()
            )
        n_replies = census.answers.count()
        n_models = census.answers.values("answerer").distinct().count()
        n_norms = census.norms.count()
        self.stdout.write(
            f"Imported census {census.name}: {plural(n_replies, 'reply', 'replies')} of "
            f"{plural(n_models, 'model', 'models')} from {plural(len(uploads), 'file', 'files')}"
            + (f", human norms of {plural(n_norms, 'category', 'categories')}" if norms else "")
        )
