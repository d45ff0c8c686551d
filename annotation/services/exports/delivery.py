"""The export entry points: ``export_to_file`` (command, jobs) and ``stream_export`` (HTTP).

Both take (layout, format, all_statuses) as a user gave them (``schema.export_params``)
and optionally a category filter (``selectors.CategoryFilter``: the export then holds the
items of that category only, and its data card says so), report progress every
``PROGRESS_EVERY`` rows, and record the export in the batch's audit trail.
"""

import csv
import io
import os
import tempfile
import weakref
from collections.abc import Callable, Iterable, Iterator

from annotation.models import Batch, LabelStatus
from annotation.selectors import NO_FILTER, CategoryFilter, batch_items, batch_labels
from annotation.services.exports import database, streaming
from annotation.services.exports.card import data_card
from annotation.services.exports.formats import (
    csv_chunks,
    jsonl_chunks,
    long_csv_chunks,
    long_jsonl_chunks,
    write_parquet,
    write_parquet_from_csv,
)
from annotation.services.exports.lewidi import lewidi_text
from annotation.services.exports.rows import (
    iter_annotator_rows,
    iter_bundle_rows,
    iter_dense_rows,
    iter_long_groups,
)
from annotation.services.exports.schema import (
    CONTENT_TYPES,
    columns,
    export_filename,
    export_params,
    label_columns,
    layout_columns,
)
from core import audit
from core.audit import Actor

PROGRESS_EVERY = 5000

Progress = Callable[[int, int | None], None]


def record_export(
    batch: Batch,
    layout: str,
    fmt: str,
    all_statuses: bool,
    actor: Actor | None,
    via: str,
    categories: CategoryFilter = NO_FILTER,
) -> None:
    """The export in the batch's history (who took which data, when, and how)."""
    audit.record(
        "labels.export",
        subject=batch,
        actor=actor,
        changes={
            "layout": layout,
            "format": fmt,
            "all_statuses": all_statuses,
            **categories.params(),
            "via": via,
        },
    )


class _Counted:
    """Wraps an iterator of entries and counts the rows they hold (``size(entry)``; one
    row each by default): calls ``progress(done, total)`` at the start, about every
    ``PROGRESS_EVERY`` rows and at the end (with ``total = done``)."""

    def __init__(
        self,
        entries: Iterable,
        progress: Progress | None = None,
        total=None,
        *,
        size: Callable[[object], int] | None = None,
    ):
        self.entries = entries
        self.progress = progress
        self.total = total
        self.size = size
        self.count = 0

    def __iter__(self) -> Iterator:
        reported = 0
        if self.progress is not None:
            self.progress(0, self.total)
        for entry in self.entries:
            yield entry
            self.count += 1 if self.size is None else self.size(entry)
            if self.progress is not None and self.count - reported >= PROGRESS_EVERY:
                reported = self.count
                self.progress(self.count, max(self.total or 0, self.count))
        if self.progress is not None:
            self.progress(self.count, self.count)


def _group_size(group: tuple[dict, list[dict]]) -> int:
    return len(group[1])


def _piece_size(piece: tuple[int, bytes]) -> int:
    return piece[0]


def _flatten(groups: Iterable[tuple[dict, list[dict]]]) -> Iterator[dict]:
    for part, labels in groups:
        for label in labels:
            yield part | label


def _table(
    batch: Batch, layout: str, all_statuses: bool, progress=None, total=None, categories=NO_FILTER
):
    """(counter, rows): the counting wrapper (its ``count`` is final once consumed) and
    the rows; for the long layout the counter wraps the item groups."""
    if layout == "long":
        groups = iter_long_groups(batch, all_statuses=all_statuses, categories=categories)
        counter = _Counted(groups, progress, total, size=_group_size)
        return counter, _flatten(counter)
    rows = {
        "dense": iter_dense_rows,
        "bundles": iter_bundle_rows,
        "annotators": iter_annotator_rows,
    }[layout](batch, categories)
    counter = _Counted(rows, progress, total)
    return counter, counter


