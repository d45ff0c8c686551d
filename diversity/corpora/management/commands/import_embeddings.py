"""``manage.py import_embeddings NAME FILE [--dtype float32|float16] [--quiet]``"""

from django.core.management.base import BaseCommand

from core.audit import Actor
from core.commands import existing, refused_input_as_command_error
from diversity.corpora.management.commands._progress import progress_bar
from diversity.corpora.models import Corpus
from diversity.corpora.services.embeddings import import_embeddings
from diversity.corpora.storage import DTYPES


class Command(BaseCommand):
    help = (
        "Import a corpus's embeddings from a .parquet, .npz or .npy file keyed by "
        "response_id (FORMATS.md, 'Response embeddings'), any dimension, replacing those it "
        "had. Refused whole on a missing, unknown, repeated or wrong-dimension row or a "
        "value that is not a finite number."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the corpus's name")
        parser.add_argument("file", help="a .parquet, .npz or .npy file")
        parser.add_argument(
            "--dtype",
            choices=sorted(DTYPES),
            default="float32",
            help="how the vectors are stored (float16 halves the file; default float32)",
        )
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args, name, file, dtype, quiet, **options):
        corpus = existing(Corpus, "corpus", name=name)
        with progress_bar(self, "rows", quiet) as bar, refused_input_as_command_error(file):
            corpus = import_embeddings(
                corpus, file, dtype=dtype, actor=Actor.command_line(), progress=bar
            )
        self.stdout.write(
            f"Imported embeddings of corpus {corpus.name}: {corpus.n_responses:,} x "
            f"{corpus.embedding_dimension} ({corpus.embedding_dtype}) from "
            f"{corpus.embedding_origin}"
        )
