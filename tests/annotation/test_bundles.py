"""Bundles (SPEC.md, "Bundles"): a participant rates all the alternatives of one query
together; the bundle's leases are taken in one transaction, never split, given back
when they leave, offered to the next participant as the remaining items only; checks
fall between bundles; positions are random, balanced or as imported; exactly N holds.
Through the services and the worker API, against the real database."""

from collections import Counter, defaultdict
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from annotation.models import Assignment, Item, Label
from annotation.services.batches import update_batch
from annotation.services.labelling import submit_label
from annotation.services.leasing import extend_lease, lease_next_item
from core.errors import Conflict
from tests.annotation.bundled import bundled_batch
from tests.factories import make_participant

pytestmark = pytest.mark.django_db


def bundle_of(assignment) -> str:
    return Item.objects.get(pk=assignment.item_id).bundle


def rate(batch, person, value=3, limit=100):
    """Answer everything handed out until nothing is left; returns the leases in order."""
    leases = []
    for _ in range(limit):
        outcome = lease_next_item(batch, person)
        if outcome.assignment is None:
            return leases, outcome
        leases.append(outcome.assignment)
        submit_label(person.annotator, outcome.assignment.pk, value, 2000)
    raise AssertionError("never ran out of work")


def expire_all(person):
    Assignment.objects.filter(annotator=person.annotator, state="open").update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )


def test_a_participant_gets_one_whole_query_and_rates_it_in_one_sitting():
    batch = bundled_batch("one-query", n_queries=3, per_query=5, per_item=1,
                          bundles_per_participant=1)  # fmt: skip
    person = make_participant(batch, "p1")
    first = lease_next_item(batch, person).assignment
    open_leases = Assignment.objects.filter(annotator=person.annotator, state="open")
    assert open_leases.count() == 5  # the whole bundle, taken at once
    assert len({bundle_of(lease) for lease in open_leases}) == 1
    assert sorted(open_leases.values_list("position_in_bundle", flat=True)) == [0, 1, 2, 3, 4]
    assert first.position_in_bundle == 0
    leases, outcome = rate(batch, person)
    assert [lease.position_in_bundle for lease in leases] == [0, 1, 2, 3, 4]
    assert {bundle_of(lease) for lease in leases} == {bundle_of(first)}
    assert outcome.reason == "quota_reached"  # one bundle per participant
    labels = Label.objects.filter(annotator=person.annotator)
    assert sorted(labels.values_list("position_in_bundle", flat=True)) == [0, 1, 2, 3, 4]


def test_the_worker_api_says_where_in_the_bundle_the_item_is():
    batch = bundled_batch("api-cue", n_queries=2, per_query=4, per_item=1)
    client = Client()
    client.get(f"/work/{batch.slug}/", {"worker": "cue"})
    csrf = client.cookies["csrftoken"].value
    seen = []
    for _ in range(4):
        body = client.post(f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=csrf).json()
        seen.append((body["bundle"]["position"], body["bundle"]["size"], body["item"]["query"]))
        assert body["bundle"]["partial"] is False
        client.post(
            f"/api/v1/assignments/{body['assignment']}/label",
            {"value": 4},
            content_type="application/json",
            HTTP_X_CSRFTOKEN=csrf,
        )
    assert [position for position, _, _ in seen] == [1, 2, 3, 4]
    assert {size for _, size, _ in seen} == {4} and len({query for *_, query in seen}) == 1


def test_with_one_bundle_each_the_progress_counts_the_bundle_not_the_batch():
    # 4 of 4 done at the end, not 4 of the batch's 12 items
    batch = bundled_batch("api-progress", n_queries=3, per_query=4, per_item=1,
                          bundles_per_participant=1)  # fmt: skip
    client = Client()
    client.get(f"/work/{batch.slug}/", {"worker": "progress"})
    csrf = client.cookies["csrftoken"].value
    shown = []
    while (body := client.post(f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=csrf).json())[
        "assignment"
    ]:
        shown.append((body["progress"]["done"], body["progress"]["quota"]))
        client.post(
            f"/api/v1/assignments/{body['assignment']}/label",
            {"value": 4},
            content_type="application/json",
            HTTP_X_CSRFTOKEN=csrf,
        )
    assert shown == [(0, 4), (1, 4), (2, 4), (3, 4)]
    assert body["reason"] == "quota_reached"
    assert (body["progress"]["done"], body["progress"]["quota"]) == (4, 4)
    assert body["progress"]["total_items"] == 12