def _text_chunks(batch, layout, fmt, all_statuses, progress=None, total=None, categories=NO_FILTER):
    """(counter, chunks) of a JSONL or CSV table: ``str`` chunks, or ``bytes`` (UTF-8)
    where the database writes the lines."""
    names = layout_columns(layout, batch)
    if layout == "long" and database.applies(batch):
        query = database.line_sql(batch, fmt, all_statuses, categories)
        pieces = _database_lines(query, fmt, progress, total, max_lines=LINES_PER_CHUNK)
        return pieces, _with_header(pieces, names, fmt)
    if layout == "long":
        groups = _Counted(
            iter_long_groups(batch, all_statuses=all_statuses, categories=categories),
            progress,
            total,
            size=_group_size,
        )
        label_names = [column.name for column in label_columns(batch.kind)]
        chunks = (
            long_jsonl_chunks(groups)
            if fmt == "jsonl"
            else long_csv_chunks(groups, names, label_names)
        )
        return groups, chunks
    counter, rows = _table(batch, layout, all_statuses, progress, total, categories)
    chunks = jsonl_chunks(rows) if fmt == "jsonl" else csv_chunks(rows, names)
    return counter, chunks


# lines per piece read from the database: for text, and for Arrow to parse at a time
LINES_PER_CHUNK = 1000
ARROW_LINES_PER_CHUNK = 5000


def _database_lines(query: tuple[str, list], fmt: str, progress, total, *, max_lines: int):
    """The lines of a ``database`` query, in counted ``(lines, bytes)`` pieces (of at most
    ``PROGRESS_EVERY`` lines, so that progress is reported as often as on the Python
    path)."""
    pieces = streaming.read_lines(
        *query, crlf=fmt == "csv", max_lines=max(1, min(max_lines, PROGRESS_EVERY))
    )
    return _Counted(pieces, progress, total, size=_piece_size)


def _with_header(pieces: Iterable[tuple[int, bytes]], names: list[str], fmt: str):
    """The pieces' bytes, after the header line for CSV."""
    if fmt == "csv":
        header = io.StringIO()
        csv.writer(header, lineterminator="\r\n").writerow(names)
        yield header.getvalue().encode()
    for _, data in pieces:
        yield data


def _total(
    batch: Batch, layout: str, all_statuses: bool, categories: CategoryFilter = NO_FILTER
) -> int:
    """The number of rows to expect (one COUNT query), for progress reports."""
    labels = batch_labels(batch, categories)
    if layout == "long":
        if not all_statuses:
            labels = labels.filter(status=LabelStatus.COUNTED)
        return labels.count()
    if layout == "dense":
        return batch_items(batch, categories).filter(is_check=False).count()
    if layout == "bundles":
        counted = labels.filter(status=LabelStatus.COUNTED).exclude(item__bundle="")
        return counted.values("annotator_id", "item__bundle").distinct().count()
    return labels.values("annotator_id").distinct().count()


