"""Reading the lines ``database.line_sql`` builds, in pieces of whole lines, in bounded memory.

The query returns an item's part of its lines once, in a row of its own before its labels'
rows; the reader puts each line together, the item's part then the label's.

Outside a transaction the rows come by ``COPY (<query>) TO STDOUT`` on a connection of
their own to ``settings.DIRECT_DATABASE`` (PostgreSQL itself, never a transaction
pooler): one statement that streams while PostgreSQL computes it, in parallel where the
planner chooses to (a cursor is never run in parallel, and a ``WITH HOLD`` cursor has the
whole result computed and stored before its first row leaves). Client and server work
side by side, and the client's part is a few list appends per line and a few ``bytes``
operations per piece: PostgreSQL sends one message per row, which the reader collects
and joins. The connection is the export's own because a COPY holds its connection until
its last row, while the export's progress is written meanwhile (``core.jobs``) through
the default connection — the direct one, when no pooler stands in front.

Inside a transaction (``atomic``) a connection of its own would not see the rows the
transaction wrote, so the lines are read on the transaction's own connection, through a
server-side cursor, about ``FETCH_BYTES`` at a time.

COPY's text format escapes a backslash as ``\\\\`` and the control characters backspace,
form feed, line feed, carriage return, tab and vertical tab as ``\\b \\f \\n \\r \\t \\v``
(PostgreSQL's ``CopyAttributeOutText``); ``unescape_copy_text`` undoes this over many
lines at once. A line never ends inside an escape, and a raw line feed only ends a line.
"""

import select
import time
from collections.abc import Iterator

import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from psycopg import pq

from annotation.services.exports.database import LABEL_ROW

# a piece holds at most this many bytes of lines (or one line, when a line is longer)
PIECE_BYTES = 256 * 1024
# inside a transaction: bytes aimed at per fetch, and the most rows one fetch asks for
FETCH_BYTES = 1024 * 1024
FETCH_ROWS = 10_000
# what COPY's text format writes for each character it escapes, but the backslash
COPY_ESCAPES = (
    (b"\\n", b"\n"),
    (b"\\r", b"\r"),
    (b"\\t", b"\t"),
    (b"\\b", b"\b"),
    (b"\\f", b"\f"),
    (b"\\v", b"\v"),
)

Pieces = Iterator[tuple[int, bytes]]


def unescape_copy_text(data: bytes) -> bytes:
    """Whole lines of COPY's text format as the text they stand for.

    Split first at each escaped backslash (``\\\\``): read from the left, those pairs
    fall exactly on the escapes, so no backslash left in a piece can be the second half
    of one; in each piece, the other escapes are then plain replacements."""
    if b"\\" not in data:
        return data
    pieces = data.split(b"\\\\")
    for index, piece in enumerate(pieces):
        if b"\\" in piece:
            for escaped, character in COPY_ESCAPES:
                piece = piece.replace(escaped, character)
            pieces[index] = piece
    return b"\\".join(pieces)


def read_lines(sql: str, params: list, *, crlf: bool, max_lines: int) -> Pieces:
    """The lines of a ``database.line_sql`` query, as ``(number of lines, bytes)`` pieces
    of whole lines in UTF-8, each line ended by CRLF (``crlf``) or LF; a piece holds at
    most ``max_lines`` lines and about ``PIECE_BYTES`` bytes (or one line, if longer)."""
    direct = connections[settings.DIRECT_DATABASE]
    # inside a transaction the lines come through its own connection, which sees its
    # uncommitted rows (behind a pooler "default" and the direct connection differ)
    for inside in (connections[DEFAULT_DB_ALIAS], direct):
        if inside.in_atomic_block:
            yield from _cursor_lines(inside, sql, params, crlf=crlf, max_lines=max_lines)
            return
    yield from _copied_lines(direct, sql, params, crlf=crlf, max_lines=max_lines)


def _log(connection, sql: str, started: float) -> None:
    if connection.queries_logged:  # seen by query counts, as Django's own cursors
        elapsed = f"{time.monotonic() - started:.3f}"
        connection.queries_log.append({"sql": sql, "time": elapsed})


