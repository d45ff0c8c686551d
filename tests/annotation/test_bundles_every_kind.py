"""Bundles hold for every kind, not only ``absolute`` (SPEC.md, "Bundles": "the
Infinity-Chat design ... for every kind"; guarantees 1, 2 and 6).

For ``pairwise``, ``short_text`` and ``similarity`` batches bundled by query, with
people who finish, people who leave mid-bundle (their leases expire) and late-comers:

* every item ends with exactly N counted labels, and the counters equal the labels;
* nobody meets a query twice: each person's leases of one bundle were all taken in one
  sitting, and nobody holds two leases of one item;
* a bundle is never split: a person's leases of a bundle cover every item of it that was
  unfinished when they took it;
* ``pairwise``: each item is shown A first and B first equally often (|ab − ba| ≤ 1),
  whatever the positions in the bundle.

Items files imported as a researcher would, through the real services and database."""

from collections import Counter, defaultdict
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Item, Label
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.factories import imported_batch, make_participant, pair_columns

pytestmark = pytest.mark.django_db

KINDS = ["pairwise", "short_text", "similarity"]
WORDS = ["red", "blue", "green", "yellow", "purple", "orange", "black", "white"]


def bundle_rows(kind: str, slug: str, n_queries: int, per_query: int) -> list[dict]:
    """``per_query`` items for each of ``n_queries`` queries (one query id each)."""
    rows = []
    for query in range(n_queries):
        for alternative in range(per_query):
            row = {
                "item_id": f"{slug}-q{query}-i{alternative}",
                "query_id": f"{slug}-q{query}",
            }
            if kind == "pairwise":
                row["query"] = f"Question {query}?"
                row.update(
                    pair_columns(
                        (f"{slug}-a{query}-{alternative}", f"A {query}.{alternative}"),
                        (f"{slug}-b{query}-{alternative}", f"B {query}.{alternative}"),
                    )
                )
            elif kind == "short_text":
                row["query"] = f"Name a colour. Reply with one word only. (#{query})"
            else:  # similarity: several candidates compared with one question's reference
                row.update(
                    query=f"What is the capital of country {query}?",
                    reference=f"The capital is City {query}.",
                    candidate=f"Candidate {alternative}: perhaps City {query + alternative}.",
                    question_id=f"genie-{slug}-{query}",
                    feature="capital",
                )
            rows.append(row)
    return rows


def bundled_study(kind: str, *, n_queries=3, per_query=3, per_item=3, **settings):
    slug = f"every-{kind.replace('_', '-')}"
    rows = bundle_rows(kind, slug, n_queries, per_query)
    return imported_batch(kind, rows, slug=slug, per_item=per_item, bundle_by="query", **settings)


def value_for(kind: str, number: int):
    if kind == "pairwise":
        return (-2, -1, 0, 1, 2)[number % 5]
    if kind == "similarity":
        return 1 + number % 4
    return WORDS[number % len(WORDS)]


def expire_all(person):
    Assignment.objects.filter(annotator=person.annotator, state="open").update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )


def rate(batch, person, kind, number, *, leave_after=None, limit=200):
    """``person`` answers what they are handed; with ``leave_after``, they stop after that
    many answers and their open leases run out."""
    answered = 0
    for _ in range(limit):
        if leave_after is not None and answered == leave_after:
            expire_all(person)
            return answered
        outcome = lease_next_item(batch, person)
        if outcome.assignment is None:
            return answered
        submit_label(person.annotator, outcome.assignment.pk, value_for(kind, number), 2500)
        answered += 1
    raise AssertionError("never ran out of work")


def run_study(batch, kind, *, people=12, leave_every=4):
    everyone = [make_participant(batch, f"{kind}-{number}") for number in range(people)]
    for number, person in enumerate(everyone):
        leaving = number % leave_every == leave_every - 1
        rate(batch, person, kind, number, leave_after=1 if leaving else None)
    late = []
    for number in range(people, people + 12):
        person = make_participant(batch, f"{kind}-late-{number}")
        late.append(person)
        rate(batch, person, kind, number)
    return everyone + late


