"""The demo that bin/run loads: live batches of both kinds, scores, a staff login."""

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from analysis.models import ScoreSource
from annotation.models import Batch

pytestmark = pytest.mark.django_db


def test_load_demo_is_ready_to_rate_and_idempotent(monkeypatch):
    monkeypatch.setenv("DEMO_ADMIN_PASSWORD", "demo-pass-1")
    first, second = io.StringIO(), io.StringIO()
    call_command("load_demo", stdout=first)
    call_command("load_demo", stdout=second)
    batches = {b.slug: b for b in Batch.objects.all()}
    assert set(batches) == {"demo-absolute", "demo-pairwise"}
    assert all(b.state == "live" and b.items.count() >= 8 for b in batches.values())
    assert {s.kind for s in ScoreSource.objects.all()} == {"reward_model", "lm", "judge"}
    assert "/work/demo-absolute/?worker=" in first.getvalue()
    assert "/work/demo-pairwise/?worker=" in first.getvalue()
    assert User.objects.get(username="admin").check_password("demo-pass-1")
    assert Batch.objects.count() == 2  # the second run changed nothing
