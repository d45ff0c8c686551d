"""``manage.py analyze_corpus NAME [--json FILE] [--csv DIR] [--bootstrap B] [--seed S]
[--lexical] [--human-batch SLUG]``: the corpus analysis of ANALYSIS.md ("Response pools"),
as the study type's command (``core.jobs.commands``)."""

from core.jobs.commands import AnalyzeCommand


class Command(AnalyzeCommand):
    study_slug = "corpora"
    help = (
        "Analyse the homogeneity of a corpus (ANALYSIS.md, 'Response pools'): intra-model "
        "repetition, the inter-model matrix, the top-N unique-models curve, lexical "
        "diversity, per category, and typicality against the ratings of linked batches. "
        "The analysis is recorded like one started on the page."
    )
