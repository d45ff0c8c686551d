"""Importing a Genie set: one judgments file (FORMATS.md, "Genie judgments"), all or nothing.

The whole file is read and checked by the pure reader (``diversity.genie.records``) first;
any problem rejects it with every ``FILE:LINE: field: message`` listed and nothing stored.
Then the set (with the file's size and SHA-256) and its rows (1,000 per statement) are
written in one transaction and the import is recorded in the set's audit trail.
"""

import os
import re
from typing import IO

from django.conf import settings
from django.db import IntegrityError, transaction

from core import audit
from core.audit import Actor
from core.errors import Conflict, InvalidInput
from core.tabular import BULK_BATCH_SIZE, ImportRejected, RowInserter, fingerprint
from diversity.genie.models import GenieJudgment, GenieSet
from diversity.genie.records import JudgmentFileError, read_judgments

__all__ = ["NAME_PATTERN", "import_genie"]

NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,99}$")
COLUMNS = [
    "genie_set",
    "position",
    "prompt_id",
    "question_id",
    "feature",
    "question",
    "document_id",
    "population_id",
    "target_answer",
    "population_answer",
    "similarity",
    "source",
]


def check_name(name: str) -> str:
    name = (name or "").strip()
    if not NAME_PATTERN.match(name):
        raise InvalidInput(
            "name", f"{name!r} must be lower-case letters, digits and hyphens (at most 100)"
        )
    return name


def import_genie(
    name: str,
    source: str | os.PathLike | IO,
    *,
    filename: str | None = None,
    description: str = "",
    actor: Actor | None = None,
) -> GenieSet:
    """Create Genie set ``name`` from a judgments file (a path, or an open binary file whose
    name ``filename`` gives the format: ``.jsonl`` or ``.csv``)."""
    name = check_name(name)
    if GenieSet.objects.filter(name=name).exists():
        raise Conflict(f"name: a Genie set {name!r} already exists")
    if filename is None:
        filename = (
            os.path.basename(os.fspath(source))
            if isinstance(source, str | os.PathLike)
            else "upload"
        )
    filename = filename.replace("\x00", "")[:255]
    if isinstance(source, str | os.PathLike):
        try:
            with open(source, "rb") as handle:
                print_ = fingerprint(handle)
        except OSError as error:
            raise InvalidInput("file", f"cannot open {source}: {error.strerror}") from error
    else:
        print_ = fingerprint(source)
    try:
        judgments = read_judgments(source, name=filename, text_max=settings.TEXT_MAX_CHARS)
    except JudgmentFileError as error:
        listed = str(error).split("\n")  # the first 50 and "... and K more problems"
        raise ImportRejected(listed) from error
    if not judgments:
        raise ImportRejected([f"{filename}:1: file: holds no judgment at all"])

    try:
        with transaction.atomic():
            genie_set = GenieSet.objects.create(
                name=name,
                description=description.replace("\x00", ""),
                file_name=filename,
                file_bytes=print_.bytes,
                file_sha256=print_.sha256,
                created_by=actor.user if actor else None,
            )
            inserter = RowInserter(GenieJudgment, COLUMNS)
            for start in range(0, len(judgments), BULK_BATCH_SIZE):
                inserter.insert(
                    [
                        [
                            genie_set.pk,
                            start + offset,
                            j.prompt_id,
                            j.question_id,
                            j.feature,
                            j.question,
                            j.document_id,
                            j.population_id,
                            j.target_answer,
                            j.population_answer,
                            j.similarity,
                            j.source,
                        ]
                        for offset, j in enumerate(judgments[start : start + BULK_BATCH_SIZE])
                    ]
                )
            audit.record(
                "genie.import",
                subject=genie_set,
                actor=actor,
                changes={
                    "file": filename,
                    "bytes": print_.bytes,
                    "sha256": print_.sha256,
                    "n_judgments": len(judgments),
                    "n_llm": sum(j.source == "llm" for j in judgments),
                    "n_human": sum(j.source == "human" for j in judgments),
                },
            )
    except IntegrityError as error:  # another import took the name meanwhile
        raise Conflict(f"name: a Genie set {name!r} already exists") from error
    return genie_set
