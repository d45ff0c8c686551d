"""The corpus pages' forms: run an analysis, make a batch from a selection."""

from django import forms

from annotation.kinds import kinds_reading_text
from core.jobs.forms import bootstrap_field, seed_field
from diversity.corpora.models import Corpus, CorpusQuery, SelectionRule
from diversity.corpora.services.analyses import (
    DEFAULT_DRAWS,
    DEFAULT_SEED,
    HUMAN_ANALYSIS,
    MAX_DRAWS,
)
from diversity.corpora.services.batches import MAX_PER_QUERY
from diversity.human_batches import human_batch_field


class RunCorpusForm(forms.Form):
    bootstrap = bootstrap_field(
        MAX_DRAWS, DEFAULT_DRAWS, "Queries resampled for the top-N band and the Spearman intervals."
    )
    seed = seed_field(DEFAULT_SEED)
    lexical = forms.BooleanField(
        label="Lexical basis",
        required=False,
        help_text="Compare TF-IDF vectors of the texts instead of the embeddings.",
    )
    human_batch = human_batch_field(
        HUMAN_ANALYSIS,
        f"An {kinds_reading_text(HUMAN_ANALYSIS)} batch whose ratings to link (batches made "
        "from this corpus are always linked).",
    )


class SelectionForm(forms.Form):
    slug = forms.SlugField(label="New batch", help_text="Lower-case letters, digits, hyphens.")
    title = forms.CharField(label="Title", required=False, max_length=300)
    rule = forms.ChoiceField(label="Rule", choices=SelectionRule.choices)
    per_query = forms.IntegerField(
        label="k or r",
        min_value=1,
        max_value=MAX_PER_QUERY,
        initial=2,
        help_text="typicality: k most and k least typical per query; random: r per model and "
        "query.",
    )
    seed = forms.IntegerField(
        label="Seed", min_value=0, initial=0, required=False, help_text="For the random rule."
    )
    categories = forms.MultipleChoiceField(
        label="Categories", required=False, help_text="None chosen: every query."
    )
    annotations_per_item = forms.IntegerField(
        label="Ratings per item", min_value=1, required=False, help_text="Default: 25."
    )

    def __init__(self, corpus: Corpus, *args, **kwargs):
        # its own ids: the run-analysis form on the same page has a seed field too
        kwargs.setdefault("auto_id", "batch_%s")
        super().__init__(*args, **kwargs)
        categories = (
            CorpusQuery.objects.filter(corpus=corpus)
            .exclude(category="")
            .values_list("category", flat=True)
            .distinct()
            .order_by("category")
        )
        self.fields["categories"].choices = [(c, c) for c in categories]
