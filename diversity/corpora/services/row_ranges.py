"""Which rows of an unfinished local-model run are embedded: a sorted list of disjoint
``[start, stop)`` ranges (``Corpus.local_done``), as parts finish in any order on several
workers. Pure functions, no database."""

Ranges = list[list[int]]


def with_range(ranges: Ranges, start: int, stop: int) -> Ranges:
    """``ranges`` with ``[start, stop)`` added, merged with the ranges it touches."""
    merged: Ranges = []
    for low, high in sorted([*ranges, [start, stop]]):
        if merged and low <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    return merged


def covers(ranges: Ranges, start: int, stop: int) -> bool:
    """Whether every row of ``[start, stop)`` is in ``ranges``."""
    return any(low <= start and stop <= high for low, high in ranges)


def rows_in(ranges: Ranges) -> int:
    return sum(high - low for low, high in ranges)


def missing_chunks(ranges: Ranges, n: int, chunk_rows: int) -> list[tuple[int, int]]:
    """The chunks still to embed of rows ``0..n``: each gap between the done ranges cut into
    ``chunk_rows`` rows from its start. With no gap or one at the end (a run stopped in order)
    they are the chunks an uninterrupted run has, row for row."""
    chunks = []
    position = 0
    for low, high in [*sorted(ranges), [n, n]]:
        for start in range(position, min(low, n), chunk_rows):
            chunks.append((start, min(start + chunk_rows, low, n)))
        position = max(position, high)
    return chunks
