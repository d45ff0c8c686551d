"""Response-pool files for the import tests: a small good pool and ways to break it."""

from pathlib import Path

from tests.files import write_csv, write_jsonl

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
