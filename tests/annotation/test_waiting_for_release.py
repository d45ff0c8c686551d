"""Nobody is turned away while work remains (SPEC.md, "Admission and leaving").

The probe: N = 1 and two items; one worker answers one item, another walks away holding
the last lease. A newcomer who arrives while that lease is live must be asked to wait
(never told "full"), one who arrives after it expired must get the item — even though
nothing asked for work in between — and one who waited as long as the batch allows is
told so, with the right ending for their platform. Through real HTTP requests.
"""

import time
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from annotation.models import Assignment, Participation
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from annotation.views.worker import WAITING
from tests.factories import make_batch, make_participant

pytestmark = pytest.mark.django_db


def ready_participant(batch, worker_id):
    """A worker who joined and consented (when the batch asks for consent)."""
    person = make_participant(batch, worker_id)
    person.consented_at = timezone.now()
    person.save(update_fields=["consented_at"])
    return person


def abandon_last_lease(batch):
    """One worker labels item 0, another takes the last item and walks away."""
    done = ready_participant(batch, "done")
    outcome = lease_next_item(batch, done)
    submit_label(done.annotator, outcome.assignment.pk, 3, 2000)
    walker = ready_participant(batch, "walker")
    held = lease_next_item(batch, walker).assignment
    assert held is not None
    return held


def expire(assignment):
    """The lease's time runs out (as if its lease time had passed)."""
    Assignment.objects.filter(pk=assignment.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )


def arrive(batch, client=None, **params):
    client = client or Client()
    return client, client.get(f"/work/{batch.slug}/", params or {"PROLIFIC_PID": "newcomer"})


def test_a_newcomer_waits_while_the_last_slot_is_held_and_is_not_joined():
    batch = make_batch(n_items=2, per_item=1, lease_seconds=60)
    abandon_last_lease(batch)
    _, page = arrive(batch)
    html = page.content.decode()
    assert page.status_code == 200 and "X-Wait-Seconds-Left" in page
    assert 5 <= int(page["Retry-After"]) <= 15
    assert 0 < int(page["X-Wait-Seconds-Left"]) <= batch.wait_for_release_seconds
    assert "being worked on" in html and "This study is full" not in html
    assert "return the study" not in html
    assert not Participation.objects.filter(annotator__platform_id="newcomer").exists()


def test_a_newcomer_after_the_lease_expired_gets_the_item_though_nothing_asked_for_work():
    batch = make_batch(n_items=2, per_item=1, lease_seconds=60, consent_text="I agree.")
    held = abandon_last_lease(batch)
    expire(held)
    client, page = arrive(batch)
    assert page.status_code == 200
    assert "I agree" in page.content.decode()  # the consent form: they may start
    client.post(f"/work/{batch.slug}/consent")
    body = client.post(
        f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value
    ).json()
    assert body["assignment"] is not None and body["item"]["item_id"] == "item-1"


def test_the_waiting_page_lets_the_newcomer_in_once_the_slot_comes_back():
    batch = make_batch(n_items=2, per_item=1, lease_seconds=60)
    held = abandon_last_lease(batch)
    client, first = arrive(batch)
    assert "X-Wait-Seconds-Left" in first
    expire(held)
    _, second = arrive(batch, client)  # the page's own poll, in the same browser
    assert second.status_code == 200
    assert Participation.objects.filter(annotator__platform_id="newcomer").exists()
    assert batch.slug not in client.session.get(WAITING, {})


def waited_since(client, batch, seconds_ago):
    session = client.session
    now = time.time()
    session[WAITING] = {batch.slug: (now - seconds_ago, now - 1)}
    session.save()


