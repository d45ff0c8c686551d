"""``manage.py analyze_genie NAME [--json FILE] [--bootstrap B] [--seed S]
[--human-batch SLUG]`` (``manage.py analyze_study genie …`` alike)."""

from core.jobs.commands import AnalyzeCommand


class Command(AnalyzeCommand):
    help = (
        "Analyse a Genie set (ANALYSIS.md, 'Genie'): novelty per document and feature, per "
        "feature across documents with bootstrap intervals, and the agreement of human and "
        "LLM similarity judgments. The analysis is recorded like one started on the page."
    )
    study_slug = "genie"
