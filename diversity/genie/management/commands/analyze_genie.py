"""``manage.py analyze_genie NAME [--json FILE] [--bootstrap B] [--seed S]
[--human-batch SLUG]``"""

from core.jobs.commands import AnalyzeCommand
from diversity.genie.models import GenieSet
from diversity.genie.services import analyses as genie_analyses


class Command(AnalyzeCommand):
    help = (
        "Analyse a Genie set (ANALYSIS.md, 'Genie'): novelty per document and feature, per "
        "feature across documents with bootstrap intervals, and the agreement of human and "
        "LLM similarity judgments. The analysis is recorded like one started on the page."
    )
    subject_model = GenieSet
    subject_label = "Genie set"
    human_batch_help = "a similarity batch of the set's pairs (default: the set's own, if any)"
    analyses = genie_analyses

    def summary(self, genie_set: GenieSet, report: dict, seconds: float) -> list[str]:
        lines = [
            f"Analysed Genie set {genie_set.name}: {report['n_documents']} documents, "
            f"{len(report['features'])} features, judged pairs: "
            f"{report['n_judged_pairs']['llm']} llm, {report['n_judged_pairs']['human']} human "
            f"({report['settings']['human_source'] or 'no human judgments'}) "
            f"in {seconds:.1f} s"
        ]
        for source, scores in report["scores"].items():
            for feature, summary in (scores or {}).get("per_feature", {}).items():
                low, high = summary["ci"]
                lines.append(
                    f"  {source} {feature}: {summary['mean']:.3f} [{low:.3f}, {high:.3f}] "
                    f"over {summary['n_documents']} documents"
                )
        overall = (report.get("agreement") or {}).get("overall")
        if overall:
            rho = overall["spearman"]
            lines.append(
                f"  human vs llm on {overall['n_pairs']} pairs: Spearman "
                + (f"{rho['rho']:.3f}" if rho else "undefined")
                + ", Krippendorff alpha (interval) "
                + (
                    f"{overall['alpha_interval']:.3f}"
                    if overall["alpha_interval"] is not None
                    else "undefined"
                )
            )
        return lines
