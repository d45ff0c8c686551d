"""Response-pool and embeddings files for the import tests: a small good pool and ways to
break it, written to disk or posted as uploads."""

import io
from pathlib import Path

import numpy as np

from diversity.corpora.models import Corpus
from diversity.corpora.services.imports import import_corpus
from tests.files import named_upload, write_csv, write_jsonl

COLUMNS = ["query_id", "query", "category", "subcategory", "model", "sample", "response_id"]
HEADER = [*COLUMNS, "response"]


def pool_rows(n_queries: int = 3, models=("alpha", "beta"), samples: int = 2) -> list[dict]:
    """Every model answers every query ``samples`` times; ids ``q<i>-<model>-<s>``."""
    rows = []
    for q in range(n_queries):
        for model in models:
            for s in range(1, samples + 1):
                rows.append(
                    {
                        "query_id": f"q{q}",
                        "query": f"Tell me about topic {q}.",
                        "category": "creative" if q % 2 == 0 else "facts",
                        "subcategory": "poems" if q == 0 else "",
                        "model": model,
                        "sample": s,
                        "response_id": f"q{q}-{model}-{s}",
                        "response": f"{model} says something about topic {q}, take {s}.",
                    }
                )
    return rows


def jsonl_pool(path: Path, rows: list) -> Path:
    return write_jsonl(path, rows)


def csv_pool(path: Path, rows: list, header: list[str] = HEADER) -> Path:
    return write_csv(path, header, rows)


def imported_pool(folder: Path, name: str = "pool", **shape) -> Corpus:
    """Corpus ``name`` imported from a JSONL file (in ``folder``) of ``pool_rows(**shape)``."""
    return import_corpus(name, jsonl_pool(folder / f"{name}.jsonl", pool_rows(**shape)))


def pool_upload(rows: list | None = None, name: str = "pool.jsonl") -> io.BytesIO:
    """A JSONL pool file as a form or API client posts it (``pool_rows()`` unless given)."""
    return named_upload(name, pool_rows() if rows is None else rows)


def npy_upload(matrix, name: str = "emb.npy") -> io.BytesIO:
    """An embeddings file (.npy of float32) as a form or API client posts it."""
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(matrix, dtype=np.float32))
    return named_upload(name, buffer.getvalue())
