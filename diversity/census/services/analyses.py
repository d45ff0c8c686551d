"""Analysing a census: the docs/CENSUS.md figures of its stored replies, set against human norms.

``analyse_census`` builds the report (ANALYSIS.md, "One-Word Census"); the
``census_analysis`` job runs it and keeps the report as a job file, so the census page, the
API and ``manage.py analyze_census`` all read the newest finished one (``latest_report``).
``analyse_now`` records such a job and runs it in this process (the command and the demo
use it, so that their analysis appears on the page like one started there).
"""

from collections import Counter
from collections.abc import Callable

import numpy as np

from annotation.models import Batch
from core.audit import Actor
from core.errors import InvalidInput
from core.jobs.execution import newest_report
from core.jobs.queue import run_now
from core.models import Job
from diversity.census.core.comparison import compare_with_norms
from diversity.census.core.metrics import BOOTSTRAP_DRAWS, BOOTSTRAP_SEED, CI_PERCENTILES
from diversity.census.core.report import census_report, comparison_report
from diversity.census.core.study import run_census
from diversity.census.loading import census_records, human_answers, published_norms
from diversity.census.models import Census
from diversity.census.norms import human_norms
from diversity.human_batches import bootstrap_params
from diversity.human_batches import human_batch_of as human_batch_of_kind

__all__ = [
    "DEFAULT_DRAWS",
    "DEFAULT_SEED",
    "HUMAN_ANALYSIS",
    "JOB_KIND",
    "MAX_DRAWS",
    "analyse_census",
    "analyse_job",
    "analyse_now",
    "analysis_params",
    "job_summary",
    "latest_report",
]

JOB_KIND = "census_analysis"
DEFAULT_DRAWS = BOOTSTRAP_DRAWS
DEFAULT_SEED = BOOTSTRAP_SEED
MAX_DRAWS = 100_000
# the kinds whose batches give the human side name this analysis in ``analyses``
HUMAN_ANALYSIS = "census_norms"
# Answers must be counted by the rule that counts the models' replies, or the two fields
# are not comparable.
HUMAN_BATCH_NORMALISER = "census"
CI_LEVEL = (CI_PERCENTILES[1] - CI_PERCENTILES[0]) / 100


# --------------------------------------------------------------------------- parameters


def human_batch_of(slug: str | None) -> Batch | None:
    """The ``short_text`` batch named ``slug`` (``None`` for none); ``InvalidInput`` if the
    batch does not exist, is of another kind, or normalises answers by another rule than
    the census's."""
    batch = human_batch_of_kind(slug, HUMAN_ANALYSIS, "human answers come from a")
    if batch is None:
        return None
    normaliser = batch.task_kind.clean_settings(batch.kind_settings).get("normaliser")
    if normaliser != HUMAN_BATCH_NORMALISER:
        raise InvalidInput(
            "human_batch",
            f"batch {batch.slug!r} counts answers with the {normaliser!r} normaliser; the "
            f"census compares answers counted by the {HUMAN_BATCH_NORMALISER!r} rule",
        )
    return batch


def analysis_params(bootstrap=DEFAULT_DRAWS, seed=DEFAULT_SEED, human_batch=None) -> dict:
    """Checked job parameters: ``{"bootstrap", "seed", "human_batch"}``."""
    return bootstrap_params(
        bootstrap, seed, human_batch, max_draws=MAX_DRAWS, human_batch_of=human_batch_of
    )


# --------------------------------------------------------------------------- the report