def test_two_participants_never_split_the_last_slots_of_a_bundle():
    """N = 1: the first takes the whole bundle; the second gets another bundle, not a
    share of the first one's, and is told to wait once every bundle is held."""
    batch = bundled_batch("no-split", n_queries=2, per_query=3, per_item=1)
    first, second = make_participant(batch, "a"), make_participant(batch, "b")
    held_first = lease_next_item(batch, first).assignment
    held_second = lease_next_item(batch, second).assignment
    assert bundle_of(held_first) != bundle_of(held_second)
    third = make_participant(batch, "c")
    assert lease_next_item(batch, third).reason == "wait"
    for item in Item.objects.filter(batch=batch):
        assert item.reserved_count == 1


def test_leaving_mid_bundle_gives_the_rest_to_the_next_participant_as_a_partial_set():
    batch = bundled_batch("partial", n_queries=1, per_query=4, per_item=1)
    leaver = make_participant(batch, "leaver")
    for _ in range(2):
        outcome = lease_next_item(batch, leaver)
        submit_label(leaver.annotator, outcome.assignment.pk, 2, 2000)
    expire_all(leaver)
    # the leaver never meets the query again; the newcomer gets the two items left
    assert lease_next_item(batch, leaver).reason in ("nothing_left_for_you", "drained", "wait")
    newcomer = make_participant(batch, "newcomer")
    leases, outcome = rate(batch, newcomer)
    assert len(leases) == 2 and outcome.reason == "drained"
    answered_by_leaver = set(
        Label.objects.filter(annotator=leaver.annotator).values_list("item_id", flat=True)
    )
    assert not answered_by_leaver & {lease.item_id for lease in leases}
    for item in Item.objects.filter(batch=batch):
        assert item.counted_count == 1 and item.reserved_count == 1


def test_a_bundle_whose_item_is_fully_held_is_not_offered():
    """N = 2: one item of the bundle is held by two live leases (no free slot), so a
    third participant may not take the bundle, even though its other items have room."""
    batch = bundled_batch("blocked", n_queries=1, per_query=3, per_item=2)
    a, b = make_participant(batch, "a"), make_participant(batch, "b")
    lease_next_item(batch, a)
    lease_next_item(batch, b)
    # a answers all; b holds all three: every item has reserved 2 = N
    leases, _ = rate(batch, a)
    c = make_participant(batch, "c")
    assert lease_next_item(batch, c).reason == "wait"
    expire_all(b)
    got, outcome = rate(batch, c)
    assert len(got) == 3 and outcome.reason == "drained"


def test_the_entry_page_waits_before_consent_when_no_whole_bundle_is_free():
    """One item of the only bundle has a free slot, another none: nobody could be leased
    the bundle, so a newcomer waits before consenting (SPEC, "Admission and leaving")
    rather than consenting and then being told to wait."""
    batch = bundled_batch("half-free", n_queries=1, per_query=2, per_item=2)
    update_batch(batch, {"consent_text": "I agree."})
    a, b = make_participant(batch, "a"), make_participant(batch, "b")
    lease_next_item(batch, a)
    lease_next_item(batch, b)  # both items: reserved 2 = N
    first = lease_next_item(batch, a).assignment
    submit_label(a.annotator, first.pk, 3, 2000)  # a answers one item, leaves the other
    expire_all(a)  # its slot comes back: one item free, the other still held by b
    page = Client().get(f"/work/{batch.slug}/", {"worker": "newcomer"})
    assert "X-Wait-Seconds-Left" in page and "being worked on" in page.content.decode()
    assert "I agree." not in page.content.decode()  # no consent form
    assert not batch.participations.filter(annotator__platform_id="newcomer").exists()
    newcomer = make_participant(batch, "newcomer")
    assert lease_next_item(batch, newcomer).reason == "wait"  # what the page foresaw


