"""Where a corpus keeps its files: ``DATA_DIR/corpora/<corpus id>/``.

The embeddings in use are one ``.npy`` file (``Corpus.embedding_file``): a C-ordered
``n_responses x dimension`` float32 or float16 array whose row i belongs to the response
with ``row_index`` i, read memory-mapped. Each new set of embeddings gets a new file name,
written and checked completely before the corpus row points at it (in the transaction
that records it); the file it replaces is removed once that transaction has committed.
A local-model run that has not finished keeps its rows in ``local-partial.npy``, and the
token of the run that owns that file in ``local-partial.owner`` (a run that finds another
token there was taken over, and stops without installing anything).
"""

import os
import uuid
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import transaction

from diversity.corpora.models import Corpus

__all__ = [
    "DTYPES",
    "PARTIAL_LOCAL_FILE",
    "PARTIAL_LOCAL_OWNER_FILE",
    "corpus_dir",
    "embedding_path",
    "new_embedding_name",
    "open_embeddings",
    "remove_after_commit",
]

DTYPES = {"float32": np.float32, "float16": np.float16}
PARTIAL_LOCAL_FILE = "local-partial.npy"
PARTIAL_LOCAL_OWNER_FILE = "local-partial.owner"


def corpus_dir(corpus: Corpus) -> Path:
    folder = Path(settings.DATA_DIR) / "corpora" / str(corpus.pk)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def new_embedding_name() -> str:
    return f"embeddings-{uuid.uuid4().hex[:16]}.npy"


def embedding_path(corpus: Corpus) -> Path | None:
    """The corpus's embedding file, or None when it has no embeddings."""
    if not corpus.embedding_file:
        return None
    return corpus_dir(corpus) / corpus.embedding_file


def open_embeddings(corpus: Corpus) -> np.ndarray | None:
    """The corpus's embeddings, memory-mapped read-only (rows by ``row_index``)."""
    path = embedding_path(corpus)
    if path is None or not path.exists():
        return None
    return np.load(path, mmap_mode="r")


def remove_after_commit(path: Path | None) -> None:
    """Delete a replaced file once the current transaction commits (at once outside one)."""
    if path is None:
        return

    def remove() -> None:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass

    transaction.on_commit(remove)
