"""Importing a corpus of responses (FORMATS.md, "Response pools"), streamed, all or nothing.

The file (JSONL or CSV) is read one line at a time and never held in memory, in two passes:

1. checking: every row, and every check across rows, with nothing written and no
   transaction open, so the progress reported meanwhile (bytes read) reaches the job's
   row at once and a refused file is refused before anything is written;
2. writing: the file is read and checked again (so what is written is what was checked,
   even if it changed meanwhile) and written in chunks of ``WRITE_CHUNK_ROWS`` rows or
   ``WRITE_CHUNK_CHARS`` characters of response text, whichever comes first (PostgreSQL:
   ``COPY ... FROM STDIN``; other databases: multi-row inserts), inside the one
   transaction that also creates the corpus. No progress is reported inside it: a job's
   progress written there would stay invisible until the commit and hold the job's row
   locked.

What a check across rows needs is kept compactly: each query's first occurrence (its
text, category and line), the models, and per response a 64-bit hash of its id, its query,
model and sample numbers and its line (about 50 bytes a response). After the last line the
repeats are found by sorting those arrays (a response id whose hash repeats is confirmed by
reading those lines again, so a hash collision is never reported). A refused file leaves
nothing behind (a problem found while writing rolls the whole transaction back), and every
problem is listed as ``FILE:LINE: field: message`` (the first 50, then "... and K more
problems").

The corpus's name and title are checked in ``corpus_names``, the checks across rows are
``pool_repeats`` and the database side of the writing is ``pool_writing``.

``run_import_job`` is the ``corpus_import`` job: an upload saved to the jobs folder, imported
in the background.
"""

import os
import re
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from django.conf import settings
from django.db import IntegrityError, transaction

from core import audit
from core.audit import Actor
from core.errors import Conflict, InvalidInput
from core.jobs.execution import JobProgress, store_upload, stored_upload
from core.jobs.kinds import register_job_kind
from core.jobs.queue import start_job
from core.models import Job
from core.row_fields import RowFields
from core.tabular import (
    ImportRejected,
    Problems,
    csv_rows,
    fingerprint,
    format_of,
    jsonl_rows,
    open_source,
)
from diversity.corpora.access import can_import_corpora
from diversity.corpora.models import Corpus, CorpusModel, CorpusQuery
from diversity.corpora.services.corpus_names import check_name, check_title
from diversity.corpora.services.pool_repeats import report_repeats
from diversity.corpora.services.pool_writing import (
    ResponseWriter,
    refresh_planner_statistics,
    store_query_counts,
)

__all__ = [
    "JOB_KIND",
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "check_name",
    "check_title",
    "import_corpus",
    "save_upload",
    "start_import",
]

JOB_KIND = "corpus_import"
REQUIRED_COLUMNS = ("query_id", "query", "model", "sample", "response_id", "response")
OPTIONAL_COLUMNS = ("category", "subcategory")
MAX_ID_CHARS = 200
MAX_SAMPLE = 2_147_483_647
WRITE_CHUNK_ROWS = 10_000
WRITE_CHUNK_CHARS = 8_000_000  # long responses: fewer rows a chunk, memory stays bounded

Progress = Callable[..., None]


# --------------------------------------------------------------------------- rows


@dataclass(slots=True)
class _QueryEntry:
    query_id: str
    text: str
    category: str
    subcategory: str
    line: int
    position: int
    pk: int | None = None
    n_responses: int = 0


@dataclass(slots=True)
class _ModelEntry:
    name: str
    position: int
    pk: int | None = None


