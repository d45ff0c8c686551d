"""The crowd endpoints of the API: researchers read, admins act, platform failures are
409 / 503 with a reason."""

from decimal import Decimal

import pytest

from tests.crowd.helpers import STUDY, label_items, prolific_batch, prolific_participant
from tests.factories import make_batch
from tests.staff import token_client

pytestmark = pytest.mark.django_db


def study_with_work(prolific):
    batch = prolific_batch(prolific, n_items=4, per_item=2, quota_per_annotator=2)
    person, _ = prolific_participant(batch, prolific, "p1", status="AWAITING REVIEW")
    label_items(batch, person, 2, duration_ms=120_000)
    return batch


def test_researchers_read_the_review_and_only_admins_apply_it(prolific):
    batch = study_with_work(prolific)
    researcher, admin = token_client("researcher"), token_client("admin")
    base = f"/api/v1/batches/{batch.slug}/crowd"
    assert researcher.post(f"{base}/sync", {"platform": "prolific"}).status_code == 403
    assert admin.post(f"{base}/sync", {"platform": "prolific"}).json()["submissions"] == 1
    (proposal,) = researcher.get(f"{base}/review").json()["proposals"]
    assert (proposal["participant_id"], proposal["action"]) == ("p1", "approve")
    assert researcher.post(f"{base}/review", {}).status_code == 403
    assert admin.post(f"{base}/review", {}, content_type="application/json").json()["approved"] == 1
    assert prolific.submissions["sub-p1"]["status"] == "APPROVED"


def test_bonus_preview_then_payment_once(prolific):
    batch = study_with_work(prolific)
    admin = token_client("admin")
    url = f"/api/v1/batches/{batch.slug}/crowd/bonus"
    admin.post(f"/api/v1/batches/{batch.slug}/crowd/sync", {})
    preview = admin.get(url, {"per_item": "0.25"}).json()
    assert (
        preview["total"] == "0.50"
        and preview["run"] is None
        and prolific.writes("/api/v1/sub") == []
    )
    paid = admin.post(url, {"per_item": "0.25"}, content_type="application/json").json()
    assert paid["run"]["state"] == "paid"
    again = admin.post(url, {"per_item": "0.25"}, content_type="application/json").json()
    assert again["run"] is None
    assert prolific.paid_per_participant() == {"p1": Decimal("0.50")}
    assert admin.get(url, {}).status_code == 400  # neither per_item nor top_up_hourly
    for basis in ("per_item", "top_up_hourly"):  # a bad amount names the parameter given
        refused = admin.get(url, {basis: "-5"})
        assert (refused.status_code, refused.json()["field"]) == (400, basis)


def test_places_and_fair_pay(prolific):
    batch = study_with_work(prolific)
    admin = token_client("admin")
    plan = admin.post(f"/api/v1/batches/{batch.slug}/crowd/places").json()
    assert plan["remaining_slots"] == 6 and plan["applied"]["places"] == 1 + 3
    assert prolific.studies[STUDY]["total_available_places"] == 4
    pay = token_client("researcher").get(f"/api/v1/batches/{batch.slug}/crowd/fair-pay").json()
    assert pay["median_active_seconds"] == 240 and pay["verdict"] == "unknown"


def test_platform_failures_answer_409_or_503_with_a_reason(prolific):
    admin = token_client("admin")
    no_study = make_batch()
    answer = admin.post(f"/api/v1/batches/{no_study.slug}/crowd/sync", {})
    assert answer.status_code == 409 and "prolific_study_id" in answer.json()["detail"]
    batch = study_with_work(prolific)
    prolific.fail("GET", f"/api/v1/studies/{STUDY}/submissions/", "500", times=10)
    answer = admin.post(f"/api/v1/batches/{batch.slug}/crowd/sync", {})
    assert answer.status_code == 503 and answer["Retry-After"] == "30"
