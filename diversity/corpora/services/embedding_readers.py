"""Reading embedding files in chunks (FORMATS.md, "Response embeddings"): Parquet
(``response_id``, ``embedding``), ``.npz`` (arrays ``response_id`` and ``embedding``) or a
bare ``.npy``. Sizes are checked from each file's metadata before anything is
materialised; problems are collected as ``FILE:ROW: field: message``."""

import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

import numpy as np

from core.tabular import Problems, format_of
from diversity.corpora.services import parquet_first_row

EMBEDDING_FORMATS = {".parquet": "parquet", ".npz": "npz", ".npy": "npy"}
READ_CHUNK_ROWS = 8192
READ_CHUNK_BYTES = 64 * 1024 * 1024
MAX_DIMENSION = 65_536
# An .npz may hold up to twice the corpus's rows plus this many before it is refused from
# its header (below that, each extra or repeated id is named).
NPZ_EXTRA_ROWS_READ = 1_000


def embedding_format(filename: str) -> str:
    return format_of(filename, EMBEDDING_FORMATS)


# --------------------------------------------------------------------------- readers


@dataclass
class _Chunk:
    """Rows of the file. ``lengths`` gives each row's number of values (-1: a missing row;
    None: every row has w values); ``vectors`` k x w holds, in order, the rows that have
    w values (the dimension of the file's first row), and only those: a row of another
    length is refused, so it is never padded."""

    first_row: int  # 1-based row number in the file of the chunk's first row
    ids: list[str | None] | None  # None: rows are the corpus's rows in order (.npy)
    vectors: np.ndarray
    lengths: np.ndarray | None = None


