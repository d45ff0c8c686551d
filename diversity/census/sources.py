"""Opening census input files, and the error that rejects them.

Shared by the readers of transcripts, flat reply files and human norms: a source is a path or
an open file object (binary or text); a problem is a line ``FILE:LINE: field: message`` (or
``FILE: json.path: message`` inside a JSON document), and all of a source's problems are
reported at once by ``CensusInputError``.
"""

import os
from typing import IO

__all__ = ["MAX_LISTED_PROBLEMS", "CensusInputError", "read_text", "source_name"]

MAX_LISTED_PROBLEMS = 50


class CensusInputError(ValueError):
    """The input was rejected whole; ``problems`` lists every problem found, one per entry.

    The message lists the first ``MAX_LISTED_PROBLEMS`` problems, one a line.
    """

    def __init__(self, problems: list[str]):
        listed = problems[:MAX_LISTED_PROBLEMS]
        if len(problems) > len(listed):
            listed = [*listed, f"... and {len(problems) - len(listed)} more problems"]
        super().__init__("\n".join(listed))
        self.problems = problems


def source_name(source: str | os.PathLike | IO) -> str:
    """The name problems use: a path's base name, or an open file's (``upload`` if none)."""
    if isinstance(source, str | os.PathLike):
        return os.path.basename(os.fspath(source))
    return os.path.basename(str(getattr(source, "name", "") or "upload"))


def read_text(source: str | os.PathLike | IO, name: str, problems: list[str]) -> str | None:
    """The source's text (UTF-8, a leading BOM dropped), or ``None`` with a problem recorded
    when it cannot be read or is not UTF-8 (the problem names the line of the first bad byte).
    An open file is read from its current position and left open."""
    try:
        if isinstance(source, str | os.PathLike):
            with open(source, "rb") as handle:
                content = handle.read()
        else:
            content = source.read()
    except OSError as error:
        problems.append(f"{name}:1: file: cannot be read: {error.strerror or error}")
        return None
    if isinstance(content, str):
        return content.removeprefix("\ufeff")
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = content[: error.start].count(b"\n") + 1
        problems.append(f"{name}:{line}: file: not UTF-8 text (byte {error.start})")
        return None