@pytest.mark.parametrize(
    ("params", "returns"),
    [
        ({"PROLIFIC_PID": "late"}, "return the study"),
        ({"workerId": "late", "assignmentId": "A1", "hitId": "H"}, "return the HIT"),
        ({"worker": "late"}, None),
    ],
)
def test_after_waiting_as_long_as_the_batch_allows_the_page_says_no_place_came_back(
    params, returns
):
    batch = make_batch(n_items=2, per_item=1, lease_seconds=600, wait_for_release_seconds=30)
    abandon_last_lease(batch)
    client, first = arrive(batch, **params)
    assert "X-Wait-Seconds-Left" in first
    waited_since(client, batch, 31)
    _, page = arrive(batch, client, **params)
    html = page.content.decode()
    assert page.status_code == 200
    assert "No place came back in time" in html
    assert batch.completion_code not in html
    if returns:
        assert returns in html
    else:  # an invitation-link worker has no study to return
        assert "return the" not in html
    assert 'href="#"' not in html


def test_a_batch_that_does_not_wait_says_full_at_once():
    batch = make_batch(n_items=2, per_item=1, lease_seconds=600, wait_for_release_seconds=0)
    abandon_last_lease(batch)
    _, page = arrive(batch)
    assert page.status_code == 200 and "No place came back in time" in page.content.decode()


def test_a_complete_batch_is_full_without_waiting():
    batch = make_batch(n_items=1, per_item=1)
    done = make_participant(batch, "done")
    submit_label(done.annotator, lease_next_item(batch, done).assignment.pk, 3, 2000)
    _, page = arrive(batch)
    assert page.status_code == 200 and "This study is full" in page.content.decode()


def test_a_wait_forgotten_long_ago_starts_again():
    batch = make_batch(n_items=2, per_item=1, lease_seconds=600, wait_for_release_seconds=30)
    abandon_last_lease(batch)
    client, _ = arrive(batch)
    session = client.session
    session[WAITING] = {batch.slug: (time.time() - 3600, time.time() - 3000)}
    session.save()
    _, page = arrive(batch, client)
    assert (
        page.status_code == 200 and "X-Wait-Seconds-Left" in page
    )  # a new wait, not "no place came back"


def test_the_concurrency_cap_asks_newcomers_to_wait_too():
    batch = make_batch(n_items=4, per_item=2, max_concurrent_annotators=1, lease_seconds=60)
    holder = make_participant(batch, "holder")
    assert lease_next_item(batch, holder).assignment is not None
    _, page = arrive(batch)
    assert page.status_code == 200 and "X-Wait-Seconds-Left" in page and page["Retry-After"]
    assert "as many people working on it as it can take" in page.content.decode()


def test_an_existing_worker_is_told_to_wait_not_that_nothing_is_left():
    """Their own lease of item 0 expired (its slot is free again, but never theirs) and
    item 1 is held by someone else: item 1 may still come back to them."""
    batch = make_batch(n_items=2, per_item=1, lease_seconds=60)
    worker, other = make_participant(batch, "worker"), make_participant(batch, "other")
    first = lease_next_item(batch, worker).assignment
    second = lease_next_item(batch, other).assignment
    assert first.item_id != second.item_id
    expire(first)
    outcome = lease_next_item(batch, worker)
    assert outcome.reason == "wait" and outcome.retry_after
    expire(second)
    assert lease_next_item(batch, worker).assignment.item_id == second.item_id


def test_the_next_answer_while_waiting_carries_the_wait_and_the_ending():
    batch = make_batch(n_items=2, per_item=1, lease_seconds=60, completion_url="https://x.org/d")
    client = Client()
    client.get(f"/work/{batch.slug}/", {"PROLIFIC_PID": "p"})
    csrf = client.cookies["csrftoken"].value
    body = client.post(f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=csrf).json()
    client.post(
        f"/api/v1/assignments/{body['assignment']}/label",
        {"value": 4},
        content_type="application/json",
        HTTP_X_CSRFTOKEN=csrf,
    )
    holder = make_participant(batch, "holder")
    assert lease_next_item(batch, holder).assignment is not None
    body = client.post(f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=csrf).json()
    assert body["reason"] == "wait" and body["wait_seconds"] == batch.wait_for_release_seconds
    # what the page shows if nothing comes back in time: they did an item, so their code
    assert body["ending"] == "completed" and body["completion_code"] == batch.completion_code