def _copied_lines(direct, sql: str, params: list, *, crlf: bool, max_lines: int) -> Pieces:
    own = connections.create_connection(direct.alias)  # a connection of the export's own
    try:
        own.ensure_connection()
        raw = own.connection
        started = time.monotonic()
        with raw.transaction(), raw.cursor() as cursor:
            # JIT would compile the lines' expressions for longer than it saves on them
            cursor.execute("SET LOCAL jit = off")
            # (an error, or the reader closing early, cancels the COPY)
            with cursor.copy(f"COPY ({sql}) TO STDOUT", params):
                _log(direct, sql, started)
                yield from _pieces(_copy_data(raw.pgconn), crlf, max_lines)
    finally:
        own.close()


def _copy_data(pgconn) -> Iterator[memoryview]:
    """The rows of the COPY in progress on ``pgconn`` (each a message, its LF included),
    then its outcome read (raised if it failed). libpq is asked directly: psycopg's
    ``Copy`` would spend more per line than the rest of the export does."""
    socket = pgconn.socket
    while True:
        size, row = pgconn.get_copy_data(1)  # without waiting: whatever has arrived
        if size > 0:
            yield row
        elif size == 0:  # nothing complete yet: wait for more (the GIL released)
            select.select([socket], [], [])
            pgconn.consume_input()
        elif size == -1:  # the end, or an error: the statement's result says which
            break
        else:
            raise psycopg.OperationalError(pgconn.get_error_message())
    while True:
        while pgconn.is_busy():
            select.select([socket], [], [])
            pgconn.consume_input()
        result = pgconn.get_result()
        if result is None:
            return
        if result.status != pq.ExecStatus.COMMAND_OK:
            raise psycopg.errors.error_from_result(result)


LABEL = ord(LABEL_ROW)


def _pieces(rows: Iterator[memoryview], crlf: bool, max_lines: int) -> Pieces:
    """The lines of COPY's rows (``ITEM_ROW`` or ``LABEL_ROW`` first, a LF last): a
    label's line is its item's part, then its own (its LF included)."""
    parts: list = []  # of lines: each an item's part then a label's
    lines = size = part_size = 0
    part = b""
    for row in rows:
        if row[0] == LABEL:
            parts.append(part)
            parts.append(row[1:])
            lines += 1
            size += part_size + len(row)
            if size >= PIECE_BYTES or lines >= max_lines:
                yield lines, _piece(parts, crlf)
                parts, lines, size = [], 0, 0
        else:
            part = row[1:-1]
            part_size = len(part)
    if lines:
        yield lines, _piece(parts, crlf)


def _piece(lines: list, crlf: bool) -> bytes:
    data = b"".join(lines)
    if crlf:  # before unescaping: until then, every LF ends a line
        data = data.replace(b"\n", b"\r\n")
    return unescape_copy_text(data)


def _cursor_lines(direct, sql: str, params: list, *, crlf: bool, max_lines: int) -> Pieces:
    end = "\r\n" if crlf else "\n"
    with direct.cursor() as wrapper:
        cursor = wrapper.connection.cursor(name=f"export_{id(wrapper):x}")
        try:
            started = time.monotonic()
            cursor.execute(sql, params)
            _log(direct, sql, started)
            size = 100  # rows in the first fetch; then as many as make about FETCH_BYTES
            part = ""
            lines: list = []
            characters = 0
            while rows := cursor.fetchmany(size):
                fetched = 0
                for (row,) in rows:
                    fetched += len(row)
                    if row[0] != LABEL_ROW:
                        part = row[1:]
                        continue
                    lines.append(part + row[1:])
                    characters += len(lines[-1])
                    if characters >= PIECE_BYTES or len(lines) >= max_lines:
                        yield len(lines), (end.join(lines) + end).encode()
                        lines, characters = [], 0
                size = max(1, min(FETCH_ROWS, FETCH_BYTES * len(rows) // max(1, fetched)))
            if lines:
                yield len(lines), (end.join(lines) + end).encode()
        finally:
            cursor.close()
