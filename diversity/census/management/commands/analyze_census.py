"""``manage.py analyze_census NAME [--json FILE] [--bootstrap B] [--seed S]
[--human-batch SLUG]`` (``manage.py analyze_study census …`` alike)."""

from core.jobs.commands import AnalyzeCommand


class Command(AnalyzeCommand):
    help = (
        "Analyse a census (ANALYSIS.md, 'One-Word Census'): per-model surprisal, modal "
        "avoidance, novelty, self-distinctness and type; per-category concentration; the "
        "comparison with human norms. The analysis is recorded like one started on the page."
    )
    study_slug = "census"