@pytest.mark.parametrize("kind", KINDS)
def test_every_item_ends_with_exactly_n_and_nobody_meets_a_query_twice(kind):
    n = 3
    batch = bundled_study(kind, per_item=n)
    assert Item.objects.filter(batch=batch).values("bundle").distinct().count() == 3
    run_study(batch, kind)

    for item in Item.objects.filter(batch=batch):
        counted = Label.objects.filter(item=item, status="counted")
        held = Assignment.objects.filter(item=item, state="open")
        assert (item.counted_count, counted.count()) == (n, n), item.item_id
        assert item.reserved_count == n and not held.exists(), item.item_id
    assert Label.objects.filter(batch=batch, status="counted").count() == 9 * n

    sittings = defaultdict(set)  # (annotator, bundle) -> lease times
    per_item = Counter()
    for annotator, bundle, item, leased_at in Assignment.objects.filter(batch=batch).values_list(
        "annotator_id", "item__bundle", "item_id", "leased_at"
    ):
        sittings[(annotator, bundle)].add(leased_at)
        per_item[(annotator, item)] += 1
    assert all(len(times) == 1 for times in sittings.values()), "a query met twice"
    assert set(per_item.values()) == {1}


@pytest.mark.parametrize("kind", KINDS)
def test_a_bundle_is_never_split_between_two_people_holding_it(kind):
    """N = 1: a person holds every unfinished item of the bundle they took, so a second
    person gets another bundle, and a third, with every bundle held, is told to wait."""
    batch = bundled_study(kind, n_queries=2, per_query=3, per_item=1)
    first, second, third = (make_participant(batch, f"{kind}-{name}") for name in "abc")
    held_first = lease_next_item(batch, first).assignment
    held_second = lease_next_item(batch, second).assignment
    bundles = {
        person.pk: set(
            Assignment.objects.filter(annotator=person.annotator, state="open").values_list(
                "item__bundle", flat=True
            )
        )
        for person in (first, second)
    }
    assert len(bundles[first.pk]) == len(bundles[second.pk]) == 1
    assert bundles[first.pk] != bundles[second.pk]
    for held, person in ((held_first, first), (held_second, second)):
        bundle = Item.objects.get(pk=held.item_id).bundle
        mine = Assignment.objects.filter(annotator=person.annotator, state="open")
        assert mine.count() == Item.objects.filter(batch=batch, bundle=bundle).count() == 3
    assert lease_next_item(batch, third).reason == "wait"
    # the first leaves after one answer: the third gets the two items left, not more
    submit_label(first.annotator, held_first.pk, value_for(kind, 0), 2500)
    expire_all(first)
    got = []
    while (outcome := lease_next_item(batch, third)).assignment is not None:
        got.append(outcome.assignment)
        submit_label(third.annotator, outcome.assignment.pk, value_for(kind, 2), 2500)
        if len(got) > 10:
            break
    assert len(got) == 2
    assert {Item.objects.get(pk=lease.item_id).bundle for lease in got} == bundles[first.pk]
    assert held_first.item_id not in {lease.item_id for lease in got}


@pytest.mark.parametrize("n", [3, 4, 5])
def test_pairs_in_bundles_are_shown_in_both_orders_evenly(n):
    batch = bundled_study("pairwise", n_queries=2, per_query=4, per_item=n)
    run_study(batch, "pairwise", people=3 * n, leave_every=3)
    for item in Item.objects.filter(batch=batch):
        orders = Counter(
            Label.objects.filter(item=item, status="counted").values_list("shown_order", flat=True)
        )
        assert sum(orders.values()) == n
        assert abs(orders["ab"] - orders["ba"]) <= 1, (item.item_id, orders)
        assert (item.reserved_ab, item.reserved_ba) == (orders["ab"], orders["ba"])
    # positions in the bundle vary, and the order is chosen per item, not per bundle
    positions = set(Label.objects.filter(batch=batch).values_list("position_in_bundle", flat=True))
    assert positions == {0, 1, 2, 3}
