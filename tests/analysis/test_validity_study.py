"""The measurement-validity acceptance scenario, end to end through the services: a
pairwise batch with N = 25, one attention check every 10 items, exclusion after 2 failed
checks, a 4-second minimum (with the exclude policy at a half of flagged labels), a two-
question questionnaire and repeats every 15 items, run by simulated workers of whom some
always click the same button. Every item ends with exactly 25 counted labels, both
orders balanced; the spammers are excluded and their slots refilled; the report's
position-bias, test–retest and group sections are filled and agree with figures computed
here from the database.
"""

import random

import numpy as np
import pytest
import scipy.stats

from analysis.services.analyses import analyse_batch
from annotation.models import Item, Label, Participation
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from annotation.services.questionnaire import record_answers
from tests.factories import make_batch, make_participant
from tests.staff import staff_client

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

N = 25
QUESTIONS = [
    {"id": "english", "text": "First language English?", "type": "choice",
     "options": ["yes", "no"]},
    {"id": "age", "text": "Age", "type": "number", "min": 18, "max": 99},
]  # fmt: skip


def build(seed: int = 3):
    rng = random.Random(seed)
    batch = make_batch(
        kind="pairwise", n_items=20, per_item=N, check_every=10, exclude_after_failed_checks=2,
        min_seconds_per_item=4, flag_policy="exclude", flagged_share_to_exclude=0.5,
        questionnaire=QUESTIONS, repeat_every=15,
    )  # fmt: skip
    items = list(Item.objects.filter(batch=batch).order_by("position"))
    checks = items[:4]  # four attention checks: "A is much better" is right
    Item.objects.filter(pk__in=[item.pk for item in checks]).update(
        is_check=True, gold=[2], target=0
    )
    check_pks = {item.pk for item in checks}
    # each regular item has a "true" preference the careful workers mostly follow
    truth = {item.pk: rng.choice([2, 1, -1, -2]) for item in items}
    # the spammers come early enough to do many items (a late one may find nothing left)
    workers = [(f"careful-{i}", False) for i in range(34)]
    for position, i in zip(range(0, 30, 5), range(6), strict=True):
        workers.insert(position, (f"spam-{i}", True))
    for name, spammer in workers:
        person = make_participant(batch, name)
        person.consented_at = person.first_seen_at
        person.save()
        record_answers(batch, person, {"english": rng.choice(["yes", "no"]), "age": "30"})
        for _ in range(40):
            outcome = lease_next_item(batch, person)
            if outcome.assignment is None:
                break
            assignment = outcome.assignment
            if spammer:
                shown = 2  # always the first button
            else:
                wanted = 2 if assignment.item_id in check_pks else truth[assignment.item_id]
                if rng.random() < 0.2 and assignment.item_id not in check_pks:
                    wanted = rng.choice([2, 1, 0, -1, -2])
                shown = -wanted if assignment.shown_order == "ba" else wanted
            duration = 1500 if spammer else rng.randint(4500, 20000)
            submit_label(person.annotator, assignment.pk, shown, duration)
    return batch, check_pks


def test_the_validity_study():
    batch, check_pks = build()
    regular = Item.objects.filter(batch=batch, is_check=False)
    for item in regular:
        counted = list(item.labels.filter(status="counted").values_list("shown_order", flat=True))
        assert len(counted) == item.counted_count == N
        assert abs(counted.count("ab") - counted.count("ba")) <= 1
    assert not Label.objects.filter(item_id__in=check_pks, status="counted").exists()
    spammers = Participation.objects.filter(batch=batch, annotator__platform_id__startswith="spam")
    for participation in spammers:
        assert participation.status == "excluded" and participation.excluded_automatically
        assert not participation.annotator.labels.filter(status="counted").exists()
    careful = Participation.objects.filter(batch=batch, annotator__platform_id__startswith="care")
    assert all(p.status == "active" for p in careful)

    report = analyse_batch(batch, n_resamples=0)
    validity = report["validity"]
    # position bias: computed here from the counted labels
    labels = Label.objects.filter(batch=batch, status="counted")
    choices = [(label.shown_order, label.value) for label in labels if label.value]
    firsts = sum((o == "ab") == (v > 0) for o, v in choices)
    bias = validity["position_bias"]
    assert bias["n_choices"] == len(choices)
    assert bias["first_share"] == pytest.approx(firsts / len(choices))
    assert bias["p"] == pytest.approx(scipy.stats.binomtest(firsts, len(choices)).pvalue)
    # test-retest
    pairs = []
    for repeat in Label.objects.filter(batch=batch, status="repeat"):
        first = Label.objects.exclude(status__in=["repeat", "check"]).get(
            annotator=repeat.annotator, item=repeat.item
        )
        if first.annotator.labels.filter(status="counted").exists():
            pairs.append((first.value, repeat.value))
    retest = validity["test_retest"]["batch"]
    assert retest["n_pairs"] == len(pairs) > 0
    assert retest["exact_share"] == pytest.approx(np.mean([a == b for a, b in pairs]))
    assert retest["sign_agreement"] == pytest.approx(
        np.mean([np.sign(a) == np.sign(b) for a, b in pairs])
    )
    # groups by the first choice question
    groups = validity["groups"]
    assert groups["question"] == "english"
    for entry in groups["groups"]:
        members = Participation.objects.filter(
            batch=batch, questionnaire_answers__english=entry["group"]
        ).values_list("annotator_id", flat=True)
        values = list(labels.filter(annotator_id__in=members).values_list("value", flat=True))
        assert entry["n_labels"] == len(values)
        assert entry["mean_value"] == pytest.approx(np.mean(values))


def test_the_report_page_shows_the_validity_sections(django_capture_on_commit_callbacks):
    from core.jobs.queue import start_job

    batch, _ = build()
    with django_capture_on_commit_callbacks(execute=True):
        start_job("analysis", batch, {"bootstrap": 0, "seed": 0})
    client = staff_client("researcher", "reader")
    page = client.get(f"/manage/{batch.slug}/report").content.decode()
    assert "Validity of the instrument" in page
    assert "favour the response shown first" in page
    assert "Test–retest" in page and "By answer to “First language English?”" in page
