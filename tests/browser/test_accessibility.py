"""The staff pages through axe-core at a desktop (1280×900) and a phone (390×844) size:
login, batch list, new batch, the batch page with a rejected upload and after an
accepted one, annotators, one item's labels, edit, history, the crowd platform's review,
the analysis report and the API documentation (closed and with operations opened). Every
violation of any impact
fails. The pages' layout checks ride along: nothing wider than the phone screen, the
rejected upload's message first on the page and focused, the annotators' action column
visible at 1280 px.

A full-page screenshot of each page at each size goes to ``test-artifacts/a11y-*.png``.
"""

import json

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from analysis.models import Score, ScoreSource
from annotation.models import Item
from core.jobs.queue import start_job
from tests.browser.accessibility import assert_no_axe_violations
from tests.browser.conftest import PHONE, WIDE
from tests.browser.pages import assert_fits_a_phone, watched_page
from tests.browser.staff_login import log_in
from tests.factories import label_every_item, make_batch
from tests.staff import staff_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXPECT_TIMEOUT_MS = 10_000

SLUG = "a11y-study"
BAD_FILE = (
    json.dumps({"item_id": "x1", "query_id": "q", "query": "Q?", "response_id": "r"}) + "\n{oops\n"
).encode()
GOOD_FILE = (
    json.dumps(
        {"item_id": "new-1", "query_id": "aq", "query": "Q?", "response_id": "ar", "response": "A"}
    )
    + "\n"
).encode()


@pytest.fixture
def admin_user(db):
    return staff_user("admin", "ada")


@pytest.fixture
def study(db, admin_user):
    """A live batch of 12 items (responses of three models), 3 labels each from 5 workers,
    two score sources and a finished analysis (so the annotators table has its Crowd ρ
    column and the report its model rankings)."""
    rng = np.random.default_rng(3)
    batch = make_batch(n_items=12, per_item=3, slug=SLUG)
    quality = rng.normal(3, 1, 12)

    def value_of(item, worker) -> int:
        return int(np.clip(np.round(quality[item.position] + rng.normal(0, 0.8)), 1, 5))

    workers = [f"a11y-worker-with-a-long-platform-id-{worker}" for worker in range(5)]
    label_every_item(batch, workers, value_of, lambda worker: 4_000 + worker)
    items = list(Item.objects.filter(batch=batch).order_by("position").select_related("response"))
    # three models, so that the report's model rankings (and their figure) are drawn
    for position, item in enumerate(items):
        item.response.model = ("model-a", "model-b", "model-c")[position % 3]
        item.response.save(update_fields=["model"])
    for name, kind in [("Skywork-Reward-Gemma-2-27B", "reward_model"), ("gpt-4o:overall", "judge")]:
        source = ScoreSource.objects.create(name=name, kind=kind)
        Score.objects.bulk_create(
            Score(source=source, response=item.response, value=quality[i] + rng.normal(0, 0.7))
            for i, item in enumerate(items)
        )
    start_job("analysis", batch, {"bootstrap": 50, "seed": 0}, admin_user)
    return batch


def upload(page: Page, name: str, content: bytes, answer: str, says: str):
    """Upload an items file on the batch page; the box ``answer`` says ``says`` and has the
    focus. Returns that box."""
    page.get_by_label("Items file").set_input_files(
        files=[{"name": name, "mimeType": "application/octet-stream", "buffer": content}]
    )
    page.get_by_role("button", name="Upload", exact=True).click()
    box = page.locator(answer)
    expect(box).to_contain_text(says)
    expect(box).to_be_focused()
    return box


def check(page: Page, artifacts, name: str, viewport: dict) -> None:
    """axe-core on the page; no sideways scrolling on a phone; a screenshot."""
    label = "phone" if viewport is PHONE else "desktop"
    page.wait_for_load_state("load")
    assert_no_axe_violations(page, name=f"{name} ({label})")
    if viewport is PHONE:
        assert_fits_a_phone(page, name)
    page.screenshot(path=artifacts / f"a11y-{name}-{label}.png", full_page=True)