def test_the_heartbeat_keeps_the_whole_bundle_alive():
    batch = bundled_batch("beat", n_queries=1, per_query=3, per_item=1, lease_seconds=60)
    person = make_participant(batch, "reader")
    first = lease_next_item(batch, person).assignment
    later = timezone.now() + timedelta(seconds=50)
    extend_lease(person.annotator, first.pk, now=later)
    expiries = set(
        Assignment.objects.filter(annotator=person.annotator).values_list("expires_at", flat=True)
    )
    assert len(expiries) == 1 and expiries.pop() > first.expires_at


def test_checks_come_between_bundles_never_inside_one():
    batch = bundled_batch("checks", n_queries=4, per_query=3, per_item=1, checks=3,
                          check_every=1)  # fmt: skip
    person = make_participant(batch, "checked")
    sequence = []
    for _ in range(40):
        outcome = lease_next_item(batch, person)
        if outcome.assignment is None:
            break
        lease = outcome.assignment
        sequence.append("check" if lease.purpose == "check" else bundle_of(lease))
        submit_label(person.annotator, lease.pk, 5, 2000)
    assert "check" in sequence
    # within a run of one bundle's items there is never a check
    runs = [key for index, key in enumerate(sequence) if index == 0 or key != sequence[index - 1]]
    bundles_met = [key for key in runs if key != "check"]
    assert len(bundles_met) == len(set(bundles_met)) == 4  # each bundle in one stretch


def test_with_one_bundle_each_a_due_check_and_repeat_come_when_the_bundle_ends():
    """The study's design (one bundle each) with checks and repeats on: they never come
    inside the bundle, so the ones due are shown when it ends — before, nobody ever met a
    check, and the researcher's quality control silently did nothing."""
    from tests.annotation.test_worker_api import enter, label, next_item

    batch = bundled_batch("one-each", n_queries=3, per_query=4, per_item=1, checks=2,
                          check_every=2, repeat_every=3, bundles_per_participant=1)  # fmt: skip
    browser = enter(batch, "reader")
    purposes, bars = [], []
    while (answer := next_item(browser, batch).json())["assignment"] is not None:
        lease = Assignment.objects.get(pk=answer["assignment"])
        purposes.append(lease.purpose)
        bars.append((answer["progress"]["done"], answer["progress"]["quota"]))
        assert label(browser, answer["assignment"], 5).status_code in (200, 201)
    assert purposes == ["regular"] * 4 + ["check", "repeat"]
    assert bars[-2:] == [(4, 4), (4, 4)]  # the bar stays full after the bundle
    assert answer["reason"] == "quota_reached" and answer["ending"] == "thanks"  # invited
    assert Label.objects.filter(batch=batch, status="check").count() == 1


@pytest.mark.parametrize(("n", "bound"), [(6, 1), (7, 2)])
def test_balanced_order_puts_each_item_at_each_position_evenly_with_leavers(n, bound):
    batch = bundled_batch(f"balanced-{n}", n_queries=1, per_query=3, per_item=n,
                          bundle_order="balanced")  # fmt: skip
    for number in range(40):
        person = make_participant(batch, f"p{number}")
        outcome = lease_next_item(batch, person)
        if outcome.assignment is None:
            break
        answered = 0
        while outcome.assignment is not None:
            if number % 3 == 1 and answered == 1:  # every third participant leaves early
                expire_all(person)
                break
            submit_label(person.annotator, outcome.assignment.pk, 3, 2000)
            answered += 1
            outcome = lease_next_item(batch, person)
    positions = defaultdict(Counter)
    for item_id, place in Label.objects.filter(batch=batch, status="counted").values_list(
        "item_id", "position_in_bundle"
    ):
        positions[item_id][place] += 1
    assert all(item.counted_count == n for item in Item.objects.filter(batch=batch))
    for counts in positions.values():
        per_place = [counts[place] for place in range(3)]
        assert max(per_place) - min(per_place) <= bound, per_place