def export_to_file(
    batch: Batch,
    layout: str,
    fmt: str,
    path,
    *,
    all_statuses: bool = False,
    progress: Progress | None = None,
    actor: Actor | None = None,
    categories: CategoryFilter = NO_FILTER,
) -> int:
    """Write one export of ``batch`` to ``path``; returns the number of rows written
    (for the card: the number of Markdown lines; for lewidi: the number of items).
    ``progress(done, total)`` is called every ``PROGRESS_EVERY`` rows and at the end. With an
    ``actor`` (the command line), the export is recorded in the batch's history; jobs are
    recorded when requested.
    ``categories`` narrows it to the items of a category (the card says so)."""
    layout, fmt, all_statuses = export_params(layout, fmt, all_statuses)
    if actor is not None:
        record_export(batch, layout, fmt, all_statuses, actor, "file", categories)
    if layout in ("card", "lewidi"):
        text = data_card(batch, categories) if layout == "card" else lewidi_text(batch, categories)
        with open(path, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        if progress is not None:
            progress(1, 1)
        return text.count("\n") if layout == "card" else max(text.count("\n") - 1, 0)
    total = _total(batch, layout, all_statuses, categories) if progress is not None else None
    if fmt == "parquet" and layout == "long" and database.applies(batch):
        query = database.line_sql(batch, "arrow", all_statuses, categories)
        # Arrow parses a few thousand lines at a time (fewer calls, memory still small)
        pieces = _database_lines(query, "arrow", progress, total, max_lines=ARROW_LINES_PER_CHUNK)
        write_parquet_from_csv((data for _, data in pieces), path, columns(layout, batch))
        return pieces.count
    if fmt == "parquet":
        counter, rows = _table(batch, layout, all_statuses, progress, total, categories)
        write_parquet(rows, path, columns(layout, batch))
        return counter.count
    counter, chunks = _text_chunks(batch, layout, fmt, all_statuses, progress, total, categories)
    with open(path, "wb") as stream:
        for chunk in chunks:
            stream.write(chunk if isinstance(chunk, bytes) else chunk.encode("utf-8"))
    return counter.count


def _discard(stream, path: str) -> None:
    stream.close()
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


class TemporaryExportFile:
    """A finished export in a temporary file, read once: ``close()`` deletes the file.

    Iterating yields byte chunks; ``read``/``seek``/``tell`` let ``FileResponse`` stream
    it and set ``Content-Length``. The response closes it when it is done (or when the
    client goes away), which removes the file; should nobody close it, the file goes
    when the object is garbage-collected.
    """

    block_size = 64 * 1024

    def __init__(self, path: str):
        self.path = path
        self._file = open(path, "rb")  # closed (and the file removed) by close()
        self._discard = weakref.finalize(self, _discard, self._file, path)

    def read(self, size: int = -1) -> bytes:
        return self._file.read(size)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def seekable(self) -> bool:
        return True

    def __iter__(self) -> Iterator[bytes]:
        try:
            while chunk := self._file.read(self.block_size):
                yield chunk
        finally:
            self.close()

    def close(self) -> None:
        self._discard()  # runs once

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def stream_export(
    batch: Batch,
    layout: str,
    fmt: str,
    *,
    all_statuses: bool = False,
    actor: Actor | None = None,
    categories: CategoryFilter = NO_FILTER,
) -> tuple[Iterable, str, str]:
    """An export for an HTTP response: ``(chunks, content_type, filename)``.

    JSONL and CSV are generated while the response is sent (``str`` chunks of about
    ``STREAM_CHUNK_CHARS`` characters, or, where PostgreSQL writes the long layout's
    lines, ``bytes`` in UTF-8 of about ``streaming.PIECE_BYTES``); the card is one
    ``str``. Parquet cannot be written to a socket as it goes (its footer comes last), so
    it is written to a temporary file first and returned as a ``TemporaryExportFile``
    (byte chunks; give it to ``FileResponse``), which deletes the file when closed.
    """
    layout, fmt, all_statuses = export_params(layout, fmt, all_statuses)
    record_export(batch, layout, fmt, all_statuses, actor, "download", categories)
    filename = export_filename(batch, layout, fmt, all_statuses, categories)
    content_type = CONTENT_TYPES[fmt]
    if layout == "card":
        return iter([data_card(batch, categories)]), content_type, filename
    if layout == "lewidi":
        return iter([lewidi_text(batch, categories)]), content_type, filename
    if fmt == "parquet":
        handle, path = tempfile.mkstemp(prefix=f"export-{batch.slug}-", suffix=".parquet")
        os.close(handle)
        try:
            export_to_file(
                batch, layout, fmt, path, all_statuses=all_statuses, categories=categories
            )
            return TemporaryExportFile(path), content_type, filename
        except BaseException:
            os.remove(path)
            raise
    _, chunks = _text_chunks(batch, layout, fmt, all_statuses, categories=categories)
    return chunks, content_type, filename
