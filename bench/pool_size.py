"""The size of the synthetic response pool that ``bench/corpus_import.py`` and
``bench/diversity.py`` generate: both default to a study-sized pool, 1,000 queries x 25
models x 4 samples = 100,000 responses with 384-dimensional embeddings, so that the import
and the analysis are measured on the same amount of data."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--queries``, ``--models``, ``--samples`` and ``--dim`` of the pool."""
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--models", type=int, default=25)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--dim", type=int, default=384)
