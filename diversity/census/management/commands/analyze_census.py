"""``manage.py analyze_census NAME [--json FILE] [--bootstrap B] [--seed S]
[--human-batch SLUG]``"""

from core.jobs.commands import AnalyzeCommand
from diversity.census.models import Census
from diversity.census.services import analyses as census_analyses


class Command(AnalyzeCommand):
    help = (
        "Analyse a census (ANALYSIS.md, 'One-Word Census'): per-model surprisal, modal "
        "avoidance, novelty, self-distinctness and type; per-category concentration; the "
        "comparison with human norms. The analysis is recorded like one started on the page."
    )
    subject_model = Census
    subject_label = "census"
    human_batch_help = "a short_text batch of human answers"
    analyses = census_analyses

    def summary(self, census: Census, report: dict, seconds: float) -> list[str]:
        lines = [
            f"Analysed census {census.name}: {report['n_models']} models, "
            f"{report['n_categories']} categories, {report['n_answers']} answers "
            f"({report['n_failed']} failed cells) in {seconds:.1f} s"
        ]
        for key, label in (("published", "published model column"), ("computed", "computed")):
            comparison = (report.get("norms") or {}).get(key)
            if comparison and comparison["n_categories"]:
                lines.append(_comparison_line(f"against the imported norms ({label})", comparison))
        if report.get("human_batch"):
            comparison = report["human_batch"]["computed"]
            if comparison["n_categories"]:
                lines.append(
                    _comparison_line(f"against batch {report['human_batch']['batch']}", comparison)
                )
        return lines


def _comparison_line(title: str, comparison: dict) -> str:
    return (
        f"  {title}: model field more concentrated in {comparison['n_model_more_concentrated']} "
        f"of {comparison['n_categories']} categories, mean modal share "
        f"{comparison['mean_model_share']:.3f} versus {comparison['mean_human_share']:.3f}"
    )
