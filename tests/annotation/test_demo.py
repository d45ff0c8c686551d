"""The demo that bin/run loads: a live batch of each kind, scores, a staff login."""

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
    assert {slug: b.kind for slug, b in batches.items()} == {
        "demo-absolute": "absolute",
        "demo-pairwise": "pairwise",
        "demo-short-text": "short_text",
        "demo-similarity": "similarity",
        "demo-bundled": "absolute",
    }
    assert all(b.state == "live" and b.items.count() >= 6 for b in batches.values())
    assert batches["demo-absolute"].items.count() >= 8
    assert batches["demo-short-text"].kind_settings["normaliser"] == "census"
    assert {s.kind for s in ScoreSource.objects.all()} == {"reward_model", "lm", "judge"}
    assert "/work/demo-absolute/?worker=" in first.getvalue()
    for slug in batches:
        assert f"/work/{slug}/?worker=" in first.getvalue()
    assert User.objects.get(username="admin").check_password("demo-pass-1")
    assert Batch.objects.count() == 5  # the second run changed nothing
    bundled = batches["demo-bundled"]
    assert (bundled.bundle_by, bundled.bundles_per_participant) == ("query", 1)
    assert bundled.items.values("bundle").distinct().count() == 3
