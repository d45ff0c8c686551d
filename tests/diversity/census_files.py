"""Census uploads for the tests: a model's transcript and a norms file, from plain data."""

import io
import json

from diversity.census.services.imports import CensusUpload

# One row of a norms file: people's figures for "tree" and those of a published model.
TREE_NORM = {
    "category": "tree",
    "human_modal": "oak",
    "human_modal_first": 0.31,
    "human_n_ge5": 5,
    "model_modal": "oak",
    "model_modal_share": 0.937,
    "model_n_ge5": 1,
    "wording_mismatch": False,
}


def transcript(model: str, scenes: dict, filename: str | None = None) -> CensusUpload:
    """``model``'s transcript: ``scenes`` maps a category to its replies, one run each."""
    runs = {
        category: {"runs": [[{"reply": reply}] for reply in replies]}
        for category, replies in scenes.items()
    }
    content = json.dumps({"model": model, "scenes": runs}).encode()
    return CensusUpload(io.BytesIO(content), filename or f"{model}.json")


def norms_file(*rows: dict, source: str = "a study", **extra) -> io.BytesIO:
    """A norms file of ``rows`` (its ``per_category``), from ``source``."""
    return io.BytesIO(json.dumps({"source": source, "per_category": list(rows), **extra}).encode())
