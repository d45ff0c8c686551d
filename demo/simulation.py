"""Simulated participants for a dry run of a study design (``manage.py simulate_crowd``).

Each simulated person enters the batch as an invitation-link worker (``sim-<n>``),
consents, answers nothing of a questionnaire (a batch with one is refused), and rates
through the same services the crowd's requests reach (``lease_next_item``,
``submit_label``): a person has a leniency of their own, each item a quality of its
own, and the value is the rounded sum plus noise, within the kind's scale. A share of
the people leave halfway through what they were given, as if they returned the study on
their platform: their open leases are released at once (``departures``). People keep
arriving until the batch hands out no more work.

What it checks afterwards is what the study promises: every regular item with exactly
N counted labels, in a bundled batch every person's counted labels from one bundle per
sitting and no bundle split between two people at once, and the spread of positions per
item (``balanced`` order).
"""

from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np
from django.db.models import Count
from django.utils import timezone

from annotation.models import Batch, Item, Label, Participation
from annotation.services.annotators import identify_annotator, join_batch
from annotation.services.departures import record_platform_status
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from core.errors import InvalidInput

SIMULATED_PREFIX = "sim-"


@dataclass
class SimulationOutcome:
    people: int = 0
    leavers: int = 0
    labels: int = 0
    items: int = 0
    items_exactly_n: int = 0
    bundles_per_person: Counter = field(default_factory=Counter)
    worst_position_spread: int | None = None

    def lines(self, batch: Batch) -> list[str]:
        n = batch.annotations_per_item
        found = [
            f"{self.people} simulated people ({self.leavers} left halfway), "
            f"{self.labels} labels stored",
            f"{self.items_exactly_n} of {self.items} items have exactly {n} counted labels",
        ]
        if self.bundles_per_person:
            spread = ", ".join(
                f"{count} people: {bundles}"
                for bundles, count in sorted(self.bundles_per_person.items())
            )
            found.append(f"bundles with counted labels per person — {spread}")
        if self.worst_position_spread is not None:
            found.append(
                "positions within a bundle: per item, the counts of positions differ by at "
                f"most {self.worst_position_spread}"
            )
        return found


def simulate(
    batch: Batch, *, leave_share: float = 0.2, seed: int = 0, max_people: int | None = None
) -> SimulationOutcome:
    """Run simulated people on ``batch`` until it hands out no more work."""
    _refuse_real_work(batch)
    rng = np.random.default_rng(seed)
    kind = batch.task_kind
    values = [option.value for option in kind.options(batch)]
    if not values:
        raise InvalidInput(
            "batch",
            f"a {kind.name} batch asks for typed answers; only batches whose workers "
            "choose are simulated",
        )
    quality = {
        item_id: rng.normal(0, 1)
        for item_id in batch.items.filter(is_check=False).values_list("pk", flat=True)
    }
    outcome = SimulationOutcome()
    limit = max_people or 20 * max(1, batch.items.count()) * batch.annotations_per_item
    start = Participation.objects.filter(batch=batch).count()
    for number in range(start, start + limit):
        annotator = identify_annotator("generic", f"{SIMULATED_PREFIX}{number}")
        person = join_batch(batch, annotator)
        Participation.objects.filter(pk=person.pk, consented_at=None).update(
            consented_at=timezone.now()
        )
        person.refresh_from_db()
        leniency = rng.normal(0, 0.7)
        leaves = rng.random() < leave_share
        first = lease_next_item(batch, person)
        if first.assignment is None:
            break  # nothing left to hand out
        outcome.people += 1
        given = _bundle_size(first.assignment)
        answered, lease = 0, first.assignment
        while lease is not None:
            if leaves and answered >= max(1, given // 2):
                record_platform_status(person, "RETURNED", departed=True)
                outcome.leavers += 1
                break
            if lease.purpose == "check" and lease.item.gold:
                value = _gold_value(lease.item.gold, lease.shown_order)
            else:
                score = quality.get(lease.item_id, 0.0) + leniency + rng.normal(0, 0.6)
                value = _on_scale(score, values)
            submit_label(person.annotator, lease.pk, value, int(rng.integers(3000, 20000)))
            outcome.labels += 1
            answered += 1
            lease = lease_next_item(batch, person).assignment
    _check(batch, outcome)
    return outcome


def _refuse_real_work(batch: Batch) -> None:
    if batch.questionnaire:
        raise InvalidInput("batch", "has a questionnaire: simulated people cannot answer it")
    real = Label.objects.filter(batch=batch).exclude(
        annotator__platform_id__startswith=SIMULATED_PREFIX
    )
    if real.exists():
        raise InvalidInput(
            "batch", "holds labels of real workers: a simulation runs on a dry-run batch only"
        )


def _bundle_size(assignment) -> int:
    bundle = assignment.item.bundle
    if not bundle:
        return 2
    return Item.objects.filter(batch_id=assignment.batch_id, bundle=bundle).count()


def _on_scale(score: float, values: list[int]) -> int:
    """A standard-normal score mapped onto the options, middle option at 0."""
    ordered = sorted(values)
    position = int(round((len(ordered) - 1) / 2 + score * (len(ordered) - 1) / 4))
    return ordered[min(len(ordered) - 1, max(0, position))]


def _gold_value(gold, shown_order: str) -> int:
    accepted = gold if isinstance(gold, list) else [gold]
    value = int(accepted[0])
    return -value if shown_order == "ba" else value  # as shown, relative to the first


def _check(batch: Batch, outcome: SimulationOutcome) -> None:
    items = Item.objects.filter(batch=batch, is_check=False)
    outcome.items = items.count()
    outcome.items_exactly_n = items.filter(counted_count=batch.annotations_per_item).count()
    counted = Label.objects.filter(batch=batch, status="counted")
    if batch.bundle_by != "none":
        per_person = counted.values("annotator_id").annotate(
            bundles=Count("item__bundle", distinct=True)
        )
        outcome.bundles_per_person = Counter(row["bundles"] for row in per_person)
        positions = defaultdict(Counter)
        for item_id, place in counted.values_list("item_id", "position_in_bundle"):
            positions[item_id][place] += 1
        sizes = dict(items.values("bundle").annotate(n=Count("pk")).values_list("bundle", "n"))
        bundle_of = dict(items.values_list("pk", "bundle"))
        spreads = [
            max(counts[place] for place in range(sizes[bundle_of[item]]))
            - min(counts[place] for place in range(sizes[bundle_of[item]]))
            for item, counts in positions.items()
        ]
        outcome.worst_position_spread = max(spreads) if spreads else None
