"""The instrument does not touch N, in every kind (SPEC.md, guarantee 7 and "Measurement
validity"):

* attention checks of ``short_text`` and ``similarity`` are handed out among the regular
  items, stored with status ``check`` and ``check_passed`` (judged on the normalised
  answer for ``short_text``: a failed cell never passes), and the annotator is excluded
  at the F-th failed check — not before — through the worker API;
* checks run out: someone who has seen every check gets no more, and nobody sees a check
  twice;
* a repeat shows an item the annotator labelled earlier, never the one just before it,
  and a pair in the same presentation order as the first time (so the same answer on the
  page is stored as the same canonical value);
* "I can't judge this" sent for a lease that expired — and whose slot was leased to
  someone else — gives back no slot (the slot went back once, at expiry), and a pass
  sent before the expiry was swept gives its slot back once: at the end every item has
  ``reserved_count == counted_count == N``.

Through the crowdworker HTTP API (Django's test Client) and the leasing and labelling
services, against the real database.
"""

from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Item, Label, Participation
from annotation.services.labelling import submit_label
from annotation.services.leasing import expire_leases, lease_next_item
from tests.annotation.kinds.http import enter, post_json
from tests.annotation.kinds.studies import item_rows, make_study
from tests.factories import imported_batch, make_batch, make_participant

pytestmark = pytest.mark.django_db

TEXT_KINDS = ["short_text", "similarity"]
ALL_KINDS = ["absolute", "pairwise", "short_text", "similarity"]
# what a careful worker sends: to a regular item, to a check (its gold, as a person would
# type it), and a wrong answer to a check (short_text: a failed cell, then a wrong word)
REGULAR = {"absolute": 3, "pairwise": 1, "short_text": "red", "similarity": 2}
GOLD_ANSWER = {"short_text": "Blue.", "similarity": 4}
WRONG_ANSWERS = {"short_text": ["okay", "green"], "similarity": [1, 2]}


def checked_study(kind, slug, *, n_regular, n_checks, per_item, **settings):
    """A batch of ``kind`` imported from an items file of ``n_regular`` regular items and
    ``n_checks`` attention checks (item ids ``check-<index>``; gold ``blue`` / ``4``)."""
    rows = item_rows(kind, n_regular, slug)
    for index, row in enumerate(item_rows(kind, n_checks, f"{slug}-chk")):
        row.update(item_id=f"check-{index}", check=True)
        if kind == "short_text":
            row.update(query=f"Type the word blue. (#{index})", gold="blue")
        else:
            row.update(candidate=row["reference"], gold=4)
        rows.append(row)
    return imported_batch(
        kind, rows, slug=slug, per_item=per_item, title=f"Study {slug}", **settings
    )


def is_check(item_id: str) -> bool:
    return item_id.startswith("check-")


def next_lease(client, batch) -> dict:
    response = post_json(client, f"/api/v1/work/{batch.slug}/next", {})
    assert response.status_code == 200, response.content
    return response.json()


def send(client, assignment: str, body: dict):
    response = post_json(client, f"/api/v1/assignments/{assignment}/label", body)
    assert response.status_code == 201, response.content
    return response.json()


def work_through(client, batch, answer_of, limit=60) -> tuple[list[str], dict]:
    """Answer ``answer_of(item_id)`` to every lease until none comes; returns the item ids
    met, in order, and the last answer of ``next``."""
    met = []
    for _ in range(limit):
        body = next_lease(client, batch)
        if body["assignment"] is None:
            return met, body
        item_id = body["item"]["item_id"]
        met.append(item_id)
        send(client, body["assignment"], {"value": answer_of(item_id), "duration_ms": 3000})
    raise AssertionError("the worker never ran out of work")


def participation(batch, worker) -> Participation:
    return Participation.objects.get(batch=batch, annotator__platform_id=worker)


def assert_exactly_n(batch, n) -> None:
    for item in Item.objects.filter(batch=batch):
        counted = Label.objects.filter(item=item, status="counted").count()
        held = Assignment.objects.filter(item=item, state="open", purpose="regular").count()
        expected = 0 if item.is_check else n
        assert (counted, item.counted_count) == (expected, expected), item.item_id
        assert item.reserved_count == item.counted_count + held, item.item_id


# --------------------------------------------------------------------------- checks


