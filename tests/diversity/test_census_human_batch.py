"""A census against people's answers from a ``short_text`` batch, on a study small enough to
compute by hand, through the command, the API job and the page.

The census (three models, two categories, replies as given)::

    m1  tree: Oak, Oak     color: Blue, Blue
    m2  tree: Pine, Oak    color: Blue, Red
    m3  tree: Oak          color: Azure

Pooled: tree = oak ×4, pine → modal oak, 4/5 = 0.8; color = blue ×3, red, azure → blue, 0.6.

The batch (four workers answer every item; answers per item, in worker order)::

    tree    (query category)      Oak, maple, Oaks, Pine     → oak, maple, oak (plural
                                                                merged), pine: oak 2/4 = 0.5
    color   (metadata category)   Blue, red, Red, Soufflé    → blue, red, red, failed cell:
                                                                red 2/3
    planet  (not in the census)   Mars, Mars, Venus, Earth   → mars 2/4
    no category                   Blue, Blue, Blue, Blue     → not placed

Against the model field: tree 0.8 > 0.5 (more concentrated), color 0.6 < 2/3 (not): 1 of
2 shared categories; means 0.7 (models) and (0.5 + 2/3) / 2 (people).
"""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Item
from annotation.services.batches import change_state, create_batch
from annotation.services.importing import import_items
from core.errors import InvalidInput
from diversity.census.services.analyses import analyse_census, human_batch_of
from diversity.census.services.imports import CensusUpload, import_census
from tests.diversity.census_files import TREE_NORM, norms_file, transcript
from tests.factories import label_every_item
from tests.staff import staff_client, token_client

pytestmark = pytest.mark.django_db

MODELS = {
    "m1": {"tree": ["Oak", "Oak"], "color": ["Blue", "Blue"]},
    "m2": {"tree": ["Pine", "Oak"], "color": ["Blue", "Red"]},
    "m3": {"tree": ["Oak"], "color": ["Azure"]},
}
ITEMS = [
    {"item_id": "tree", "query_id": "hb-tree", "query": "Name a tree.", "category": "tree"},
    {"item_id": "color", "query_id": "hb-color", "query": "Name a color."},
    {"item_id": "planet", "query_id": "hb-planet", "query": "Name a planet.", "category": "planet"},
    {"item_id": "loose", "query_id": "hb-loose", "query": "Name anything."},
]
ANSWERS = {
    "tree": ["Oak", "maple", "Oaks", "Pine"],
    "color": ["Blue", "red", "Red", "Soufflé"],
    "planet": ["Mars", "Mars", "Venus", "Earth"],
    "loose": ["Blue", "Blue", "Blue", "Blue"],
}
COLOR_NORM = {
    "category": "color",
    "human_modal": "blue",
    "human_modal_first": 0.29,
    "human_n_ge5": 4,
    "model_modal": "blue",
    "model_modal_share": 0.5,
    "model_n_ge5": 2,
    "wording_mismatch": True,
}


@pytest.fixture
def census():
    norms = norms_file(TREE_NORM, COLOR_NORM, source="hand-made norms")
    transcripts = [transcript(model, scenes) for model, scenes in MODELS.items()]
    return import_census("hand", transcripts, norms=CensusUpload(norms, "norms.json"))


@pytest.fixture
def human_batch():
    batch = create_batch(slug="people", kind="short_text", title="Name one", annotations_per_item=4)
    items = io.BytesIO("".join(json.dumps(row) + "\n" for row in ITEMS).encode())
    import_items(batch, items, filename="items.jsonl")
    # an item that names its census category in its metadata only
    Item.objects.filter(batch=batch, item_id="color").update(metadata={"category": "color"})
    batch = change_state(batch, "live")
    people = [f"person-{worker}" for worker in range(4)]
    label_every_item(batch, people, lambda item, worker: ANSWERS[item.item_id][worker])
    return batch


