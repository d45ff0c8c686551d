"""Writing an output file that a user named (``-o FILE``, ``--json FILE``).

``output_path`` gives the path to write to. A regular file, or one that does not exist
yet, is written under a temporary name in the same folder and renamed over the target
only once the writing succeeded: readers never see half a file, and a failed run leaves
the old one. Anything else that already exists — a FIFO, a character device such as
``/dev/stdout`` — is written into, never renamed over: that would replace the pipe or
device with a regular file (run as root, ``-o /dev/null`` turned ``/dev/null`` into a
file and broke every program that writes to it). The content is first written to a
private temporary file and then copied into it, since some writers (Parquet) need a file
they can seek in.
"""

import json
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

COPY_CHUNK_BYTES = 1024 * 1024


def is_special(target: Path) -> bool:
    """The target exists and is not a regular file (a FIFO, a device, a socket, a
    folder); a symbolic link is judged by what it points to."""
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return False
    return not stat.S_ISREG(mode)


@contextmanager
def output_path(target: str | os.PathLike) -> Iterator[Path]:
    """The path to write ``target``'s content to (see the module docstring).

    On a clean exit the content is in ``target``; on an exception the temporary file is
    removed and the target is as it was. A folder raises ``IsADirectoryError``.
    """
    target = Path(target)
    if target.is_dir():
        raise IsADirectoryError(21, "is a folder", str(target))
    if is_special(target):
        with tempfile.TemporaryDirectory(prefix="output-") as folder:
            private = Path(folder) / target.name
            private.touch()
            yield private
            with open(private, "rb") as source, open(target, "wb") as sink:
                shutil.copyfileobj(source, sink, COPY_CHUNK_BYTES)
        return
    # a symbolic link to a regular file: replace the file, keep the link
    final = Path(os.path.realpath(target)) if target.is_symlink() else target
    partial = _new_partial(final)
    try:
        if final.exists():
            shutil.copymode(final, partial)
        yield partial
        os.replace(partial, final)
    finally:
        if partial.exists():
            partial.unlink()


def _new_partial(final: Path) -> Path:
    """An empty file beside ``final`` that nobody else uses; created with the process's
    umask like any new file (``mkstemp`` would make it private to the owner)."""
    while True:
        partial = final.with_name(f".{final.name}.{secrets.token_hex(4)}.partial")
        try:
            os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return partial


def write_json(target: str | os.PathLike, document) -> None:
    """JSON with plain numbers only (``allow_nan=False`` fails loudly on a stray NaN),
    written through ``output_path``."""
    with output_path(target) as path, open(path, "w", encoding="utf-8") as stream:
        json.dump(document, stream, allow_nan=False, ensure_ascii=False)
