"""Django's admin cannot go around the services (README "Deployment", one path for state
changes): each bypass a careless admin could try is refused or goes through the service."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from annotation.models import Batch, BatchState, Item, Participation
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from core.models import AuditEvent
from tests.factories import make_batch, make_participant

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client():
    user = User.objects.create_superuser("root", "root@example.org", "pw")
    client = Client()
    client.force_login(user)
    return client


def change_form(client, batch) -> dict:
    """The batch's admin change form as the browser would post it back."""
    response = client.get(f"/admin/annotation/batch/{batch.pk}/change/")
    assert response.status_code == 200
    form = response.context["adminform"].form
    data = {}
    for name, field in form.fields.items():
        value = form.initial.get(name, field.initial)
        data[name] = field.prepare_value(value) if value is not None else ""
    return data


def label_everything(batch, people=3):
    for _ in range(people):
        person = make_participant(batch)
        while (outcome := lease_next_item(batch, person)).assignment is not None:
            submit_label(person.annotator, outcome.assignment.pk, 4, 10)


def test_state_and_n_of_a_closed_batch_cannot_be_set_through_the_form(admin_client):
    batch = make_batch(n_items=2, per_item=3)
    label_everything(batch)
    Batch.objects.filter(pk=batch.pk).update(state=BatchState.CLOSED)
    data = change_form(admin_client, batch)
    assert "state" not in data  # read-only: not a form field at all
    data.update(state="live", annotations_per_item=1)
    response = admin_client.post(f"/admin/annotation/batch/{batch.pk}/change/", data)
    assert response.status_code == 302
    batch.refresh_from_db()
    assert batch.state == BatchState.CLOSED
    assert batch.annotations_per_item == 3  # refused: every item holds 3 labels
    assert set(Item.objects.filter(batch=batch).values_list("target", flat=True)) == {3}
    followed = admin_client.get(response["Location"])
    assert "Nothing was changed" in followed.content.decode()


def test_n_changed_in_the_admin_moves_every_item_target(admin_client):
    batch = make_batch(n_items=3, per_item=3)
    data = change_form(admin_client, batch)
    data["annotations_per_item"] = 5
    response = admin_client.post(f"/admin/annotation/batch/{batch.pk}/change/", data)
    assert response.status_code == 302
    assert set(Item.objects.filter(batch=batch).values_list("target", flat=True)) == {5}
    event = AuditEvent.objects.filter(action="batch.edit").latest("at")
    assert event.actor_name == "root" and event.changes["annotations_per_item"] == [3, 5]


def test_a_javascript_completion_url_is_refused_in_the_admin(admin_client):
    batch = make_batch(n_items=1)
    data = change_form(admin_client, batch)
    data["completion_url"] = "javascript:alert(document.cookie)"
    response = admin_client.post(f"/admin/annotation/batch/{batch.pk}/change/", data)
    assert response.status_code == 200  # the form again, with the error
    assert "web address" in response.content.decode() or "valid URL" in response.content.decode()
    batch.refresh_from_db()
    assert batch.completion_url == ""


def test_state_changes_are_admin_actions_through_the_service(admin_client):
    batch = make_batch(n_items=1)
    Batch.objects.filter(pk=batch.pk).update(state=BatchState.CLOSED)
    response = admin_client.post(
        "/admin/annotation/batch/",
        {"action": "publish", "_selected_action": [batch.pk]},
        follow=True,
    )
    assert "cannot become live" in response.content.decode()
    assert Batch.objects.get(pk=batch.pk).state == BatchState.CLOSED
    other = make_batch(n_items=1)
    admin_client.post(
        "/admin/annotation/batch/", {"action": "pause", "_selected_action": [other.pk]}
    )
    assert Batch.objects.get(pk=other.pk).state == BatchState.PAUSED
    event = AuditEvent.objects.get(action="batch.pause")
    assert event.actor_name == "root"


def test_no_bulk_delete_and_no_add_of_batches(admin_client):
    batch = make_batch(n_items=1)
    changelist = admin_client.get("/admin/annotation/batch/").content.decode()
    assert "delete_selected" not in changelist
    assert admin_client.get("/admin/annotation/batch/add/").status_code == 403
    assert admin_client.get(f"/admin/annotation/batch/{batch.pk}/delete/").status_code == 403


def test_item_counters_and_participation_status_are_read_only(admin_client):
    batch = make_batch(n_items=1, per_item=2)
    item = Item.objects.get(batch=batch)
    response = admin_client.post(
        f"/admin/annotation/item/{item.pk}/change/",
        {"counted_count": 2, "reserved_count": 2, "target": 1},
    )
    assert response.status_code == 403
    item.refresh_from_db()
    assert (item.counted_count, item.reserved_count, item.target) == (0, 0, 2)
    person = make_participant(batch)
    response = admin_client.post(
        f"/admin/annotation/participation/{person.pk}/change/", {"status": "excluded"}
    )
    assert response.status_code == 403
    assert Participation.objects.get(pk=person.pk).status == "active"


def test_exclusion_is_an_admin_action_that_reopens_the_slots(admin_client):
    batch = make_batch(n_items=2, per_item=2)
    person = make_participant(batch)
    for _ in range(2):
        outcome = lease_next_item(batch, person)
        submit_label(person.annotator, outcome.assignment.pk, 3, 10)
    response = admin_client.post(
        "/admin/annotation/participation/",
        {"action": "exclude_annotators", "_selected_action": [person.pk]},
        follow=True,
    )
    assert "2 labels no longer counted" in response.content.decode()
    assert Participation.objects.get(pk=person.pk).status == "excluded"
    assert set(Item.objects.filter(batch=batch).values_list("counted_count", flat=True)) == {0}
    assert AuditEvent.objects.get(action="annotator.exclude").actor_name == "root"
    admin_client.post(
        "/admin/annotation/participation/",
        {"action": "include_annotators", "_selected_action": [person.pk]},
    )
    assert set(Item.objects.filter(batch=batch).values_list("counted_count", flat=True)) == {1}
