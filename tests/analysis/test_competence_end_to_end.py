"""Annotator competence end to end: labels through the services, the analysis job, the
report's ``competence``, the report page card, competence.csv and the annotators page column
(added by the analysis app through ``core.extensions``, sortable)."""

import re

import numpy as np
import pytest

from analysis.services.analyses import latest_report
from analysis.stats.competence import mace
from annotation.models import Label
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.analysis.test_report_page import read_csv, run_job_now
from tests.factories import make_batch, make_participant
from tests.staff import staff_client

pytestmark = pytest.mark.django_db


def careful_or_not(position: int, worker: int) -> int:
    if worker == 3:
        return -2  # always the same strong preference for B
    return [2, -1, 0, 1, -2][position % 5] if (position + worker) % 7 else 0


def label_canonically(batch, n_workers: int, value_of) -> None:
    """Like ``label_batch``, with ``value_of`` in terms of the imported A and B: the value
    sent is the one the worker would click with the pair in the order it was shown."""
    for worker in range(n_workers):
        participation = make_participant(batch, f"{batch.slug}-w{worker}")
        while (outcome := lease_next_item(batch, participation)).assignment is not None:
            value = value_of(outcome.assignment.item.position, worker)
            shown = -value if outcome.assignment.shown_order == "ba" else value
            submit_label(participation.annotator, outcome.assignment.pk, shown, 2000)


def test_pairwise_competence_is_reported_and_shown():
    batch = make_batch(kind="pairwise", n_items=20, per_item=4)
    label_canonically(batch, 4, careful_or_not)
    run_job_now(batch, bootstrap=10)
    _, report = latest_report(batch)
    section = report["competence"]
    assert section["classes"] == ["-2", "-1", "0", "1", "2"]
    assert "one true label per item" in section["assumption"]

    # the same MACE fit from the database rows, labels as their five categories
    rows = list(
        Label.objects.filter(batch=batch, status="counted")
        .order_by("submitted_at", "pk")
        .values_list("item_id", "annotator__pseudonym", "value")
    )
    items = sorted({row[0] for row in rows})
    people = list(dict.fromkeys(row[1] for row in rows))
    fit = mace(
        np.array([items.index(row[0]) for row in rows]),
        np.array([people.index(row[1]) for row in rows]),
        np.array([row[2] + 2 for row in rows]),
        len(items),
        len(people),
        5,
    )
    by_name = {entry["annotator"]: entry for entry in section["annotators"]}
    for index, name in enumerate(people):
        assert by_name[name]["mace_competence"] == pytest.approx(fit.competence[index], abs=1e-9)
    spammer = Label.objects.filter(
        batch=batch, annotator__platform_id=f"{batch.slug}-w3"
    ).values_list("annotator__pseudonym", flat=True)[0]
    assert by_name[spammer]["mace_strategy_label"] == "-2"
    assert by_name[spammer]["mace_spam_share"] > max(
        entry["mace_spam_share"] for name, entry in by_name.items() if name != spammer
    )
    # 20 labels each: everyone is eligible for review, the spammer first
    assert section["review"]["lowest"][0] == spammer
    researcher = staff_client("researcher")
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert "Annotator competence" in page and "one true label per item" in page
    table = read_csv(researcher.get(f"/manage/{batch.slug}/report/competence.csv"))
    assert {row["annotator"] for row in table} == set(people)

    annotators = researcher.get(f"/manage/{batch.slug}/annotators?sort=competence")
    text = annotators.content.decode()
    assert "one true label per item" in text
    order = re.findall(r'data-annotator="([^"]+)"', text)
    expected = sorted(people, key=lambda name: round(by_name[name]["mace_competence"], 2))
    assert [round(by_name[n]["mace_competence"], 2) for n in order] == [
        round(by_name[n]["mace_competence"], 2) for n in expected
    ]
    assert order[0] == spammer
    descending = researcher.get(f"/manage/{batch.slug}/annotators?sort=-competence")
    assert re.findall(r'data-annotator="([^"]+)"', descending.content.decode())[-1] == spammer
    assert 'href="?sort=-competence"' in text  # clicking again reverses
