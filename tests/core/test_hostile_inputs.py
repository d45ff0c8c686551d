"""Hostile inputs answer 4xx with a reason, never a 500: JSON nested 100,000 deep in any
reader, a questionnaire of 5,000 nested brackets or an alias bomb, a synchronous upload
too large to finish within the request."""

import io

import pytest

from core import json_text
from diversity.genie.models import GenieSet
from tests.diversity import genie_set as hand
from tests.factories import make_batch
from tests.staff import staff_client, token_client

DEEP = "[" * 100_000 + "]" * 100_000


def deep_line(key: str) -> bytes:
    return ('{"' + key + '": ' + DEEP + "}\n").encode()


def test_the_one_depth_guard_refuses_before_parsing():
    with pytest.raises(json_text.NestedTooDeep) as refusal:
        json_text.loads(DEEP)
    assert "nested deeper than 32 levels" in refusal.value.msg
    assert refusal.value.colno == 33  # the bracket that went too deep
    assert json_text.loads('[[["]]]]]]"]]]') == [[["]]]]]]"]]]  # brackets in strings do not count


@pytest.mark.django_db
def test_a_genie_line_nested_100000_deep_is_a_problem_of_its_line_on_the_page_and_the_api():
    content = hand.jsonl() + deep_line("prompt_id")
    page = staff_client("researcher").post(
        "/manage/genie/new", {"name": "deep", "file": hand.upload(content)}
    )
    assert page.status_code == 400
    assert "judgments.jsonl:18: row: not valid JSON: nested deeper than 32" in page.content.decode()
    api = token_client("researcher").post(
        "/api/v1/genie/", {"name": "deep", "file": hand.upload(content)}
    )
    assert api.status_code == 400
    assert any("nested deeper than 32" in problem for problem in api.json()["problems"])
    assert not GenieSet.objects.filter(name="deep").exists()


@pytest.mark.django_db
def test_an_items_line_nested_100000_deep_is_a_problem_of_its_line():
    batch = make_batch(n_items=0)
    upload = io.BytesIO(deep_line("query"))
    upload.name = "items.jsonl"
    answer = token_client("admin").post(f"/api/v1/batches/{batch.slug}/items", {"file": upload})
    assert answer.status_code == 400
    assert "items.jsonl:1: row: not valid JSON: nested deeper than 32" in str(answer.json())


BRACKETS = "[" * 5000 + "]" * 5000
# ~600 bytes that expand to 10^8 strings through nested aliases (the "billion laughs")
ALIAS_BOMB = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{chr(98 + level)}: &{chr(98 + level)} [{','.join(['*' + chr(97 + level)] * 10)}]\n"
    for level in range(8)
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "questionnaire, reason",
    [(BRACKETS, "nested deeper than 8 levels"), (ALIAS_BOMB, "anchors and aliases")],
)
def test_a_hostile_questionnaire_is_a_400_on_the_create_and_edit_pages(questionnaire, reason):
    admin = staff_client("admin")
    batch = make_batch(n_items=1)
    edit = {
        "title": "t",
        "annotations_per_item": "1",
        "lease_seconds": "120",
        "completion_code": "C",
        "questionnaire": questionnaire,
    }
    create = {**edit, "slug": "hostile-q", "kind": "absolute"}
    # (that the alias bomb is refused without being expanded is measured, as memory, by
    # tests/corpora/test_memory_bombs.py: no timing here, which a busy machine would fail)
    for url, fields in ((f"/manage/{batch.slug}/edit", edit), ("/manage/new", create)):
        answer = admin.post(url, fields)
        assert answer.status_code == 400, url
        assert reason in answer.content.decode(), url
    batch.refresh_from_db()
    assert batch.questionnaire in (None, [])


@pytest.mark.django_db
def test_a_synchronous_upload_over_the_threshold_is_413_pointing_at_the_import_job(settings):
    settings.SYNC_IMPORT_MAX_BYTES = 10_000
    batch = make_batch(n_items=0)
    lines = b"".join(b'{"query": "q%d", "response": "%s"}\n' % (n, b"r" * 200) for n in range(100))
    upload = io.BytesIO(lines)
    upload.name = "items.jsonl"
    answer = token_client("admin").post(f"/api/v1/batches/{batch.slug}/items", {"file": upload})
    assert answer.status_code == 413
    assert answer["Content-Type"] == "application/json"
    assert f"/api/v1/batches/{batch.slug}/import-jobs" in answer.json()["detail"]
    assert not batch.items.exists()
