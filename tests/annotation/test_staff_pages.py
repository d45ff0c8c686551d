"""Admin pages under /manage/: who may see and do what, and that each action reaches its
service and shows its errors on the page."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation.models import (
    Annotator,
    Assignment,
    Batch,
    Item,
    Label,
    LabelStatus,
    Participation,
)
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.factories import make_batch, make_participant
from tests.staff import staff_client, staff_user

pytestmark = pytest.mark.django_db

GOOD_JSONL = (
    b'{"item_id": "a1", "query_id": "sq1", "query": "Name a colour.", '
    b'"response_id": "sr1", "model": "m", "response": "Blue."}\n'
    b'{"item_id": "a2", "query_id": "sq1", "query": "Name a colour.", '
    b'"response_id": "sr2", "model": "m", "response": "**Green**."}\n'
)
BAD_JSONL = (
    b'{"item_id": "b1", "query_id": "bq1", "query": "Q?", "response_id": "br1", '
    b'"response": "fine"}\n'
    b'{"item_id": "b2", "query_id": "bq1", "query": "Q?", "response_id": "br2", '
    b'"response": ""}\n'
    b"not json\n"
)


@pytest.fixture
def admin():
    return staff_client("admin")


@pytest.fixture
def researcher():
    return staff_client("researcher")


def rate(batch, participation, value=3, times=1):
    for _ in range(times):
        outcome = lease_next_item(batch, participation)
        submit_label(participation.annotator, outcome.assignment.pk, value, 1500)


def view_paths(batch) -> list[str]:
    slug = batch.slug
    return [
        "/manage/",
        f"/manage/{slug}/",
        f"/manage/{slug}/preview",
        f"/manage/{slug}/annotators",
    ]


def admin_gets(batch) -> list[str]:
    return ["/manage/new", f"/manage/{batch.slug}/edit"]


def admin_posts(batch, pseudonym: str) -> list[tuple[str, dict]]:
    slug = batch.slug
    return [
        ("/manage/new", {"slug": "sneaky", "kind": "absolute", "title": "x"}),
        (f"/manage/{slug}/edit", {"title": "changed"}),
        (f"/manage/{slug}/state", {"state": "paused"}),
        (f"/manage/{slug}/items", {"file": SimpleUploadedFile("items.jsonl", GOOD_JSONL)}),
        (f"/manage/{slug}/annotators/{pseudonym}/exclude", {}),
        (f"/manage/{slug}/annotators/{pseudonym}/include", {}),
    ]


# --------------------------------------------------------------------------- access


def test_anonymous_is_sent_to_login_everywhere():
    batch = make_batch()
    person = make_participant(batch)
    client = Client()
    for path in view_paths(batch) + admin_gets(batch):
        response = client.get(path)
        assert response.status_code == 302, path
        assert response["Location"].startswith("/accounts/login/?next="), path
    for path, data in admin_posts(batch, person.annotator.pseudonym):
        response = client.post(path, data)
        assert response.status_code == 302, path
        assert response["Location"].startswith("/accounts/login/"), path
    assert Batch.objects.filter(slug="sneaky").count() == 0


def test_login_page_renders_and_logs_in_to_the_batch_list():
    staff_user("researcher", "rita")
    client = Client()
    page = client.get("/accounts/login/?next=/manage/")
    assert page.status_code == 200
    assert b'name="username"' in page.content and b'name="password"' in page.content
    wrong = client.post("/accounts/login/", {"username": "rita", "password": "nope"})
    assert wrong.status_code == 200
    assert b"correct username and password" in wrong.content
    response = client.post(
        "/accounts/login/", {"username": "rita", "password": "pw-123456", "next": "/manage/"}
    )
    assert response.status_code == 302 and response["Location"] == "/manage/"
    listing = client.get("/manage/")
    assert listing.status_code == 200
    assert b"Log out" in listing.content
    client.post("/accounts/logout/")
    assert client.get("/manage/").status_code == 302


def test_logged_in_user_without_a_role_gets_403():
    batch = make_batch()
    person = make_participant(batch)
    client = staff_client(None)
    for path in view_paths(batch) + admin_gets(batch):
        response = client.get(path)
        assert response.status_code == 403, path
        assert b"No access" in response.content
    for path, data in admin_posts(batch, person.annotator.pseudonym):
        assert client.post(path, data).status_code == 403, path


def test_crowdworker_session_does_not_open_staff_pages():
    batch = make_batch()
    client = Client()
    assert client.get(f"/work/{batch.slug}/", {"worker": "w-curious"}).status_code == 200
    response = client.get(f"/manage/{batch.slug}/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_researcher_views_and_exports_but_changes_nothing(researcher):
    batch = make_batch(n_items=2, per_item=2)
    person = make_participant(batch, "prolific-secret-id", platform="prolific")
    rate(batch, person)
    for path in view_paths(batch):
        assert researcher.get(path).status_code == 200, path
    for path in admin_gets(batch):
        assert researcher.get(path).status_code == 403, path
    for path, data in admin_posts(batch, person.annotator.pseudonym):
        assert researcher.post(path, data).status_code == 403, path

    batch.refresh_from_db()
    assert batch.state == "live" and batch.items.count() == 2
    assert Label.objects.get().status == LabelStatus.COUNTED
    assert not Batch.objects.filter(slug="sneaky").exists()

    page = researcher.get(f"/manage/{batch.slug}/").content.decode()
    assert f"/api/v1/batches/{batch.slug}/export?layout=dense&amp;format=parquet" in page
    assert "Upload items" not in page and 'name="state"' not in page
    assert "New batch" not in researcher.get("/manage/").content.decode()

    table = researcher.get(f"/manage/{batch.slug}/annotators").content.decode()
    assert person.annotator.pseudonym in table
    assert "prolific-secret-id" not in table
    assert "Platform id" not in table
    assert "Exclude" not in table


# --------------------------------------------------------------------------- admin pages


def test_batch_list_shows_progress_and_state(admin):
    batch = make_batch(n_items=2, per_item=2, slug="listed")
    make_batch(live=False, n_items=0, slug="empty-draft")
    rate(batch, make_participant(batch))
    page = admin.get("/manage/").content.decode()
    assert "New batch" in page
    row = re.search(r'href="/manage/listed/".*?</tr>', page, re.S).group(0)
    assert "Live" in row
    assert "1 / 4 labels" in row and "25.0%" in row
    assert "ago" in row  # last activity
    assert "empty-draft" in page


def test_admin_creates_a_batch_and_sees_service_errors(admin):
    page = admin.get("/manage/new")
    assert page.status_code == 200
    assert b'value="25"' in page.content  # N defaults to 25
    response = admin.post(
        "/manage/new",
        {
            "slug": "fresh",
            "kind": "pairwise",
            "title": "Fresh study",
            "annotations_per_item": "5",
            "lease_seconds": "300",
            "quota_per_annotator": "10",
            "instructions": "Pick the **better** one.",
            "consent_text": "I agree.",
            "completion_code": "DONE42",
            "completion_url": "https://app.prolific.com/submissions/complete?cc=DONE42",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/manage/fresh/"
    batch = Batch.objects.get(slug="fresh")
    assert (batch.kind, batch.annotations_per_item, batch.lease_seconds) == ("pairwise", 5, 300)
    assert (batch.quota_per_annotator, batch.completion_code) == (10, "DONE42")
    assert batch.state == "draft"

    minimal = {"kind": "absolute", "annotations_per_item": "3", "lease_seconds": "60"}
    again = admin.post("/manage/new", {**minimal, "slug": "fresh"})
    assert again.status_code == 400
    assert "a batch &#x27;fresh&#x27; already exists" in again.content.decode()
    bad_slug = admin.post("/manage/new", {**minimal, "slug": "Bad Slug!"})
    assert bad_slug.status_code == 400
    assert "must be lower-case letters, digits and hyphens" in bad_slug.content.decode()
    assert Batch.objects.count() == 1


def test_admin_moves_a_batch_through_its_states(admin):
    batch = make_batch(live=False, n_items=2)
    url = f"/manage/{batch.slug}/state"
    page = admin.get(f"/manage/{batch.slug}/").content.decode()
    assert 'data-confirm="Publish this batch?' in page
    for state, shown in [
        ("live", "Live"),
        ("paused", "Paused"),
        ("live", "Live"),
        ("closed", "Closed"),
    ]:
        response = admin.post(url, {"state": state}, follow=True)
        assert response.status_code == 200
        batch.refresh_from_db()
        assert batch.state == state
        assert f"is now {shown}" in response.content.decode()
    refused = admin.post(url, {"state": "live"}, follow=True)
    assert "a closed batch cannot become live" in refused.content.decode()
    batch.refresh_from_db()
    assert batch.state == "closed" and batch.closed_at is not None


def test_publishing_without_items_shows_why(admin):
    batch = make_batch(live=False, n_items=0)
    response = admin.post(f"/manage/{batch.slug}/state", {"state": "live"}, follow=True)
    assert "without items cannot be published" in response.content.decode()
    batch.refresh_from_db()
    assert batch.state == "draft"


def test_upload_rejection_lists_every_file_line_problem(admin):
    batch = make_batch(live=False, n_items=0)
    response = admin.post(
        f"/manage/{batch.slug}/items",
        {"file": SimpleUploadedFile("bad-items.jsonl", BAD_JSONL)},
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "bad-items.jsonl was rejected; nothing was imported" in page
    assert "bad-items.jsonl:2: response: must not be empty" in page
    assert "bad-items.jsonl:3: row: not valid JSON" in page
    assert Item.objects.filter(batch=batch).count() == 0

    wrong_type = admin.post(
        f"/manage/{batch.slug}/items", {"file": SimpleUploadedFile("items.txt", GOOD_JSONL)}
    )
    assert "items.txt:1: file: unsupported file type" in wrong_type.content.decode()
    missing = admin.post(f"/manage/{batch.slug}/items", {})
    assert missing.status_code == 400
    assert "Choose a .jsonl or .csv file" in missing.content.decode()


def test_good_upload_creates_items(admin):
    batch = make_batch(live=False, n_items=0)
    response = admin.post(
        f"/manage/{batch.slug}/items",
        {"file": SimpleUploadedFile("items.jsonl", GOOD_JSONL)},
        follow=True,
    )
    assert response.status_code == 200
    assert "Imported 2 items from items.jsonl" in response.content.decode()
    assert sorted(batch.items.values_list("item_id", flat=True)) == ["a1", "a2"]
    assert set(batch.items.values_list("target", flat=True)) == {batch.annotations_per_item}
    csv_file = SimpleUploadedFile(
        "more.csv", b"item_id,query_id,query,response_id,response\na3,sq1,Name a colour.,sr3,Red\n"
    )
    admin.post(f"/manage/{batch.slug}/items", {"file": csv_file})
    assert batch.items.count() == 3


def test_upload_to_a_closed_batch_is_refused_on_the_page(admin):
    batch = make_batch(n_items=1)
    admin.post(f"/manage/{batch.slug}/state", {"state": "closed"})
    response = admin.post(
        f"/manage/{batch.slug}/items", {"file": SimpleUploadedFile("items.jsonl", GOOD_JSONL)}
    )
    assert response.status_code == 400
    assert "is closed and accepts no more items" in response.content.decode()


def test_edit_saves_settings_and_refuses_n_below_what_an_item_holds(admin):
    batch = make_batch(n_items=2, per_item=3)
    for _ in range(2):
        rate(batch, make_participant(batch), times=1)  # both on the first item (position)
    original_title = batch.title
    form = admin.get(f"/manage/{batch.slug}/edit")
    assert form.status_code == 200
    assert original_title in form.content.decode()

    fields = {
        "title": "Renamed",
        "annotations_per_item": "1",
        "lease_seconds": "120",
        "quota_per_annotator": "",
        "instructions": "New *instructions*.",
        "consent_text": "",
        "completion_code": "CODE9",
        "completion_url": "",
    }
    refused = admin.post(f"/manage/{batch.slug}/edit", fields)
    assert refused.status_code == 400
    page = refused.content.decode()
    assert "an item already holds 2 labels or leases; N cannot go below 2" in page
    batch.refresh_from_db()
    assert (batch.title, batch.annotations_per_item) == (original_title, 3)  # all or nothing

    fields["annotations_per_item"] = "2"
    saved = admin.post(f"/manage/{batch.slug}/edit", fields)
    assert saved.status_code == 302
    shown = admin.get(saved["Location"]).content.decode()
    assert "Saved: Title, Labels per item (N), Lease time (seconds)" in shown
    batch.refresh_from_db()
    assert (batch.title, batch.annotations_per_item, batch.lease_seconds) == ("Renamed", 2, 120)
    assert batch.completion_code == "CODE9" and batch.instructions == "New *instructions*."
    assert set(batch.items.values_list("target", flat=True)) == {2}

    empty_title = admin.post(f"/manage/{batch.slug}/edit", {**fields, "title": ""})
    assert empty_title.status_code == 400
    assert "This field is required" in empty_title.content.decode()


def test_batch_page_shows_figures_links_and_exports(admin):
    batch = make_batch(n_items=2, per_item=2, completion_code="ABC")
    person = make_participant(batch)
    rate(batch, person, times=2)
    page = admin.get(f"/manage/{batch.slug}/").content.decode()
    assert 'id="figure-counted">2<' in page
    assert f'data-progress-url="/api/v1/batches/{batch.slug}/progress"' in page
    assert (
        f"http://testserver/work/{batch.slug}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        "&amp;STUDY_ID={{%STUDY_ID%}}&amp;SESSION_ID={{%SESSION_ID%}}"
    ) in page
    assert f'value="http://testserver/work/{batch.slug}/"' in page  # MTurk
    assert f'value="http://testserver/work/{batch.slug}/?worker="' in page
    for layout in ("long", "dense", "annotators"):
        for fmt in ("jsonl", "csv", "parquet"):
            assert f"export?layout={layout}&amp;format={fmt}" in page
    assert "export?layout=card" in page
    assert "1.5 s" in page  # median seconds per label
    assert 'data-confirm="Pause this batch?' in page and 'data-confirm="Close this batch' in page
    assert admin.get("/manage/no-such-batch/").status_code == 404


def test_progress_endpoint_answers_the_page_session(admin):
    batch = make_batch(n_items=1, per_item=2)
    rate(batch, make_participant(batch))
    data = admin.get(f"/api/v1/batches/{batch.slug}/progress").json()
    assert data["labels"]["counted"] == 1 and data["target_labels"] == 2


def test_annotator_table_for_admin_and_exclude_undo(admin):
    batch = make_batch(n_items=3, per_item=2)
    person = make_participant(batch, "PID-visible", platform="prolific")
    other = make_participant(batch, "other-person")
    rate(batch, person, times=2)
    rate(batch, other, times=1)
    pseudonym = person.annotator.pseudonym
    table = admin.get(f"/manage/{batch.slug}/annotators").content.decode()
    assert "PID-visible" in table and "other-person" in table
    row = re.search(rf'data-annotator="{pseudonym}".*?</tr>', table, re.S).group(0)
    assert "1.5 s" in row and ">2<" in row and "active" in row
    assert f"/manage/{batch.slug}/annotators/{pseudonym}/exclude" in row
    assert 'data-confirm="Exclude' in row

    response = admin.post(f"/manage/{batch.slug}/annotators/{pseudonym}/exclude", follow=True)
    assert response.status_code == 200
    assert f"Excluded {pseudonym}: 2 labels" in response.content.decode()
    labels = Label.objects.filter(annotator=person.annotator)
    assert set(labels.values_list("status", flat=True)) == {LabelStatus.EXCLUDED}
    assert Participation.objects.get(pk=person.pk).status == "excluded"
    assert Label.objects.get(annotator=other.annotator).status == LabelStatus.COUNTED
    row = re.search(
        rf'data-annotator="{pseudonym}".*?</tr>', response.content.decode(), re.S
    ).group(0)
    assert "/include" in row and "Undo" in row

    response = admin.post(f"/manage/{batch.slug}/annotators/{pseudonym}/include", follow=True)
    assert f"Included {pseudonym} again: 2 labels count again" in response.content.decode()
    assert set(labels.values_list("status", flat=True)) == {LabelStatus.COUNTED}
    assert Participation.objects.get(pk=person.pk).status == "active"

    stranger = Annotator.objects.create(platform="generic", platform_id="never-joined")
    response = admin.post(
        f"/manage/{batch.slug}/annotators/{stranger.pseudonym}/exclude", follow=True
    )
    assert "has not taken part" in response.content.decode()
    assert admin.get(f"/manage/{batch.slug}/annotators/{pseudonym}/exclude").status_code == 405


def test_attention_checks_are_shown(admin):
    batch = make_batch(n_items=5, per_item=1, check_every=1)
    # two of the five items become attention checks (no slots, a gold answer)
    checks = list(Item.objects.filter(batch=batch).order_by("position")[:2])
    Item.objects.filter(pk__in=[item.pk for item in checks]).update(
        is_check=True, gold=[5], target=0
    )
    person = make_participant(batch)
    answers = iter([5, 1])
    for _ in range(5):
        outcome = lease_next_item(batch, person)
        if outcome.assignment is None:
            break
        is_check = outcome.assignment.item_id in {item.pk for item in checks}
        submit_label(person.annotator, outcome.assignment.pk, next(answers) if is_check else 3)
    table = admin.get(f"/manage/{batch.slug}/annotators").content.decode()
    assert "1 / 2 passed" in table


def test_preview_renders_the_worker_page_and_stores_nothing(admin, researcher):
    batch = make_batch(n_items=3, per_item=2)
    Item.objects.filter(batch=batch, item_id="item-1").update(gold=[4, 5])
    counts_before = (
        Assignment.objects.count(),
        Annotator.objects.count(),
        Label.objects.count(),
        Participation.objects.count(),
    )
    reserved_before = list(batch.items.order_by("pk").values_list("reserved_count", flat=True))

    first = admin.get(f"/manage/{batch.slug}/preview")
    assert first.status_code == 200
    page = first.content.decode()
    assert 'id="choice-form"' in page and 'id="rating"' in page  # the worker's markup
    assert "Item 1 of 3" in page and "item-0" in page
    assert "Answer 0" in page  # the item's text, as JSON for the page to render
    assert "worker.js" not in page and "api/v1/work" not in page
    assert "Very poor" in page and "Excellent" in page

    chosen = researcher.get(f"/manage/{batch.slug}/preview", {"item": "item-1"})
    assert chosen.status_code == 200
    assert "Item 2 of 3" in chosen.content.decode()
    assert "attention check: accepts 4, 5" in chosen.content.decode()
    assert admin.get(f"/manage/{batch.slug}/preview", {"item": "nope"}).status_code == 404

    assert (
        Assignment.objects.count(),
        Annotator.objects.count(),
        Label.objects.count(),
        Participation.objects.count(),
    ) == counts_before
    assert (
        list(batch.items.order_by("pk").values_list("reserved_count", flat=True)) == reserved_before
    )
    session = admin.session
    assert "worker_annotators" not in session


def test_preview_of_pairwise_and_of_an_empty_batch(admin):
    pairwise = make_batch(kind="pairwise", n_items=1)
    page = admin.get(f"/manage/{pairwise.slug}/preview").content.decode()
    assert 'id="response-1"' in page and "Response 1 is much better" in page
    empty = make_batch(live=False, n_items=0)
    response = admin.get(f"/manage/{empty.slug}/preview")
    assert response.status_code == 200
    assert "has no items yet" in response.content.decode()


def test_service_errors_never_show_a_stack_trace(admin):
    batch = make_batch(n_items=1)
    response = admin.post(f"/manage/{batch.slug}/state", {"state": "bogus"}, follow=True)
    assert response.status_code == 200
    assert "is not one of" in response.content.decode()
    assert "Traceback" not in response.content.decode()


def test_admin_edits_the_rating_button_texts_and_workers_see_them():
    batch = make_batch()
    client = staff_client("admin", "buttons")
    form = client.get(f"/manage/{batch.slug}/edit")
    assert b"Button 1 text" in form.content and b"Very poor" in form.content
    data = {
        "title": batch.title,
        "annotations_per_item": batch.annotations_per_item,
        "lease_seconds": batch.lease_seconds,
        "completion_code": batch.completion_code,
        "button_1": "Useless",
        "button_2": "Poor",
        "button_3": "Acceptable",
        "button_4": "Good",
        "button_5": "Superb",
    }
    assert client.post(f"/manage/{batch.slug}/edit", data).status_code == 302
    batch.refresh_from_db()
    assert batch.scale()[0] == (1, "Useless") and batch.scale()[4] == (5, "Superb")
    worker = Client()
    worker.get(f"/work/{batch.slug}/", {"worker": "w"})
    worker.post(f"/work/{batch.slug}/consent")
    assert b"Superb" in worker.get(f"/work/{batch.slug}/task").content


def test_the_batch_page_offers_every_status_and_its_link_holds_them():
    import html
    import re as _re
    from datetime import timedelta

    from django.utils import timezone

    from annotation.models import Assignment
    from annotation.services.labelling import submit_label
    from annotation.services.leasing import lease_next_item
    from tests.factories import make_batch, make_participant
    from tests.staff import staff_client

    batch = make_batch(n_items=1, per_item=1)
    slow, quick = make_participant(batch, "slow"), make_participant(batch, "quick")
    held = lease_next_item(batch, slow).assignment
    Assignment.objects.filter(pk=held.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    submit_label(quick.annotator, lease_next_item(batch, quick).assignment.pk, 3, 2000)
    assert submit_label(slow.annotator, held.pk, 4, 2000).status == "surplus"
    staff = staff_client("researcher")
    page = staff.get(f"/manage/{batch.slug}/").content.decode()
    assert "Labels, every status" in page
    links = [html.unescape(url) for url in _re.findall(r'href="([^"]*format=jsonl[^"]*)"', page)]
    every = [url for url in links if "all_statuses=1" in url]
    plain = [url for url in links if "layout=long" in url and "all_statuses" not in url]
    assert len(every) == 1 and len(plain) == 1

    def rows(url):
        return b"".join(staff.get(url).streaming_content).decode().splitlines()

    statuses = [_re.search(r'"status": "(\w+)"', row).group(1) for row in rows(every[0])]
    assert sorted(statuses) == ["counted", "surplus"]
    assert len(rows(plain[0])) == 1


def test_the_new_batch_form_takes_button_texts_and_the_overview_shows_the_design():
    from annotation.forms import BatchCreateForm
    from annotation.models import Batch
    from tests.annotation.kinds.test_short_text import form_defaults
    from tests.staff import staff_client

    staff = staff_client("admin")
    page = staff.get("/manage/new").content.decode()
    assert 'data-for-kind="pairwise"' in page and 'data-for-kind="short_text"' in page
    posted = form_defaults(BatchCreateForm())
    posted = {key: value for key, value in posted.items() if value is not False}
    posted.update(
        slug="designed", kind="absolute", absolute__button_5="Brilliant", check_every="8",
        bundle_by="query", bundles_per_participant="1", screen_out_code="SO9",
    )  # fmt: skip
    response = staff.post("/manage/new", posted)
    assert response.status_code == 302, response.content.decode()[:2000]
    batch = Batch.objects.get(slug="designed")
    assert batch.scale_labels == {"5": "Brilliant"}  # the unchanged defaults are not stored
    overview = staff.get("/manage/designed/").content.decode()
    for shown in ("Study design", "Attention check every K items", "8", "Bundles", "query",
                  "Screen-out code", "SO9"):  # fmt: skip
        assert shown in overview
