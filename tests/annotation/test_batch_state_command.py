"""``manage.py batch_state`` and ``import_items --publish``: a study run from the command
line alone, with the batch page's rules and messages and the command line in the audit
trail."""

import io
import itertools
import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.models import Batch, BatchState
from core.audit import COMMAND_LINE, history
from tests.factories import make_batch

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def items_file(tmp_path, n: int = 3):
    path = tmp_path / "items.jsonl"
    rows = [
        {
            "item_id": f"cli-{index}",
            "query_id": "cli-q",
            "query": "Name a colour.",
            "response_id": f"cli-r{index}",
            "response": f"Colour {index}",
        }
        for index in range(n)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


_newcomers = itertools.count(1)


def worker_may_enter(slug: str) -> bool:
    """The crowdworker entry page answers a newcomer 200 for a live batch, 403 otherwise."""
    worker = f"cli-worker-{next(_newcomers)}"
    status = Client().get(f"/work/{slug}/", {"worker": worker}).status_code
    assert status in (200, 403)
    return status == 200


def test_a_study_scripted_from_the_command_line_goes_live(tmp_path):
    instructions = tmp_path / "instructions.md"
    instructions.write_text("Rate each answer.", encoding="utf-8")
    run("create_batch", "cli-study", "--kind", "absolute", "--per-item", "3",
        "--instructions", str(instructions))  # fmt: skip
    assert not worker_may_enter("cli-study")

    out = run("import_items", "cli-study", str(items_file(tmp_path)), "--publish")

    assert out.splitlines() == [
        "Imported 3 items into cli-study (1 query, 3 responses new)",
        "Batch cli-study is now Live.",
    ]
    batch = Batch.objects.get(slug="cli-study")
    assert batch.state == BatchState.LIVE and batch.published_at is not None
    assert worker_may_enter("cli-study")
    events = list(history(batch))
    assert [event.action for event in events[:2]] == ["batch.publish", "items.import"]
    assert {event.actor_name for event in events} == {COMMAND_LINE}

    assert run("batch_state", "cli-study", "pause") == "Batch cli-study is now Paused.\n"
    assert not worker_may_enter("cli-study")
    assert run("batch_state", "cli-study", "resume") == "Batch cli-study is now Live.\n"
    assert worker_may_enter("cli-study")
    assert run("batch_state", "cli-study", "closed") == "Batch cli-study is now Closed.\n"
    assert not worker_may_enter("cli-study")
    batch.refresh_from_db()
    assert batch.state == BatchState.CLOSED and batch.closed_at is not None
    actions = [event.action for event in history(batch)][:4]
    assert actions == ["batch.close", "batch.resume", "batch.pause", "batch.publish"]


def test_every_state_word_and_alias(tmp_path):
    batch = make_batch(live=False, slug="words")
    assert run("batch_state", "words", "publish") == "Batch words is now Live.\n"
    assert run("batch_state", "words", "live") == "Batch words is already Live; nothing changed.\n"
    assert run("batch_state", "words", "paused") == "Batch words is now Paused.\n"
    assert run("batch_state", "words", "live") == "Batch words is now Live.\n"
    assert run("batch_state", "words", "close") == "Batch words is now Closed.\n"
    batch.refresh_from_db()
    assert batch.state == BatchState.CLOSED


def test_the_page_s_rules_and_messages_refuse_what_the_page_refuses():
    make_batch(live=False, n_items=0, slug="empty")
    with pytest.raises(CommandError, match="without items cannot be published"):
        run("batch_state", "empty", "live")
    with pytest.raises(CommandError, match="only a paused batch can be resumed.*publish it"):
        run("batch_state", "empty", "resume")
    with pytest.raises(CommandError, match="a draft batch cannot become paused"):
        run("batch_state", "empty", "pause")
    assert Batch.objects.get(slug="empty").state == BatchState.DRAFT

    make_batch(slug="done")
    run("batch_state", "done", "close")
    with pytest.raises(CommandError, match="a closed batch cannot become live"):
        run("batch_state", "done", "publish")
    with pytest.raises(CommandError, match="batch 'nope' does not exist"):
        run("batch_state", "nope", "live")
    with pytest.raises(CommandError):
        run("batch_state", "done", "archived")  # not a state: argparse refuses it


def test_the_page_says_the_same_as_the_command(client, django_user_model):
    from django.contrib.auth.models import Group

    admin = django_user_model.objects.create_user("state-admin", password="pw-12345678")
    admin.groups.add(Group.objects.get(name="admin"))
    client.force_login(admin)
    make_batch(live=False, slug="same")
    response = client.post("/manage/same/state", {"state": "live"}, follow=True)
    assert "Batch same is now Live." in response.content.decode()
    response = client.post("/manage/same/state", {"state": "live"}, follow=True)
    assert "Batch same is already Live; nothing changed." in response.content.decode()


def test_a_rejected_file_publishes_nothing(tmp_path):
    make_batch(live=False, n_items=0, slug="bad-file")
    path = tmp_path / "bad.jsonl"
    path.write_text('{"item_id": "x"}\n', encoding="utf-8")
    with pytest.raises(CommandError, match="was rejected, nothing was imported"):
        run("import_items", "bad-file", str(path), "--publish")
    assert Batch.objects.get(slug="bad-file").state == BatchState.DRAFT


def test_publish_after_import_into_a_live_batch_changes_nothing(tmp_path):
    make_batch(slug="already")
    out = run("import_items", "already", str(items_file(tmp_path, 1)), "--publish")
    assert out.splitlines()[-1] == "Batch already is already Live; nothing changed."
