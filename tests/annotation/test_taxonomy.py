"""Categories and sub-categories as item and query metadata (FORMATS.md, API.md): imported
from CSV and JSONL, in every export, and a filter on the staff pages and the API."""

import csv
import io
import json

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, transaction

from annotation.models import Label, LabelStatus, Query
from annotation.selectors import CategoryFilter
from annotation.services.batches import create_batch
from annotation.services.exports.delivery import export_to_file
from annotation.services.importing import import_items
from core.tabular import ImportRejected
from tests.factories import label_every_item, make_batch, make_categorised_batch
from tests.files import write_csv, write_jsonl
from tests.staff import staff_client, token_client

pytestmark = pytest.mark.django_db

TAXONOMY = [("Creative", "Poetry", 3), ("Creative", "Stories", 2), ("Advice", "", 4)]
HEADER = ["item_id", "query_id", "query", "category", "subcategory", "response_id", "response"]


def labelled_batch(taxonomy=TAXONOMY, workers=2, **kwargs):
    batch = make_categorised_batch(taxonomy, per_item=workers, **kwargs)
    ids = [f"{batch.slug}-w{worker}" for worker in range(workers)]
    label_every_item(batch, ids, lambda item, worker: 1 + worker, lambda worker: 900)
    return batch


def item_ids(batch, category=None, subcategory=None) -> set[str]:
    items = batch.items.filter(CategoryFilter(category, subcategory).q())
    return set(items.values_list("item_id", flat=True))


def row(i, **changes):
    values = {
        "item_id": f"i{i}",
        "query_id": f"q{i}",
        "query": f"Question {i}?",
        "category": "Creative",
        "subcategory": "Poetry",
        "response_id": f"r{i}",
        "response": f"Answer {i}",
    }
    values.update(changes)
    return values


def refused(batch, path) -> list[str]:
    before = (Query.objects.count(), batch.items.count())
    with pytest.raises(ImportRejected) as info:
        import_items(batch, path)
    assert (Query.objects.count(), batch.items.count()) == before
    folder = f"{path.parent}/"  # problems name the file as given: keep its name only
    assert all(problem.startswith(folder) for problem in info.value.problems)
    return [problem.removeprefix(folder) for problem in info.value.problems]


# --------------------------------------------------------------------------- import


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_both_formats_import_category_and_subcategory(tmp_path, fmt):
    batch = create_batch(slug=f"tax-{fmt}", kind="absolute", annotations_per_item=3)
    rows = [row(0), row(1, category=" Advice ", subcategory=""), row(2, subcategory=" Haiku ")]
    path = (
        write_csv(tmp_path / "items.csv", HEADER, rows)
        if fmt == "csv"
        else write_jsonl(tmp_path / "items.jsonl", rows)
    )
    import_items(batch, path)
    stored = dict(
        (query_id, (category, subcategory))
        for query_id, category, subcategory in Query.objects.values_list(
            "query_id", "category", "subcategory"
        )
    )
    assert stored == {
        "q0": ("Creative", "Poetry"),
        "q1": ("Advice", ""),
        "q2": ("Creative", "Haiku"),  # stripped of surrounding spaces
    }


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_subcategory_without_its_category_is_refused(tmp_path, fmt):
    batch = create_batch(slug=f"tax-sub-{fmt}", kind="absolute", annotations_per_item=3)
    rows = [row(0), row(1, category="")]
    if fmt == "csv":
        path = write_csv(tmp_path / "items.csv", HEADER, rows)
        line = 3  # the header is line 1
    else:
        path = write_jsonl(tmp_path / "items.jsonl", rows)
        line = 2
    problems = refused(batch, path)
    assert problems == [
        f"items.{fmt}:{line}: subcategory: a sub-category needs its category: give category too"
    ]


def test_the_database_refuses_a_query_with_a_subcategory_but_no_category():
    Query.objects.create(query_id="tax-db-ok", text="Fine.", category="Creative", subcategory="")
    with pytest.raises(IntegrityError), transaction.atomic():
        Query.objects.create(query_id="tax-db-bad", text="Orphan.", subcategory="Poetry")
    with pytest.raises(IntegrityError), transaction.atomic():
        Query.objects.filter(query_id="tax-db-ok").update(category="", subcategory="Poetry")
    assert list(Query.objects.values_list("query_id", "category", "subcategory")) == [
        ("tax-db-ok", "Creative", "")
    ]


def test_over_long_and_non_text_taxonomy_values_are_refused(tmp_path):
    batch = create_batch(slug="tax-long", kind="absolute", annotations_per_item=3)
    path = write_jsonl(
        tmp_path / "items.jsonl",
        [row(0, category="c" * 201), row(1, subcategory="s" * 201), row(2, subcategory=7)],
    )
    problems = refused(batch, path)
    assert "items.jsonl:1: category: is longer than 200 characters" in problems
    assert "items.jsonl:2: subcategory: is longer than 200 characters" in problems
    assert "items.jsonl:3: subcategory: must be a string, not a number" in problems


