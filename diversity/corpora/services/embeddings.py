"""A corpus's embeddings: imported from a file (here), or computed by the local model
(``local_embedding``); the jobs that do either are in ``embedding_jobs``, the file
readers in ``embedding_readers``.

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
from collections.abc import Callable
from pathlib import Path
from typing import IO

import numpy as np
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.utils import timezone

from core import audit
from core.audit import Actor
from core.errors import InvalidInput
from core.jobs.staleness import fail_stale_jobs
from core.locking import lock_rows
from core.models import Job
from core.tabular import ImportRejected, Problems
from diversity.corpora.models import Corpus, CorpusResponse, EmbeddingSource
from diversity.corpora.services.embedding_readers import (
    MAX_DIMENSION,
    READERS,
    _Chunk,
    _Refused,
    _too_wide,
    embedding_format,
)
from diversity.corpora.storage import (
    DTYPES,
    corpus_dir,
    embedding_path,
    new_embedding_name,
    remove_after_commit,
)

__all__ = ["JOB_KIND", "check_dtype", "import_embeddings"]

JOB_KIND = "corpus_embeddings"
REMAP_BYTES = 64 * 1024 * 1024
Progress = Callable[..., None]


def check_dtype(dtype) -> str:
    if dtype is None or dtype == "":
        return "float32"
    if dtype not in DTYPES:
        raise InvalidInput("dtype", f"must be one of {', '.join(DTYPES)}, not {dtype!r}")
    return dtype


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
            # every value 0: no direction, so no cosine similarity (and no unit length)
            zero = finite & ~np.any(block != 0, axis=1)
            for position in np.flatnonzero(zero).tolist():
                problems.add(
                    int(rows_in_file[in_block[position]]),
                    "embedding",
                    "every value is 0: a vector without a direction cannot be compared",
                )
            usable[in_block[finite & ~zero]] = True
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
            for chunk in READERS[fmt](handle, problems, most_rows=corpus.n_responses):
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


def _embedding_jobs(corpus: Corpus, *states: str):
    jobs = Job.objects.filter(
        kind=JOB_KIND,
        subject_type=ContentType.objects.get_for_model(Corpus),
        subject_id=corpus.pk,
    )
    fail_stale_jobs(jobs)  # a job whose worker died holds nothing
    return jobs.filter(state__in=states).order_by("created_at")
