"""The report must not say more than its data: every correlation with the n it rests on,
no p-value from a handful of points and an exact one from a few, coverage without the
attention checks, a warning while the batch is incomplete, and item ids that open the
item's review page. Real database, real views."""

import math
import re

import pytest
from django.urls import reverse

from analysis.models import Score, ScoreSource
from analysis.services.analyses import latest_report
from analysis.stats.correlation import EXACT_P_MAX_PAIRS, MIN_P_VALUE_PAIRS
from annotation.models import Item
from tests.analysis.test_report_page import label_batch, run_job_now
from tests.factories import make_batch
from tests.staff import staff_client, token_client

# each test runs a whole analysis job (its figures drawn in three formats): seconds each
pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def rising(position: int, worker: int) -> int:
    """Labels whose item means rise strictly with the position (for up to 8 items): the first
    worker gives odd items one more, so no two items share a mean."""
    return min(5, 1 + position // 2 + (1 if position % 2 and worker == 0 else 0))


def score_against_the_crowd(batch, name="rm-reversed", regular_only=True) -> None:
    """A source whose scores fall as the items' mean label rises (Spearman ρ = −1)."""
    source = ScoreSource.objects.create(name=name, kind="reward_model")
    items = Item.objects.filter(batch=batch).order_by("position")
    if regular_only:
        items = items.filter(is_check=False)
    Score.objects.bulk_create(
        [
            Score(source=source, response=item.response, value=-float(item.position))
            for item in items
        ]
    )


def analysed(n_items: int, workers: int = 3, per_item: int = 3):
    batch = make_batch(n_items=n_items, per_item=per_item)
    label_batch(batch, workers, rising)
    score_against_the_crowd(batch)
    run_job_now(batch)
    _, report = latest_report(batch)
    return batch, report


def headline_cells(page: str) -> list[str]:
    table = page[page.index('id="headline-table"') : page.index("</table>", page.index("headline"))]
    return re.findall(r'<td class="num cell[^"]*"[^>]*>(.*?)</td>', table, flags=re.S)


@pytest.fixture
def researcher():
    return staff_client("researcher")


# --------------------------------------------------------------------------- p-values


def test_four_items_give_no_p_value_but_say_too_few(researcher):
    batch, report = analysed(n_items=MIN_P_VALUE_PAIRS - 1)
    full = next(c for c in report["correlations"] if c["subset"] == "full")
    assert full["n"] == MIN_P_VALUE_PAIRS - 1
    assert full["spearman"]["r"] == pytest.approx(-1.0)
    assert (full["spearman"]["p"], full["spearman"]["p_method"]) == (None, None)
    assert report["settings"]["min_p_value_n"] == MIN_P_VALUE_PAIRS

    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    [cell] = [cell for cell in headline_cells(page) if "−1.000" in cell][:1]
    assert f"n = {full['n']}" in cell
    assert f"too few (n = {full['n']})" in cell
    assert "&lt; 0.001" not in cell and "< 0.001" not in cell


def test_the_crowd_rho_of_an_annotator_with_four_labels_has_no_p(researcher):
    batch, report = analysed(n_items=MIN_P_VALUE_PAIRS - 1)
    for annotator in report["annotators"]:
        assert annotator["n_compared"] == MIN_P_VALUE_PAIRS - 1
        assert annotator["crowd_spearman"] is not None
        assert annotator["crowd_spearman_p"] is None
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    table = page[page.index('id="annotators-table"') :]
    table = table[table.index("<tbody>") : table.index("</table>")]
    rows = re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)
    assert len(rows) == len(report["annotators"])
    for row in rows:
        assert f"n = {MIN_P_VALUE_PAIRS - 1}" in row
        assert f"too few (n = {MIN_P_VALUE_PAIRS - 1})" in row
        assert "&lt; 0.001" not in row


