"""Reading a whole import file as text, for the readers that parse it at once (the One-Word
Census, Genie): UTF-8, a leading byte-order mark dropped, problems collected as
``FILE:LINE: file: message``. Pure: no Django."""

import os
from typing import IO


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
        line_start = content.rfind(b"\n", 0, error.start) + 1
        problems.append(f"{name}:{line}: encoding: {not_utf8(content, error, line_start)}")
        return None


def not_utf8(raw: bytes, error: UnicodeDecodeError, line_start: int = 0) -> str:
    """The one wording, for every reader, of a byte that is not UTF-8 (``raw``: the line,
    or the whole file with ``line_start`` the offset of the line that holds the byte)."""
    return (
        f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at byte {error.start - line_start + 1} "
        "of the line); save the file as UTF-8"
    )
