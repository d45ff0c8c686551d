"""``manage.py prolific places`` and the study following the batch: places from what the
batch still needs, paused when the batch pauses or fills, resumed with it."""

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.services.batches import change_state
from core.audit import history
from crowd.services.places import plan_places
from crowd.services.prolific_client import ProlificClient
from crowd.services.submissions import sync_prolific
from tests.crowd.helpers import STUDY, label_items, prolific_batch, prolific_participant

pytestmark = pytest.mark.django_db


def test_places_follow_remaining_slots_over_the_quota_plus_the_margin(prolific):
    batch = prolific_batch(prolific, n_items=10, per_item=3, quota_per_annotator=5)
    done, _ = prolific_participant(batch, prolific, "done", status="AWAITING REVIEW")
    label_items(batch, done, 5)
    working, _ = prolific_participant(batch, prolific, "working", status="ACTIVE")
    prolific_participant(batch, prolific, "gone", status="RETURNED")
    sync_prolific(batch, ProlificClient())
    plan = plan_places(batch, margin=0.1)
    # 30 slots - 5 done = 25 left; the one working will do 5 → 20 ÷ 5 = 4, +10 % → 5
    assert (plan.remaining_slots, plan.active, plan.taken, plan.needed) == (25, 1, 2, 5)
    assert plan.total == 7
    out = StringIO()
    call_command("prolific", "places", batch.slug, "--margin", "0.1", stdout=out)
    assert "Needed: 7" in out.getvalue() and prolific.writes() == []
    call_command("prolific", "places", batch.slug, "--margin", "0.1", "--apply", stdout=StringIO())
    assert prolific.studies[STUDY]["total_available_places"] == 7
    assert [c.body for c in prolific.writes()] == [{"total_available_places": 7}]
    assert history(batch).filter(action="prolific.places").exists()
    # nothing changed: nothing sent
    call_command("prolific", "places", batch.slug, "--margin", "0.1", "--apply", stdout=StringIO())
    assert len(prolific.writes()) == 1


def test_without_a_quota_the_median_per_participant_is_used(prolific):
    batch = prolific_batch(prolific, n_items=10, per_item=1)
    for pid, count in (("a", 2), ("b", 4), ("c", 6)):
        person, _ = prolific_participant(batch, prolific, pid, status="APPROVED")
        label_items(batch, person, count)
    plan = plan_places(batch, margin=0.0)
    # 10 - 12 < 0 → nothing left (the batch is full)
    assert plan.remaining_slots == 0 and plan.needed == 0
    assert "median of 3" in plan.why


def test_the_study_pauses_and_resumes_with_the_batch(prolific, django_capture_on_commit_callbacks):
    batch = prolific_batch(prolific, n_items=2, per_item=1)
    with django_capture_on_commit_callbacks(execute=True):
        batch = change_state(batch, "paused")
    assert prolific.studies[STUDY]["status"] == "PAUSED"
    with django_capture_on_commit_callbacks(execute=True):
        batch = change_state(batch, "live")
    assert prolific.studies[STUDY]["status"] == "ACTIVE"
    actions = [c.body["action"] for c in prolific.writes(f"/api/v1/studies/{STUDY}/transition/")]
    assert actions == ["PAUSE", "START"]
    assert history(batch).filter(action="prolific.study.pause").exists()


def test_a_full_batch_pauses_its_study_on_the_next_sync(prolific):
    from crowd.tasks import sync_crowd_platforms

    batch = prolific_batch(prolific, n_items=2, per_item=1)
    person, _ = prolific_participant(batch, prolific, "p1")
    label_items(batch, person, 2)
    sync_crowd_platforms()
    assert prolific.studies[STUDY]["status"] == "PAUSED"
    assert prolific.writes()[-1].body == {"action": "PAUSE"}


def test_auto_places_are_kept_in_step_by_the_beat_task(prolific, settings):
    from crowd.tasks import sync_crowd_platforms

    settings.PROLIFIC_AUTO_PLACES = True
    batch = prolific_batch(prolific, n_items=4, per_item=2, quota_per_annotator=2)
    assert batch.state == "live"
    sync_crowd_platforms()
    assert prolific.studies[STUDY]["total_available_places"] == 4  # 8 slots ÷ 2


def test_a_study_prolific_does_not_know_is_reported_in_the_history_once(
    prolific, django_capture_on_commit_callbacks
):
    from crowd.tasks import sync_crowd_platforms

    batch = prolific_batch(prolific, n_items=2, per_item=1)
    batch.prolific_study_id = "no-such-study"
    batch.save(update_fields=["prolific_study_id"])
    with django_capture_on_commit_callbacks(execute=True):
        batch = change_state(batch, "paused")
    with django_capture_on_commit_callbacks(execute=True):
        batch = change_state(batch, "live")
    failures = list(history(batch).filter(action="prolific.failed").order_by("pk"))
    assert len(failures) == 1  # the same failure twice: said once
    assert "not brought in line" in failures[0].reason and "404" in failures[0].reason
    sync_crowd_platforms()
    sync_crowd_platforms()  # every minute while it lasts: still one entry for the sync
    reasons = list(history(batch).filter(action="prolific.failed").values_list("reason", flat=True))
    assert len(reasons) == 2 and sum("sync failed" in reason for reason in reasons) == 1
