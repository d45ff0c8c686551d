"""``manage.py import_corpus NAME FILE [--title TEXT] [--quiet]``"""

from core.commands import ImportCommand, plural
from diversity.corpora.services.imports import import_corpus


class Command(ImportCommand):
    help = (
        "Import a corpus (a pool of model responses to queries) from a .jsonl or .csv file "
        "(FORMATS.md, 'Response pools'). The file is streamed; all or nothing: on any "
        "problem nothing is imported and every problem is listed as FILE:LINE: field: "
        "message. Progress goes to stderr."
    )
    name_help = "the corpus's name (lower-case letters, digits, -)"
    file_help = "a .jsonl or .csv file of responses"
    progress_unit = "bytes"

    def add_options(self, parser):
        parser.add_argument("--title", default="", help="a title shown on the corpus page")

    def import_file(self, name, file, *, actor, progress, title, **options) -> str:
        corpus = import_corpus(name, file, title=title, actor=actor, progress=progress)
        return (
            f"Imported corpus {corpus.name}: "
            f"{plural(corpus.n_responses, 'response', 'responses')} of "
            f"{plural(corpus.n_models, 'model', 'models')} to "
            f"{plural(corpus.n_queries, 'query', 'queries')}"
        )
