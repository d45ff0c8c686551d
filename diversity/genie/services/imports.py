"""Importing a Genie set: a judgments file in the platform's layout or GENIE's own (FORMATS.md,
"Genie judgments" and "GENIE's own files"), all or nothing.

The whole file (with a GENIE answers file's population file, GENIE's questions file and a
model table, when given) is read and checked by the pure reader (``diversity.genie.records``)
first;
any problem rejects it with every ``FILE:LINE: field: message`` listed and nothing stored.
Then the set (with the file's size and SHA-256) and its rows (1,000 per statement) are
written in one transaction and the import is recorded in the set's audit trail.
"""

import json
import os
from typing import IO

from django.conf import settings
from django.db import IntegrityError, transaction

from core import audit, json_text
from core.audit import Actor
from core.errors import Conflict, InvalidInput
from core.jobs.subject_names import check_subject_name
from core.problem_lists import first_problems
from core.row_writing import BULK_BATCH_SIZE, RowInserter
from core.tabular import ImportRejected, fingerprint
from diversity.genie.core.judgments import JUDGMENT_FIELDS, judgment_values
from diversity.genie.models import GenieJudgment, GenieSet
from diversity.genie.records import JudgmentFileError, read_judgment_file

__all__ = [
    "companion_files",
    "import_genie",
    "import_summary",
    "read_model_table",
]

Source = str | os.PathLike | IO


def read_model_table(source: Source, filename: str | None = None) -> dict:
    """A model table: a JSON object ``{"NAME": {"model": "...", "method": "..." | null}}``
    (FORMATS.md, "Models and methods"); ``ImportRejected`` naming the entry otherwise."""
    name = filename or (
        os.path.basename(os.fspath(source)) if isinstance(source, str | os.PathLike) else "table"
    )
    try:
        if isinstance(source, str | os.PathLike):
            with open(source, "rb") as handle:
                raw = handle.read()
        else:
            raw = source.read()
        table = json_text.loads(raw)
    except OSError as error:
        raise ImportRejected([f"{name}:1: file: cannot be read: {error.strerror}"]) from error
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ImportRejected([f"{name}:1: file: not valid JSON: {error}"]) from error
    if not isinstance(table, dict):
        raise ImportRejected([f"{name}:1: file: must be a JSON object of model names"])
    mapped, problems = {}, []
    for model_name, entry in table.items():
        model = entry.get("model") if isinstance(entry, dict) else None
        method = entry.get("method") if isinstance(entry, dict) else None
        if not isinstance(model, str) or not model.strip() or len(model) > 200:
            problems.append(f"{name}:1: {model_name}: needs a 'model' of 1-200 characters")
        elif method is not None and (not isinstance(method, str) or len(method) > 200):
            problems.append(f"{name}:1: {model_name}: 'method' must be text or null")
        else:
            mapped[model_name] = (model.strip(), (method or "").strip() or None)
    if problems:
        raise ImportRejected(problems)
    return mapped


# a stored row: the set, the judgment's place in the file, then the judgment
COLUMNS = ["genie_set", "position", *JUDGMENT_FIELDS]


def companion_files(files) -> dict:
    """The optional uploads beside the judgments file (``population``, ``questions``,
    ``model_map``) as ``import_genie`` keywords, from a page's or the API's ``FILES``."""
    population, questions, table = (
        files.get(key) for key in ("population", "questions", "model_map")
    )
    return {
        "population": (population, population.name) if population else None,
        "questions": (questions, questions.name) if questions else None,
        "models": read_model_table(table, table.name) if table else None,
    }


def import_genie(
    name: str,
    source: str | os.PathLike | IO,
    *,
    filename: str | None = None,
    description: str = "",
    actor: Actor | None = None,
    population: tuple[Source, str | None] | None = None,
    questions: tuple[Source, str | None] | None = None,
    models: dict | None = None,
) -> GenieSet:
    """Create Genie set ``name`` from a judgments file (a path, or an open binary file whose
    name ``filename`` gives the format: ``.jsonl``, ``.json`` or ``.csv``), in the platform's
    layout or GENIE's; ``population`` and ``questions`` are (file, name) of a GENIE answers
    file's population and of GENIE's questions file, ``models`` a model table
    (``read_model_table``)."""
    name = check_subject_name(name)
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
        found = read_judgment_file(
            source,
            name=filename,
            text_max=settings.TEXT_MAX_CHARS,
            models=models,
            population=population,
            questions=questions,
        )
    except JudgmentFileError as error:
        raise ImportRejected(first_problems(error.problems)) from error
    judgments = found.judgments
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
                layout=found.layout,
                left_out=found.left_out,
                repeated_pairs=found.repeated_pairs,
                created_by=actor.user if actor else None,
            )
            inserter = RowInserter(GenieJudgment, COLUMNS)
            for start in range(0, len(judgments), BULK_BATCH_SIZE):
                inserter.insert(
                    [
                        [genie_set.pk, start + offset, *judgment_values(judgment)]
                        for offset, judgment in enumerate(
                            judgments[start : start + BULK_BATCH_SIZE]
                        )
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
                    "layout": found.layout,
                    "left_out": found.left_out,
                    "repeated_pairs": found.repeated_pairs,
                },
            )
    except IntegrityError as error:  # another import took the name meanwhile
        raise Conflict(f"name: a Genie set {name!r} already exists") from error
    return genie_set


def import_summary(genie_set: GenieSet) -> str:
    """What an import brought in, in one sentence (the command prints it, the page shows it):
    the judgments by source, GENIE's layout, the pairs left out of the scores by reason and
    the rows that judge a pair judged before."""
    judgments = genie_set.judgments
    left_out = ", ".join(f"{count} {reason}" for reason, count in genie_set.left_out.items())
    return (
        f"Imported Genie set {genie_set.name}: {judgments.count()} judgments "
        f"({judgments.filter(source='llm').count()} llm, "
        f"{judgments.filter(source='human').count()} human)"
        + (f" in the {genie_set.layout} layout" if genie_set.layout != "platform" else "")
        + (f"; pairs left out of the scores: {left_out}" if left_out else "")
        + (
            f"; {genie_set.repeated_pairs} rows judge a pair judged before (each judgment "
            "counts, as in compute_genie)"
            if genie_set.repeated_pairs
            else ""
        )
        + "."
    )