def test_a_few_items_get_the_exact_p_value(researcher):
    n = MIN_P_VALUE_PAIRS + 1
    batch, report = analysed(n_items=n)
    full = next(c for c in report["correlations"] if c["subset"] == "full")
    assert full["n"] == n <= EXACT_P_MAX_PAIRS
    # a perfect reversal: 2 of the n! pairings are as extreme (it and its mirror)
    assert full["spearman"]["p"] == pytest.approx(2 / math.factorial(n))
    assert full["spearman"]["p_method"] == "exact"
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    [cell] = [cell for cell in headline_cells(page) if "−1.000" in cell][:1]
    assert f"n = {n}" in cell
    assert f"p = {2 / math.factorial(n):.3f} (exact)" in cell

    correlations = researcher.get(f"/manage/{batch.slug}/report/correlations.csv")
    text = b"".join(correlations.streaming_content).decode()
    assert "spearman_p_method" in text.splitlines()[0] and ",exact," in text


# --------------------------------------------------------------------------- coverage


def test_coverage_leaves_the_attention_checks_out(researcher):
    batch = make_batch(n_items=12, per_item=3)
    checks = list(Item.objects.filter(batch=batch).order_by("-position")[:2])
    Item.objects.filter(pk__in=[c.pk for c in checks]).update(is_check=True, gold=[5], target=0)
    score_against_the_crowd(batch, regular_only=True)  # every regular item, no check
    n_regular = Item.objects.filter(batch=batch, is_check=False).count()

    listing = token_client("researcher").get(f"/api/v1/batches/{batch.slug}/score-sources")
    [source] = listing.json()
    assert (source["n_items_scored"], source["n_items"]) == (n_regular, n_regular)
    assert source["coverage"] == 1.0

    # scoring a check as well changes nothing: it is not an item of the analysis
    extra = ScoreSource.objects.get(name="rm-reversed")
    Score.objects.create(source=extra, response=checks[0].response, value=1.0)
    [source] = token_client("researcher").get(f"/api/v1/batches/{batch.slug}/score-sources").json()
    assert (source["n_items_scored"], source["n_items"]) == (n_regular, n_regular)

    label_batch(batch, 3, rising)
    run_job_now(batch)
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    sources = page[page.index('id="sources-table"') :]
    sources = sources[: sources.index("</table>")]
    assert f"of {n_regular}</span>" in sources and "100.0 %" in sources
    _, report = latest_report(batch)
    assert report["items_total"] == n_regular
    assert report["sources"][0]["n_items_scored"] == n_regular


# --------------------------------------------------------------------------- completeness


def test_an_incomplete_batch_is_said_to_be_so_at_the_top(researcher):
    # N = 3 but only 2 workers: every item is one label short
    batch, report = analysed(n_items=6, workers=2, per_item=3)
    assert report["complete"] is False
    assert (report["items_complete"], report["items_total"]) == (0, 6)
    assert report["labels_per_item"] == 3

    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert 'id="report-incomplete"' in page
    warning = page[page.index('id="report-incomplete"') :]
    warning = warning[: warning.index("</div>")]
    assert "0 of 6 items" in warning and "will change" in warning
    assert page.index('id="report-incomplete"') < page.index('id="summary-title"')


def test_a_complete_batch_has_no_warning(researcher):
    batch, report = analysed(n_items=6, workers=3, per_item=3)
    assert report["complete"] is True
    assert report["items_complete"] == report["items_total"] == 6
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert 'id="report-incomplete"' not in page
    assert ">6 of 6</dd>" in page


def test_a_batch_complete_but_for_some_items_counts_them():
    batch = make_batch(n_items=5, per_item=2)
    label_batch(batch, 2, rising)  # complete
    Item.objects.filter(batch=batch, position=4).update(target=3)  # one item asks for more
    run_job_now(batch)
    _, report = latest_report(batch)
    assert report["complete"] is False
    assert (report["items_complete"], report["items_total"]) == (4, 5)


# --------------------------------------------------------------------------- item links


def test_each_item_id_links_to_its_review_page(researcher):
    batch, report = analysed(n_items=5)
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    table = page[page.index('id="items-table"') :]
    table = table[: table.index("</table>")]
    for item in report["items"]:
        url = reverse("manage-item", args=[batch.slug, item["item_id"]])
        assert f'<a href="{url}"><code>{item["item_id"]}</code></a>' in table
        assert researcher.get(url).status_code == 200
