"""The crowdworker's requests in one statement each, from this process's copy of the
batch (``annotation.services.known_batches``): a request for work reads the participant's
state and takes their lease together (``work_state.lease_with_work_state``), a label is
written without reading its lease (``labelling._submit_to_known_batch``). The copy is
never used once the batch row has changed, and what is handed out and stored is what
the reading paths hand out and store — checks, repeats, expiry and all."""

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Assignment, Batch, Item, Label
from annotation.services import known_batches
from annotation.services.batches import change_state
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


def test_a_pair_is_stored_in_the_order_its_lease_showed():
    """The statement gets the value for both presentation orders and keeps the one of
    the lease; the stored label is the canonical one the reading path would store. Two
    people on one pair see it in the two orders (the second gets the order with fewer
    slots)."""
    batch = make_batch(kind="pairwise", n_items=1, per_item=2)
    shown = {}
    for worker in ("first", "second"):
        client = enter(batch, f"pair-{worker}")
        next_item(client, batch)  # reads the batch (known from now on); the same lease again:
        lease = next_item(client, batch).json()
        with CaptureQueriesContext(connection) as captured:
            answer = _label(client, lease["assignment"], {"value": 2})
        assert answer.status_code == 201
        assert len(_writes(captured)) == 1
        stored = Label.objects.get(assignment_id=lease["assignment"])
        assert stored.shown_order == lease["item"]["shown_order"]
        shown[stored.shown_order] = stored.value
    assert shown == {"ab": 2, "ba": -2}


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


def _cycle(client, batch, value=3):
    """One request for work and its label; the lease's body, or ``None`` without work."""
    lease = next_item(client, batch).json()
    if lease["assignment"] is None:
        return None
    assert _label(client, lease["assignment"], {"value": value}).status_code == 201
    return lease


def test_a_request_for_work_takes_one_statement_once_the_batch_is_known():
    batch = make_batch(n_items=4, per_item=2)
    client = enter(batch, "next-at-once")
    _cycle(client, batch)  # the first request reads the batch
    with CaptureQueriesContext(connection) as captured:
        lease = next_item(client, batch).json()
    assert lease["assignment"]
    statements = [s for s in _writes(captured) if 'LEFT JOIN "annotation_response"' not in s]
    assert len(statements) == 1 and "leased AS (" in statements[0], statements
    assignment = Assignment.objects.get(pk=lease["assignment"])
    assert (assignment.state, assignment.purpose) == ("open", "regular")
    assert Item.objects.get(pk=assignment.item_id).reserved_count == 1


def test_attention_checks_come_when_due_through_the_api():
    """A participant due for an attention check is never handed a regular item instead:
    the one statement leases only when nothing but a regular item is due."""
    batch = make_batch(n_items=12, per_item=1, check_every=2)
    checks = list(Item.objects.filter(batch=batch).order_by("position")[:4])
    Item.objects.filter(pk__in=[item.pk for item in checks]).update(
        is_check=True, gold=[5], target=0
    )
    client = enter(batch, "checked")
    handed = []
    for _ in range(20):
        lease = _cycle(client, batch, value=5)
        if lease is None:
            break
        handed.append(Assignment.objects.get(pk=lease["assignment"]).purpose)
    regular = handed.count("regular")
    assert regular == 8, handed
    # one check about every two regular items (the due points are jittered)
    assert handed.count("check") >= 3, handed


def test_a_paused_batch_hands_out_nothing_though_the_process_knew_it_live():
    batch = make_batch(n_items=4, per_item=2)
    client = enter(batch, "paused-known")
    _cycle(client, batch)
    change_state(Batch.objects.get(pk=batch.pk), "paused")
    refused = next_item(client, batch)
    assert refused.status_code == 403 and refused.json()["state"] == "paused"
    assert Assignment.objects.filter(batch=batch).count() == 1


def test_expired_leases_are_given_back_before_the_next_lease():
    """Every request for work first gives back the batch's expired leases, also when it
    takes its own in one statement."""
    batch = make_batch(n_items=3, per_item=1)
    first, second = enter(batch, "leaves"), enter(batch, "comes")
    _cycle(second, batch)  # the process knows the batch
    gone = next_item(first, batch).json()["assignment"]
    Assignment.objects.filter(pk=gone).update(expires_at=timezone.now() - timedelta(minutes=1))
    lease = next_item(second, batch).json()
    assert lease["assignment"]
    assert Assignment.objects.get(pk=gone).state == "expired"


def test_a_label_to_a_batch_paused_since_its_lease_is_still_counted():
    """Nothing a worker did is thrown away: the pause changed the batch row, so the
    label is judged by the batch as it is now — which still accepts it."""
    batch = make_batch(n_items=2, per_item=2)
    client = enter(batch, "paused-after-lease")
    lease = next_item(client, batch).json()
    change_state(Batch.objects.get(pk=batch.pk), "paused")
    answer = _label(client, lease["assignment"], {"value": 4})
    assert answer.status_code == 201 and answer.json() == {"status": "counted"}
    assert Label.objects.get(assignment_id=lease["assignment"]).value == 4
