"""Analysing a Genie set: novelty per document and feature from each judgment source, per
feature across documents, and the agreement of human and LLM judgments.

``analyse_genie`` builds the report (ANALYSIS.md, "Genie"); the ``genie_analysis`` job runs
it and keeps the report as a job file, read back by the page, the API and
``manage.py analyze_genie`` (``latest_report``). ``analyse_now`` records such a job and runs
it in this process (the command uses it, so its analysis appears on the page).

Human similarities come from a ``similarity`` batch when one is used (the ``human_batch``
parameter, else the batch made from the set by ``genie_batch``); without a batch, from the
file's own ``human`` rows, if any.
"""

from collections.abc import Callable

from annotation.kinds import kinds_reading
from annotation.models import Batch
from core.audit import Actor
from core.jobs.execution import newest_report
from core.jobs.queue import run_now
from core.models import Job
from diversity.genie.core.agreement import judge_agreement
from diversity.genie.core.pairs import pair_similarities
from diversity.genie.core.report import comparisons, genie_report
from diversity.genie.core.scoring import (
    BOOTSTRAP_DRAWS,
    BOOTSTRAP_SEED,
    CI_LEVEL,
    feature_summary,
    question_scores,
    scores_of_documents,
)
from diversity.genie.loading import batch_judgments, set_judgments
from diversity.genie.models import GenieSet
from diversity.genie.records import SOURCES, Judgment
from diversity.human_batches import bootstrap_params
from diversity.human_batches import human_batch_of as human_batch_of_kind

__all__ = [
    "DEFAULT_DRAWS",
    "DEFAULT_SEED",
    "HUMAN_ANALYSIS",
    "JOB_KIND",
    "MAX_DRAWS",
    "analyse_genie",
    "analyse_job",
    "analyse_now",
    "analysis_params",
    "human_batch_of",
    "job_summary",
    "latest_report",
]

JOB_KIND = "genie_analysis"
DEFAULT_DRAWS = BOOTSTRAP_DRAWS
DEFAULT_SEED = BOOTSTRAP_SEED
MAX_DRAWS = 100_000
# the kinds whose batches give the human side name this analysis in ``analyses``
HUMAN_ANALYSIS = "genie"


# --------------------------------------------------------------------------- parameters


def human_batch_of(slug) -> Batch | None:
    """The ``similarity`` batch named ``slug`` (``None`` for none); ``InvalidInput`` if it does
    not exist or is of another kind."""
    return human_batch_of_kind(slug, HUMAN_ANALYSIS, "human similarities come from a")


def analysis_params(bootstrap=DEFAULT_DRAWS, seed=DEFAULT_SEED, human_batch=None) -> dict:
    """Checked job parameters: ``{"bootstrap", "seed", "human_batch"}``."""
    return bootstrap_params(
        bootstrap, seed, human_batch, max_draws=MAX_DRAWS, human_batch_of=human_batch_of
    )


# --------------------------------------------------------------------------- the report


def _counts(judgments: list[Judgment]) -> dict:
    documents = {(j.prompt_id, j.document_id) for j in judgments}
    pairs = {(j.prompt_id, j.question_id, j.document_id, j.population_id) for j in judgments}
    usable = {
        (j.prompt_id, j.question_id, j.document_id, j.population_id)
        for j in judgments
        if j.target_answer is not None and j.population_answer is not None
    }
    return {
        "n_prompts": len({j.prompt_id for j in judgments}),
        "n_questions": len({(j.prompt_id, j.question_id) for j in judgments}),
        "n_documents": len(documents),
        "n_population": len({(j.prompt_id, j.population_id) for j in judgments}),
        "features": list(dict.fromkeys(j.feature for j in judgments)),
        "n_pairs": len(pairs),
        "n_pairs_without_answer": len(pairs - usable),
        "n_models": len({j.model for j in judgments if j.model is not None}),
        "n_methods": len({j.method for j in judgments if j.method is not None}),
    }


def _documents(judgments: list[Judgment]) -> dict[tuple[str, str], dict]:
    """Each target document's prompt text, model, method and the file's own id."""
    found: dict[tuple[str, str], dict] = {}
    for j in judgments:
        found.setdefault(
            (j.prompt_id, j.document_id),
            {
                "prompt": j.prompt,
                "model": j.model,
                "method": j.method,
                "source_model": j.source_model,
                "source_document_id": j.source_document_id,
            },
        )
    return found