def test_a_query_keeps_one_taxonomy(tmp_path):
    batch = create_batch(slug="tax-one", kind="absolute", annotations_per_item=3)
    path = write_jsonl(
        tmp_path / "items.jsonl",
        [
            row(0),
            row(1, query_id="q0", query="Question 0?", subcategory="Stories"),
            row(2, query_id="q0", query="Question 0?", category="", subcategory=""),  # silent
        ],
    )
    assert refused(batch, path) == [
        "items.jsonl:2: subcategory: query 'q0' has subcategory 'Poetry' on line 1, not 'Stories'"
    ]

    import_items(batch, write_jsonl(tmp_path / "first.jsonl", [row(0, subcategory="")]))
    # the stored query has no sub-category yet: a later file gives it one
    import_items(
        batch, write_jsonl(tmp_path / "second.jsonl", [row(5, query_id="q0", query="Question 0?")])
    )
    assert Query.objects.get(query_id="q0").subcategory == "Poetry"
    # but may not change one it has
    path = write_jsonl(
        tmp_path / "third.jsonl", [row(6, query_id="q0", query="Question 0?", subcategory="Odes")]
    )
    assert refused(batch, path) == [
        "third.jsonl:1: subcategory: query 'q0' already exists in the database with "
        "subcategory 'Poetry', not 'Odes'"
    ]


def test_an_over_long_text_is_refused_naming_the_limit(tmp_path, settings):
    settings.TEXT_MAX_CHARS = 50
    batch = create_batch(slug="tax-text", kind="absolute", annotations_per_item=3)
    path = write_jsonl(
        tmp_path / "items.jsonl",
        [row(0, query="q" * 50, response="r" * 50), row(1, query="q" * 51, response="r" * 60)],
    )
    assert refused(batch, path) == [
        "items.jsonl:2: query: the text is 51 characters; at most TEXT_MAX_CHARS (50) are accepted",
        "items.jsonl:2: response: the text is 60 characters; at most TEXT_MAX_CHARS (50) are "
        "accepted",
    ]
    path = write_csv(tmp_path / "items.csv", HEADER, [row(0, query="q" * 50, response="r" * 50)])
    assert import_items(batch, path).items_created == 1  # at the limit is fine


# --------------------------------------------------------------------------- exports


def read(fmt: str, data: bytes) -> list[dict]:
    if fmt == "jsonl":
        return [json.loads(line) for line in data.decode().splitlines()]
    if fmt == "csv":
        return list(csv.DictReader(io.StringIO(data.decode())))
    return pq.read_table(io.BytesIO(data)).to_pylist()


@pytest.mark.parametrize("layout", ["long", "dense"])
@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_every_item_layout_and_format_carries_the_taxonomy(tmp_path, layout, fmt):
    batch = labelled_batch()
    path = tmp_path / f"export.{fmt}"
    export_to_file(batch, layout, fmt, path)
    rows = read(fmt, path.read_bytes())
    assert rows and list(rows[0])[5:7] == ["category", "subcategory"]
    expected = {
        item_id: (category, subcategory)
        for item_id, category, subcategory in batch.items.values_list(
            "item_id", "query__category", "query__subcategory"
        )
    }
    for exported in rows:
        assert (exported["category"], exported["subcategory"]) == expected[exported["item_id"]]
    assert {exported["subcategory"] for exported in rows} == {"Poetry", "Stories", ""}


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_a_filtered_export_holds_only_those_items(fmt):
    batch = labelled_batch()
    client = token_client("researcher")
    url = f"/api/v1/batches/{batch.slug}/export"
    params = {"format": fmt, "category": "Creative", "subcategory": "Poetry"}
    response = client.get(url, {"layout": "long", **params})
    assert response.status_code == 200
    assert "-long-creative-poetry." in response["Content-Disposition"]
    rows = read(fmt, b"".join(response.streaming_content))
    poetry = item_ids(batch, "Creative", "Poetry")
    assert {r["item_id"] for r in rows} == poetry
    assert (
        len(rows)
        == Label.objects.filter(
            item__item_id__in=poetry, batch=batch, status=LabelStatus.COUNTED
        ).count()
    )

    dense = read(fmt, b"".join(client.get(url, {"layout": "dense", **params}).streaming_content))
    assert {r["item_id"] for r in dense} == poetry
    people = read(
        fmt, b"".join(client.get(url, {"layout": "annotators", **params}).streaming_content)
    )
    assert {int(r["n_labels"]) for r in people} == {len(poetry)}  # each labelled every item

    only_sub = client.get(url, {"layout": "dense", "format": fmt, "subcategory": "Stories"})
    assert {r["item_id"] for r in read(fmt, b"".join(only_sub.streaming_content))} == item_ids(
        batch, "Creative", "Stories"
    )


