"""Importing a census: replies (transcripts and/or flat files) and optional human norms.

All or nothing: every file is read and checked by the pure readers first
(``diversity.census.transcripts``, ``diversity.census.norms``); any problem rejects the
whole import with every ``FILE:LINE: field: message`` (or ``FILE: json.path: message``)
listed and nothing stored. Then the census, its files (size and SHA-256), its replies
(verbatim, 1,000 rows per statement) and its norms are written in one transaction, and
the import is recorded in the census's audit trail.
"""

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from django.conf import settings
from django.db import IntegrityError, transaction

from core import audit
from core.audit import Actor
from core.errors import Conflict, InvalidInput
from core.jobs.subject_names import check_subject_name
from core.problem_lists import first_problems
from core.row_writing import BULK_BATCH_SIZE, RowInserter
from core.tabular import Fingerprint, ImportRejected
from core.tabular import fingerprint as fingerprint_of
from diversity.census.models import Census, CensusAnswer, CensusFile, CensusNorm
from diversity.census.norms import PublishedNorms, read_norms_file
from diversity.census.sources import CensusInputError
from diversity.census.transcripts import CensusRecord, census_file_kind, read_each_file

__all__ = ["CensusUpload", "import_census", "uploads_of_paths"]


@dataclass(frozen=True)
class CensusUpload:
    """A file to import: a path, or an open binary file (e.g. an upload), and its name."""

    source: str | os.PathLike | IO
    name: str


def uploads_of_paths(paths: Sequence[str | os.PathLike]) -> list[CensusUpload]:
    """The files named on a command line: each path a file, or a directory whose ``.json``,
    ``.jsonl`` and ``.csv`` files are taken in sorted name order."""
    uploads = []
    for path in map(os.fspath, paths):
        if os.path.isdir(path):
            names = sorted(name for name in os.listdir(path) if census_file_kind(name))
            if not names:
                raise InvalidInput("files", f"{path}: no .json, .jsonl or .csv file in it")
            uploads += [CensusUpload(os.path.join(path, name), name) for name in names]
        elif os.path.isfile(path):
            uploads.append(CensusUpload(path, os.path.basename(path)))
        else:
            raise InvalidInput("files", f"{path}: no such file or directory")
    return uploads


def import_census(
    name: str,
    files: Sequence[CensusUpload],
    *,
    norms: CensusUpload | None = None,
    description: str = "",
    actor: Actor | None = None,
) -> Census:
    """Create census ``name`` from reply files and an optional norms file, all or nothing."""
    name = check_subject_name(name)
    if not files:
        raise InvalidInput("files", "give at least one transcript (.json) or flat file")
    if Census.objects.filter(name=name).exists():
        raise Conflict(f"name: a census {name!r} already exists")

    prints = [_fingerprint(upload) for upload in files]
    norms_print = _fingerprint(norms) if norms is not None else None
    problems: list[str] = []
    per_file = _read_replies(files, problems)
    records = [record for file_records in per_file for record in file_records]
    published = _read_norms(norms, problems) if norms is not None else None
    # cells whose replies are all missing or empty are no reply either (FORMATS.md)
    if not problems and not any((record.reply or "").strip() for record in records):
        problems.append(f"{files[0].name}: file: holds no reply at all")
    if problems:
        raise ImportRejected(first_problems(problems))

    try:
        with transaction.atomic():
            census = Census.objects.create(
                name=name,
                description=description.replace("\x00", ""),
                norms_source=published.source.replace("\x00", "") if published else "",
                created_by=actor.user if actor else None,
            )
            counts = [len(file_records) for file_records in per_file]
            file_rows = _store_files(census, files, prints, counts, norms, norms_print, published)
            _store_answers(census, records)
            if published is not None:
                _store_norms(census, published)
            audit.record(
                "census.import",
                subject=census,
                actor=actor,
                changes={
                    "files": file_rows,
                    "n_replies": len(records),
                    "n_models": len({record.model for record in records}),
                    "n_categories": len({record.category for record in records}),
                    "n_norms": len(published.human) if published else 0,
                },
            )
    except IntegrityError as error:  # another import took the name meanwhile
        raise Conflict(f"name: a census {name!r} already exists") from error
    return census


# --------------------------------------------------------------------------- reading


def _fingerprint(upload: CensusUpload) -> Fingerprint:
    if isinstance(upload.source, str | os.PathLike):
        try:
            with open(upload.source, "rb") as handle:
                return fingerprint_of(handle)
        except OSError as error:
            raise InvalidInput("files", f"cannot open {upload.source}: {error.strerror}") from error
    return fingerprint_of(upload.source)


def _read_replies(files: Sequence[CensusUpload], problems: list[str]) -> list[list[CensusRecord]]:
    """The records of each file apart (all files' problems are collected together)."""
    try:
        return read_each_file(
            [(upload.source, upload.name) for upload in files], text_max=settings.TEXT_MAX_CHARS
        )
    except CensusInputError as error:
        problems += error.problems
        return []


def _read_norms(norms: CensusUpload, problems: list[str]) -> PublishedNorms | None:
    if not norms.name.lower().endswith(".json"):
        problems.append(f"{norms.name}:1: file: norms must be a .json file")
        return None
    try:
        return read_norms_file(norms.source, name=norms.name)
    except CensusInputError as error:
        problems += error.problems
        return None


# --------------------------------------------------------------------------- writing


def _store_files(census, files, prints, counts, norms, norms_print, published) -> list[dict]:
    """One ``CensusFile`` per file read (``counts``: replies of each); their audit entries."""
    rows = [
        CensusFile(
            census=census,
            position=position,
            role=census_file_kind(upload.name),
            name=_stored_name(upload.name),
            size_bytes=print_.bytes,
            sha256=print_.sha256,
            n_rows=count,
        )
        for position, (upload, print_, count) in enumerate(zip(files, prints, counts, strict=True))
    ]
    if norms is not None:
        rows.append(
            CensusFile(
                census=census,
                position=len(files),
                role=CensusFile.Role.NORMS,
                name=_stored_name(norms.name),
                size_bytes=norms_print.bytes,
                sha256=norms_print.sha256,
                n_rows=len(published.human),
            )
        )
    CensusFile.objects.bulk_create(rows)
    return [
        {"name": row.name, "role": row.role, "bytes": row.size_bytes, "sha256": row.sha256}
        for row in rows
    ]


def _stored_name(name: str) -> str:
    return name.replace("\x00", "")[:255]


def _store_answers(census: Census, records: list[CensusRecord]) -> None:
    inserter = RowInserter(CensusAnswer, ["census", "answerer", "category", "run", "reply"])
    for start in range(0, len(records), BULK_BATCH_SIZE):
        inserter.insert(
            [
                [census.pk, record.model, record.category, record.run, record.reply]
                for record in records[start : start + BULK_BATCH_SIZE]
            ]
        )


def _store_norms(census: Census, published: PublishedNorms) -> None:
    CensusNorm.objects.bulk_create(
        CensusNorm(
            census=census,
            position=position,
            category=category,
            human_modal=human.modal,
            human_share=human.modal_share,
            human_n_ge5=human.n_ge5,
            model_modal=published.published_model[category].modal,
            model_share=published.published_model[category].modal_share,
            model_n_ge5=published.published_model[category].n_ge5,
            wording_mismatch=category in published.wording_mismatch,
        )
        for position, (category, human) in enumerate(published.human.items())
    )