def check_batch_section(section: dict) -> None:
    assert section["batch"] == "people"
    assert (section["n_labels"], section["n_annotators"]) == (16, 4)
    assert (section["n_without_category"], section["n_without_answer"]) == (4, 1)
    assert section["per_category"] == {
        "tree": {"modal": "oak", "modal_share": 0.5, "n_ge5": 3, "n_answers": 4},
        "color": {"modal": "red", "modal_share": pytest.approx(2 / 3), "n_ge5": 2, "n_answers": 3},
        "planet": {"modal": "mars", "modal_share": 0.5, "n_ge5": 3, "n_answers": 4},
    }
    assert section["categories_not_in_census"] == ["planet"]
    computed = section["computed"]
    assert computed["model_source"] == "computed"
    assert (computed["n_categories"], computed["n_model_more_concentrated"]) == (2, 1)
    assert computed["mean_model_share"] == pytest.approx(0.7)
    assert computed["mean_human_share"] == pytest.approx((0.5 + 2 / 3) / 2)
    rows = {row["category"]: row for row in computed["per_category"]}
    assert (rows["tree"]["model_share"], rows["tree"]["human_share"]) == (0.8, 0.5)
    assert rows["tree"]["model_more_concentrated"] is True
    assert (rows["color"]["model_modal"], rows["color"]["human_modal"]) == ("blue", "red")
    assert rows["color"]["model_more_concentrated"] is False


def test_service_compares_the_batch_with_the_field_and_keeps_the_imported_norms(
    census, human_batch
):
    report = analyse_census(census, bootstrap=50, human_batch=human_batch)
    check_batch_section(report["human_batch"])
    assert report["settings"]["human_batch"] == "people"
    # the imported norms are reported beside the batch, each comparison saying its source
    norms = report["norms"]
    assert norms["source"] == "hand-made norms"
    assert norms["published"]["mean_model_share"] == pytest.approx((0.937 + 0.5) / 2)
    assert norms["computed"]["mean_model_share"] == pytest.approx((0.8 + 0.6) / 2)
    assert norms["computed"]["mean_human_share"] == pytest.approx((0.31 + 0.29) / 2)


def test_command_and_api_job_read_the_batch(
    census, human_batch, tmp_path, capsys, django_capture_on_commit_callbacks
):
    out = tmp_path / "report.json"
    call_command(
        "analyze_census", "hand", "--json", str(out), "--bootstrap", "50", "--human-batch", "people"
    )
    assert (
        "against batch people: model field more concentrated in 1 of 2" in capsys.readouterr().out
    )
    check_batch_section(json.loads(out.read_text())["human_batch"])

    client = token_client("researcher")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/v1/census/hand/analyses",
            {"bootstrap": 40, "seed": 1, "human_batch": "people"},
            content_type="application/json",
        )
    assert response.status_code == 202 and response.json()["params"]["human_batch"] == "people"
    report = client.get("/api/v1/census/hand/report").json()
    assert report["settings"]["bootstrap"] == 40
    check_batch_section(report["human_batch"])


def test_page_shows_both_human_sources_and_links_the_batch(
    census, human_batch, django_capture_on_commit_callbacks
):
    client = staff_client("researcher")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/manage/census/hand/run", {"bootstrap": 30, "seed": 7, "human_batch": "people"}
        )
    assert response.status_code == 302
    html = client.get("/manage/census/hand/").content.decode()
    assert 'href="/manage/people/" id="human-batch-link"' in html
    assert "Imported norms against the model column published with them" in html
    assert "Imported norms against the model field computed here" in html
    assert "Human batch people against the model field computed here" in html
    assert "People, batch people" in html  # the bars' legend says which field is which
    assert "People, imported norms" in html
    assert "People&#x27;s share (batch)" in html or "People's share (batch)" in html


def test_only_a_short_text_batch_with_the_census_normaliser_is_accepted(census):
    absolute = create_batch(slug="ratings", kind="absolute", title="R")
    lowercase = create_batch(
        slug="words", kind="short_text", title="W", kind_settings={"normaliser": "lowercase"}
    )
    for slug, expected in [
        (absolute.slug, "is a absolute batch"),
        (lowercase.slug, "with the 'lowercase' normaliser"),
        ("missing", "there is no batch 'missing'"),
    ]:
        with pytest.raises(InvalidInput) as caught:
            human_batch_of(slug)
        assert caught.value.field == "human_batch" and expected in str(caught.value)
    with pytest.raises(CommandError, match="is a absolute batch"):
        call_command("analyze_census", "hand", "--human-batch", "ratings")
