"""``manage.py import_embeddings NAME FILE [--dtype float32|float16] [--quiet]``"""

from core.commands import ImportCommand, existing
from diversity.corpora.models import Corpus
from diversity.corpora.services.embeddings import import_embeddings
from diversity.corpora.storage import DTYPES


class Command(ImportCommand):
    help = (
        "Import a corpus's embeddings from a .parquet, .npz or .npy file keyed by "
        "response_id (FORMATS.md, 'Response embeddings'), any dimension, replacing those it "
        "had. Refused whole on a missing, unknown, repeated or wrong-dimension row or a "
        "value that is not a finite number."
    )
    name_help = "the corpus's name"
    file_help = "a .parquet, .npz or .npy file"
    progress_unit = "rows"

    def add_options(self, parser):
        parser.add_argument(
            "--dtype",
            choices=sorted(DTYPES),
            default="float32",
            help="how the vectors are stored (float16 halves the file; default float32)",
        )

    def import_file(self, name, file, *, actor, progress, dtype, **options) -> str:
        corpus = existing(Corpus, "corpus", name=name)
        corpus = import_embeddings(corpus, file, dtype=dtype, actor=actor, progress=progress)
        return (
            f"Imported embeddings of corpus {corpus.name}: {corpus.n_responses:,} x "
            f"{corpus.embedding_dimension} ({corpus.embedding_dtype}) from "
            f"{corpus.embedding_origin}"
        )