def test_imported_order_keeps_the_file_order():
    batch = bundled_batch("imported", n_queries=1, per_query=4, per_item=1,
                          bundle_order="imported")  # fmt: skip
    person = make_participant(batch, "reader")
    leases, _ = rate(batch, person)
    items = [Item.objects.get(pk=lease.item_id).position for lease in leases]
    assert items == sorted(items)


def test_bundles_by_a_metadata_key_and_no_change_once_labelled():
    batch = bundled_batch("by-form", n_queries=4, per_query=2, per_item=1,
                          bundle_by="meta:form")  # fmt: skip
    assert set(Item.objects.filter(batch=batch).values_list("bundle", flat=True)) == {
        "form:form-0",
        "form:form-1",
    }
    update_batch(batch, {"bundle_by": "query"})
    assert Item.objects.filter(batch=batch).values("bundle").distinct().count() == 4
    person = make_participant(batch, "one")
    submit_label(person.annotator, lease_next_item(batch, person).assignment.pk, 3, 2000)
    with pytest.raises(Conflict):
        update_batch(batch, {"bundle_by": "none"})


def test_exactly_n_and_nobody_meets_a_query_twice_with_many_participants():
    batch = bundled_batch("many", n_queries=4, per_query=3, per_item=3)
    people = [make_participant(batch, f"w{number}") for number in range(12)]
    for index, person in enumerate(people):
        if index % 4 == 3:  # a quarter leave after one item
            outcome = lease_next_item(batch, person)
            if outcome.assignment is not None:
                submit_label(person.annotator, outcome.assignment.pk, 2, 2000)
            expire_all(person)
            continue
        rate(batch, person)
    for person in people:
        rate(batch, person)
    late = [make_participant(batch, f"late{number}") for number in range(6)]
    for person in late:
        rate(batch, person)
    for item in Item.objects.filter(batch=batch):
        assert item.counted_count == 3
    # one bundle's leases are taken together: one lease time per (person, bundle)
    leased = defaultdict(set)
    for annotator, bundle, at in Assignment.objects.filter(batch=batch).values_list(
        "annotator_id", "item__bundle", "leased_at"
    ):
        leased[(annotator, bundle)].add(at)
    assert all(len(times) == 1 for times in leased.values())


def test_the_bundles_export_holds_each_persons_labels_in_item_order(tmp_path):
    import json

    from django.core.management import call_command

    batch = bundled_batch("bundle-export", n_queries=2, per_query=3, per_item=2)
    people = [make_participant(batch, f"e{number}") for number in range(4)]
    for number, person in enumerate(people):
        rate(batch, person, value=1 + number)
    out = tmp_path / "bundles.jsonl"
    call_command("export_labels", batch.slug, "--layout", "bundles", "-o", str(out))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == Assignment.objects.values("annotator", "item__bundle").distinct().count()
    for row in rows:
        labels = {
            label.item.item_id: (label.value, label.position_in_bundle)
            for label in Label.objects.filter(
                batch=batch, annotator__pseudonym=row["annotator"], item__bundle=row["bundle_id"]
            )
        }
        items = list(
            Item.objects.filter(batch=batch, bundle=row["bundle_id"])
            .order_by("position")
            .values_list("item_id", flat=True)
        )
        assert row["item_ids"] == items
        assert row["values"] == [labels[item][0] for item in items]
        assert row["positions"] == [labels[item][1] for item in items]
        assert row["n_labels"] == len(labels) == 3
    parquet = tmp_path / "bundles.parquet"
    call_command("export_labels", batch.slug, "--layout", "bundles", "-o", str(parquet))
    import pyarrow.parquet as pq

    table = pq.read_table(parquet)
    assert str(table.schema.field("values").type) == "list<element: int64>"
    assert table.num_rows == len(rows)
