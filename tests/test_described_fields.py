"""Every id a form field's aria-describedby names is on the page: the help text and the
field's errors are read out with the field (Django names them ``<id>_helptext`` and
``<id>_error``; a template that gives them other ids leaves the field without them)."""

import re

import pytest

from tests.factories import make_batch
from tests.staff import staff_client

pytestmark = pytest.mark.django_db


def missing_descriptions(html: str) -> list[str]:
    ids = set(re.findall(r'\sid="([^"]+)"', html))
    named = [
        name for refs in re.findall(r'aria-describedby="([^"]+)"', html) for name in refs.split()
    ]
    return [name for name in named if name not in ids]


def test_a_refused_batch_form_links_each_error_and_help_to_its_field():
    page = staff_client("admin").post(
        "/manage/new", {"slug": "described", "kind": "absolute", "bundle_order": "fixed"}
    )
    html = page.content.decode()
    assert page.status_code in (200, 400) and "aria-invalid" in html
    assert "id_bundle_order_error" in html
    assert missing_descriptions(html) == []


def test_the_run_form_links_its_help_to_its_fields():
    batch = make_batch(n_items=1)
    html = staff_client("researcher").get(f"/manage/{batch.slug}/report").content.decode()
    assert 'name="bootstrap"' in html
    assert missing_descriptions(html) == []


def test_a_group_of_checkboxes_is_named_by_a_legend_not_an_empty_label():
    html = staff_client("admin").get("/manage/new").content.decode()
    assert 'for=""' not in html
    assert "<legend>Languages offered" in html
