"""Integrity of pairwise judgments (SPEC.md, guarantee 6 and "Measurement validity").

* An attention check of a pairwise batch is shown in a random order per lease, like a
  regular pair; its answer is judged on the canonical value, so a worker who always
  picks "Response 1" fails the checks shown B first, and a gold tie stays a tie.
* A client that reads only the worker JSON API (not the rendered ``html``) is told the
  order shown, and stores every label with the right canonical sign.
"""

import io
import json

import pytest
from django.test import Client

from annotation.models import Label
from annotation.services.batches import change_state, create_batch
from annotation.services.importing import import_items
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.factories import make_participant

pytestmark = pytest.mark.django_db


def pairwise_batch(slug, *, n_regular, checks, per_item=1, **settings):
    """A pairwise batch imported from a file: ``n_regular`` pairs whose A is the good
    answer, and one check per gold in ``checks``."""
    batch = create_batch(slug=slug, kind="pairwise", annotations_per_item=per_item, **settings)
    rows = []
    for index in range(n_regular):
        rows.append(
            {"item_id": f"pair-{index}", "query_id": f"{slug}-q{index}", "query": "Which?",
             "response_a_id": f"{slug}-a{index}", "response_a": f"GOOD answer {index}",
             "response_b_id": f"{slug}-b{index}", "response_b": f"BAD answer {index}"}
        )  # fmt: skip
    for index, gold in enumerate(checks):
        rows.append(
            {"item_id": f"check-{index}", "query_id": f"{slug}-cq{index}", "query": "Check",
             "response_a_id": f"{slug}-ca{index}", "response_a": f"GOOD check {index}",
             "response_b_id": f"{slug}-cb{index}", "response_b": f"BAD check {index}",
             "check": True, "gold": gold}
        )  # fmt: skip
    lines = "".join(json.dumps(row) + "\n" for row in rows)
    import_items(batch, io.BytesIO(lines.encode()), filename="pairs.jsonl")
    return change_state(batch, "live")


def always_response_1(batch, person, limit=200):
    """A spammer: +2 ("Response 1 is much better") on everything, as shown."""
    for _ in range(limit):
        outcome = lease_next_item(batch, person)
        if outcome.assignment is None:
            return outcome
        submit_label(person.annotator, outcome.assignment.pk, 2, 3000)
    raise AssertionError("never ran out of work")


def test_checks_are_shown_in_both_orders_and_judged_on_the_canonical_value():
    batch = pairwise_batch(
        "checks-order", n_regular=20, checks=[[1, 2]] * 20, per_item=3, check_every=1
    )
    for number in range(3):
        always_response_1(batch, make_participant(batch, f"spammer-{number}"))
    checks = list(Label.objects.filter(batch=batch, status="check"))
    assert len(checks) >= 30
    assert {label.shown_order for label in checks} == {"ab", "ba"}
    for label in checks:
        # "Response 1 much better" means A when A was shown first, B otherwise
        assert label.value == (2 if label.shown_order == "ab" else -2)
        assert label.check_passed is (label.shown_order == "ab")


def test_a_spammer_who_always_picks_response_1_is_excluded_by_the_checks():
    batch = pairwise_batch(
        "spam-out", n_regular=60, checks=[[1, 2]] * 30, check_every=1,
        exclude_after_failed_checks=2,
    )  # fmt: skip
    outcomes = [
        always_response_1(batch, make_participant(batch, f"s{number}")) for number in range(4)
    ]
    # each met many checks in random orders: the chance of passing two in a row shown B
    # first is 0, and of meeting fewer than two B-first checks among ~15 negligible
    assert [outcome.reason for outcome in outcomes] == ["excluded"] * 4


def test_a_gold_tie_stays_a_tie_in_either_order():
    batch = pairwise_batch("tie", n_regular=30, checks=[[0]] * 15, check_every=1)
    person = make_participant(batch, "fair")
    for _ in range(100):
        outcome = lease_next_item(batch, person)
        if outcome.assignment is None:
            break
        submit_label(person.annotator, outcome.assignment.pk, 0, 3000)
    checks = Label.objects.filter(batch=batch, status="check")
    assert checks.count() >= 10
    assert set(checks.values_list("check_passed", flat=True)) == {True}
    assert set(checks.values_list("shown_order", flat=True)) == {"ab", "ba"}


def test_a_client_reading_only_the_json_stores_every_label_with_the_right_sign():
    """It shows ``response_1`` first, as the payload says, and prefers the good answer."""
    batch = pairwise_batch("json-client", n_regular=12, checks=[], per_item=4)
    for number in range(4):
        client = Client()
        client.get(f"/work/{batch.slug}/", {"worker": f"script-{number}"})
        csrf = client.cookies["csrftoken"].value
        while True:
            body = client.post(f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=csrf).json()
            if body["assignment"] is None:
                break
            item = body["item"]
            assert item["shown_order"] in ("ab", "ba")
            first = item["response_a"] if item["shown_order"] == "ab" else item["response_b"]
            assert item["response_1"] == first
            assert "GOOD" in item["response_1_html"] or "BAD" in item["response_1_html"]
            value = 2 if item["response_1"].startswith("GOOD") else -2
            answered = client.post(
                f"/api/v1/assignments/{body['assignment']}/label",
                {"value": value, "duration_ms": 2000},
                content_type="application/json",
                HTTP_X_CSRFTOKEN=csrf,
            )
            assert answered.status_code == 201
    counted = Label.objects.filter(batch=batch, status="counted")
    assert counted.count() == 12 * 4
    assert set(counted.values_list("value", flat=True)) == {2}  # A, the good one, always
    assert set(counted.values_list("shown_order", flat=True)) == {"ab", "ba"}