@pytest.mark.parametrize("kind", TEXT_KINDS)
def test_checks_are_handed_out_stored_and_exclude_at_the_f_th_failure(kind):
    batch = checked_study(
        kind, f"chk-{kind.replace('_', '-')}", n_regular=8, n_checks=3, per_item=2,
        check_every=2, exclude_after_failed_checks=2,
    )  # fmt: skip
    careful = enter(batch, "careful")
    met, last = work_through(
        careful, batch, lambda item: GOLD_ANSWER[kind] if is_check(item) else REGULAR[kind]
    )
    checks_met = [item for item in met if is_check(item)]
    assert len(checks_met) >= 2 and len(checks_met) == len(set(checks_met)), met
    assert not is_check(met[0]) and not is_check(met[-1])  # among the regular items
    assert last["reason"] in ("drained", "nothing_left_for_you")
    mine = Label.objects.filter(annotator=participation(batch, "careful").annotator)
    stored = mine.filter(item__is_check=True)
    assert sorted(stored.values_list("item__item_id", flat=True)) == sorted(checks_met)
    assert set(stored.values_list("status", "check_passed")) == {("check", True)}
    if kind == "short_text":  # kept as typed, judged on the normalised answer
        assert set(stored.values_list("text", "answer")) == {("Blue.", "blue")}
    assert set(mine.filter(item__is_check=False).values_list("status", flat=True)) == {"counted"}

    spammer = enter(batch, "spammer")
    wrong = iter(WRONG_ANSWERS[kind])
    seen, failures = [], 0
    while True:
        body = next_lease(spammer, batch)
        if body["assignment"] is None:
            break
        item_id = body["item"]["item_id"]
        seen.append(item_id)
        value = next(wrong) if is_check(item_id) else REGULAR[kind]
        send(spammer, body["assignment"], {"value": value, "duration_ms": 3000})
        failures += is_check(item_id)
        person = participation(batch, "spammer")
        # excluded at the second failed check, not at the first
        assert person.status == ("excluded" if failures >= 2 else "active"), (seen, failures)
    assert failures == 2 and body["reason"] == "excluded", body
    assert body["ending"] == "screened_out"
    person = participation(batch, "spammer")
    assert person.excluded_automatically
    assert "failed 2 of 2 attention checks" in person.exclusion_reason
    theirs = Label.objects.filter(annotator=person.annotator)
    assert list(theirs.filter(status="check").values_list("check_passed", flat=True)) == [
        False,
        False,
    ]
    assert set(theirs.filter(item__is_check=False).values_list("status", flat=True)) == {"excluded"}
    # others bring every regular item to exactly N; the checks hold no slot
    filler = enter(batch, "filler")
    work_through(filler, batch, lambda item: GOLD_ANSWER[kind] if is_check(item) else REGULAR[kind])
    for item in Item.objects.filter(batch=batch, is_check=True):
        assert (item.reserved_count, item.counted_count, item.target) == (0, 0, 0)
        assert not item.labels.exclude(status="check").exists()
    assert_exactly_n(batch, 2)


@pytest.mark.parametrize("kind", TEXT_KINDS)
def test_someone_who_has_seen_every_check_gets_no_more(kind):
    batch = checked_study(
        kind, f"out-{kind.replace('_', '-')}", n_regular=10, n_checks=2, per_item=2,
        check_every=1,
    )  # fmt: skip
    checks = set(Item.objects.filter(batch=batch, is_check=True).values_list("pk", flat=True))
    for worker in ("first", "second"):
        person = make_participant(batch, worker)
        purposes = []
        while (outcome := lease_next_item(batch, person)).assignment is not None:
            lease = outcome.assignment
            purposes.append(lease.purpose)
            value = 4 if kind == "similarity" else ("blue" if lease.item_id in checks else "x")
            submit_label(person.annotator, lease.pk, value, 2000)
        check_leases = Assignment.objects.filter(annotator=person.annotator, purpose="check")
        # a check was due after every regular item, but there are only two: each once
        assert sorted(check_leases.values_list("item_id", flat=True)) == sorted(checks)
        assert purposes.count("regular") == 10
        last_check = max(i for i, purpose in enumerate(purposes) if purpose == "check")
        assert last_check == 3, purposes  # R C R C, then regular items only
        assert set(purposes[last_check + 1 :]) == {"regular"}
    twice = Counter(
        Assignment.objects.filter(batch=batch, purpose="check").values_list(
            "annotator_id", "item_id"
        )
    )
    assert set(twice.values()) == {1}
    assert_exactly_n(batch, 2)


