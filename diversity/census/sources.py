"""Opening census input files, and the error that rejects them.

Shared by the readers of transcripts, flat reply files and human norms: a source is a path or
an open file object (binary or text); a problem is a line ``FILE:LINE: field: message`` (or
``FILE: json.path: message`` inside a JSON document), and all of a source's problems are
reported at once by ``CensusInputError``.
"""

import os
from typing import IO

from core.problem_lists import MAX_LISTED_PROBLEMS, RejectedWhole
from core.text_files import read_text  # the census readers import it from here

__all__ = ["MAX_LISTED_PROBLEMS", "CensusInputError", "read_text", "source_name"]


class CensusInputError(RejectedWhole):
    """The input was rejected whole; ``problems`` lists every problem found, one per entry.

    The message lists the first ``MAX_LISTED_PROBLEMS`` problems, one a line.
    """


def source_name(source: str | os.PathLike | IO) -> str:
    """The name problems use: a path's base name, or an open file's (``upload`` if none)."""
    if isinstance(source, str | os.PathLike):
        return os.path.basename(os.fspath(source))
    return os.path.basename(str(getattr(source, "name", "") or "upload"))
