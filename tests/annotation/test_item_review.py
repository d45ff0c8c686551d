"""The staff's review of one item: every label with its annotator, time, status, shown
order, value (stored and as chosen) and comment; reachable from the annotators page and
the preview; researchers see pseudonyms only; text is escaped."""

import pytest

from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.factories import make_batch, make_participant
from tests.staff import staff_client

pytestmark = pytest.mark.django_db


def _rate(batch, worker, value, comment=None, cant_judge=None):
    participation = make_participant(batch, worker)
    lease = lease_next_item(batch, participation).assignment
    submit_label(
        participation.annotator, lease.pk, value, 1500, comment=comment, cant_judge=cant_judge
    )
    return participation.annotator, lease


def test_an_items_labels_with_order_value_and_comment():
    batch = make_batch(
        kind="pairwise", n_items=1, per_item=3, allow_cant_judge=True, comment_box="optional"
    )
    first, lease = _rate(batch, "platform-id-first-rater", 2, comment="<b>A</b> cites a source")
    second, _ = _rate(batch, "platform-id-second-rater", None, cant_judge=True)
    item = lease.item
    page = staff_client("researcher").get(f"/manage/{batch.slug}/item/{item.item_id}")
    assert page.status_code == 200
    html = page.content.decode()
    assert first.pseudonym in html and second.pseudonym in html
    assert first.platform_id not in html  # researchers see pseudonyms only
    assert "&lt;b&gt;A&lt;/b&gt; cites a source" in html and "<b>A</b>" not in html
    assert "could not judge" in html
    stored = lease.item.labels.get(annotator=first)
    # the value as stored (relative to A and B) and as chosen (relative to the order shown)
    assert f"<code>{stored.value}</code>" in html and "<code>2</code>" in html
    assert ("A first" if lease.shown_order == "ab" else "B first") in html
    assert "1 counted" in html and "1 cant_judge" in html and "1 with a comment" in html


def test_the_lookup_leads_to_the_item_and_says_when_there_is_none():
    batch = make_batch(n_items=2, per_item=1)
    client = staff_client("admin")
    annotators = client.get(f"/manage/{batch.slug}/annotators").content.decode()
    assert f'action="/manage/{batch.slug}/item"' in annotators
    item_id = batch.items.first().item_id
    found = client.get(f"/manage/{batch.slug}/item", {"item_id": item_id})
    assert found.status_code == 302 and found["Location"].endswith(f"/item/{item_id}")
    missing = client.get(f"/manage/{batch.slug}/item", {"item_id": "no-such-<item>"})
    assert missing.status_code == 404
    assert "has no item &#x27;no-such-&lt;item&gt;&#x27;" in missing.content.decode()
    assert client.get(f"/manage/{batch.slug}/item", {"item_id": ""}).status_code == 400
    preview = client.get(f"/manage/{batch.slug}/preview").content.decode()
    assert (
        f'href="/manage/{batch.slug}/item/{batch.items.order_by("position").first().item_id}"'
        in preview
    )


def test_an_item_id_with_slashes_and_spaces_opens():
    batch = make_batch(n_items=0)
    import io

    from annotation.services.importing import import_items

    line = b'{"item_id": "set 1/item 7", "query_id": "q", "query": "Q?", "response_id": "r", '
    line += b'"response": "R."}\n'
    upload = io.BytesIO(line)
    upload.name = "items.jsonl"
    import_items(batch, upload, filename="items.jsonl")
    page = staff_client("admin").get(f"/manage/{batch.slug}/item/set 1/item 7")
    assert page.status_code == 200 and "set 1/item 7" in page.content.decode()


def test_anonymous_and_roleless_users_are_kept_out():
    from django.test import Client

    batch = make_batch(n_items=1)
    item_id = batch.items.first().item_id
    assert Client().get(f"/manage/{batch.slug}/item/{item_id}").status_code == 302
    assert staff_client(None).get(f"/manage/{batch.slug}/item/{item_id}").status_code == 403