def _chunk_rows(row_bytes: int) -> int:
    """Rows read at a time: at most ``READ_CHUNK_BYTES`` of them as float64 (how they are
    checked and scaled), and at most ``READ_CHUNK_ROWS`` (their ids are Python strings)."""
    return max(1, min(READ_CHUNK_ROWS, READ_CHUNK_BYTES // max(1, row_bytes)))


def _too_wide(values: int) -> str:
    return f"has {values:,} values; at most {MAX_DIMENSION:,} are read"


class _Refused(Exception):
    """The file as a whole cannot be read (its problem is collected)."""


def _npy_header(stream: IO, name: str, member: str, problems: Problems):
    try:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
        else:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
    except (ValueError, OSError, EOFError) as error:
        problems.add(1, member, f"not a NumPy .npy array: {error}")
        raise _Refused from error
    if dtype.hasobject:
        problems.add(
            1,
            member,
            "holds Python objects (allow_pickle), which are not read; save plain "
            "strings (e.g. ids.astype(str)) or numbers",
        )
        raise _Refused
    if fortran and len(shape) > 1:
        problems.add(
            1, member, "is stored in Fortran order; save numpy.ascontiguousarray(array) instead"
        )
        raise _Refused
    return shape, dtype


def _npy_rows(stream: IO, shape, dtype, rows: int) -> np.ndarray:
    width = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    data = stream.read(rows * width * dtype.itemsize)
    got = len(data) // (width * dtype.itemsize)
    array = np.frombuffer(data[: got * width * dtype.itemsize], dtype=dtype)
    return array.reshape((got, *shape[1:]))


def _check_float_matrix(shape, dtype, member: str, problems: Problems) -> int:
    if len(shape) != 2 or shape[1] < 1:
        problems.add(1, member, f"must be a 2-dimensional array (rows x dimension), not {shape}")
        raise _Refused
    if shape[1] > MAX_DIMENSION:  # from the header, before a row is read
        problems.add(1, member, _too_wide(int(shape[1])))
        raise _Refused
    if dtype.kind != "f":
        problems.add(1, member, f"must hold floating-point numbers, not {dtype}")
        raise _Refused
    return int(shape[1])


def _check_rows(shape, most_rows: int | None, problems: Problems, responses: int) -> None:
    """Refuse an array whose header promises more than ``most_rows`` rows, before a row is
    read: a compressed archive may unpack gigabytes of rows that could only be refused at
    the end (a bound in time, not only in memory)."""
    if most_rows is not None and shape[0] > most_rows:
        problems.add(
            most_rows + 1,
            "embedding",
            f"the array has more rows than the corpus has responses ({responses:,}): "
            f"{shape[0]:,} rows by its header; nothing was read",
        )
        raise _Refused


def _read_npy(handle: IO, problems: Problems, most_rows: int | None = None) -> Iterator[_Chunk]:
    shape, dtype = _npy_header(handle, problems.name, "embedding", problems)
    width = _check_float_matrix(shape, dtype, "embedding", problems)
    _check_rows(shape, most_rows, problems, most_rows)
    rows = _chunk_rows(width * 8)
    done = 0
    while done < shape[0]:
        block = _npy_rows(handle, shape, dtype, min(rows, shape[0] - done))
        if block.shape[0] == 0:
            problems.add(done + 1, "embedding", "the file ends before its last row")
            raise _Refused
        yield _Chunk(done + 1, None, block)
        done += block.shape[0]


def _read_npz(handle: IO, problems: Problems, most_rows: int | None = None) -> Iterator[_Chunk]:
    try:
        archive = zipfile.ZipFile(handle)
    except zipfile.BadZipFile as error:
        problems.add(1, "file", f"not an .npz (zip) archive: {error}")
        raise _Refused from error
    with archive:
        names = set(archive.namelist())
        for member in ("response_id", "embedding"):
            if f"{member}.npy" not in names:
                problems.add(1, member, f"the archive has no array {member!r}")
        if problems.count:
            raise _Refused
        with archive.open("response_id.npy") as ids_stream, archive.open("embedding.npy") as data:
            id_shape, id_dtype = _npy_header(ids_stream, problems.name, "response_id", problems)
            shape, dtype = _npy_header(data, problems.name, "embedding", problems)
            width = _check_float_matrix(shape, dtype, "embedding", problems)
            # a few extra rows are read, to name each extra or repeated id; far more than
            # the corpus holds are refused from the header
            slack = None if most_rows is None else 2 * most_rows + NPZ_EXTRA_ROWS_READ
            _check_rows(shape, slack, problems, most_rows)
            if len(id_shape) != 1 or id_dtype.kind not in "USiu":
                problems.add(
                    1, "response_id", f"must be a 1-dimensional array of strings, not {id_dtype}"
                )
                raise _Refused
            if id_shape[0] != shape[0]:
                problems.add(
                    1,
                    "response_id",
                    f"holds {id_shape[0]:,} ids for {shape[0]:,} embedding rows",
                )
                raise _Refused
            # the ids count too: a string dtype of a million characters is 4 MB a row
            rows = _chunk_rows(width * 8 + id_dtype.itemsize)
            done = 0
            while done < shape[0]:
                count = min(rows, shape[0] - done)
                ids = _npy_rows(ids_stream, id_shape, id_dtype, count)
                block = _npy_rows(data, shape, dtype, count)
                if block.shape[0] != count or ids.shape[0] != count:
                    problems.add(done + 1, "embedding", "the archive ends before its last row")
                    raise _Refused
                ids = [value.decode() if isinstance(value, bytes) else str(value) for value in ids]
                yield _Chunk(done + 1, ids, block)
                done += count


def _read_parquet(handle: IO, problems: Problems, most_rows: int | None = None) -> Iterator[_Chunk]:
    """``most_rows`` is not used: a Parquet file's rows are bounded by its metadata, and
    each extra or repeated row is reported by its id."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(handle)
    except (pa.ArrowInvalid, OSError) as error:
        problems.add(1, "file", f"not a Parquet file: {error}")
        raise _Refused from error
    schema = parquet.schema_arrow
    for column in ("response_id", "embedding"):
        if schema.get_field_index(column) < 0:
            problems.add(1, column, "required column is missing")
    if problems.count:
        raise _Refused
    vector_type = schema.field("embedding").type
    if not (
        pa.types.is_list(vector_type)
        or pa.types.is_large_list(vector_type)
        or pa.types.is_fixed_size_list(vector_type)
    ) or not pa.types.is_floating(vector_type.value_type):
        problems.add(1, "embedding", f"must be a list of floating-point numbers, not {vector_type}")
        raise _Refused
    # Parquet compresses a row of a hundred million zeros into a few bytes: what each row
    # group holds is checked from the file's metadata before any row is decoded
    _check_values_per_row(parquet, MAX_DIMENSION, problems)
    if pa.types.is_fixed_size_list(vector_type):
        width, first_row = vector_type.list_size, 1
    else:
        width, first_row = _first_length_within_bounds(parquet, handle, pc, problems)
    if width is not None and not 1 <= width <= MAX_DIMENSION:
        message = f"has {width} values" if width < 1 else _too_wide(width)
        problems.add(first_row, "embedding", message)
        raise _Refused
    width = width or 1  # no row has a vector: each one is reported missing
    _check_values_per_row(parquet, width, problems)  # no row longer than the first
    row = 1
    for batch in parquet.iter_batches(
        batch_size=_chunk_rows(width * 8), columns=["response_id", "embedding"]
    ):
        ids = [None if value is None else str(value) for value in batch.column(0).to_pylist()]
        vectors = batch.column(1)
        lengths = _list_lengths(vectors, pc)
        for offset in np.flatnonzero(lengths < 0).tolist():
            problems.add(row + offset, "embedding", "is missing (null)")
        # only the rows of the first row's length are taken: a longer row is refused (by
        # the writer), never padded into a rows x longest-row block
        matching = lengths == width
        if not matching.all():
            vectors = vectors.filter(pa.array(matching))
        values = vectors.flatten().to_numpy(zero_copy_only=False)
        yield _Chunk(row, ids, values.reshape(-1, width), lengths)
        row += len(ids)


def _check_values_per_row(parquet, width: int, problems: Problems) -> None:
    """Refuse the file when a row group holds more embedding values than ``width`` per row
    (the metadata's count of the column's values, which a missing or empty row counts as
    one): such a group has a row longer than ``width``, and decoding it would take memory
    in proportion to that row, not to the file's size."""
    metadata = parquet.metadata
    row = 1
    for group_index in range(metadata.num_row_groups):
        group = metadata.row_group(group_index)
        values = _embedding_values(metadata, group_index)
        if values > group.num_rows * max(width, 1):
            last = row + group.num_rows - 1
            problems.add(
                row,
                "embedding",
                f"rows {row:,} to {last:,} hold {values:,} values in all, more than "
                f"{max(width, 1):,} per row (a row is longer than "
                + (
                    f"the first row's {width:,} values"
                    if width < MAX_DIMENSION
                    else f"{MAX_DIMENSION:,} values, the most that are read"
                )
                + "); nothing was read",
            )
            raise _Refused
        row += group.num_rows


def _list_lengths(vectors, pc) -> np.ndarray:
    """Each row's number of values; -1 for a missing (null) row."""
    lengths = pc.list_value_length(vectors).to_numpy(zero_copy_only=False)
    return np.where(np.isnan(lengths.astype(float)), -1, lengths).astype(np.int64)


def _first_length_within_bounds(parquet, handle: IO, pc, problems: Problems):
    """The first row's length, decoded here when the first row group is small, else in a
    memory-capped process (``parquet_first_row``: the first row may be huge)."""
    if parquet.metadata.num_row_groups == 0 or (
        _embedding_values(parquet.metadata, 0) <= parquet_first_row.IN_PROCESS_VALUES
    ):
        return _first_length(parquet, pc)
    try:
        return parquet_first_row.first_length_in_a_bounded_process(handle)
    except parquet_first_row.FirstRowTooLong as refused:
        bound = parquet_first_row.PROBE_MEMORY_BYTES // 2**20
        problems.add(
            refused.row,
            "embedding",
            f"the first rows cannot be read within {bound} MB (a row is far longer than "
            f"{MAX_DIMENSION:,} values, the most that are read); nothing was read",
        )
        raise _Refused from refused


def _embedding_values(metadata, group_index: int) -> int:
    """How many embedding values row group ``group_index`` holds (from the metadata)."""
    group = metadata.row_group(group_index)
    return max(
        group.column(index).num_values
        for index in range(metadata.num_columns)
        if metadata.schema.column(index).path.split(".")[0] == "embedding"
    )


def _first_length(parquet, pc) -> tuple[int | None, int]:
    """The number of values of the file's first non-missing row, and that row's number
    (None when no row has one), read a few rows at a time whatever the rows' lengths."""
    row = 1
    for batch in parquet.iter_batches(batch_size=16, columns=["embedding"]):
        lengths = _list_lengths(batch.column(0), pc)
        given = np.flatnonzero(lengths >= 0)
        if given.size:
            return int(lengths[given[0]]), row + int(given[0])
        row += len(lengths)
    return None, 1


READERS = {"parquet": _read_parquet, "npz": _read_npz, "npy": _read_npy}