def test_an_unknown_category_gives_an_empty_export_and_a_bad_one_400():
    batch = labelled_batch()
    client = token_client("researcher")
    url = f"/api/v1/batches/{batch.slug}/export"
    response = client.get(url, {"format": "csv", "category": "No such thing"})
    assert response.status_code == 200
    assert read("csv", b"".join(response.streaming_content)) == []
    response = client.get(url, {"format": "jsonl", "layout": "dense", "category": "Nope"})
    assert b"".join(response.streaming_content) == b""
    response = client.get(url, {"format": "csv", "category": "x" * 201})
    assert response.status_code == 400 and response.json()["field"] == "category"


def test_the_card_lists_the_categories_and_says_when_it_is_a_subset():
    batch = labelled_batch()
    client = token_client("researcher")
    url = f"/api/v1/batches/{batch.slug}/export"
    whole = b"".join(client.get(url, {"layout": "card"}).streaming_content).decode()
    assert "## Categories" in whole and "**Subset**" not in whole
    assert "| Creative | Poetry | 3 | 6 |" in whole
    assert "| Advice | _all_ | 4 | 8 |" in whole
    subset = b"".join(
        client.get(url, {"layout": "card", "category": "Advice"}).streaming_content
    ).decode()
    assert "**Subset**: only the items of category “Advice”" in subset
    assert "| items | 4 |" in subset and "| labels counted | 8 |" in subset
    categories = subset.split("## Categories")[1].split("##")[0]
    assert "| Advice | _all_ | 4 | 8 |" in categories and "Poetry" not in categories


