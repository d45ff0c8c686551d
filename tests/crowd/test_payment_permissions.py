"""Least privilege on the money paths (SPEC.md, guarantee 5 and "Crowd platforms"):
paying bonuses (``POST /api/v1/batches/<slug>/crowd/bonus``) and setting a study's
places (``POST …/crowd/places``) are for admins only. A researcher's token and a
crowdworker's session — even the session of the participant who would be paid — are
refused with ``403``, and nothing reaches Prolific, the ledger or the audit trail.
After an admin's paid run, the batch's history (``GET …/history``) holds the run's plan
and its payment, with what was planned and who did it.

Through the HTTP API with Django's test client, against the real database and the fake
Prolific (``tests/crowd/fake_prolific.py``)."""

from decimal import Decimal

import pytest
from django.test import Client

from core.audit import history
from crowd.models import BonusRun
from tests.crowd.helpers import STUDY, label_items, prolific_batch, prolific_participant
from tests.staff import token_client

pytestmark = pytest.mark.django_db

BONUS = {"per_item": "0.25"}
PLACES_BEFORE = 10  # the fake study's places when it is added


def study_with_work(prolific):
    batch = prolific_batch(prolific, n_items=4, per_item=2, quota_per_annotator=2)
    person, submission = prolific_participant(batch, prolific, "p1", status="AWAITING REVIEW")
    label_items(batch, person, 2, duration_ms=120_000)
    return batch, submission


def worker_session(batch, submission) -> tuple[Client, str]:
    """The browser session of the participant ``p1``, opened by their Prolific link."""
    client = Client()
    entry = client.get(
        f"/work/{batch.slug}/",
        {"PROLIFIC_PID": "p1", "STUDY_ID": STUDY, "SESSION_ID": submission},
    )
    assert entry.status_code == 200, entry.content[:300]
    return client, client.cookies["csrftoken"].value


def post_json(client, path, body=None, csrf=None):
    headers = {"HTTP_X_CSRFTOKEN": csrf} if csrf else {}
    return client.post(path, body or {}, content_type="application/json", **headers)


def assert_nothing_happened(batch, prolific):
    assert prolific.calls == []  # not even a sync was sent
    assert prolific.payments == [] and prolific.bulk_bonuses == {}
    assert prolific.studies[STUDY]["total_available_places"] == PLACES_BEFORE
    assert not BonusRun.objects.exists()
    actions = list(history(batch).values_list("action", flat=True))
    assert not [action for action in actions if action.startswith("prolific.")], actions


@pytest.mark.parametrize("path", ["bonus", "places"])
def test_a_researcher_token_is_refused_and_nothing_is_sent(prolific, path):
    batch, _ = study_with_work(prolific)
    researcher = token_client("researcher")
    url = f"/api/v1/batches/{batch.slug}/crowd/{path}"
    refused = post_json(researcher, url, BONUS if path == "bonus" else None)
    assert refused.status_code == 403, refused.content
    assert "detail" in refused.json()
    # researchers still read the plan: the refusal is about acting, not about the batch
    assert researcher.get(url, BONUS if path == "bonus" else {}).status_code == 200
    assert_nothing_happened(batch, prolific)


@pytest.mark.parametrize("path", ["bonus", "places"])
def test_a_crowdworker_session_is_refused_even_the_one_who_would_be_paid(prolific, path):
    batch, submission = study_with_work(prolific)
    worker, csrf = worker_session(batch, submission)
    url = f"/api/v1/batches/{batch.slug}/crowd/{path}"
    refused = post_json(worker, url, BONUS if path == "bonus" else None, csrf=csrf)
    assert refused.status_code == 403, refused.content
    assert refused["Content-Type"].startswith("application/json")
    assert worker.get(url, BONUS if path == "bonus" else {}).status_code == 403
    assert_nothing_happened(batch, prolific)


def test_an_admins_paid_run_is_in_the_batch_history_with_its_plan(prolific):
    batch, _ = study_with_work(prolific)
    admin = token_client("admin", "paying-admin")
    paid = post_json(admin, f"/api/v1/batches/{batch.slug}/crowd/bonus", BONUS)
    assert paid.status_code == 200, paid.content
    run = paid.json()["run"]
    assert run["state"] == "paid"
    assert prolific.paid_per_participant() == {"p1": Decimal("0.50")}

    events = token_client("researcher").get(f"/api/v1/batches/{batch.slug}/history").json()
    bonus_events = [event for event in events if event["action"].startswith("prolific.bonus.")]
    actions = [event["action"] for event in bonus_events]
    assert "prolific.bonus.plan" in actions and "prolific.bonus.paid" in actions
    # newest first: the payment after the plan
    assert actions.index("prolific.bonus.paid") < actions.index("prolific.bonus.plan")
    plan = next(event for event in bonus_events if event["action"] == "prolific.bonus.plan")
    done = next(event for event in bonus_events if event["action"] == "prolific.bonus.paid")
    assert plan["changes"]["run"] == done["changes"]["run"] == run["id"]
    assert plan["changes"]["basis"] == "per_item"
    assert Decimal(plan["changes"]["rate"]) == Decimal("0.25")
    assert Decimal(plan["changes"]["total"]) == Decimal("0.50")
    assert plan["changes"]["participants"] == 1
    assert done["changes"]["state"] == ["paying", "paid"]
    assert {plan["actor"], done["actor"]} == {"paying-admin"}

    # a repeated request pays nothing more and plans nothing more
    again = post_json(admin, f"/api/v1/batches/{batch.slug}/crowd/bonus", BONUS)
    assert again.status_code == 200 and again.json()["run"] is None
    assert history(batch).filter(action="prolific.bonus.plan").count() == 1
    assert history(batch).filter(action="prolific.bonus.paid").count() == 1
