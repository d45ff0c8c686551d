"""The report of a bundled batch gains its ``bundles`` section, computed from the stored
labels (positions, bundles, annotators) and equal to the pure statistics applied to a
table built here independently; a batch without bundles has no such section."""

import numpy as np
import pytest

from analysis.services.analyses import analyse_batch
from analysis.stats.bundles import kendalls_w, two_way_decomposition
from annotation.models import Label
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.annotation.bundled import bundled_batch
from tests.factories import make_batch, make_participant

pytestmark = pytest.mark.django_db


def fill(batch, people: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    for number in range(people):
        person = make_participant(batch, f"p{number}")
        harsh = int(rng.integers(-1, 2))
        while (outcome := lease_next_item(batch, person)).assignment is not None:
            base = 1 + outcome.assignment.position_in_bundle  # a drift with position
            value = int(np.clip(base + harsh, 1, 5))
            submit_label(person.annotator, outcome.assignment.pk, value, 2000)


def test_a_bundled_report_holds_position_concordance_and_individual_figures():
    batch = bundled_batch("report-bundles", n_queries=3, per_query=4, per_item=4,
                          bundles_per_participant=1, bundle_order="balanced")  # fmt: skip
    fill(batch, 12)
    report = analyse_batch(batch, n_resamples=200, seed=3)
    section = report["bundles"]
    effect = section["position_effect"]
    assert effect["positions"] == [0, 1, 2, 3] and sum(effect["n_labels"]) == 48
    assert effect["spearman_rho"] > 0.5 and effect["permutation_p"] < 0.05
    assert len(section["bundles"]) == 3
    for entry in section["bundles"]:
        labels = Label.objects.filter(batch=batch, status="counted", item__bundle=entry["bundle"])
        people = sorted({label.annotator.pseudonym for label in labels})
        items = sorted({label.item.item_id for label in labels})
        table = np.full((len(people), len(items)), np.nan)
        for label in labels:
            table[people.index(label.annotator.pseudonym), items.index(label.item.item_id)] = (
                label.value
            )
        assert entry["n_participants"] == len(people) == 4
        assert entry["kendalls_w"] == pytest.approx(kendalls_w(table))
        assert entry["two_way"]["icc_3_1"] == pytest.approx(two_way_decomposition(table).icc_3_1)
    assert len(section["participants"]) == 12


def test_a_batch_without_bundles_has_no_bundle_section():
    batch = make_batch(n_items=2, per_item=1)
    person = make_participant(batch)
    submit_label(person.annotator, lease_next_item(batch, person).assignment.pk, 3, 2000)
    assert "bundles" not in analyse_batch(batch, n_resamples=10)
