"""The ``short_text`` kind end to end: items files, settings (API, pages, command), answers
through the real HTTP API, normalisers and failed cells, exports and the data card."""

import io
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.forms import BatchCreateForm, BatchEditForm
from annotation.kinds import get_kind
from annotation.kinds.base import CleanLabel
from annotation.models import Batch, Item, Label
from annotation.services.batches import create_batch, update_batch
from annotation.services.importing import import_items
from core.errors import InvalidInput
from core.tabular import ImportRejected
from tests.annotation.kinds import http
from tests.annotation.kinds.http import answer, answer_as, enter, export, jsonl, lease, staff_client
from tests.annotation.kinds.studies import items_file, make_study

pytestmark = pytest.mark.django_db


# --------------------------------------------------------------------------- items files


def test_items_file_with_gold_and_metadata_is_imported():
    batch = create_batch(slug="st-import", kind="short_text", title="T")
    rows = [
        {"item_id": "c1", "query_id": "color", "query": "Name a color.", "category": "color"},
        {"item_id": "c2", "query_id": "fruit", "query": "Name a fruit.", "gold": "Apples!"},
        {
            "item_id": "c3",
            "query_id": "bird",
            "query": "Name a bird.",
            "gold": ["Robin.", "ROBIN", "owl"],
        },
        {"item_id": "c4", "query_id": "num", "query": "Name a number.", "gold": 7, "source": "x"},
    ]
    summary = import_items(batch, items_file(rows))
    assert summary.items_created == 4
    items = {item.item_id: item for item in Item.objects.filter(batch=batch)}
    assert items["c1"].query.category == "color" and items["c1"].gold is None
    assert items["c1"].response is None and items["c1"].content == {}
    assert items["c2"].gold == ["apples"]  # normalised by the batch's normaliser (census)
    assert items["c3"].gold == ["robin", "owl"]  # distinct, in file order
    assert items["c4"].gold == ["7"]
    assert items["c4"].metadata == {"source": "x"}


def test_csv_items_file_with_a_gold_list():
    batch = create_batch(
        slug="st-csv", kind="short_text", title="T", kind_settings={"normaliser": "lowercase"}
    )
    upload = io.BytesIO(
        b'item_id,query_id,query,gold\nn1,city,Name a city.,"[""New York"", ""NYC.""]"\n'
        b"n2,team,Name a team.,The Beatles\n"
    )
    import_items(batch, upload, filename="items.csv")
    gold = dict(Item.objects.filter(batch=batch).values_list("item_id", "gold"))
    assert gold == {"n1": ["new york", "nyc"], "n2": ["the beatles"]}


def test_bad_items_file_is_refused_whole_with_file_line_field():
    batch = create_batch(slug="st-bad", kind="short_text", title="T")
    rows = [
        {"item_id": "ok", "query_id": "q1", "query": "Name a color."},
        {"item_id": "no-query", "query_id": "q2"},
        {"item_id": "empty-gold", "query_id": "q3", "query": "Q?", "gold": []},
        {"item_id": "junk-gold", "query_id": "q4", "query": "Q?", "gold": "!!!"},
        {"item_id": "object-gold", "query_id": "q5", "query": "Q?", "gold": {"a": 1}},
        {"item_id": "bool-gold", "query_id": "q6", "query": "Q?", "gold": [True]},
    ]
    with pytest.raises(ImportRejected) as rejected:
        import_items(batch, items_file(rows, "census.jsonl"))
    problems = rejected.value.problems
    assert problems[0] == "census.jsonl:2: query: required key is missing"
    assert problems[1:] == [
        "census.jsonl:3: gold: must not be an empty list",
        "census.jsonl:4: gold: '!!!' gives no answer under the census rule",
        "census.jsonl:5: gold: {'a': 1} is not a string (give an answer or a list of them)",
        "census.jsonl:6: gold: True is not a string (give an answer or a list of them)",
    ]
    assert not Item.objects.filter(batch=batch).exists()


# --------------------------------------------------------------------------- answers


def test_worker_page_has_a_text_field_with_the_batch_limits():
    batch = make_study("short_text", slug="st-page", kind_settings={"max_words": 2})
    client = enter(batch, "page-worker")
    page = client.get(f"/work/{batch.slug}/task").content.decode()
    assert 'id="answer"' in page and 'data-max-words="2"' in page and 'data-max-chars="40"' in page
    assert 'name="value"' not in page  # no choice buttons
    assert "At most 2 words, at most 40 characters." in page
    item = lease(client, batch)["item"]
    assert set(item) >= {"item_id", "query", "query_html", "html"}
    assert 'role="heading"' in item["html"] and item["query"].split(" (#")[0] in item["html"]
    assert "response" not in item


