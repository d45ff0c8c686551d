"""The analysis report in a real Chromium: a researcher logs in, runs the analysis of a
labelled batch with three score sources from the page (the script follows the job, then
reloads once), and reads the report: inline SVG charts, the headline table (and another
subset picked in it), the item table sorted by entropy.

A full-page screenshot goes to ``test-artifacts/report-page.png``.
"""

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from analysis.models import Score, ScoreSource
from analysis.services.analyses import latest_report
from annotation.models import Item
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from core.models import Job
from tests.browser.staff_login import log_in
from tests.factories import make_batch, make_participant
from tests.staff import staff_user

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("private_job_files"),
]

EXPECT_TIMEOUT_MS = 10_000

N_ITEMS = 48
PER_ITEM = 5
N_WORKERS = 8
SOURCES = [
    ("Skywork-Reward-Gemma-2-27B", "reward_model", 0.6),
    ("Llama-3.1-8B-Instruct", "lm", 1.4),
    ("gpt-4o:overall", "judge", 0.9),
]


@pytest.fixture
def researcher(db):
    return staff_user("researcher", "rhea")


@pytest.fixture
def batch(db):
    """48 items, 5 labels each from 8 workers around a latent quality, and 3 sources."""
    rng = np.random.default_rng(7)
    batch = make_batch(n_items=N_ITEMS, per_item=PER_ITEM, slug="report-study")
    quality = rng.normal(3, 1, N_ITEMS)
    spread = rng.uniform(0.2, 1.6, N_ITEMS)
    for worker in range(N_WORKERS):
        participation = make_participant(batch, f"report-w{worker}")
        bias = rng.normal(0, 0.3)
        while True:
            outcome = lease_next_item(batch, participation)
            if outcome.assignment is None:
                break
            i = outcome.assignment.item.position
            value = int(np.clip(np.round(quality[i] + bias + rng.normal(0, spread[i])), 1, 5))
            submit_label(
                participation.annotator, outcome.assignment.pk, value, int(rng.uniform(3e3, 3e4))
            )
    items = list(Item.objects.filter(batch=batch).order_by("position").select_related("response"))
    for name, kind, noise in SOURCES:
        source = ScoreSource.objects.create(name=name, kind=kind)
        Score.objects.bulk_create(
            Score(source=source, response=item.response, value=quality[i] + rng.normal(0, noise))
            for i, item in enumerate(items)
        )
    return batch


def shown(value: float) -> str:
    return f"{value:.3f}".replace("-", "−")


def test_researcher_runs_and_reads_the_report(
    page: Page, live_server, researcher, batch, artifacts
):
    script_errors: list[str] = []
    page.on("pageerror", lambda error: script_errors.append(str(error)))
    path = f"/manage/{batch.slug}/report"
    log_in(page, live_server, researcher, path)

    # No report yet: run it from the page; the script follows the job and reloads once.
    expect(page.get_by_role("heading", name="No analysis yet")).to_be_visible()
    page.get_by_label("Bootstrap resamples").fill("200")
    page.get_by_role("button", name="Run analysis").click()
    # the job draws the page's charts and the figure files too: seconds on a busy machine
    expect(page.locator("#headline-table")).to_be_visible(timeout=60_000)
    job = batch.jobs.get(kind="analysis")
    assert job.state == Job.State.SUCCEEDED and job.params == {"bootstrap": 200, "seed": 0}
    _, report = latest_report(batch)
    expect(page.locator("[data-summary='n_items']")).to_have_text(str(N_ITEMS))
    expect(page.locator("[data-summary='n_labels']")).to_have_text(f"{N_ITEMS * PER_ITEM}")

    # The charts: inline SVG with a real size and their axis labels as text.
    charts = page.locator("svg.chart")
    assert charts.count() >= 5
    for index in range(charts.count()):
        box = charts.nth(index).bounding_box()
        assert box and box["width"] > 200 and box["height"] > 120, box
    expect(
        page.locator("#chart-entropy svg text", has_text="Shannon entropy (bits)")
    ).to_have_count(1)
    expect(page.locator("#chart-entropy svg text", has_text="items")).not_to_have_count(0)
    expect(page.locator("#chart-correlations svg text", has_text="Spearman ρ")).to_have_count(1)
    for name, _, _ in SOURCES:
        expect(page.locator("#chart-correlations svg text", has_text=name)).to_have_count(1)
    scatter = page.locator("#chart-scatter img")
    scatter.scroll_into_view_if_needed()
    page.wait_for_function(
        "() => { const img = document.querySelector('#chart-scatter img');"
        " return img && img.complete && img.naturalWidth > 0; }"
    )

    # The headline table: Spearman ρ with interval and n on full and the default subsets.
    def cell(source: str, column: str):
        row = page.locator("#headline-table tbody tr", has=page.locator("th", has_text=source))
        return row.locator(f"td[data-column='{column}']")

    def correlation(source: str, subset: str) -> dict:
        return next(
            c for c in report["correlations"] if c["source"] == source and c["subset"] == subset
        )

    for name, _, _ in SOURCES:
        full = correlation(name, "full")
        expect(cell(name, "full").locator(".rho")).to_have_text(shown(full["spearman"]["r"]))
        low, high = full["spearman"]["ci95"]
        expect(cell(name, "full").locator(".ci")).to_have_text(f"[{shown(low)}, {shown(high)}]")
        expect(cell(name, "full").locator(".n")).to_have_text(f"n = {N_ITEMS}")
        similar = correlation(name, "tukey_k1.5")
        expect(cell(name, "similar").locator(".n")).to_have_text(f"n = {similar['n']}")
    expect(page.locator("#headline-table")).to_contain_text("Reward models")

    # Another subset, picked in the column heading: cells change without a reload.
    page.evaluate("() => { window.__reportMarker = 1; }")
    page.locator("#pick-disagree").select_option("top_entropy_16pct")
    wanted = correlation("gpt-4o:overall", "top_entropy_16pct")
    expect(cell("gpt-4o:overall", "disagree").locator(".n")).to_have_text(f"n = {wanted['n']}")
    if wanted["spearman"] is not None:
        expect(cell("gpt-4o:overall", "disagree").locator(".rho")).to_have_text(
            shown(wanted["spearman"]["r"])
        )
    assert "disagree=top_entropy_16pct" in page.url
    assert page.evaluate("() => window.__reportMarker") == 1, "the page was reloaded"

    # The item table, sorted by entropy: highest first, then lowest first.
    heading = page.locator("#items-table thead th", has_text="Entropy (bits)")
    heading.get_by_role("button").click()
    expect(heading).to_have_attribute("aria-sort", "descending")
    entropies = sorted(item["entropy_bits"] for item in report["items"])
    first = page.locator("#items-table tbody tr").first.locator("td").nth(5)
    expect(first).to_have_text(shown(entropies[-1]))
    values = page.eval_on_selector_all(
        "#items-table tbody tr", "rows => rows.map(r => Number(r.cells[5].dataset.value))"
    )
    assert values == sorted(values, reverse=True)
    heading.get_by_role("button").click()
    expect(heading).to_have_attribute("aria-sort", "ascending")
    expect(first).to_have_text(shown(entropies[0]))

    page.locator("#pick-disagree").select_option("top_entropy_10pct")
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=artifacts / "report-page.png", full_page=True)
    assert script_errors == []
