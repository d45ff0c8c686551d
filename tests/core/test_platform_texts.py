"""Small platform texts people read: a broken JSON line's message, and which navigation
entry is the current page."""

import pytest

from core.extensions import nav_links
from core.tabular import Problems, json_object
from tests.staff import staff_user


def test_a_control_character_in_a_json_line_is_named_once_with_its_column():
    problems = Problems("bad.jsonl")
    assert json_object(4, '{"query": "two\nlines"}', problems) is None
    assert problems.lines() == [
        "bad.jsonl:4: row: not valid JSON: Invalid control character at column 15"
    ]


@pytest.mark.django_db
def test_only_the_longest_matching_navigation_entry_is_current():
    admin = staff_user("admin")
    current = {
        path: [link["label"] for link in nav_links(admin, path) if link["current"]]
        for path in ("/manage/", "/manage/some-batch/", "/manage/corpora/", "/manage/census/x/")
    }
    assert current == {
        "/manage/": ["Batches"],
        "/manage/some-batch/": ["Batches"],
        "/manage/corpora/": ["Corpora"],
        "/manage/census/x/": ["Census"],
    }
