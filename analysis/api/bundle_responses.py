"""The shape of a bundled batch's ``bundles`` section of the report (ANALYSIS.md,
"Bundles") for the OpenAPI schema. Schema only, as ``analysis.api.responses``."""

from rest_framework import serializers


class _PositionEffect(serializers.Serializer):
    positions = serializers.ListField(
        child=serializers.IntegerField(), help_text="position_in_bundle values (0 first)."
    )
    mean_label = serializers.ListField(child=serializers.FloatField())
    n_labels = serializers.ListField(child=serializers.IntegerField())
    spearman_rho = serializers.FloatField(
        allow_null=True, help_text="Label against position over every counted label."
    )
    permutation_p = serializers.FloatField(
        allow_null=True, help_text="Two-sided; positions shuffled within each participant's set."
    )
    permutations = serializers.IntegerField()


class _Spread(serializers.Serializer):
    n = serializers.IntegerField(help_text="Defined values.")
    mean = serializers.FloatField()
    median = serializers.FloatField()
    q1 = serializers.FloatField()
    q3 = serializers.FloatField()
    low = serializers.FloatField()
    high = serializers.FloatField()


class _Summary(serializers.Serializer):
    kendalls_w = _Spread(allow_null=True)
    participant_share = _Spread(allow_null=True)
    icc_2_1 = _Spread(allow_null=True)
    icc_3_1 = _Spread(allow_null=True)
    spearman_with_others = _Spread(allow_null=True, help_text="Over every (participant, bundle).")


class _WVersusEntropy(serializers.Serializer):
    n_bundles = serializers.IntegerField()
    spearman_rho = serializers.FloatField(allow_null=True)
    p = serializers.FloatField(allow_null=True)
    reason = serializers.CharField(allow_null=True)


class _TwoWay(serializers.Serializer):
    n_items = serializers.IntegerField()
    n_participants = serializers.IntegerField(help_text="k: the complete participants.")
    ms_items = serializers.FloatField()
    ms_participants = serializers.FloatField()
    ms_residual = serializers.FloatField()
    participant_share = serializers.FloatField(allow_null=True)
    icc_2_1 = serializers.FloatField(allow_null=True)
    icc_3_1 = serializers.FloatField(allow_null=True)


class _Bundle(serializers.Serializer):
    bundle = serializers.CharField(help_text="query:<query_id>, or KEY:<value> for meta:KEY.")
    n_items = serializers.IntegerField()
    n_participants = serializers.IntegerField()
    n_complete = serializers.IntegerField(help_text="Participants who rated every item.")
    kendalls_w = serializers.FloatField(allow_null=True)
    mean_item_entropy = serializers.FloatField(allow_null=True)
    two_way = _TwoWay(allow_null=True)


class _Ranking(serializers.Serializer):
    bundle = serializers.CharField()
    spearman_with_others = serializers.FloatField(allow_null=True)
    n_items = serializers.IntegerField(help_text="Items the ρ is taken over.")


class _Participant(serializers.Serializer):
    annotator = serializers.CharField()
    bundles = _Ranking(many=True)


class ReportBundles(serializers.Serializer):
    """A bundled batch's position effect, concordance and individual preferences."""

    bundle_by = serializers.CharField()
    bundle_order = serializers.CharField(required=False)
    note = serializers.CharField(required=False, help_text="Why the rest is absent.")
    position_effect = _PositionEffect(required=False)
    summary = _Summary(required=False)
    w_versus_entropy = _WVersusEntropy(required=False)
    bundles = _Bundle(many=True)
    participants = _Participant(many=True, required=False)