def test_invalid_answers_are_refused_naming_value():
    batch = make_study("short_text", slug="st-invalid")
    client = enter(batch, "careless")
    assignment = lease(client, batch)["assignment"]
    refusals = [
        ("a" * 41, "is 41 characters long; this batch takes at most 40"),
        ("light blue", "has 2 words; this batch takes at most 1 word"),
        ("   ", "is empty: type an answer"),
        ("", "is empty: type an answer"),
        ("bl\tue", "contains the control character U+0009 at position 3; remove it"),
        ("blue\x00", "contains the control character U+0000 at position 5; remove it"),
        ("bl\x85ue", "contains the control character U+0085 at position 3; remove it"),
        ("\ud800", "contains the unpaired surrogate U+D800 at position 1; remove it"),
        (7, "must be the typed answer as a string, got 7"),
        (None, "must be the typed answer as a string, got None"),
        (["blue"], "must be the typed answer as a string, got ['blue']"),
    ]
    for value, message in refusals:
        response = answer(client, assignment, value)
        assert response.status_code == 400, (value, response.content)
        assert response.json()["field"] == "value"
        assert message in response.json()["detail"], (value, response.json())
    assert not Label.objects.exists()
    # 40 characters (and spaces around them) are fine
    stored = answer(client, assignment, "  " + "b" * 40 + " ")
    assert stored.status_code == 201
    assert Label.objects.get().text == "b" * 40


def test_answer_is_stored_verbatim_and_normalised_and_a_retry_is_idempotent():
    batch = make_study("short_text", slug="st-retry")
    client = enter(batch, "retrier")
    assignment = lease(client, batch)["assignment"]
    first = answer(client, assignment, "  Blue. ")
    assert (first.status_code, first.json()) == (201, {"status": "counted"})
    label = Label.objects.get()
    assert (label.kind, label.value, label.text, label.answer) == (
        "short_text",
        None,
        "Blue.",
        "blue",
    )
    same = answer(client, assignment, "Blue.")
    assert (same.status_code, same.json()) == (200, {"status": "counted"})
    different = answer(client, assignment, "Red")
    assert different.status_code == 409
    assert "'Blue.'" in different.json()["detail"]
    assert Label.objects.count() == 1
    assert Item.objects.get(item_id=label.item.item_id).counted_count == 1


def test_an_answer_the_normaliser_rejects_is_a_counted_failed_cell():
    batch = make_study("short_text", slug="st-failed", per_item=1, n_items=2)
    answer_as(batch, "gourmet", "Soufflé")  # no candidate word under the census rule
    answer_as(batch, "agreeable", "okay")  # a bare acknowledgement
    labels = list(Label.objects.order_by("pk").values_list("text", "answer", "status"))
    assert labels == [("Soufflé", "", "counted"), ("okay", "", "counted")]
    assert sorted(Item.objects.values_list("counted_count", flat=True)) == [1, 1]


def test_several_words_with_the_lowercase_normaliser():
    batch = make_study(
        "short_text",
        slug="st-words",
        kind_settings={"max_words": 3, "max_chars": 20, "normaliser": "lowercase"},
    )
    answer_as(batch, "w1", "New   York!")
    client = enter(batch, "w2")
    assignment = lease(client, batch)["assignment"]
    too_many = answer(client, assignment, "one two three four")
    assert too_many.status_code == 400
    assert "has 4 words; this batch takes at most 3 words" in too_many.json()["detail"]
    assert answer(client, assignment, "“The Big Apple”").status_code == 201
    assert sorted(Label.objects.values_list("answer", flat=True)) == ["new york", "the big apple"]


def test_attention_check_answers_pass_after_normalisation():
    kind = get_kind("short_text")
    batch = create_batch(slug="st-gold", kind="short_text", title="T")
    gold = kind.clean_gold(batch, ["Blue", "navy."])
    assert gold == ["blue", "navy"]
    assert kind.passes_check(gold, kind.clean_label(batch, "BLUE!"))
    assert kind.passes_check(gold, kind.clean_label(batch, "NAVY."))
    assert not kind.passes_check(gold, kind.clean_label(batch, "red"))
    assert not kind.passes_check(gold, CleanLabel(text="Soufflé", answer=""))


# --------------------------------------------------------------------------- exports