def test_export_jobs_take_the_filter_from_the_body_or_the_query_string(
    settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.DATA_DIR = tmp_path
    batch = labelled_batch()
    client = token_client("researcher")
    url = f"/api/v1/batches/{batch.slug}/export-jobs"
    for body, query in [
        ({"layout": "dense", "format": "jsonl", "category": "Advice"}, ""),
        ({"layout": "dense", "format": "jsonl"}, "?category=Advice"),
    ]:
        with django_capture_on_commit_callbacks(execute=True):
            started = client.post(url + query, json.dumps(body), content_type="application/json")
        assert started.status_code == 202, started.content
        status = client.get(started.json()["status_url"]).json()
        assert status["state"] == "succeeded"
        assert status["result"]["category"] == "Advice" and status["result"]["rows"] == 4
        download = client.get(status["download_url"])
        rows = read("jsonl", b"".join(download.streaming_content))
        assert {r["item_id"] for r in rows} == item_ids(batch, "Advice")
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(
            url, json.dumps({"category": "Unheard of"}), content_type="application/json"
        )
    assert client.get(started.json()["status_url"]).json()["result"]["rows"] == 0
    bad = client.post(url, json.dumps({"subcategory": "y" * 201}), content_type="application/json")
    assert bad.status_code == 400


# --------------------------------------------------------------------------- API


def test_progress_covers_the_items_of_the_filter():
    batch = labelled_batch()
    client = token_client("researcher")
    url = f"/api/v1/batches/{batch.slug}/progress"
    whole = client.get(url).json()
    assert whole["items"]["total"] == 9 and "category" not in whole
    creative = client.get(url, {"category": "Creative"}).json()
    assert creative["category"] == "Creative"
    assert creative["items"]["total"] == 5 and creative["labels"]["counted"] == 10
    assert creative["target_labels"] == 10
    stories = client.get(url, {"category": "Creative", "subcategory": "Stories"}).json()
    assert stories["items"]["total"] == 2 and stories["labels"]["counted"] == 4
    nothing = client.get(url, {"category": "Unknown"})
    assert nothing.status_code == 200
    assert nothing.json()["items"]["total"] == 0 and nothing.json()["share_done"] == 0.0
    assert client.get(url, {"category": "z" * 201}).status_code == 400


def test_annotators_and_batches_are_filtered_too():
    batch = labelled_batch()
    other = make_batch(n_items=2)  # its one query has no category
    client = token_client("researcher")
    people = client.get(f"/api/v1/batches/{batch.slug}/annotators", {"category": "Advice"})
    assert people.status_code == 200
    assert [person["n_labels"] for person in people.json()] == [4, 4]
    assert (
        client.get(f"/api/v1/batches/{batch.slug}/annotators", {"category": "Unknown"}).json() == []
    )

    slugs = {entry["slug"] for entry in client.get("/api/v1/batches/").json()}
    assert {batch.slug, other.slug} <= slugs
    filtered = client.get("/api/v1/batches/", {"category": "Creative", "subcategory": "Poetry"})
    assert [entry["slug"] for entry in filtered.json()] == [batch.slug]
    assert client.get("/api/v1/batches/", {"category": "Unknown"}).json() == []


def test_the_schema_documents_the_filter():
    schema = staff_client("researcher").get("/api/schema/", {"format": "json"}).json()
    for path, method in [
        ("/api/v1/batches/{slug}/progress", "get"),
        ("/api/v1/batches/{slug}/annotators", "get"),
        ("/api/v1/batches/", "get"),
        ("/api/v1/batches/{slug}/export", "get"),
    ]:
        names = {p["name"] for p in schema["paths"][path][method].get("parameters", [])}
        assert {"category", "subcategory"} <= names, path


# --------------------------------------------------------------------------- staff pages


def test_the_batch_page_filters_its_figures_and_export_links():
    batch = labelled_batch()
    client = staff_client("researcher")
    html = client.get(f"/manage/{batch.slug}/").content.decode()
    table = html.split('id="category-table"')[1].split("</table>")[0]
    assert 'data-category="Creative"' in table and 'data-subcategory="Poetry"' in table
    creative_row = table.split('class="category-row" data-category="Creative"')[1].split("</tr>")[0]
    assert 'data-count="items">5<' in creative_row and 'data-count="labels">10<' in creative_row
    assert 'id="category-filter"' not in html

    html = client.get(f"/manage/{batch.slug}/", {"category": "Creative"}).content.decode()
    assert 'id="category-filter"' in html and "category “Creative”" in html
    assert "layout=long&amp;format=csv&amp;category=Creative" in html
    assert f"/api/v1/batches/{batch.slug}/progress?category=Creative" in html
    assert f"/api/v1/batches/{batch.slug}/export-jobs?category=Creative" in html
    assert "Only the items of category “Creative”" in html

    html = client.get(f"/manage/{batch.slug}/", {"category": "Nothing"}).content.decode()
    assert "no item of this batch is in it" in html
    assert client.get(f"/manage/{batch.slug}/", {"category": "n" * 201}).status_code == 400


def test_the_annotators_page_counts_the_labels_of_the_filter():
    batch = labelled_batch()
    client = staff_client("admin")
    html = client.get(f"/manage/{batch.slug}/annotators", {"subcategory": "Stories"}).content
    html = html.decode()
    assert "2 taking part with labels of sub-category “Stories”" in html
    assert 'id="category-table"' in html
    html = client.get(f"/manage/{batch.slug}/annotators", {"category": "Unknown"}).content
    assert "Nobody has labelled an item of category “Unknown”." in html.decode()


def test_the_preview_walks_the_items_of_the_filter():
    batch = labelled_batch()
    client = staff_client("researcher")
    url = f"/manage/{batch.slug}/preview"
    html = client.get(url, {"category": "Advice"}).content.decode()
    assert "Item 1 of 4 in category “Advice”" in html
    assert "<code>advice-none-0</code>" in html and "(Advice)" in html
    assert "category=Advice" in html.split('rel="next"')[0].rsplit("href=", 1)[1]
    html = client.get(url, {"category": "Creative", "subcategory": "Stories"}).content.decode()
    assert "Item 1 of 2" in html and "(Creative › Stories)" in html
    response = client.get(url, {"category": "Unknown"})
    assert response.status_code == 200
    assert "has no items in category “Unknown”" in response.content.decode()
    response = client.get(url, {"category": "Advice", "item": "creative-poetry-0"})
    assert response.status_code == 404


def test_the_batch_list_keeps_the_batches_with_items_of_the_filter():
    batch = labelled_batch()
    other = make_batch(n_items=2)
    client = staff_client("researcher")
    html = client.get("/manage/").content.decode()
    assert batch.slug in html and other.slug in html
    html = client.get("/manage/", {"category": "Creative"}).content.decode()
    assert batch.slug in html and other.slug not in html
    assert f"/manage/{batch.slug}/?category=Creative" in html
    html = client.get("/manage/", {"category": "Unknown"}).content.decode()
    assert "No batch has items in category “Unknown”." in html


def test_the_export_command_takes_the_filter(tmp_path):
    batch = labelled_batch()
    target = tmp_path / "advice.csv"
    out = io.StringIO()
    call_command(
        "export_labels",
        batch.slug,
        "--dense",
        "--category",
        "Advice",
        "-o",
        str(target),
        stdout=out,
    )
    assert "Exported 4 items" in out.getvalue()
    assert {r["item_id"] for r in read("csv", target.read_bytes())} == item_ids(batch, "Advice")
    with pytest.raises(CommandError, match="subcategory"):
        call_command(
            "export_labels", batch.slug, "--subcategory", "s" * 201, "-o", str(tmp_path / "x.csv")
        )
