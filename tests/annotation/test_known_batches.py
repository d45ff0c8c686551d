"""A label written in one statement from this process's copy of the batch
(``annotation.services.known_batches``): the copy is never used once the batch row has
changed, and what is stored is what the path that reads the lease stores."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Batch, Label
from annotation.services import known_batches
from tests.annotation.test_worker_api import enter, next_item, post_json
from tests.factories import make_batch

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("row versions (xmin) are PostgreSQL's; SQLite reads the lease")


def _label(client, assignment, body):
    return post_json(client, f"/api/v1/assignments/{assignment}/label", body)


def _writes(captured) -> list[str]:
    control = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")
    return [
        query["sql"]
        for query in captured.captured_queries
        if "annotation_" in query["sql"] and not query["sql"].lstrip().startswith(control)
    ]


def test_a_label_takes_one_statement_once_the_batch_is_known():
    batch = make_batch(n_items=3, per_item=2)
    client = enter(batch, "one-statement")
    lease = next_item(client, batch).json()  # reads the batch: this process knows it now
    assert known_batches.known(batch.slug) is not None
    with CaptureQueriesContext(connection) as captured:
        answer = _label(client, lease["assignment"], {"value": 4, "duration_ms": 900})
    assert answer.status_code == 201 and answer.json() == {"status": "counted"}
    statements = _writes(captured)
    assert len(statements) == 1 and "INSERT INTO" in statements[0], statements
    stored = Label.objects.get(assignment_id=lease["assignment"])
    assert (stored.value, stored.status, stored.duration_ms) == (4, "counted", 900)
    assert stored.assignment.state == "submitted"
    assert stored.item.counted_count == 1 and stored.item.reserved_count == 1


def test_a_changed_batch_is_read_again_before_its_settings_judge_a_label():
    """The copy allowed comments; the batch no longer does. The statement must see that
    the row changed and write nothing, and the label is judged by the batch as it is."""
    batch = make_batch(n_items=2, per_item=2, comment_box="optional")
    client = enter(batch, "stale-copy")
    lease = next_item(client, batch).json()
    Batch.objects.filter(pk=batch.pk).update(comment_box="none")
    refused = _label(client, lease["assignment"], {"value": 3, "comment": "why not"})
    assert refused.status_code == 400, refused.content
    assert "comment" in json.dumps(refused.json())
    assert not Label.objects.filter(batch=batch).exists()
    # the batch read afresh: a label without a comment goes on as usual
    assert _label(client, lease["assignment"], {"value": 3}).status_code == 201


def test_a_setting_changed_since_the_copy_decides_the_stored_flags():
    batch = make_batch(n_items=2, per_item=2)
    client = enter(batch, "flags")
    lease = next_item(client, batch).json()
    batch.min_seconds_per_item = 5
    batch.save(update_fields=["min_seconds_per_item"])
    answer = _label(client, lease["assignment"], {"value": 2, "duration_ms": 1000})
    assert answer.status_code == 201
    assert Label.objects.get(assignment_id=lease["assignment"]).too_fast is True


@pytest.mark.parametrize("order", ["ab", "ba"])
def test_a_pair_is_stored_in_the_order_its_lease_showed(order):
    """The statement gets the value for both presentation orders and keeps the one of
    the lease; the stored label is the canonical one the reading path would store."""
    batch = make_batch(kind="pairwise", n_items=4, per_item=2)
    client = enter(batch, f"pair-{order}")
    for _ in range(4):
        lease = next_item(client, batch).json()
        shown = lease["item"]["shown_order"]
        with CaptureQueriesContext(connection) as captured:
            answer = _label(client, lease["assignment"], {"value": 2})
        assert answer.status_code == 201
        assert len(_writes(captured)) == 1
        stored = Label.objects.get(assignment_id=lease["assignment"])
        assert stored.shown_order == shown
        assert stored.value == (2 if shown == "ab" else -2)
        if shown == order:
            break
    else:
        pytest.fail(f"no lease showed {order} in four")


def test_another_browser_holding_the_participation_gets_the_reading_paths_answer():
    """The participation is bound to another browser: the statement writes nothing and
    the label is refused as before (the other browser goes on)."""
    batch = make_batch(n_items=2, per_item=2)
    client = enter(batch, "taken-over")
    lease = next_item(client, batch).json()
    participation = batch.participations.get()
    participation.browser_key = "another-browser"
    participation.save(update_fields=["browser_key"])
    answer = _label(client, lease["assignment"], {"value": 1})
    assert answer.status_code == 409, answer.content
    assert not Label.objects.filter(batch=batch).exists()


def test_an_excluded_annotator_is_never_counted_through_the_copy():
    batch = make_batch(n_items=2, per_item=2)
    client = enter(batch, "excluded")
    lease = next_item(client, batch).json()
    batch.participations.update(status="excluded")
    answer = _label(client, lease["assignment"], {"value": 5})
    assert answer.status_code == 201 and answer.json() == {"status": "excluded"}
    assert Label.objects.get(assignment_id=lease["assignment"]).status == "excluded"