# --------------------------------------------------------------------------- repeats


def study_of(kind, slug, **settings):
    if kind in ("absolute", "pairwise"):
        return make_batch(kind=kind, slug=slug, **settings)
    return make_study(kind, slug=slug, **settings)


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_a_repeat_shows_an_earlier_item_not_the_last_one_in_the_same_order(kind):
    batch = study_of(kind, f"rep-{kind.replace('_', '-')}", n_items=12, per_item=1, repeat_every=2)
    client = enter(batch, "repeater")
    shown = []  # (assignment, item_id, what the page showed first), in order
    while (body := next_lease(client, batch))["assignment"] is not None:
        item = body["item"]
        first = item.get("response_1") if kind == "pairwise" else None
        shown.append((body["assignment"], item["item_id"], first))
        # the same answer on the page each time: +1 = "Response 1 is slightly better"
        send(client, body["assignment"], {"value": REGULAR[kind], "duration_ms": 2500})
    purposes = dict(Assignment.objects.filter(batch=batch).values_list("pk", "purpose"))
    kinds_of = [purposes[__import__("uuid").UUID(a)] for a, _, _ in shown]
    assert kinds_of.count("regular") == 12
    repeats = [index for index, purpose in enumerate(kinds_of) if purpose == "repeat"]
    assert len(repeats) >= 3, kinds_of
    labels = {
        str(label.assignment_id): label
        for label in Label.objects.filter(batch=batch).select_related("assignment")
    }
    for index in repeats:
        assignment, item_id, first = shown[index]
        earlier = [
            position
            for position in range(index)
            if shown[position][1] == item_id and kinds_of[position] == "regular"
        ]
        assert earlier, f"repeat of {item_id}, never labelled before"
        before = [p for p in range(index) if kinds_of[p] == "regular"][-1]
        assert shown[index - 1][1] != item_id and shown[before][1] != item_id, (index, shown)
        original = labels[shown[earlier[0]][0]]
        repeat = labels[assignment]
        assert repeat.status == "repeat" and original.status == "counted"
        assert repeat.shown_order == original.shown_order
        assert first == shown[earlier[0]][2]  # the same response shown first
        # the same answer on the page is the same stored value
        assert (repeat.value, repeat.text) == (original.value, original.text)
    if kind == "pairwise":
        orders = {labels[shown[i][0]].shown_order for i in repeats}
        first_orders = set(Label.objects.filter(batch=batch, status="counted").values_list(
            "shown_order", flat=True))  # fmt: skip
        assert first_orders == {"ab", "ba"} and orders <= first_orders
    assert_exactly_n(batch, 1)


# --------------------------------------------------------------------------- passes


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_a_pass_on_a_repeat_is_stored(kind):
    """A repeat looks like any item, so a worker may answer it "I can't judge this": the
    pass is stored, never counted, and the first label of the item stays counted."""
    batch = study_of(
        kind, f"rpass-{kind.replace('_', '-')}", n_items=6, per_item=1, repeat_every=2,
        allow_cant_judge=True,
    )  # fmt: skip
    client = enter(batch, "repeat-passer")
    met = set()
    for _ in range(20):
        body = next_lease(client, batch)
        assert body["assignment"] is not None, "no repeat was handed out"
        item_id = body["item"]["item_id"]
        if item_id in met:
            break
        met.add(item_id)
        send(client, body["assignment"], {"value": REGULAR[kind], "duration_ms": 2000})
    assert Assignment.objects.get(pk=body["assignment"]).purpose == "repeat"
    answer = post_json(
        client, f"/api/v1/assignments/{body['assignment']}/label", {"cant_judge": True}
    )
    assert answer.status_code == 201 and answer.json() == {"status": "cant_judge"}
    first = Label.objects.get(item__item_id=item_id, item__batch=batch, status="counted")
    passed = Label.objects.get(assignment_id=body["assignment"])
    # kept as the repeat, without a value (the item's one label per annotator is the first)
    assert (passed.status, passed.value, passed.text) == ("repeat", None, None)
    assert first.annotator_id == passed.annotator_id
    retried = post_json(
        client, f"/api/v1/assignments/{body['assignment']}/label", {"cant_judge": True}
    )
    assert retried.status_code == 200 and retried.json() == {"status": "cant_judge"}
    item = Item.objects.get(batch=batch, item_id=item_id)
    assert item.counted_count == item.reserved_count == 1


