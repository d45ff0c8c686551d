"""Batches run as Prolific studies, and participants working through them."""

from datetime import timedelta

from annotation.services.annotators import identify_annotator, join_batch
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.factories import make_batch

STUDY = "60ffe5c8371090c7041d43f8"


def prolific_batch(fake, *, study_id=STUDY, **settings):
    batch = make_batch(prolific_study_id=study_id, **settings)
    fake.add_study(study_id)
    return batch


def prolific_participant(batch, fake, pid: str, status="ACTIVE"):
    """A Prolific participant who entered the batch, with their submission on the fake."""
    submission_id = fake.add_submission(batch.prolific_study_id, pid, status=status)
    annotator = identify_annotator("prolific", pid)
    participation = join_batch(
        batch,
        annotator,
        {"PROLIFIC_PID": pid, "STUDY_ID": batch.prolific_study_id, "SESSION_ID": submission_id},
    )
    return participation, submission_id


def label_items(batch, participation, count: int, *, value=3, duration_ms=60_000):
    """``count`` labels (fewer if the batch runs out), each sent ``duration_ms`` after its
    lease was taken (active time counts no more than that); returns how many were made."""
    made = 0
    for _ in range(count):
        outcome = lease_next_item(batch, participation)
        if outcome.assignment is None:
            break
        sent = outcome.assignment.leased_at + timedelta(milliseconds=duration_ms)
        submit_label(participation.annotator, outcome.assignment.pk, value, duration_ms, sent)
        made += 1
    return made


def hold_lease(batch, participation):
    outcome = lease_next_item(batch, participation)
    assert outcome.assignment is not None
    return outcome.assignment
