"""``manage.py prolific sync``: statuses stored, departed participants' leases released,
the status in the annotators export and on the annotators page."""

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Assignment
from annotation.services.exports.rows import iter_annotator_rows
from crowd.tasks import sync_crowd_platforms
from tests.crowd.helpers import hold_lease, label_items, prolific_batch, prolific_participant
from tests.staff import staff_client

pytestmark = pytest.mark.django_db


def test_sync_releases_timed_out_and_returned_leases_and_keeps_the_rest(prolific):
    batch = prolific_batch(prolific, n_items=4, per_item=1)
    gone, gone_sub = prolific_participant(batch, prolific, "gone")
    late, late_sub = prolific_participant(batch, prolific, "late")
    busy, _ = prolific_participant(batch, prolific, "busy")
    label_items(batch, gone, 1)
    leases = {p.pk: hold_lease(batch, p) for p in (gone, late, busy)}
    prolific.set_status(gone_sub, "RETURNED")
    prolific.set_status(late_sub, "TIMED-OUT")
    out = StringIO()
    call_command("prolific", "sync", batch.slug, stdout=out)
    assert "3 submissions" in out.getvalue() and "2 lease(s) released" in out.getvalue()
    states = {pk: Assignment.objects.get(pk=a.pk).state for pk, a in leases.items()}
    assert states == {gone.pk: "expired", late.pk: "expired", busy.pk: "open"}
    rows = {row["annotator"]: row for row in iter_annotator_rows(batch)}
    assert rows[gone.annotator.pseudonym]["platform_status"] == "RETURNED"
    page = staff_client("admin").get(f"/manage/{batch.slug}/annotators").content.decode()
    assert "Platform status" in page and "RETURNED" in page


def test_the_beat_task_syncs_configured_batches(prolific):
    batch = prolific_batch(prolific, n_items=2, per_item=1)
    person, submission = prolific_participant(batch, prolific, "p1")
    held = hold_lease(batch, person)
    prolific.set_status(submission, "RETURNED")
    assert sync_crowd_platforms() == 1
    assert Assignment.objects.get(pk=held.pk).state == "expired"


def test_the_beat_task_does_nothing_without_a_token(settings):
    settings.PROLIFIC_API_TOKEN = ""
    assert sync_crowd_platforms() == 0