def value_of(kind):
    return REGULAR[kind]


def assert_counters_match(batch, n) -> None:
    assert_exactly_n(batch, n)
    for item in Item.objects.filter(batch=batch):
        assert item.reserved_count == item.counted_count == n, item.item_id
        if batch.task_kind.comparison:
            orders = Counter(
                item.labels.filter(status="counted").values_list("shown_order", flat=True)
            )
            assert (item.reserved_ab, item.reserved_ba) == (orders["ab"], orders["ba"])


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_a_pass_after_the_slot_was_leased_again_frees_nothing(kind):
    batch = study_of(
        kind, f"pass-{kind.replace('_', '-')}", n_items=1, per_item=2, allow_cant_judge=True,
        lease_seconds=30,
    )  # fmt: skip
    start = timezone.now()
    passer, late = make_participant(batch, "passer"), make_participant(batch, "late")
    old = [lease_next_item(batch, p, start).assignment for p in (passer, late)]
    assert all(lease is not None for lease in old)
    later = start + timedelta(seconds=31)
    expire_leases(batch, now=later)
    takers = [make_participant(batch, name) for name in ("taker-1", "taker-2")]
    new = [lease_next_item(batch, p, later).assignment for p in takers]
    assert all(lease is not None for lease in new)
    item = Item.objects.get(batch=batch)
    assert item.reserved_count == 2
    # the first holder passes on the lease that expired: the slot went back at expiry
    outcome = submit_label(passer.annotator, old[0].pk, None, 2000, later, cant_judge=True)
    assert outcome.status == "cant_judge"
    again = submit_label(passer.annotator, old[0].pk, None, 2000, later, cant_judge=True)
    assert again.status == "cant_judge" and not again.created
    item.refresh_from_db()
    assert item.reserved_count == 2, "the pass gave back a slot another worker holds"
    # the other late answer finds no room: surplus
    assert submit_label(late.annotator, old[1].pk, value_of(kind), 2000, later).status == (
        "surplus"
    )
    for person, lease in zip(takers, new, strict=True):
        assert submit_label(person.annotator, lease.pk, value_of(kind), 2000, later).status == (
            "counted"
        )
    assert lease_next_item(batch, make_participant(batch), later).assignment is None
    assert_counters_match(batch, 2)


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_a_pass_before_the_expiry_was_swept_gives_its_slot_back_once(kind):
    batch = study_of(
        kind, f"sweep-{kind.replace('_', '-')}", n_items=1, per_item=2, allow_cant_judge=True,
        lease_seconds=30,
    )  # fmt: skip
    start = timezone.now()
    passer, holder = make_participant(batch, "passer"), make_participant(batch, "holder")
    mine = lease_next_item(batch, passer, start).assignment
    held = lease_next_item(batch, holder, start).assignment
    later = start + timedelta(seconds=31)
    # past its expiry, not swept yet: the pass gives the slot back itself
    assert submit_label(passer.annotator, mine.pk, None, 2000, later, cant_judge=True).status == (
        "cant_judge"
    )
    item = Item.objects.get(batch=batch)
    assert item.reserved_count == 1  # the holder's lease, expired too, is not yet swept
    expire_leases(batch, now=later + timedelta(seconds=1))  # the holder's slot goes back
    item.refresh_from_db()
    assert item.reserved_count == 0
    fillers = [make_participant(batch, name) for name in ("fill-1", "fill-2")]
    for person in fillers:
        lease = lease_next_item(batch, person, later + timedelta(seconds=2)).assignment
        submit_label(person.annotator, lease.pk, value_of(kind), 2000, later)
    # the holder's late answer: the item is full, so surplus
    assert submit_label(holder.annotator, held.pk, value_of(kind), 2000, later).status == (
        "surplus"
    )
    assert_counters_match(batch, 2)
    assert Label.objects.filter(batch=batch, status="cant_judge").count() == 1
