"""Excluding and re-including an annotator in the kinds and designs that
``test_exclusion.py`` does not cover (SPEC.md, guarantees 1, 3, 6 and 7).

* pairwise: each presentation order holds at most ceil(N/2) of an item's slots, also
  for labels that count again when their annotator is re-included (otherwise they become
  ``surplus``), and the item counters (``reserved_count``, ``counted_count``,
  ``reserved_ab``, ``reserved_ba``) always equal the labels and open leases they count;
* a bundled batch: someone excluded after one item of their bundle gives back every
  slot of it, and the others still bring every item to exactly N;
* ``short_text`` and ``similarity``: exactly N counted labels per item after an
  exclusion, the refill by others and the undo.

Through the real services against the real database.
"""

from collections import Counter

import pytest

from annotation.models import Assignment, Item, Label
from annotation.services.annotators import exclude_annotator, include_annotator
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.annotation.bundled import bundled_batch
from tests.annotation.kinds.studies import make_study
from tests.factories import make_batch, make_participant, rate_until_drained

pytestmark = pytest.mark.django_db


def capacity(n: int) -> int:
    """The most slots one presentation order may hold: ceil(N / 2)."""
    return (n + 1) // 2


def assert_counters_equal_the_labels(batch):
    """Every counter of every regular item is what the stored rows say it is."""
    for item in Item.objects.filter(batch=batch, is_check=False):
        counted = Label.objects.filter(item=item, status="counted")
        held = Assignment.objects.filter(item=item, state="open", purpose="regular")
        assert item.counted_count == counted.count(), item.item_id
        assert item.reserved_count == counted.count() + held.count(), item.item_id
        assert item.reserved_ab == (
            counted.filter(shown_order="ab").count() + held.filter(shown_order="ab").count()
        ), item.item_id
        assert item.reserved_ba == (
            counted.filter(shown_order="ba").count() + held.filter(shown_order="ba").count()
        ), item.item_id


def assert_balanced_and_complete(batch, n):
    for item in Item.objects.filter(batch=batch, is_check=False):
        orders = Counter(
            Label.objects.filter(item=item, status="counted").values_list("shown_order", flat=True)
        )
        assert sum(orders.values()) == n, (item.item_id, orders)
        assert orders["ab"] <= capacity(n) and orders["ba"] <= capacity(n), orders
        assert abs(orders["ab"] - orders["ba"]) <= 1, (item.item_id, orders)


# --------------------------------------------------------------------------- pairwise


def test_a_re_included_pair_label_whose_order_is_full_is_surplus_even_with_a_free_slot():
    """N = 4, one pair: two people saw it A first, two B first. One of each is excluded;
    a newcomer's lease takes one of the two reopened orders. Re-including the excluded
    person of *that* order would make it 3 of 4 in one order: their label must stay out
    (surplus) although the item has a free slot; the other one counts again."""
    batch = make_batch(kind="pairwise", n_items=1, per_item=4)
    people = [make_participant(batch, f"pair-{number}") for number in range(4)]
    orders = {}
    for person in people:
        lease = lease_next_item(batch, person).assignment
        orders[person.pk] = lease.shown_order
        submit_label(person.annotator, lease.pk, 2, 1500)
    assert sorted(orders.values()) == ["ab", "ab", "ba", "ba"]
    first_ab = next(person for person in people if orders[person.pk] == "ab")
    first_ba = next(person for person in people if orders[person.pk] == "ba")
    assert exclude_annotator(batch, first_ab.annotator) == 1
    assert exclude_annotator(batch, first_ba.annotator) == 1
    assert_counters_equal_the_labels(batch)

    newcomer = make_participant(batch, "pair-newcomer")
    refill = lease_next_item(batch, newcomer).assignment
    same = first_ab if refill.shown_order == "ab" else first_ba
    other = first_ba if same is first_ab else first_ab
    item = Item.objects.get(batch=batch)
    assert item.reserved_count == 3  # a slot is free, but not in the order ``same`` saw

    assert include_annotator(batch, same.annotator) == {"counted": 0, "surplus": 1}
    assert_counters_equal_the_labels(batch)
    assert include_annotator(batch, other.annotator) == {"counted": 1, "surplus": 0}
    assert_counters_equal_the_labels(batch)
    # the newcomer's open lease still holds the last slot, and counts when answered
    assert submit_label(newcomer.annotator, refill.pk, -1, 1500).status == "counted"
    assert_counters_equal_the_labels(batch)
    assert_balanced_and_complete(batch, 4)
    assert Label.objects.get(annotator=same.annotator).status == "surplus"


@pytest.mark.parametrize("n", [3, 4])
def test_pairs_stay_balanced_through_exclusion_refill_and_re_inclusion(n):
    batch = make_batch(kind="pairwise", n_items=4, per_item=n)
    people = [make_participant(batch, f"p{n}-{number}") for number in range(n + 3)]
    # the first two answer a couple of pairs each and keep one open lease
    for person in people[:2]:
        for _ in range(2):
            lease = lease_next_item(batch, person).assignment
            submit_label(person.annotator, lease.pk, 1, 1500)
        assert lease_next_item(batch, person).assignment is not None
    rate_until_drained(batch, people[2:4], value_of=lambda person, lease: 1)
    for person in people[:2]:
        exclude_annotator(batch, person.annotator, reason="fast clicks")
        assert not Assignment.objects.filter(annotator=person.annotator, state="open").exists()
    assert_counters_equal_the_labels(batch)
    rate_until_drained(batch, people[2:], value_of=lambda person, lease: -2)
    assert_counters_equal_the_labels(batch)
    assert_balanced_and_complete(batch, n)

    for person in people[:2]:
        outcome = include_annotator(batch, person.annotator)
        assert outcome == {"counted": 0, "surplus": 2}  # every item is complete
        assert_counters_equal_the_labels(batch)
    assert_balanced_and_complete(batch, n)
    assert Label.objects.filter(batch=batch, status="surplus").count() == 4