def analyse_genie(
    genie_set: GenieSet,
    *,
    bootstrap: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
    human_batch: Batch | None = None,
    progress: Callable[..., None] | None = None,
) -> dict:
    """The Genie report of ANALYSIS.md for the set, from its LLM rows and its human
    judgments (``human_batch``'s labels when given, else the file's human rows)."""
    progress = progress or (lambda done, total=None, message="": None)
    progress(0, None, "Reading the judgments")
    rows = set_judgments(genie_set)
    llm_rows = [row for row in rows if row.source == "llm"]
    if human_batch is not None:
        from_batch = batch_judgments(human_batch, rows)
        human_rows = from_batch.judgments
        human_source = "batch"
    else:
        from_batch = None
        human_rows = [row for row in rows if row.source == "human"]
        human_source = "file" if human_rows else None
    judgments = llm_rows + human_rows
    report = {
        "genie_set": genie_set.name,
        "settings": {
            "bootstrap": bootstrap,
            "seed": seed,
            "ci_level": CI_LEVEL,
            "human_batch": human_batch.slug if human_batch else None,
            "human_source": human_source,
            "permutations": bootstrap,
        },
        "layout": genie_set.layout,
        "left_out": genie_set.left_out,
        "repeated_pairs": genie_set.repeated_pairs,
        **_counts(rows),
        "n_judgments": {"llm": len(llm_rows), "human": len(human_rows)},
        "n_judged_pairs": {source: len(pair_similarities(judgments, source)) for source in SOURCES},
        "scores": {},
    }
    documents = _documents(rows)
    for step, source in enumerate(SOURCES, start=1):
        progress(step, None, f"Scoring the {source} judgments")
        questions = question_scores(judgments, source)
        scores = scores_of_documents(questions)
        if not scores:
            report["scores"][source] = None
            continue
        summaries = feature_summary(scores, draws=bootstrap, seed=seed)
        scored = genie_report(scores, summaries, documents, questions)
        scored["comparisons"] = comparisons(
            scored["per_document"],
            report["features"],
            draws=bootstrap,
            seed=seed,
            permutations=bootstrap,
        )
        report["scores"][source] = scored
    progress(3, None, "Comparing human and LLM judgments")
    report["agreement"] = judge_agreement(judgments)
    report["human_batch"] = (
        {
            "batch": human_batch.slug,
            "n_items": from_batch.n_items,
            "n_matched_items": from_batch.n_matched_items,
            "n_labels": from_batch.n_labels,
            "n_annotators": from_batch.n_annotators,
        }
        if from_batch is not None
        else None
    )
    return report


# --------------------------------------------------------------------------- the job


def _batch_for(genie_set: GenieSet, slug: str | None) -> Batch | None:
    """The batch named in the parameters, else the one made from the set (if it still is a
    similarity batch)."""
    if slug:
        return human_batch_of(slug)
    linked = genie_set.human_batch
    return linked if linked is not None and linked.kind in kinds_reading(HUMAN_ANALYSIS) else None


def analyse_job(genie_set: GenieSet, params: dict, progress: Callable[..., None]) -> dict:
    """The report of an analysis job (``core.jobs.study_jobs``), from checked ``params``."""
    return analyse_genie(
        genie_set,
        bootstrap=params["bootstrap"],
        seed=params["seed"],
        human_batch=_batch_for(genie_set, params["human_batch"]),
        progress=progress,
    )


def job_summary(report: dict) -> dict:
    """What the job's result keeps of the report."""
    return {
        "n_documents": report["n_documents"],
        "features": report["features"],
        "human_source": report["settings"]["human_source"],
        "human_batch": report["settings"]["human_batch"],
    }


def analyse_now(genie_set: GenieSet, params: dict, actor: Actor | None = None) -> Job:
    """Record a ``genie_analysis`` job and run it in this process, whatever the queue."""
    return run_now(JOB_KIND, genie_set, params, actor)


def latest_report(genie_set: GenieSet) -> tuple[Job, dict] | None:
    """The newest finished analysis of the set and its report, if any."""
    return newest_report(genie_set, JOB_KIND)