def analyse_census(
    census: Census,
    *,
    bootstrap: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
    human_batch: Batch | None = None,
    progress: Callable[..., None] | None = None,
) -> dict:
    """The census report of ANALYSIS.md: per model, per category, and against human norms
    (the imported norms, and those computed from ``human_batch`` when one is given).

    ``progress(step, None, message)`` reports each step (no total: the steps differ in
    length by orders of magnitude, so a share would mislead).
    """
    progress = progress or (lambda done, total=None, message="": None)
    progress(0, None, "Reading the replies")
    records = census_records(census)
    progress(1, None, "Scoring the models")
    result = run_census(records, draws=bootstrap, seed=seed)
    report = {
        "census": census.name,
        "settings": {
            "bootstrap": bootstrap,
            "seed": seed,
            "ci_level": CI_LEVEL,
            "human_batch": human_batch.slug if human_batch else None,
        },
        **_field_summary(records, result),
        **census_report(result.per_model, result.per_category),
    }
    # the comparison with human norms uses n >= 5 %; report it beside the other figures
    for category, figures in result.per_category.items():
        report["per_category"][category]["n_ge5"] = int(figures.n_ge5)
    progress(2, None, "Comparing with the imported norms")
    norms = published_norms(census)
    report["norms"] = None
    if norms is not None:
        report["norms"] = {
            "source": norms.source,
            "n_categories": len(norms.human),
            "wording_mismatch": sorted(norms.wording_mismatch),
            "published": comparison_report(
                compare_with_norms(norms.human, norms.published_model, "published")
            ),
            "computed": comparison_report(
                compare_with_norms(norms.human, result.per_category, "computed")
            ),
        }
    progress(3, None, "Comparing with the human batch")
    report["human_batch"] = (
        _human_batch_section(human_batch, result.per_category) if human_batch else None
    )
    return report


def _field_summary(records, result) -> dict:
    scored = result.per_model
    answerers = sorted({record.model for record in records})
    return {
        "n_cells": len(records),
        "n_answers": sum(figures.n_answers for figures in result.per_category.values()),
        "n_failed": len(result.field.failed),
        "failed_by_reason": dict(Counter(cell.reason for cell in result.field.failed)),
        "n_models": len(scored),
        "n_categories": len(result.per_category),
        "left_out_models": [answerer for answerer in answerers if answerer not in scored],
        "medians": {
            "surprisal": float(np.median([m.surprisal for m in scored.values()]))
            if scored
            else None,
            "self_distinct": float(np.median([m.self_distinct for m in scored.values()]))
            if scored
            else None,
        },
    }


def _human_batch_section(batch: Batch, per_category) -> dict:
    answers = human_answers(batch)
    norms = human_norms(answers.by_category)
    return {
        "batch": batch.slug,
        "n_labels": answers.n_labels,
        "n_annotators": answers.n_annotators,
        "n_without_category": answers.n_without_category,
        "n_without_answer": answers.n_without_answer,
        "per_category": {
            category: {
                "modal": norm.modal,
                "modal_share": float(norm.modal_share),
                "n_ge5": int(norm.n_ge5),
                "n_answers": len(answers.by_category[category]),
            }
            for category, norm in norms.items()
        },
        "categories_not_in_census": [c for c in norms if c not in per_category],
        "computed": comparison_report(compare_with_norms(norms, per_category, "computed")),
    }


# --------------------------------------------------------------------------- the job


def analyse_job(census: Census, params: dict, progress: Callable[..., None]) -> dict:
    """The report of an analysis job (``core.jobs.study_jobs``), from checked ``params``."""
    return analyse_census(
        census,
        bootstrap=params["bootstrap"],
        seed=params["seed"],
        human_batch=human_batch_of(params["human_batch"]),
        progress=progress,
    )


def job_summary(report: dict) -> dict:
    """What the job's result keeps of the report."""
    return {
        "n_models": report["n_models"],
        "n_categories": report["n_categories"],
        "n_answers": report["n_answers"],
        "human_batch": report["settings"]["human_batch"],
    }


def analyse_now(census: Census, params: dict, actor: Actor | None = None) -> Job:
    """Record a ``census_analysis`` job and run it in this process, whatever the queue
    (``core.jobs.queue.run_now``), so the census page shows its report; returns the finished
    (or failed) job."""
    return run_now(JOB_KIND, census, params, actor)


def latest_report(census: Census) -> tuple[Job, dict] | None:
    """The newest finished analysis of the census and its report, if any."""
    return newest_report(census, JOB_KIND)
