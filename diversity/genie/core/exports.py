"""The report in GENIE's own shape: ``genie.jsonl`` and ``q_genie.jsonl`` as GENIE's
``compute_genie`` (``src/novelty_calculation/novelty.py``) writes them, so that results load
in its authors' notebooks. Pure functions of the report.

* ``genie.jsonl``: ``Prompt``, ``DocID_1``, ``Model_1``, ``Feature``, ``GENIE``;
* ``q_genie.jsonl``: ``Prompt``, ``DocID_1``, ``Model_1``, ``Question``, ``Answer_1``,
  ``Feature``, ``Q_GENIE``.

Rows come sorted by those columns (before the score), as pandas' ``groupby`` orders them;
``Prompt`` is the prompt's text (its id when the file gave no text), ``Model_1`` the model's
name as imported (GENIE's, before any mapping to model and method), ``DocID_1`` the file's
document id — a whole number when it is written as one (GENIE's ids are integers).
"""

import json
from collections.abc import Iterator

__all__ = ["GENIE_COLUMNS", "Q_GENIE_COLUMNS", "genie_records", "jsonl_lines", "q_genie_records"]

GENIE_COLUMNS = ["Prompt", "DocID_1", "Model_1", "Feature", "GENIE"]
Q_GENIE_COLUMNS = ["Prompt", "DocID_1", "Model_1", "Question", "Answer_1", "Feature", "Q_GENIE"]


# pandas (and most JSON readers) take integers up to 64 bits: a longer whole-number DocID
# is written as the text it was given
_MAX_JSON_INT = 2**63 - 1


def _doc_id(text: str) -> int | str:
    if text.isdigit() and str(int(text)) == text and int(text) <= _MAX_JSON_INT:
        return int(text)
    return text


def _order(value) -> tuple:
    return (0, value, "") if isinstance(value, int) else (1, 0, str(value))


def _document(entry: dict) -> dict:
    return {
        "Prompt": entry.get("prompt") or entry["prompt_id"],
        "DocID_1": _doc_id(entry.get("source_document_id") or entry["document_id"]),
        "Model_1": entry.get("source_model") or entry.get("model") or "",
    }


def genie_records(report: dict, source: str = "llm") -> list[dict]:
    scores = (report.get("scores") or {}).get(source)
    if not scores:
        return []
    records = [
        {**_document(entry), "Feature": feature, "GENIE": cell["novelty"]}
        for entry in scores["per_document"]
        for feature, cell in entry["features"].items()
    ]
    return sorted(
        records,
        key=lambda r: (r["Prompt"], _order(r["DocID_1"]), r["Model_1"], r["Feature"]),
    )


def q_genie_records(report: dict, source: str = "llm") -> list[dict]:
    scores = (report.get("scores") or {}).get(source)
    if not scores:
        return []
    documents = {(e["prompt_id"], e["document_id"]): e for e in scores["per_document"]}
    records = []
    for row in scores.get("per_question", []):
        entry = documents.get((row["prompt_id"], row["document_id"]))
        if entry is None:
            continue
        records.append(
            {
                **_document(entry),
                "Question": row.get("question") or row["question_id"],
                "Answer_1": row.get("target_answer"),
                "Feature": row["feature"],
                "Q_GENIE": row["q_genie"],
            }
        )
    return sorted(
        records,
        key=lambda r: (
            r["Prompt"],
            _order(r["DocID_1"]),
            r["Model_1"],
            r["Question"],
            r["Answer_1"] or "",
            r["Feature"],
        ),
    )


def jsonl_lines(records: list[dict]) -> Iterator[str]:
    """One JSON object per line, as pandas' ``to_json(orient="records", lines=True)``."""
    for record in records:
        yield json.dumps(record, ensure_ascii=False) + "\n"
