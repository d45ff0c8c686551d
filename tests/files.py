"""Writing import files for the tests."""

import csv
import io
import json
from pathlib import Path


def write_jsonl(path: Path, rows: list) -> Path:
    """Rows (dicts, or ready-made text lines) as a JSONL file; returns the path."""
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    Path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return Path(path)


def write_csv(path: Path, header: list[str], rows: list) -> Path:
    """A CSV file with ``header``; rows are dicts (by header) or lists; returns the path."""
    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        for row in rows:
            writer.writerow([row.get(key, "") for key in header] if isinstance(row, dict) else row)
    return Path(path)


def named_upload(name: str, content: bytes | str | list) -> io.BytesIO:
    """An in-memory file with a name, as a test client posts it: bytes, text (UTF-8), or
    rows (dicts, or ready-made lines) as JSONL."""
    if isinstance(content, list):
        content = "".join(
            (row if isinstance(row, str) else json.dumps(row)) + "\n" for row in content
        )
    stream = io.BytesIO(content.encode() if isinstance(content, str) else content)
    stream.name = name
    return stream
