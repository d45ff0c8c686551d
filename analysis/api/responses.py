"""The shape of the analysis report (ANALYSIS.md, "Report (JSON)") for the OpenAPI schema.

Schema only: ``GET /api/v1/batches/<slug>/report`` answers with the stored report
(``analysis.reports``); these serializers describe it field by field.
"""

from drf_spectacular.utils import OpenApiExample
from rest_framework import serializers

from analysis.api.bundle_responses import ReportBundles
from annotation.kinds import kinds_reading


class _Correlation(serializers.Serializer):
    r = serializers.FloatField()
    p = serializers.FloatField(
        allow_null=True, help_text="Null under settings.min_p_value_n pairs (too few)."
    )
    p_method = serializers.ChoiceField(
        choices=["exact", "t", "beta"],
        allow_null=True,
        help_text="exact: over all pairings (up to settings.exact_p_max_n pairs); t / beta: "
        "scipy's approximation (Spearman) / exact distribution under normality (Pearson).",
    )
    ci95 = serializers.ListField(
        child=serializers.FloatField(), allow_null=True, help_text="[low, high], bootstrap."
    )


class ReportItem(serializers.Serializer):
    item_id = serializers.CharField()
    category = serializers.CharField(help_text="The item's query's category (empty: none).")
    subcategory = serializers.CharField(help_text="Its sub-category (empty: none).")
    n = serializers.IntegerField(help_text="Counted labels.")
    counts = serializers.DictField(
        child=serializers.IntegerField(), help_text="Label → count over the fixed label set."
    )
    mean = serializers.FloatField()
    std = serializers.FloatField()
    entropy_bits = serializers.FloatField()
    agreement = serializers.FloatField(required=False, help_text="Pairwise only.")
    p_disagree = serializers.FloatField(
        required=False, help_text="Pairwise only: 1 − agreement (0.5 for an all-ties item)."
    )


class ReportCorrelation(serializers.Serializer):
    source = serializers.CharField()
    kind = serializers.ChoiceField(choices=["lm", "reward_model", "judge", "other"])
    subset = serializers.CharField(help_text="full, tukey_k1.5, top_entropy_10pct, …")
    n = serializers.IntegerField()
    spearman = _Correlation(allow_null=True)
    pearson = _Correlation(allow_null=True)
    reason = serializers.CharField(required=False, help_text="Why the figures are null.")


class ReportByKind(serializers.Serializer):
    kind = serializers.CharField()
    subset = serializers.CharField()
    spearman_mean = serializers.FloatField(allow_null=True)
    pearson_mean = serializers.FloatField(allow_null=True)
    n_sources = serializers.IntegerField()


class ReportAgreement(serializers.Serializer):
    krippendorff_alpha_ordinal = serializers.FloatField(allow_null=True)
    krippendorff_alpha_interval = serializers.FloatField(allow_null=True)
    mean_entropy_bits = serializers.FloatField(allow_null=True)
    mean_grouped_entropy_bits = serializers.FloatField(allow_null=True)
    mean_gini_impurity = serializers.FloatField(allow_null=True)
    mean_pairwise_annotator_disagreement = serializers.FloatField(allow_null=True)
    mean_majority_share = serializers.FloatField(allow_null=True)
    mean_p_disagree = serializers.FloatField(
        required=False, allow_null=True, help_text="Pairwise only."
    )


class ReportAnnotator(serializers.Serializer):
    annotator = serializers.CharField()
    n_labels = serializers.IntegerField()
    n_compared = serializers.IntegerField()
    crowd_spearman = serializers.FloatField(allow_null=True)
    crowd_spearman_p = serializers.FloatField(allow_null=True)
    crowd_spearman_p_method = serializers.CharField(allow_null=True, required=False)
    median_duration_ms = serializers.IntegerField(allow_null=True, required=False)
    attention_checks_passed = serializers.IntegerField(required=False)
    attention_checks_failed = serializers.IntegerField(required=False)
    reason = serializers.CharField(required=False)


