"""Report dict → rows for the report page and the CSV downloads (ANALYSIS.md).

Pure: these functions take the report JSON of ``analysis.reports`` (and, for the page,
plain values such as the subset names a visitor picked or how many rows to show) and
return display rows, figures and CSV tables. No requests, no queries: ``analysis.views``
parses the request, fetches the report and renders what comes back.

The CSV tables are ``(columns, rows)`` with each row a list in column order;
``csv_stream`` writes them with the dataset exports' CSV writer
(``annotation.services.exporting.csv_chunks``: CRLF line ends, formula cells neutralised).

One module per section of the page (``base``: numbers and column lists; ``headline``;
``pages``: the page's tables; ``tables``: the CSV downloads; ``rankings``; ``calibration``;
``bundles``: a bundled batch's sections and tables); this package's names are the public
ones."""

from analysis.presentation.base import (
    AGREEMENT_FIGURES,
    ANNOTATOR_COLUMNS,
    CORRELATION_COLUMNS,
    KIND_NAMES,
    fmt,
    min_p_value_n,
    subset_sizes,
)
from analysis.presentation.bundles import (
    bundle_concordance_table,
    bundle_decomposition_table,
    bundle_idiosyncrasy_table,
    bundle_position_table,
    bundles,
)
from analysis.presentation.calibration import (
    CALIBRATION_COLUMNS,
    CALIBRATION_MEASURES,
    calibration,
    calibration_table,
    category_calibration,
    category_calibration_table,
    win_probability_table,
)
from analysis.presentation.headline import headline, headline_rows
from analysis.presentation.pages import (
    agreement,
    annotator_rows,
    category_entries,
    category_rows,
    filtered_report,
    has_categories,
    incompleteness,
    item_rows,
    report_items,
    source_rows,
    validity,
)
from analysis.presentation.rankings import (
    COMPETENCE_COLUMNS,
    RANKING_COLUMNS,
    category_ranking_table,
    category_rankings,
    competence,
    competence_table,
    ranking_table,
    rankings,
)
from analysis.presentation.tables import (
    CATEGORY_COLUMNS,
    CATEGORY_KEY_COLUMNS,
    POSITION_BIAS_COLUMNS,
    RETEST_COLUMNS,
    annotator_table,
    category_annotator_table,
    category_correlation_table,
    category_table,
    correlation_table,
    csv_stream,
    item_table,
)

__all__ = [
    "AGREEMENT_FIGURES",
    "ANNOTATOR_COLUMNS",
    "CALIBRATION_COLUMNS",
    "CALIBRATION_MEASURES",
    "CATEGORY_COLUMNS",
    "CATEGORY_KEY_COLUMNS",
    "COMPETENCE_COLUMNS",
    "CORRELATION_COLUMNS",
    "KIND_NAMES",
    "POSITION_BIAS_COLUMNS",
    "RANKING_COLUMNS",
    "RETEST_COLUMNS",
    "agreement",
    "annotator_rows",
    "annotator_table",
    "bundle_concordance_table",
    "bundle_decomposition_table",
    "bundle_idiosyncrasy_table",
    "bundle_position_table",
    "bundles",
    "calibration",
    "calibration_table",
    "category_annotator_table",
    "category_calibration",
    "category_calibration_table",
    "category_correlation_table",
    "category_entries",
    "category_ranking_table",
    "category_rankings",
    "category_rows",
    "category_table",
    "competence",
    "competence_table",
    "correlation_table",
    "csv_stream",
    "filtered_report",
    "fmt",
    "has_categories",
    "headline",
    "headline_rows",
    "incompleteness",
    "item_rows",
    "item_table",
    "min_p_value_n",
    "ranking_table",
    "rankings",
    "report_items",
    "source_rows",
    "subset_sizes",
    "validity",
    "win_probability_table",
]
