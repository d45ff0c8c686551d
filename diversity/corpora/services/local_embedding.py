"""Embeddings computed by the local model (``embed_corpus``; the optional ``embed``
extra), in chunks into ``local-partial.npy``, resumable, one run at a time (see
``embeddings`` for how they are installed). A run is three steps that an embeddings job
spreads over workers (``embedding_jobs``): ``start_run``, ``embed_rows`` per chunk (in any
order, on any process), ``finish_run``."""

import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import transaction

from core.audit import Actor
from core.errors import Conflict, InvalidInput, ServiceError
from core.locking import lock_rows
from core.models import Job
from diversity.corpora.models import Corpus, CorpusResponse, EmbeddingSource
from diversity.corpora.services.embeddings import (
    Progress,
    _embedding_jobs,
    _install,
    _unit,
    check_dtype,
)
from diversity.corpora.services.row_ranges import covers, missing_chunks, rows_in, with_range
from diversity.corpora.storage import (
    DTYPES,
    PARTIAL_LOCAL_FILE,
    PARTIAL_LOCAL_OWNER_FILE,
    corpus_dir,
)

LOCAL_CHUNK_ROWS = 2048


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


def local_model_embedder(
    *, batch_size: int = 16, threads: int | None = None, device: str = "auto"
) -> Embedder:
    """The local model of the ``embed`` extra, loaded now; ``ModelUnavailable`` without it.
    ``device``: ``auto`` (a GPU when onnxruntime-gpu finds one), ``cpu`` or ``cuda``."""
    from diversity.homogeneity import embedding

    if batch_size < 1:
        raise InvalidInput("batch_size", "must be at least 1")
    try:
        embedding._model(threads, device)  # loads the model now, or says what is missing
    except embedding.EmbeddingModelUnavailable as error:
        raise ModelUnavailable(
            f"{error} Or import embeddings computed elsewhere (import_embeddings), or "
            "analyse with the lexical fallback (analyze_corpus --lexical)."
        ) from error

    def embed(texts: list[str]) -> np.ndarray:
        return embedding.embed_texts(texts, batch_size=batch_size, threads=threads, device=device)

    return Embedder(embedding.MODEL_NAME, embedding.DIMENSION, embed)


