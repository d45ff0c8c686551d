"""The shape of the analysis report (``analysis.reports``): one ``TypedDict`` per entry,
in the order the report writes them. ANALYSIS.md says what each figure means."""

from typing import NotRequired, TypedDict

from analysis.report_annotators import AnnotatorEntry
from analysis.report_validity import Validity


class ItemEntry(TypedDict):
    """One labelled item; ``agreement`` and ``p_disagree`` for pairwise batches only."""

    item_id: str
    category: str  # the item's query's category ("" for none)
    subcategory: str
    n: int
    counts: dict[str, int]  # label (as text) -> labels given, over the whole label set
    mean: float | None
    std: float | None
    entropy_bits: float | None
    agreement: NotRequired[float | None]
    p_disagree: NotRequired[float | None]


class CorrelationFigures(TypedDict):
    """A defined correlation; ``ci95`` is null without a usable bootstrap interval."""

    r: float
    p: float | None  # None under stats.MIN_P_VALUE_PAIRS pairs
    p_method: str | None  # "exact" (all pairings), "t" / "beta" (scipy's), None without p
    ci95: list[float] | None


class CorrelationEntry(TypedDict):
    """One source on one subset; ``reason`` is present when a correlation is undefined."""

    source: str
    kind: str
    subset: str
    n: int
    spearman: CorrelationFigures | None
    pearson: CorrelationFigures | None
    reason: NotRequired[str]


class ByKindEntry(TypedDict):
    """Per kind of source and subset, the mean correlation over the sources defined there."""

    kind: str
    subset: str
    spearman_mean: float | None
    pearson_mean: float | None
    n_sources: int


class Agreement(TypedDict):
    """Batch-level agreement; ``mean_p_disagree`` for pairwise batches only."""

    krippendorff_alpha_ordinal: float | None
    krippendorff_alpha_interval: float | None
    mean_entropy_bits: float | None
    mean_grouped_entropy_bits: float | None
    mean_gini_impurity: float | None
    mean_pairwise_annotator_disagreement: float | None
    mean_majority_share: float | None
    mean_p_disagree: NotRequired[float | None]


class SourceEntry(TypedDict):
    """One score source and how many labelled items it scores."""

    source: str
    kind: str
    n_items_scored: int


class Settings(TypedDict):
    """What the report was computed with."""

    bootstrap_resamples: int
    seed: int
    min_p_value_n: int  # correlations over fewer pairs report no p-value
    exact_p_max_n: int  # up to this many pairs the p-value is exact


class CategoryEntry(TypedDict):
    """The report's batch-level figures recomputed over one category's items (or one
    sub-category's; ``subcategory`` is ``None`` for the whole category)."""

    category: str
    subcategory: str | None
    n_items: int
    n_labels: int
    n_annotators: int
    small: bool
    mean_rating: float | None
    mean_std: float | None
    subset_sizes: dict[str, int]
    agreement: Agreement
    correlations: list[CorrelationEntry]
    by_kind: list[ByKindEntry]
    annotators: list[dict]
    validity: Validity
    rankings: NotRequired[dict]  # the group's own model rankings, when it names two models
    calibration: NotRequired[dict]  # the group's calibration, when the batch has score sources


class Report(TypedDict):
    """The whole report, keys in the order they are written."""

    batch: str
    kind: str
    n_items: int
    n_labels: int
    n_annotators: int
    # whether every regular item had its N counted labels when the report was computed
    # (None when the arrays do not say what N is); the figures change until it is
    complete: bool | None
    items_complete: int | None
    items_total: int
    labels_per_item: int | None
    settings: Settings
    items: list[ItemEntry]
    subsets: dict[str, list[str]]  # subset name -> item ids, in item order
    correlations: list[CorrelationEntry]
    by_kind: list[ByKindEntry]
    agreement: Agreement
    annotators: list[AnnotatorEntry]
    sources: list[SourceEntry]
    validity: Validity
    category_min_items: int
    by_category: list[CategoryEntry]
    rankings: NotRequired[dict]  # only when items name their models (report_rankings)
    competence: NotRequired[dict]  # Dawid–Skene and MACE per annotator (report_competence)
    calibration: NotRequired[dict]  # sources' distributions against people's (report_calibration)