def test_exports_long_dense_parquet_and_card():
    batch = make_study("short_text", slug="st-export", n_items=1, per_item=6)
    for worker, text in [
        ("a", "Red"),
        ("b", "blue"),
        ("c", "Soufflé"),
        ("d", "BLUE."),
        ("e", "red!"),
        ("f", "green"),
    ]:
        answer_as(batch, worker, text)
    staff = staff_client()

    long_rows = jsonl(export(staff, batch, "long", "jsonl"))
    assert [(row["text"], row["answer"]) for row in long_rows] == [
        ("Red", "red"),
        ("blue", "blue"),
        ("Soufflé", ""),
        ("BLUE.", "blue"),
        ("red!", "red"),
        ("green", "green"),
    ]
    assert "value" not in long_rows[0] and long_rows[0]["status"] == "counted"

    (dense,) = jsonl(export(staff, batch, "dense", "jsonl"))
    assert dense["answers"] == ["red", "blue", "", "blue", "red", "green"]
    assert dense["n"] == 6 and len(dense["annotators"]) == 6
    # red and blue both twice: red was given first; the failed cell is left out
    assert dense["distinct_answers"] == ["red", "blue", "green"]
    assert dense["distinct_counts"] == [2, 2, 1]
    header = export(staff, batch, "dense", "csv").decode().splitlines()[0]
    assert header.endswith("answers,annotators,n,distinct_answers,distinct_counts")

    table = http.parquet_export(staff, batch, "dense")
    types = http.column_types(table)
    assert types["answers"] == "list<element: string>"
    assert types["distinct_answers"] == "list<element: string>"
    assert types["distinct_counts"] == "list<element: int64>"
    assert types["n"] == "int64"
    assert table.column("distinct_counts").to_pylist() == [[2, 2, 1]]
    long_types = http.column_types(http.parquet_export(staff, batch, "long"))
    assert long_types["text"] == "string" and long_types["answer"] == "string"

    card = export(staff, batch, "card", "md").decode()
    assert "| (failed cell) | no answer under the census rule | 1 | 16.7% |" in card
    assert "| blue |  | 2 | 33.3% |" in card and "| red |  | 2 | 33.3% |" in card
    assert card.index("| blue |") < card.index("| red |") < card.index("| green |")
    assert "| `distinct_answers` | string_list |" in card


# --------------------------------------------------------------------------- settings


def test_api_accepts_and_checks_kind_settings():
    staff = staff_client()
    created = staff.post(
        "/api/v1/batches/",
        {
            "slug": "st-api",
            "kind": "short_text",
            "title": "Census",
            "kind_settings": {"max_words": 2, "normaliser": "lowercase"},
        },
        content_type="application/json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["kind_settings"] == {
        "max_words": 2,
        "max_chars": 40,
        "normaliser": "lowercase",
    }
    for settings, field in [
        ({"normaliser": "stemmer"}, "kind_settings.normaliser"),
        ({"max_chars": 101}, "kind_settings.max_chars"),
        ({"max_words": 0}, "kind_settings.max_words"),
        ({"max_words": "two"}, "kind_settings.max_words"),
        ({"colour": "blue"}, "kind_settings.colour"),
        ("max_words=2", "kind_settings"),
    ]:
        refused = staff.post(
            "/api/v1/batches/",
            {"slug": "st-api-bad", "kind": "short_text", "title": "T", "kind_settings": settings},
            content_type="application/json",
        )
        assert refused.status_code == 400, (settings, refused.content)
        assert refused.json()["field"] == field, (settings, refused.json())
    patched = staff.patch(
        "/api/v1/batches/st-api/",
        {"kind_settings": {"max_chars": 25}},
        content_type="application/json",
    )
    assert patched.status_code == 200, patched.content
    assert Batch.objects.get(slug="st-api").kind_settings == {
        "max_words": 2,
        "max_chars": 25,
        "normaliser": "lowercase",
    }


def test_normaliser_is_fixed_once_the_batch_holds_labels():
    batch = make_study("short_text", slug="st-fixed")
    # no labels yet: the normaliser may still change
    batch = update_batch(batch, {"kind_settings": {"normaliser": "lowercase"}})
    batch = update_batch(batch, {"kind_settings": {"normaliser": "census"}})
    answer_as(batch, "first", "blue")
    with pytest.raises(InvalidInput) as refused:
        update_batch(batch, {"kind_settings": {"normaliser": "lowercase"}})
    assert refused.value.field == "kind_settings.normaliser"
    # on the settings page the refusal stands next to the normaliser's field
    batch.refresh_from_db()
    fields = {**form_defaults(BatchEditForm.for_batch(batch)), "setting__normaliser": "lowercase"}
    page = staff_client().post(f"/manage/{batch.slug}/edit", fields)
    assert page.status_code == 400
    field_error = re.search(
        r'id="id_setting__normaliser_error"[^>]*>(.*?)</', page.content.decode(), re.S
    )
    assert field_error is not None and "labels" in field_error.group(1), page.content.decode()[
        :3000
    ]
    # the limits may still change
    batch = update_batch(batch, {"kind_settings": {"max_words": 2}})
    assert batch.kind_settings == {"max_words": 2, "max_chars": 40, "normaliser": "census"}