def job_embedder() -> Embedder:
    """The local model as this process's settings run it (``EMBEDDING_THREADS``,
    ``EMBEDDING_BATCH_SIZE``, ``EMBEDDING_DEVICE``): what an embeddings job's parts use."""
    return local_model_embedder(
        batch_size=settings.EMBEDDING_BATCH_SIZE,
        threads=settings.EMBEDDING_THREADS or None,
        device=settings.EMBEDDING_DEVICE,
    )


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
    """Embed every response (``embedder``, by default the local model) in this process,
    continuing an unfinished run (``Corpus.local_done``).

    ``chunk_rows`` responses are embedded, written to ``local-partial.npy`` and flushed, and
    only then counted as done (``embed_rows``), so a run stopped at any point loses at most
    one chunk. Returns the corpus with its new embeddings installed. An embeddings job runs
    the same steps as parts on several workers (``embedding_jobs``).

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
    if embedder is None:
        embedder = local_model_embedder()
    token = uuid.uuid4().hex
    corpus, chunks = start_run(
        corpus, embedder, chunk_rows=chunk_rows, dtype=dtype, restart=restart, token=token, job=job
    )
    n = corpus.n_responses
    if progress is not None:
        progress(corpus.local_rows_done, n, "embedding")
    for start, stop in chunks:
        done = embed_rows(corpus, embedder, token, start, stop)
        if progress is not None:
            progress(done, n, "embedding")
    return finish_run(corpus, embedder.name, embedder.dimension, token, actor)


def start_run(
    corpus: Corpus,
    embedder: Embedder,
    *,
    chunk_rows: int,
    dtype: str,
    restart: bool,
    token: str,
    job: Job | None,
) -> tuple[Corpus, list[tuple[int, int]]]:
    """Make the unfinished file run ``token``'s (``_take_over``); the corpus as it is then,
    and the ``[start, stop)`` chunks still to embed, in row order."""
    dtype = check_dtype(dtype)
    if chunk_rows < 1:
        raise InvalidInput("chunk_rows", "must be at least 1")
    with transaction.atomic():
        corpus = _take_over(corpus, embedder, dtype=dtype, restart=restart, token=token, job=job)
    return corpus, missing_chunks(corpus.local_done, corpus.n_responses, chunk_rows)


def embed_rows(corpus: Corpus, embedder: Embedder, token: str, start: int, stop: int) -> int:
    """Embed the responses of rows ``[start, stop)`` into run ``token``'s unfinished file and
    count them done, in one step under the corpus's row lock (``Conflict`` if the run was
    taken over). Rows already done are left as they are (a part run twice). Returns the
    number of rows done."""
    partial = corpus_dir(corpus) / PARTIAL_LOCAL_FILE
    if covers(Corpus.objects.values_list("local_done", flat=True).get(pk=corpus.pk), start, stop):
        return Corpus.objects.values_list("local_rows_done", flat=True).get(pk=corpus.pk)
    texts = list(
        CorpusResponse.objects.filter(corpus=corpus, row_index__gte=start, row_index__lt=stop)
        .order_by("row_index")
        .values_list("text", flat=True)
    )
    vectors = np.asarray(embedder.embed(texts))
    if vectors.shape != (stop - start, embedder.dimension) or not np.isfinite(vectors).all():
        raise ServiceError(
            f"embedding: {embedder.name} gave an array of shape {vectors.shape} for "
            f"{stop - start} texts (expected {embedder.dimension} finite values a text)"
        )
    with transaction.atomic():
        locked = lock_rows(Corpus.objects.filter(pk=corpus.pk)).get()
        _check_owner(locked, token)
        if covers(locked.local_done, start, stop):
            return locked.local_rows_done
        # mapped per chunk, so that the rows written leave this process's memory
        array = np.load(partial, mmap_mode="r+")
        array[start:stop] = _unit(vectors).astype(array.dtype)
        array.flush()
        del array
        done = with_range(locked.local_done, start, stop)
        Corpus.objects.filter(pk=corpus.pk).update(local_done=done, local_rows_done=rows_in(done))
    return rows_in(done)


def finish_run(
    corpus: Corpus, model: str, dimension: int, token: str, actor: Actor | None
) -> Corpus:
    """Install run ``token``'s file once every row is done (``Conflict`` if it was taken
    over or a row is missing)."""

    def finished(locked: Corpus) -> None:
        _check_owner(locked, token)
        if not covers(locked.local_done, 0, locked.n_responses):
            raise Conflict(
                f"corpus: {locked.n_responses - locked.local_rows_done:,} responses of corpus "
                f"{locked.name!r} are not embedded yet; nothing was installed"
            )
        _owner_path(locked).unlink(missing_ok=True)

    return _install(
        corpus,
        corpus_dir(corpus) / PARTIAL_LOCAL_FILE,
        source=EmbeddingSource.LOCAL_MODEL,
        dimension=dimension,
        dtype=Corpus.objects.values_list("local_dtype", flat=True).get(pk=corpus.pk),
        origin=model[:300],
        sha256="",
        actor=actor,
        extra={"local_rows_done": 0, "local_done": [], "local_dtype": "", "local_origin": ""},
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
            local_rows_done=0, local_done=[], local_dtype=dtype, local_origin=embedder.name[:300]
        )
        locked.refresh_from_db()
    claimed = corpus_dir(locked) / f"local-partial-{token[:12]}.owner"
    claimed.write_text(token, encoding="ascii")
    os.replace(claimed, _owner_path(locked))
    return locked


def _check_owner(locked: Corpus, token: str) -> None:
    """Refuse (``Conflict``) unless the unfinished file is still this run's (called under the
    corpus's row lock)."""
    try:
        owner = _owner_path(locked).read_text(encoding="ascii")
    except FileNotFoundError:
        owner = ""
    if owner != token:
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