def test_re_inclusion_before_the_refill_counts_in_its_own_order_and_stays_balanced():
    batch = make_batch(kind="pairwise", n_items=3, per_item=3)
    people = [make_participant(batch, f"early-{number}") for number in range(3)]
    rate_until_drained(batch, people, value_of=lambda person, lease: 1)
    assert_balanced_and_complete(batch, 3)
    exclude_annotator(batch, people[0].annotator)
    include_annotator(batch, people[0].annotator)
    # nothing happened in between: everything counts again, exactly as before
    assert Label.objects.filter(batch=batch, status="counted").count() == 9
    assert_counters_equal_the_labels(batch)
    assert_balanced_and_complete(batch, 3)


# --------------------------------------------------------------------------- bundles


@pytest.mark.parametrize("kind", ["absolute", "pairwise"])
def test_excluded_after_one_item_of_a_bundle_the_others_still_reach_exactly_n(kind):
    n = 3
    batch = bundled_batch(f"excl-bundle-{kind}", kind=kind, n_queries=2, per_query=3, per_item=n)
    value = 1 if kind == "pairwise" else 4
    bad = make_participant(batch, "bad")
    first = lease_next_item(batch, bad).assignment
    held = list(Assignment.objects.filter(annotator=bad.annotator, state="open"))
    assert len(held) == 3  # the whole bundle
    submit_label(bad.annotator, first.pk, value, 1500)
    assert exclude_annotator(batch, bad.annotator, reason="bot") == 1
    # every lease of the bundle is given back at once, not at its expiry
    assert not Assignment.objects.filter(annotator=bad.annotator, state="open").exists()
    assert_counters_equal_the_labels(batch)
    assert lease_next_item(batch, bad).reason == "excluded"
    # a late answer to one of the released leases is kept as excluded, never counted
    late = next(lease for lease in held if lease.pk != first.pk)
    assert submit_label(bad.annotator, late.pk, value, 1500).status == "excluded"

    others = [make_participant(batch, f"good-{number}") for number in range(2 * n + 2)]
    rate_until_drained(batch, others, value_of=lambda person, lease: value)
    assert_counters_equal_the_labels(batch)
    for item in Item.objects.filter(batch=batch):
        assert item.counted_count == n
        assert Label.objects.filter(item=item, status="counted").count() == n
    if kind == "pairwise":
        assert_balanced_and_complete(batch, n)
    assert set(Label.objects.filter(annotator=bad.annotator).values_list("status", flat=True)) == {
        "excluded"
    }
    # nobody met a bundle in two sittings: one lease time per (person, bundle)
    sittings = Counter()
    for annotator, bundle, _ in (
        Assignment.objects.filter(batch=batch)
        .values_list("annotator_id", "item__bundle", "leased_at")
        .distinct()
    ):
        sittings[(annotator, bundle)] += 1
    assert set(sittings.values()) == {1}

    # the undo finds every item complete: the labels are kept, as surplus
    assert include_annotator(batch, bad.annotator) == {"counted": 0, "surplus": 2}
    assert_counters_equal_the_labels(batch)
    assert all(item.counted_count == n for item in Item.objects.filter(batch=batch))


# --------------------------------------------------------------------------- text kinds


COLOURS = ["crimson", "teal", "ochre", "violet", "amber", "indigo"]
VALUES = {
    "short_text": lambda number: COLOURS[number % len(COLOURS)],
    "similarity": lambda number: 1 + number % 4,
}


@pytest.mark.parametrize("kind", ["short_text", "similarity"])
def test_exactly_n_counted_after_exclusion_refill_and_re_inclusion(kind):
    n = 3
    batch = make_study(kind, slug=f"excl-{kind.replace('_', '-')}", n_items=3, per_item=n)
    value = VALUES[kind]
    # two who are excluded, and n - 1 others: after the refill one slot per item is free
    people = [make_participant(batch, f"{kind}-{number}") for number in range(n + 1)]
    bad, partial = people[0], people[1]
    rate_until_drained(batch, [bad], value_of=lambda person, lease: value(0))
    lease = lease_next_item(batch, partial).assignment
    submit_label(partial.annotator, lease.pk, value(1), 1500)
    held = lease_next_item(batch, partial).assignment  # an open lease at the exclusion
    assert exclude_annotator(batch, bad.annotator) == 3
    assert exclude_annotator(batch, partial.annotator) == 1
    assert Assignment.objects.get(pk=held.pk).state == "expired"
    assert_counters_equal_the_labels(batch)
    assert submit_label(partial.annotator, held.pk, value(1), 1500).status == "excluded"

    rate_until_drained(batch, people[2:], value_of=lambda person, lease: value(person.pk))
    assert_counters_equal_the_labels(batch)
    assert all(item.counted_count == n - 1 for item in Item.objects.filter(batch=batch))
    # one slot per item is still free: the re-included labels fill it, in item order
    assert include_annotator(batch, bad.annotator) == {"counted": 3, "surplus": 0}
    assert include_annotator(batch, partial.annotator) == {"counted": 0, "surplus": 2}
    assert_counters_equal_the_labels(batch)
    for item in Item.objects.filter(batch=batch):
        assert Label.objects.filter(item=item, status="counted").count() == n
    assert Label.objects.filter(batch=batch, status="surplus").count() == 2
    # the batch is drained for everyone: nobody is handed a fourth label of any item
    newcomer = make_participant(batch, f"{kind}-late")
    assert lease_next_item(batch, newcomer).reason == "drained"