@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["desktop", "phone"])
def test_staff_pages_have_no_axe_violations(
    browser, live_server, admin_user, study, artifacts, viewport
):  # fmt: skip
    with watched_page(browser, viewport) as (page, script_errors):
        page.on("dialog", lambda dialog: dialog.accept())
        base = live_server.url
        page.goto(f"{base}/accounts/login/")
        check(page, artifacts, "login", viewport)
        log_in(page, live_server, admin_user)
        check(page, artifacts, "batch-list", viewport)
        page.goto(f"{base}/manage/new")
        check(page, artifacts, "new-batch", viewport)

        page.goto(f"{base}/manage/{SLUG}/")
        refusal = "bad-items.jsonl was rejected; nothing was imported"
        rejected = upload(page, "bad-items.jsonl", BAD_FILE, "#upload-problems", refusal)
        first = page.evaluate(
            "() => document.querySelector('main .status, main .card').id"
        )  # the first box of the page
        assert first == "upload-problems"
        assert rejected.bounding_box()["y"] < viewport["height"] / 2
        check(page, artifacts, "batch-upload-rejected", viewport)

        page.goto(f"{base}/manage/{SLUG}/")
        imported = "Imported 1 items from more-items.jsonl"
        upload(page, "more-items.jsonl", GOOD_FILE, ".messages", imported)
        check(page, artifacts, "batch-upload-accepted", viewport)

        page.goto(f"{base}/manage/{SLUG}/annotators")
        expect(page.locator("table.annotators tbody tr")).to_have_count(5)
        if viewport is WIDE:
            action = page.get_by_role("button", name="Exclude").first
            box = action.bounding_box()
            assert box and box["x"] + box["width"] <= WIDE["width"], box
            expect(action).to_be_in_viewport()
            # every column in view: the sticky action column covers none of them
            overflow = page.evaluate(
                "() => { const box = document.querySelector('.table-wrap');"
                " return box.scrollWidth - box.clientWidth; }"
            )
            assert overflow <= 0, f"the annotators table scrolls {overflow} px sideways"
        check(page, artifacts, "annotators", viewport)

        # one item's labels, reached from the annotators page's look-up
        reviewed = Item.objects.filter(batch__slug=SLUG, labels__isnull=False).first()
        page.get_by_label("Item id").fill(reviewed.item_id)
        page.get_by_role("button", name="Show its labels").click()
        expect(page.locator("table.item-labels tbody tr").first).to_be_visible()
        check(page, artifacts, "item-review", viewport)

        page.goto(f"{base}/manage/{SLUG}/edit")
        check(page, artifacts, "edit", viewport)
        page.goto(f"{base}/manage/{SLUG}/history")
        check(page, artifacts, "history", viewport)
        page.goto(f"{base}/manage/{SLUG}/review")  # the crowd platform's review tab
        check(page, artifacts, "review", viewport)

        page.goto(f"{base}/manage/{SLUG}/report")
        expect(page.locator("#headline-table")).to_be_visible()
        page.wait_for_function(
            "() => Array.from(document.images).every((img) => img.complete && img.naturalWidth)"
        )
        expect(page.locator("#rankings table").first).to_be_visible()  # ranked models
        check(page, artifacts, "report", viewport)

        # the API documentation (Swagger UI, made accessible by static/api_docs.*): as it
        # opens, and with a GET and a POST operation and the schemas opened
        label = "phone" if viewport is PHONE else "desktop"
        page.goto(f"{base}/api/docs/")
        page.wait_for_selector(".opblock")
        assert_no_axe_violations(page, name=f"api-docs ({label})")
        page.locator(".opblock-get .opblock-summary-control").first.click()
        page.locator(".opblock-post .opblock-summary-control").first.click()
        page.locator("section.models h4").click()
        expect(page.locator(".opblock-body")).to_have_count(2)
        expect(page.locator(".highlight-code").first).to_be_visible()
        assert_no_axe_violations(page, name=f"api-docs opened ({label})")
    assert script_errors == []
