"""A deterministic stand-in for the local embedding model, for the tests that run an
embeddings job on real Celery workers where the optional model is not installed.

Imported by such a worker (``--include tests.corpora.standin_embedder``), it makes the
workers' embeddings jobs use ``standin_embedder``; the test process patches the same
functions (``use_standin``). ``STANDIN_SECONDS_PER_TEXT`` slows it down, so that a test can
kill a worker while it embeds a part.
"""

import hashlib
import os
import time

import numpy as np

from diversity.corpora.services import local_embedding
from diversity.corpora.services.local_embedding import Embedder

DIMENSION = 16


def _vector(text: str) -> np.ndarray:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return np.frombuffer(digest, dtype=np.uint8)[:DIMENSION].astype(np.float64) + 1.0


def _embed(texts: list[str]) -> np.ndarray:
    time.sleep(float(os.environ.get("STANDIN_SECONDS_PER_TEXT", "0")) * len(texts))
    return np.array([_vector(text) for text in texts])


def standin_embedder() -> Embedder:
    return Embedder("stand-in (sha-256 of the text)", DIMENSION, _embed)


def use_standin(target=local_embedding) -> None:
    target.job_embedder = standin_embedder
    target.local_model_available = lambda: True


if os.environ.get("STANDIN_EMBEDDER") == "1":
    use_standin()