class _Loader:
    """Checks each row as it arrives and, given a ``corpus``, writes the rows while the file
    is clean (without one it only checks)."""

    def __init__(self, corpus: Corpus | None, problems: Problems, *, csv_header: bool):
        self.corpus = corpus
        self.problems = problems
        self.fields = RowFields(
            problems,
            csv_header=csv_header,
            id_max=MAX_ID_CHARS,
            label_max=MAX_ID_CHARS,
            text_max=settings.TEXT_MAX_CHARS,
        )
        self.queries: dict[str, _QueryEntry] = {}
        self.query_list: list[_QueryEntry] = []
        self.models: dict[str, _ModelEntry] = {}
        self.rows = 0  # responses accepted so far (the next row_index)
        self.records = 0
        self.pending: list[tuple] = []
        self.pending_chars = 0
        self.new_queries: list[_QueryEntry] = []
        self.new_models: list[_ModelEntry] = []
        self.writer = ResponseWriter() if corpus is not None else None
        # what the checks across rows need, per response with an id / a (query, model, sample)
        self.id_hashes = array("q")
        self.id_lines = array("q")
        self.key_query = array("q")
        self.key_model = array("q")
        self.key_sample = array("q")
        self.key_lines = array("q")

    # -- one row

    def add(self, line: int, row: dict | None) -> None:
        self.records += 1
        if row is None:
            return  # its problem is already collected
        before = self.problems.count
        fields = self.fields
        query_id = fields.identifier(line, row, "query_id")
        query_text = fields.text(line, row, "query")
        category = fields.label(line, row, "category")
        subcategory = fields.label(line, row, "subcategory")
        model_name = fields.identifier(line, row, "model")
        sample = self._sample(line, row)
        response_id = fields.identifier(line, row, "response_id")
        response_text = fields.text(line, row, "response")
        fields.check_taxonomy(line, category, subcategory)

        query = None
        if query_id is not None and query_text is not None:
            query = self._query(line, query_id, query_text, category, subcategory)
        model = self._model(model_name) if model_name is not None else None
        if response_id is not None:
            self.id_hashes.append(hash(response_id))
            self.id_lines.append(line)
        if query is not None and model is not None and sample is not None:
            self.key_query.append(query.position)
            self.key_model.append(model.position)
            self.key_sample.append(sample)
            self.key_lines.append(line)

        if self.problems.count == 0:
            query.n_responses += 1
            self.pending.append((query, model, sample, response_id, response_text, self.rows))
            self.pending_chars += len(response_text)
            self.rows += 1
            if len(self.pending) >= WRITE_CHUNK_ROWS or self.pending_chars >= WRITE_CHUNK_CHARS:
                self.flush()
        elif before == 0 and self.problems.count:
            self.pending = []  # the file is refused: write nothing more

    def _query(self, line, query_id, text, category, subcategory) -> _QueryEntry | None:
        entry = self.queries.get(query_id)
        if entry is None:
            entry = _QueryEntry(
                query_id, text, category or "", subcategory or "", line, len(self.query_list)
            )
            self.queries[query_id] = entry
            self.query_list.append(entry)
            self.new_queries.append(entry)
            return entry
        if entry.text != text:
            self.problems.add(
                line, "query", f"query {query_id!r} has a different text on line {entry.line}"
            )
        for field, value, first in (
            ("category", category, entry.category),
            ("subcategory", subcategory, entry.subcategory),
        ):
            if value is not None and value != first:
                self.problems.add(
                    line,
                    field,
                    f"query {query_id!r} has {field} {first!r} on line {entry.line}, not {value!r}",
                )
        return entry

    def _model(self, name: str) -> _ModelEntry:
        entry = self.models.get(name)
        if entry is None:
            entry = _ModelEntry(name, len(self.models))
            self.models[name] = entry
            self.new_models.append(entry)
        return entry

    # -- single values

    def _sample(self, line: int, row: dict) -> int | None:
        value = self.fields.present(line, row, "sample")
        if value is None:
            return None
        number = None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, str) and re.fullmatch(r"\s*\d+\s*", value):
            number = int(value)
        if number is None or not 0 <= number <= MAX_SAMPLE:
            self.problems.add(
                line, "sample", f"must be a whole number from 0 to {MAX_SAMPLE:,}, not {value!r}"
            )
            return None
        return number

    # -- writing

    def flush(self) -> None:
        self.pending_chars = 0
        if self.writer is None or self.problems.count or not self.pending:
            self.pending = []
            return
        if self.new_queries:
            created = CorpusQuery.objects.bulk_create(
                [
                    CorpusQuery(
                        corpus=self.corpus,
                        query_id=entry.query_id,
                        text=entry.text,
                        category=entry.category,
                        subcategory=entry.subcategory,
                        position=entry.position,
                    )
                    for entry in self.new_queries
                ],
                batch_size=1000,
            )
            for entry, made in zip(self.new_queries, created, strict=True):
                entry.pk = made.pk
            self.new_queries = []
        if self.new_models:
            created = CorpusModel.objects.bulk_create(
                [CorpusModel(corpus=self.corpus, name=entry.name) for entry in self.new_models]
            )
            for entry, made in zip(self.new_models, created, strict=True):
                entry.pk = made.pk
            self.new_models = []
        corpus_pk = self.corpus.pk
        self.writer.write(
            [
                [corpus_pk, query.pk, model.pk, sample, response_id, text, row_index]
                for query, model, sample, response_id, text, row_index in self.pending
            ]
        )
        self.pending = []

    # -- across rows

    def check_repeats(self, reread: Callable[[set[int]], dict[int, str]]) -> None:
        """Repeated response ids and repeated (query, model, sample), at their later line."""
        report_repeats(self, reread)

    def finish(self) -> None:
        """Counts per query, once every response is written (writing only)."""
        self.flush()
        store_query_counts([(entry.n_responses, entry.pk) for entry in self.query_list])


def _reread_ids(handle: IO, fmt: str, start: int) -> Callable[[set[int]], dict[int, str]]:
    """Read the file again for the response ids on the given lines (to confirm repeats)."""

    def reread(lines: set[int]) -> dict[int, str]:
        handle.seek(start)
        sink = Problems("reread")
        rows = (
            jsonl_rows(handle, sink) if fmt == "jsonl" else csv_rows(handle, sink, REQUIRED_COLUMNS)
        )
        found = {}
        for line, row in rows:
            if line in lines and row is not None:
                found[line] = str(row.get("response_id")).strip()
        return found

    return reread


# --------------------------------------------------------------------------- the import