class ReportCategory(serializers.Serializer):
    """The batch-level figures recomputed on one category's (or sub-category's) items."""

    category = serializers.CharField(help_text="Empty: the items without a category.")
    subcategory = serializers.CharField(
        allow_null=True, help_text="Null: the whole category; empty: its items without one."
    )
    n_items = serializers.IntegerField(help_text="Items with at least one counted label.")
    n_labels = serializers.IntegerField()
    n_annotators = serializers.IntegerField()
    small = serializers.BooleanField(
        help_text="Fewer than category_min_items labelled items: shown, but too few to compare."
    )
    mean_rating = serializers.FloatField(allow_null=True, help_text="Mean of the item means.")
    mean_std = serializers.FloatField(allow_null=True, help_text="Mean of the item stds.")
    subset_sizes = serializers.DictField(
        child=serializers.IntegerField(), help_text="Subset (chosen within the group) → items."
    )
    agreement = ReportAgreement()
    correlations = ReportCorrelation(many=True)
    by_kind = ReportByKind(many=True)
    annotators = ReportAnnotator(many=True)
    validity = serializers.DictField(help_text="As the report's validity, over the group.")


class ReportResponse(serializers.Serializer):
    """The newest finished analysis of a batch (ANALYSIS.md)."""

    batch = serializers.CharField()
    # the kinds the report is made of: those whose ``analyses`` name the ratings analysis
    kind = serializers.ChoiceField(choices=list(kinds_reading("ratings")))
    n_items = serializers.IntegerField()
    n_labels = serializers.IntegerField()
    n_annotators = serializers.IntegerField()
    complete = serializers.BooleanField(
        allow_null=True,
        help_text="Every regular item had its N counted labels when the report was computed; "
        "false: the figures will change.",
    )
    items_complete = serializers.IntegerField(
        allow_null=True, help_text="Regular items with N counted labels (checks never count)."
    )
    items_total = serializers.IntegerField(help_text="Regular items (attention checks left out).")
    labels_per_item = serializers.IntegerField(allow_null=True, help_text="N.")
    items = ReportItem(many=True)
    subsets = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Subset name → the item_ids in it.",
    )
    correlations = ReportCorrelation(many=True)
    by_kind = ReportByKind(many=True)
    agreement = ReportAgreement()
    annotators = ReportAnnotator(many=True)
    category_min_items = serializers.IntegerField(
        help_text="A by_category entry with fewer labelled items is marked small."
    )
    by_category = ReportCategory(
        many=True, help_text="Per category, then its sub-categories ([] without categories)."
    )
    bundles = ReportBundles(
        required=False, help_text="Only in the report of a bundled batch (ANALYSIS.md, Bundles)."
    )


REPORT_EXAMPLE = OpenApiExample(
    "A small absolute batch with one source",
    value={
        "batch": "my-study",
        "kind": "absolute",
        "n_items": 2,
        "n_labels": 50,
        "n_annotators": 25,
        "complete": True,
        "items_complete": 2,
        "items_total": 2,
        "labels_per_item": 25,
        "items": [
            {
                "item_id": "q07-r03",
                "category": "Creative Content Generation",
                "subcategory": "",
                "n": 25,
                "counts": {"1": 0, "2": 3, "3": 9, "4": 10, "5": 3},
                "mean": 3.52,
                "std": 0.87,
                "entropy_bits": 1.84,
            }
        ],
        "subsets": {"full": ["q07-r03", "q07-r04"], "tukey_k1.5": ["q07-r03", "q07-r04"]},
        "correlations": [
            {
                "source": "Skywork-Reward-Gemma-2-27B",
                "kind": "reward_model",
                "subset": "full",
                "n": 2,
                "spearman": None,
                "pearson": None,
                "reason": "fewer than 3 items",
            }
        ],
        "by_kind": [],
        "agreement": {
            "krippendorff_alpha_ordinal": 0.21,
            "krippendorff_alpha_interval": 0.24,
            "mean_entropy_bits": 1.79,
            "mean_grouped_entropy_bits": 1.31,
            "mean_gini_impurity": 0.68,
            "mean_pairwise_annotator_disagreement": 0.71,
            "mean_majority_share": 0.6,
        },
        "annotators": [
            {
                "annotator": "a-7f3k2q",
                "n_labels": 2,
                "n_compared": 2,
                "crowd_spearman": None,
                "crowd_spearman_p": None,
                "reason": "fewer than 3 shared items",
            }
        ],
        "category_min_items": 30,
        "by_category": [],
    },
    response_only=True,
)