def form_defaults(form) -> dict:
    """What a browser posts for a form left as it was shown (every field's initial value)."""
    values = {}
    for name, field in form.fields.items():
        value = form.get_initial_for_field(field, name)
        if value is not None:
            values[name] = value
    return values


def test_create_and_edit_pages_offer_the_settings():
    staff = staff_client()
    page = staff.get("/manage/new").content.decode()
    assert 'name="short_text__max_words"' in page and 'name="short_text__normaliser"' in page
    assert '<option value="lowercase">' in page
    new_batch = {
        **form_defaults(BatchCreateForm()),
        "slug": "st-form",
        "kind": "short_text",
        "annotations_per_item": "5",
        "short_text__max_words": "2",
        "short_text__max_chars": "",
        "short_text__normaliser": "lowercase",
    }
    created = staff.post("/manage/new", new_batch)
    assert created.status_code == 302, created.content.decode()[:2000]
    batch = Batch.objects.get(slug="st-form")
    assert batch.kind_settings == {"max_words": 2, "max_chars": 40, "normaliser": "lowercase"}

    # an absolute batch made on the same form ignores the other kinds' settings
    plain = staff.post("/manage/new", {**new_batch, "slug": "st-form-plain", "kind": "absolute"})
    assert plain.status_code == 302
    assert Batch.objects.get(slug="st-form-plain").kind_settings == {}

    bad = staff.post(
        "/manage/new", {**new_batch, "slug": "st-form-bad", "short_text__normaliser": "stemmer"}
    )
    assert bad.status_code == 400 and not Batch.objects.filter(slug="st-form-bad").exists()
    assert "stemmer is not one of the available choices" in bad.content.decode()

    edit = staff.get("/manage/st-form/edit").content.decode()
    assert 'name="setting__normaliser"' in edit and 'name="setting__max_words"' in edit
    fields = {
        **form_defaults(BatchEditForm.for_batch(batch)),
        "setting__max_words": "3",
    }
    saved = staff.post("/manage/st-form/edit", fields)
    assert saved.status_code == 302, saved.content.decode()[:2000]
    batch.refresh_from_db()
    assert batch.kind_settings == {"max_words": 3, "max_chars": 40, "normaliser": "lowercase"}


def test_create_batch_command_takes_kind_settings():
    out = io.StringIO()
    call_command(
        "create_batch",
        "st-command",
        "--kind",
        "short_text",
        "--kind-setting",
        "max_words=2",
        "--kind-setting",
        "normaliser=lowercase",
        stdout=out,
    )
    assert "Created short_text batch st-command" in out.getvalue()
    assert Batch.objects.get(slug="st-command").kind_settings == {
        "max_words": 2,
        "max_chars": 40,
        "normaliser": "lowercase",
    }
    with pytest.raises(CommandError, match="normaliser: must be one of census, lowercase"):
        call_command(
            "create_batch", "st-command-2", "--kind", "short_text", "--kind-setting", "normaliser=x"
        )


def test_the_page_counts_words_on_the_same_whitespace_as_the_server():
    # rating.js holds back an answer with too many words; it must split where Python's
    # str.split() (the server's count) does, no more, no less: a valid answer is never
    # held back (U+FEFF is no space to Python), and a refused one never sent
    from pathlib import Path

    script = (Path(__file__).resolve().parents[3] / "static/annotation/rating.js").read_text()
    found = re.search(r"const PYTHON_WHITESPACE =\s*/\[(.*?)\]\+/;", script)
    assert found, "rating.js names its whitespace PYTHON_WHITESPACE"
    escapes = {"t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r"}
    tokens = re.findall(r"\\u([0-9a-fA-F]{4})|\\([tnvfr])|(-)|(.)", found.group(1))
    chars, pending_range = [], False
    for code, escape, dash, literal in tokens:
        if dash:
            pending_range = True
            continue
        char = chr(int(code, 16)) if code else escapes[escape] if escape else literal
        if pending_range:
            chars += [chr(c) for c in range(ord(chars[-1]) + 1, ord(char) + 1)]
            pending_range = False
        else:
            chars.append(char)
    python = {chr(c) for c in range(0x110000) if chr(c).isspace()}
    assert set(chars) == python
