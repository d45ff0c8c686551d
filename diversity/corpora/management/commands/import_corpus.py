"""``manage.py import_corpus NAME FILE [--title TEXT] [--quiet]``"""

from django.core.management.base import BaseCommand

from core.audit import Actor
from core.commands import plural, refused_input_as_command_error
from diversity.corpora.management.commands._progress import progress_bar
from diversity.corpora.services.imports import import_corpus


class Command(BaseCommand):
    help = (
        "Import a corpus (a pool of model responses to queries) from a .jsonl or .csv file "
        "(FORMATS.md, 'Response pools'). The file is streamed; all or nothing: on any "
        "problem nothing is imported and every problem is listed as FILE:LINE: field: "
        "message. Progress goes to stderr."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the corpus's name (lower-case letters, digits, -)")
        parser.add_argument("file", help="a .jsonl or .csv file of responses")
        parser.add_argument("--title", default="", help="a title shown on the corpus page")
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args, name, file, title, quiet, **options):
        with progress_bar(self, "bytes", quiet) as bar, refused_input_as_command_error(file):
            corpus = import_corpus(
                name, file, title=title, actor=Actor.command_line(), progress=bar
            )
        self.stdout.write(
            f"Imported corpus {corpus.name}: "
            f"{plural(corpus.n_responses, 'response', 'responses')} of "
            f"{plural(corpus.n_models, 'model', 'models')} to "
            f"{plural(corpus.n_queries, 'query', 'queries')}"
        )
