"""Small corpora with known answers for the analysis, page, API and selection tests.

``HAND_MADE``: two queries, two models (``alpha``, ``beta``), two samples each, in three
dimensions. ``same`` (category ``creative``): all four responses are the same vector and
the same text, so every similarity is 1. ``apart`` (category ``facts``): alpha's two
responses are one vector, beta's two another, orthogonal to it, so within a model the
similarity is 1, across models 0, and each response's nearest neighbour is its own
model's other sample.
"""

import io
import json

import numpy as np

from core.models import Job
from diversity.corpora.models import Corpus
from diversity.corpora.services.analyses import analyse_now, analysis_params
from diversity.corpora.services.embeddings import import_embeddings
from diversity.corpora.services.imports import import_corpus

E1, E2, E3 = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]

HAND_MADE = [
    # query_id, query, category, model, sample, response_id, response, embedding
    ("same", "Write a haiku.", "creative", "alpha", 1, "s-a1", "An old pond.", E1),
    ("same", "Write a haiku.", "creative", "alpha", 2, "s-a2", "An old pond.", E1),
    ("same", "Write a haiku.", "creative", "beta", 1, "s-b1", "An old pond.", E1),
    ("same", "Write a haiku.", "creative", "beta", 2, "s-b2", "An old pond.", E1),
    ("apart", "Name a river.", "facts", "alpha", 1, "p-a1", "The Nile flows north.", E2),
    ("apart", "Name a river.", "facts", "alpha", 2, "p-a2", "The Nile flows north.", E2),
    ("apart", "Name a river.", "facts", "beta", 1, "p-b1", "Amazon basin rainforest.", E3),
    ("apart", "Name a river.", "facts", "beta", 2, "p-b2", "Amazon basin rainforest.", E3),
]


def responses_file(rows) -> io.BytesIO:
    lines = [
        json.dumps(
            {
                "query_id": query_id,
                "query": query,
                "category": category,
                "model": model,
                "sample": sample,
                "response_id": response_id,
                "response": response,
            }
        )
        for query_id, query, category, model, sample, response_id, response, _ in rows
    ]
    return io.BytesIO(("\n".join(lines) + "\n").encode())


def named_model_rows(model: str) -> list[tuple]:
    """Rows for the tests of a model name that pages and files must escape or quote: two
    queries, ``model`` and ``beta`` answering each twice. ``same``: three of the four
    responses are one vector (E1), beta's second another (E2), and beta's first text holds
    markup; ``apart``: each model's two responses are one vector, other than the other's."""
    return [
        ("same", "Write a haiku.", "creative", model, 1, "s-h1", "An old pond.", E1),
        ("same", "Write a haiku.", "creative", model, 2, "s-h2", "An old pond.", E1),
        ("same", "Write a haiku.", "creative", "beta", 1, "s-b1", "A frog <jumps> in.", E1),
        ("same", "Write a haiku.", "creative", "beta", 2, "s-b2", "Sound of water.", E2),
        ("apart", "Name a river.", "facts", model, 1, "p-h1", "The Nile.", E2),
        ("apart", "Name a river.", "facts", model, 2, "p-h2", "The Nile.", E2),
        ("apart", "Name a river.", "facts", "beta", 1, "p-b1", "Amazon.", E3),
        ("apart", "Name a river.", "facts", "beta", 2, "p-b2", "Amazon.", E3),
    ]


def npy_file(matrix) -> io.BytesIO:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(matrix, dtype=np.float32))
    buffer.seek(0)
    return buffer


def make_corpus(name: str, rows=HAND_MADE, embeddings: bool = True) -> Corpus:
    """Import ``rows`` as corpus ``name``, and their embeddings (row order) unless told not."""
    corpus = import_corpus(name, responses_file(rows), filename=f"{name}.jsonl")
    if embeddings:
        corpus = import_embeddings(
            corpus, npy_file([row[7] for row in rows]), filename=f"{name}.npy"
        )
    corpus.refresh_from_db()
    return corpus


def run_analysis(corpus: Corpus, **params) -> Job:
    """The corpus's analysis run in this process (``bootstrap`` 200 unless given), checked
    to have succeeded."""
    job = analyse_now(corpus, analysis_params(**{"bootstrap": 200, **params}))
    assert job.state == Job.State.SUCCEEDED, job.message
    return job


def random_rows(seed: int = 3, queries: int = 6, models: int = 3, samples: int = 3, dim=8):
    """Random embeddings (no ties) for ``queries`` x ``models`` x ``samples`` responses,
    in a shuffled file order, with two categories and made-up texts."""
    rng = np.random.default_rng(seed)
    words = ["river", "stone", "light", "cloud", "song", "field", "glass", "wind"]
    rows = []
    for q in range(queries):
        for m in range(models):
            for s in range(samples):
                text = " ".join(rng.choice(words, size=5).tolist())
                rows.append(
                    (
                        f"q{q}",
                        f"Query {q}?",
                        "odd" if q % 2 else "even",
                        f"model-{'cabdefgh'[m]}",
                        s + 1,
                        f"r-{q}-{m}-{s}",
                        text,
                        rng.normal(size=dim).tolist(),
                    )
                )
    order = rng.permutation(len(rows))
    return [rows[i] for i in order]
