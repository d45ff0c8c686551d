"""The perspectivist export (layout ``lewidi``): the command, the API, the export page and
the rules of the layout, checked against the labels read back from the database."""

import json
from collections import Counter

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from annotation.models import Item, Label, Participation
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.factories import make_batch, make_participant
from tests.staff import staff_client

pytestmark = pytest.mark.django_db

QUESTIONS = [
    {"id": "english", "text": "Native English?", "type": "choice", "options": ["yes", "no"]}
]


def labelled(kind, questionnaire=None, n_items=4, per_item=3, workers=3):
    batch = make_batch(kind=kind, n_items=n_items, per_item=per_item, questionnaire=questionnaire)
    for worker in range(workers):
        participation = make_participant(batch, f"{batch.slug}-w{worker}")
        if questionnaire:
            participation.questionnaire_answers = {"english": "yes" if worker % 2 else "no"}
            participation.answered_at = timezone.now()
            participation.save(update_fields=["questionnaire_answers", "answered_at"])
        while (outcome := lease_next_item(batch, participation)).assignment is not None:
            position = outcome.assignment.item.position
            value = [1, 2, 2, 0, -1][(position + worker) % 5] if kind == "pairwise" else 1 + (
                position + worker) % 5  # fmt: skip
            submit_label(participation.annotator, outcome.assignment.pk, value, 1500)
    return batch


def test_the_command_writes_each_items_annotators_annotations_and_soft_label(tmp_path):
    batch = labelled("pairwise", questionnaire=QUESTIONS)
    path = tmp_path / "lewidi.json"
    call_command("export_labels", batch.slug, "--layout", "lewidi", "-o", str(path))
    document = json.loads(path.read_text(encoding="utf-8"))
    assert list(document) == [f"item-{i}" for i in range(4)]
    for item in Item.objects.filter(batch=batch).select_related(
        "query", "response_a", "response_b"
    ):
        entry = document[item.item_id]
        rows = list(
            Label.objects.filter(item=item, status="counted")
            .order_by("submitted_at", "pk")
            .values_list("annotator__pseudonym", "value", "annotator_id")
        )
        assert entry["text"] == {
            "query": item.query.text,
            "response_a": item.response_a.text,
            "response_b": item.response_b.text,
        }
        assert entry["annotation task"] == "pairwise"
        assert entry["number of annotations"] == len(rows) == 3
        assert entry["annotators"].split(",") == [name for name, _, _ in rows]
        assert [int(v) for v in entry["annotations"].split(",")] == [v for _, v, _ in rows]
        counts = Counter(v for _, v, _ in rows)
        assert entry["soft_label"] == {str(v): counts.get(v, 0) / 3 for v in (-2, -1, 0, 1, 2)}
        top = max(counts.values())
        assert entry["hard_label"] == str(min(v for v in counts if counts[v] == top))
        answers = {
            name: Participation.objects.get(batch=batch, annotator_id=pk).questionnaire_answers
            for name, _, pk in rows
        }
        assert entry["other_info"]["annotator_answers"] == answers
        assert entry["other_info"]["model_a"] == item.response_a.model


def test_an_absolute_batch_without_questionnaire_through_the_api_and_the_page():
    batch = labelled("absolute")
    client = staff_client("admin")
    page = client.get(f"/manage/{batch.slug}/").content.decode()
    assert 'data-export="lewidi"' in page
    response = client.get(f"/api/v1/batches/{batch.slug}/export?layout=lewidi")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert f"{batch.slug}-lewidi.json" in response["Content-Disposition"]
    document = json.loads(b"".join(response.streaming_content))
    entry = document["item-0"]
    assert set(entry["text"]) == {"query", "response"}
    assert sum(entry["soft_label"].values()) == pytest.approx(1)
    assert list(entry["soft_label"]) == ["1", "2", "3", "4", "5"]
    assert "annotator_answers" not in entry["other_info"]
    wrong = client.get(f"/api/v1/batches/{batch.slug}/export?layout=lewidi&format=csv")
    assert wrong.status_code == 400 and "JSON only" in wrong.json()["detail"]


def test_the_command_refuses_another_format_for_lewidi(tmp_path):
    batch = labelled("absolute", n_items=1, per_item=1, workers=1)
    with pytest.raises(CommandError, match="json"):
        call_command(
            "export_labels", batch.slug, "--layout", "lewidi", "-o", str(tmp_path / "x.csv")
        )


@pytest.mark.parametrize("kind", ["short_text"])
def test_kinds_the_layout_cannot_write_get_no_link_on_the_page(kind):
    # the link only answered 400 (no fixed label set): a download that "fails" in the browser
    batch = make_batch(kind=kind, n_items=1)
    page = staff_client("admin").get(f"/manage/{batch.slug}/").content.decode()
    assert 'data-export="card"' in page and 'data-export="lewidi"' not in page
