"""Annotator competence end to end: labels through the services, the analysis job, the
report's ``competence``, the report page card, competence.csv and the annotators page column
(added by the analysis app through ``core.extensions``, sortable)."""

import re

import numpy as np
import pytest

from analysis.services.analyses import latest_report
from analysis.stats.competence import mace
from annotation.forms import BatchEditForm
from annotation.models import Label, Participation
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.analysis.test_report_page import read_csv, run_job_now
from tests.annotation.kinds.test_short_text import form_defaults
from tests.factories import make_batch, make_participant
from tests.staff import staff_client, token_client

# each test runs a whole analysis job (its figures drawn in three formats): seconds each
pytestmark = [pytest.mark.django_db, pytest.mark.slow]


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
    researcher = staff_client("researcher")
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert "Annotator competence" in page and "one true label per item" in page
    # the position-bias sentence reads "p < 0.001" or "p = 0.042", never "p = < 0.001"
    assert re.search(r"binomial test against ½: p (<|=) [0-9]", page)
    assert "p = &lt;" not in page and "p = <" not in page
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


def _review_batch():
    """A pairwise batch of 20 items rated by 4 people, one of them always choosing -2."""
    batch = make_batch(kind="pairwise", n_items=20, per_item=4)
    label_canonically(batch, 4, careful_or_not)
    return batch


def test_the_review_list_is_a_batch_setting_shown_for_review_never_excluding():
    batch = _review_batch()
    admin = staff_client("admin")
    # the edit page sets it, like any other study-design setting
    posted = {k: v for k, v in form_defaults(BatchEditForm.for_batch(batch)).items() if v}
    posted["review_lowest_competence"] = "2"
    assert admin.post(f"/manage/{batch.slug}/edit", posted).status_code in (200, 302)
    batch.refresh_from_db()
    assert batch.review_lowest_competence == 2
    run_job_now(batch, bootstrap=10)

    api = token_client("researcher")
    report = api.get(f"/api/v1/batches/{batch.slug}/report").json()
    section = report["competence"]
    # the two lowest MACE competences among people with at least 10 labels, chosen here
    ranked = sorted(
        (entry for entry in section["annotators"] if entry["n_labels"] >= 10),
        key=lambda entry: (entry["mace_competence"], entry["annotator"]),
    )
    expected = [entry["annotator"] for entry in ranked[:2]]
    assert section["review"] == {"size": 2, "min_labels": 10, "lowest": expected}
    spammer = Participation.objects.get(
        batch=batch, annotator__platform_id=f"{batch.slug}-w3"
    ).annotator.pseudonym
    assert expected[0] == spammer

    researcher = staff_client("researcher")
    annotators = researcher.get(f"/manage/{batch.slug}/annotators").content.decode()
    assert "For review (the 2 of lowest competence with at least 10 labels" in annotators
    assert f"{expected[0]}, {expected[1]}." in annotators
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    review = re.search(r'<p class="small" id="competence-review">(.*?)</p>', page).group(1)
    assert re.findall(r"<code>([^<]+)</code>", review) == expected
    assert len(re.findall(r'data-review="1"', page)) == 2
    table = read_csv(researcher.get(f"/manage/{batch.slug}/report/competence.csv"))
    assert {
        row["annotator"]: row["review_position"] for row in table if row["review_position"]
    } == {
        expected[0]: "1",
        expected[1]: "2",
    }
    # a list to read: every label still counts and nobody is excluded
    assert set(Label.objects.filter(batch=batch).values_list("status", flat=True)) == {"counted"}
    assert not Participation.objects.filter(batch=batch, status="excluded").exists()
    card = b"".join(
        researcher.get(f"/api/v1/batches/{batch.slug}/export?layout=card").streaming_content
    ).decode()
    assert "- Competence review list: the analysis lists the 2 annotators" in card

    # the setting changed since the analysis: the page says so until it runs again
    response = token_client("admin").patch(
        f"/api/v1/batches/{batch.slug}/",
        {"review_lowest_competence": 3},
        content_type="application/json",
    )
    assert response.status_code == 200 and response.json()["review_lowest_competence"] == 3
    annotators = researcher.get(f"/manage/{batch.slug}/annotators").content.decode()
    assert "The batch now asks for the 3 of lowest competence: run the analysis again" in annotators
    run_job_now(batch, bootstrap=10)
    report = api.get(f"/api/v1/batches/{batch.slug}/report").json()
    assert report["competence"]["review"]["lowest"][:2] == expected
    assert len(report["competence"]["review"]["lowest"]) == 3


def test_without_the_setting_nobody_is_listed_and_the_page_says_how():
    batch = _review_batch()
    assert batch.review_lowest_competence is None
    run_job_now(batch, bootstrap=10)
    _, report = latest_report(batch)
    assert report["competence"]["review"] == {"size": None, "min_labels": 10, "lowest": []}
    researcher = staff_client("researcher")
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert "No review list: set “Competence review list”" in page
    assert "data-review" not in page
    assert "For review" not in researcher.get(f"/manage/{batch.slug}/annotators").content.decode()
    refused = token_client("admin").patch(
        f"/api/v1/batches/{batch.slug}/",
        {"review_lowest_competence": 0},
        content_type="application/json",
    )
    assert refused.status_code == 400 and refused.json()["field"] == "review_lowest_competence"
