"""The exactly-N counters have one home: ``annotation.services.slots``.

The first test reads every module of the project and fails if any other one writes an
item's ``reserved_count``, ``counted_count`` or ``target`` (as a keyword argument of a
call — ``update``, ``create``, a model constructor — or by assigning the attribute).
The others try the counter rules directly on the database.
"""

import ast
from pathlib import Path

import pytest

from annotation.models import Item
from annotation.services import slots
from core.errors import Conflict
from tests.factories import make_batch

ROOT = Path(__file__).resolve().parents[2]
COUNTERS = {"reserved_count", "counted_count", "target"}
APPS = ["core", "annotation", "analysis", "diversity", "demo", "config"]
HOME = ROOT / "annotation" / "services" / "slots.py"


WRITE_METHODS = {"update", "create", "get_or_create", "update_or_create"}


def _is_write_call(call: ast.Call) -> bool:
    """``qs.update(...)``, ``Model.objects.create(...)``, a model constructor ``Item(...)``;
    not ``filter``/``Q``/``Count``, whose keyword arguments only read."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in WRITE_METHODS or (name[:1].isupper() and name not in {"Q", "F", "Count"})


def _writes_to_counters(path: Path, root: Path = ROOT) -> list[str]:
    return writes_to_fields(path, COUNTERS, root)


def writes_to_fields(path: Path, fields: set[str], root: Path = ROOT) -> list[str]:
    """Where the module writes any of ``fields`` (a keyword of a writing call, or an
    attribute assignment)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_write_call(node):
            for keyword in node.keywords:
                if keyword.arg in fields:
                    found.append(f"{path.relative_to(root)}:{node.lineno}: {keyword.arg}=")
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and target.attr in fields:
                found.append(f"{path.relative_to(root)}:{node.lineno}: .{target.attr} =")
    return found


def test_only_the_slots_module_writes_the_counters():
    modules = [
        path
        for app in APPS
        if (ROOT / app).exists()
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts and path != HOME
    ]
    assert len(modules) > 50  # the walk really saw the project
    offenders = [hit for path in modules for hit in _writes_to_counters(path)]
    assert offenders == []


def test_the_guard_sees_a_write(tmp_path):
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text(
        "Item.objects.filter(pk=1).update(counted_count=5)\nitem.target = 3\n"
        "Item(target=2)\nItem.objects.filter(Q(target=2), reserved_count=1)\n",
        encoding="utf-8",
    )
    assert len(_writes_to_counters(sneaky, root=tmp_path)) == 3  # the filter only reads


@pytest.mark.django_db
def test_take_slot_never_exceeds_target():
    batch = make_batch(n_items=1, per_item=2)
    item = Item.objects.get(batch=batch)
    assert slots.take_slot(item.pk) and slots.take_slot(item.pk)
    assert not slots.take_slot(item.pk)
    item.refresh_from_db()
    assert (item.reserved_count, item.counted_count, item.target) == (2, 0, 2)


@pytest.mark.django_db
def test_count_if_room_counts_only_into_a_free_slot():
    batch = make_batch(n_items=1, per_item=1)
    item = Item.objects.get(batch=batch)
    assert slots.count_if_room(item.pk)
    assert not slots.count_if_room(item.pk)  # the late label becomes surplus
    item.refresh_from_db()
    assert (item.reserved_count, item.counted_count) == (1, 1)
    assert slots.uncount([(item.pk, "")]) == 1
    item.refresh_from_db()
    assert (item.reserved_count, item.counted_count) == (0, 0)


@pytest.mark.django_db
def test_change_target_refuses_to_go_below_what_an_item_holds():
    batch = make_batch(n_items=2, per_item=3)
    first = Item.objects.filter(batch=batch).order_by("position").first()
    slots.take_slot(first.pk)
    slots.take_slot(first.pk)
    with pytest.raises(Conflict):
        slots.change_target(batch, 1)
    slots.change_target(batch, 2)
    assert set(Item.objects.filter(batch=batch).values_list("target", flat=True)) == {2}
