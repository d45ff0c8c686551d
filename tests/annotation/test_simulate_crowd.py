"""``simulate_crowd``: a dry run of the Infinity-Chat design (bundles of one query, one
bundle per person, balanced order) with people who leave halfway ends with every item at
exactly N, each person's counted labels from one query, and positions balanced; a batch
with real workers' labels is refused."""

from collections import Counter, defaultdict
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Item, Label
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.annotation.bundled import bundled_batch
from tests.factories import make_batch, make_participant

pytestmark = pytest.mark.django_db


def test_a_dry_run_of_the_study_design_keeps_every_promise():
    n = 6  # a multiple of the bundle size: positions balance to within 1
    batch = bundled_batch("dry-run", n_queries=4, per_query=3, per_item=n,
                          bundles_per_participant=1, bundle_order="balanced")  # fmt: skip
    out = StringIO()
    call_command("simulate_crowd", batch.slug, "--leave-share", "0.3", "--seed", "4", stdout=out)
    text = out.getvalue()
    assert f"12 of 12 items have exactly {n} counted labels" in text
    assert all(item.counted_count == n for item in Item.objects.filter(batch=batch))
    counted = Label.objects.filter(batch=batch, status="counted")
    queries = defaultdict(set)
    for annotator, query in counted.values_list("annotator_id", "item__query_id"):
        queries[annotator].add(query)
    assert all(len(found) == 1 for found in queries.values())  # one query per person
    positions = defaultdict(Counter)
    for item, place in counted.values_list("item_id", "position_in_bundle"):
        positions[item][place] += 1
    spreads = [
        max(c[p] for p in range(3)) - min(c[p] for p in range(3)) for c in positions.values()
    ]
    assert max(spreads) <= 1
    assert f"differ by at most {max(spreads)}" in text
    leavers = int(text.split("(")[1].split(" left")[0])
    assert leavers > 0  # some did leave, and their items were given to others


def test_a_batch_with_real_workers_labels_is_refused():
    batch = make_batch(n_items=2, per_item=2)
    person = make_participant(batch, "real-person")
    submit_label(person.annotator, lease_next_item(batch, person).assignment.pk, 3, 2000)
    with pytest.raises(CommandError, match="holds labels of real workers"):
        call_command("simulate_crowd", batch.slug, stdout=StringIO())
    with pytest.raises(CommandError, match="no batch 'nope'"):
        call_command("simulate_crowd", "nope", stdout=StringIO())
    with pytest.raises(CommandError, match="--leave-share"):
        call_command("simulate_crowd", batch.slug, "--leave-share", "1.5", stdout=StringIO())


def test_an_unbundled_batch_with_checks_is_filled_too():
    batch = bundled_batch("plain-dry", n_queries=2, per_query=3, per_item=3, bundle_by="none",
                          checks=2, check_every=2)  # fmt: skip
    out = StringIO()
    call_command("simulate_crowd", batch.slug, stdout=out)
    assert "6 of 6 items have exactly 3 counted labels" in out.getvalue()
    checks = Label.objects.filter(batch=batch, status="check")
    assert checks.exists() and all(label.check_passed for label in checks)