def import_corpus(
    name: str,
    source: str | os.PathLike | IO,
    *,
    filename: str | None = None,
    title: str = "",
    actor: Actor | None = None,
    progress: Progress | None = None,
) -> Corpus:
    """Create corpus ``name`` from a responses file (a path, or a binary file object whose
    ``filename`` gives the format: ``.jsonl`` or ``.csv``). All or nothing: any problem
    raises ``ImportRejected`` with every ``FILE:LINE: field: message`` and stores nothing.

    ``progress(done, total, message)`` is called outside any transaction (the module
    docstring): while the file is checked, with the bytes checked out of twice the file's
    size, then once more, at half, when the writing starts; the writing is the other
    half, reported done when this returns."""
    name = check_name(name)
    title = check_title(title)
    if Corpus.objects.filter(name=name).exists():
        raise Conflict(f"name: a corpus {name!r} already exists")
    with open_source(source, filename) as (handle, shown, fmt):
        start = handle.tell()
        print_ = fingerprint(handle)
        total = 2 * print_.bytes

        def checked(done: int) -> None:
            if progress is not None:
                progress(done, total, "checking the file")

        _load(None, handle, shown, fmt, start, checked)
        if progress is not None:
            progress(print_.bytes, total, "writing the corpus")
        try:
            with transaction.atomic():
                corpus = Corpus.objects.create(
                    name=name,
                    title=title,
                    file_name=os.path.basename(shown)[:255],
                    file_bytes=print_.bytes,
                    file_sha256=print_.sha256,
                    created_by=actor.user if actor else None,
                )
                loader = _load(corpus, handle, shown, fmt, start)
                loader.finish()
                Corpus.objects.filter(pk=corpus.pk).update(
                    n_queries=len(loader.query_list),
                    n_models=len(loader.models),
                    n_responses=loader.rows,
                )
                corpus.refresh_from_db()
                refresh_planner_statistics()
                audit.record(
                    "corpus.import",
                    subject=corpus,
                    actor=actor,
                    changes={
                        "file": corpus.file_name,
                        "bytes": print_.bytes,
                        "sha256": print_.sha256,
                        "n_queries": corpus.n_queries,
                        "n_models": corpus.n_models,
                        "n_responses": corpus.n_responses,
                    },
                )
        except IntegrityError as error:
            if Corpus.objects.filter(name=name).exists():
                raise Conflict(f"name: a corpus {name!r} already exists") from error
            raise ImportRejected.concurrent_write(shown, error) from error
    if progress is not None:
        progress(total, total, "imported")
    return corpus


def _load(
    corpus: Corpus | None,
    handle: IO,
    shown: str,
    fmt: str,
    start: int,
    checked: Callable[[int], None] | None = None,
) -> _Loader:
    """One pass over the file from ``start``: every row checked (and written, given a
    ``corpus``), then the checks across rows; ``ImportRejected`` on any problem.
    ``checked(bytes_read)`` is called every ``WRITE_CHUNK_ROWS`` lines."""
    handle.seek(start)
    problems = Problems(shown)
    loader = _Loader(corpus, problems, csv_header=fmt == "csv")
    rows = (
        jsonl_rows(handle, problems)
        if fmt == "jsonl"
        else csv_rows(handle, problems, REQUIRED_COLUMNS)
    )
    for line, row in rows:
        loader.add(line, row)
        if checked is not None and loader.records % WRITE_CHUNK_ROWS == 0:
            checked(handle.tell() - start)
    loader.check_repeats(_reread_ids(handle, fmt, start))
    if problems.count == 0 and loader.rows == 0:
        problems.add(1, "file", "holds no response at all")
    if problems.count:
        raise ImportRejected(problems.lines())
    return loader


# --------------------------------------------------------------------------- the job


def save_upload(upload, filename: str) -> str:
    """Store an uploaded responses file for an import job; its name in the jobs folder."""
    return store_upload(upload, format_of(filename))  # the type is checked first


def start_import(name: str, upload, *, title: str = "", user=None) -> Job:
    """Check the name and title, store the uploaded responses file and start the
    ``corpus_import`` job that imports it (the list page and the API alike). A bad name or
    title, a taken name, a missing file or an unsupported type is refused here, at once;
    a problem inside the file makes the job fail with its ``result.problems``."""
    name = check_name(name)
    title = check_title(title)
    if Corpus.objects.filter(name=name).exists():
        raise Conflict(f"name: a corpus {name!r} already exists")
    if upload is None:
        raise InvalidInput("file", "no file was attached; choose a .jsonl or .csv file")
    stored = save_upload(upload, upload.name)
    params = {"stored_file": stored, "filename": upload.name, "name": name, "title": title}
    return start_job(JOB_KIND, None, params, user)


@register_job_kind(JOB_KIND, can_view=can_import_corpora)
def run_import_job(job: Job, progress: JobProgress) -> tuple[dict, str]:
    params = job.params or {}
    with stored_upload(params) as stored:
        corpus = import_corpus(
            params["name"],
            stored,
            filename=params["filename"],
            title=params.get("title", ""),
            actor=Actor.of(job.created_by),
            progress=progress,
        )
    return {
        "corpus": corpus.name,
        "n_queries": corpus.n_queries,
        "n_models": corpus.n_models,
        "n_responses": corpus.n_responses,
    }, ""
