"""What is judged: queries, responses, and the items that put them before an annotator."""

from django.db import models
from django.db.models import F, Q

from annotation.models.batch import Batch


class Query(models.Model):
    """A user prompt. ``query_id`` is project-wide: the same id always means the same text.

    ``category`` and ``subcategory`` place it in the study's taxonomy (empty: none); a
    sub-category belongs to a category (imports refuse one without the other, and so does
    the database).
    """

    query_id = models.CharField(max_length=200, unique=True)
    text = models.TextField()
    category = models.CharField(max_length=200, blank=True, default="")
    subcategory = models.CharField(max_length=200, blank=True, default="", db_default="")

    class Meta:
        verbose_name_plural = "queries"
        indexes = [models.Index(fields=["category", "subcategory"], name="query_taxonomy")]
        constraints = [
            models.CheckConstraint(
                condition=Q(subcategory="") | ~Q(category=""),
                name="query_subcategory_needs_category",
            ),
        ]

    def __str__(self) -> str:
        return self.query_id


class Response(models.Model):
    """One model's answer to a query; ``response_id`` is project-wide."""

    response_id = models.CharField(max_length=200, unique=True)
    query = models.ForeignKey(Query, on_delete=models.PROTECT, related_name="responses")
    model = models.CharField(max_length=200, blank=True, default="")
    text = models.TextField()

    def __str__(self) -> str:
        return self.response_id


class Item(models.Model):
    """The unit one annotator judges once: a query and what its kind shows with it —
    a response, two responses (A, B), or texts kept in ``content`` — see annotation.kinds."""

    # Indexed by item_id_unique_in_batch (batch, item_id), which leads with it: an index of
    # its own would be one more to update on every lease and label (item rows are rewritten
    # whole there, their counts being in item_leasing_order).
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="items", db_index=False)
    item_id = models.CharField(max_length=200)
    position = models.PositiveIntegerField(help_text="Order of import; ties in leasing go first.")
    query = models.ForeignKey(Query, on_delete=models.PROTECT, related_name="+")
    response = models.ForeignKey(
        Response, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    response_a = models.ForeignKey(
        Response, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    response_b = models.ForeignKey(
        Response, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    content = models.JSONField(
        default=dict, blank=True, help_text="Texts of kinds that show more than responses."
    )
    gold = models.JSONField(
        null=True, blank=True, help_text="Accepted answers of an attention-check item."
    )
    metadata = models.JSONField(default=dict, blank=True)
    # the bundle the item belongs to (from the batch's bundle_by; "" when not bundled)
    bundle = models.CharField(max_length=200, blank=True, default="", db_default="")
    is_check = models.BooleanField(
        default=False, db_default=False, help_text="An attention check: never counted toward N."
    )
    target = models.PositiveIntegerField(help_text="The batch's N, copied for the constraints.")
    reserved_count = models.PositiveIntegerField(default=0)
    counted_count = models.PositiveIntegerField(default=0)
    # Of reserved_count, the slots of each presentation order of a pair (A first / B first):
    # each order holds at most ceil(N / 2), so a complete item is balanced (|ab - ba| <= 1).
    reserved_ab = models.PositiveIntegerField(default=0, db_default=0)
    reserved_ba = models.PositiveIntegerField(default=0, db_default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["batch", "item_id"], name="item_id_unique_in_batch"),
            models.CheckConstraint(
                condition=Q(counted_count__lte=F("reserved_count")),
                name="item_counted_within_reserved",
            ),
            models.CheckConstraint(
                condition=Q(reserved_count__lte=F("target")), name="item_reserved_within_n"
            ),
            models.CheckConstraint(
                condition=Q(reserved_ab__lte=(F("target") + 1) / 2)
                & Q(reserved_ba__lte=(F("target") + 1) / 2)
                & Q(reserved_ab__lte=F("reserved_count") - F("reserved_ba")),
                name="item_orders_balanced",
            ),
            models.CheckConstraint(
                condition=Q(is_check=False) | Q(target=0, gold__isnull=False),
                name="item_check_has_gold_and_no_slots",
            ),
            # one response, a pair, or none (kinds whose texts are in content)
            models.CheckConstraint(
                condition=(
                    Q(response__isnull=False, response_a__isnull=True, response_b__isnull=True)
                    | Q(response__isnull=True, response_a__isnull=False, response_b__isnull=False)
                    | Q(response__isnull=True, response_a__isnull=True, response_b__isnull=True)
                ),
                name="item_one_two_or_no_responses",
            ),
        ]
        indexes = [
            models.Index(fields=["batch", "position"], name="item_batch_position"),
            models.Index(fields=["batch", "bundle"], name="item_batch_bundle"),
            # The leasing order (closest to completion first), over items with a free slot
            # only: the candidate query walks this index and stops at the first item the
            # annotator has not seen, instead of sorting the batch or stepping over the
            # full items (most of them, late in a study).
            models.Index(
                fields=["batch", "-reserved_count", "-counted_count", "position"],
                name="item_leasing_order",
                condition=Q(reserved_count__lt=F("target")),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.batch.slug}/{self.item_id}"
