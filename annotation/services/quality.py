"""Quality control: attention checks, repeated items, speed and straight-line flags, and
the automatic exclusion they can lead to (docs/SPEC.md, "Measurement validity").

* **Attention checks** are items imported with ``check: true`` and a ``gold`` answer.
  They hold no slot of any item's N; each annotator meets one after about every
  ``check_every`` regular items (jittered by up to a third either way, so the position
  cannot be learned), drawn from the checks they have not seen; someone who has seen
  them all gets no more. A check pair is shown in a random order per lease, like a
  regular pair. Their labels are stored with status ``check``, ``check_passed`` (judged
  on the canonical value) and the order shown.
* **Repeats**: after about every ``repeat_every`` regular items, an item the annotator
  labelled earlier (not the one just done) is shown again, in the same order as before;
  the label is stored with status ``repeat`` and never counted — it measures test–retest
  consistency.
* **Flags** on regular labels: ``too_fast`` (under ``min_seconds_per_item``) and
  ``straightlined`` (the ``straightline_run``-th or later identical value in a row).
* **Policies** act on these (``annotation.services.policies``).
"""

import random
from collections.abc import Callable
from datetime import datetime

from annotation.models import (
    REGULAR_STATUSES,
    Assignment,
    Batch,
    Item,
    Label,
    Participation,
    Purpose,
)
from annotation.services.leases import new_lease
from annotation.services.slots import ORDERS


def next_due(every: int, done: int, rng: random.Random | None = None) -> int:
    """The count of regular items after which the next check (or repeat) is due."""
    spread = every // 3
    return done + max(1, every + (rng or random).randint(-spread, spread))


def is_due(every: int | None, due_after: int | None, done: int) -> bool:
    """Whether an attention check (or a repeat) is due for a participant who did ``done``
    regular items: the batch has them (``every``) and the participant reached their due
    point — or has none drawn yet, which the caller draws under the participant's lock
    (``due_extra``). The one rule; the leasing path asks it too, and the crowdworker's
    one-statement request for work says it in SQL (``work_state``)."""
    return bool(every) and (due_after is None or done >= due_after)


def due_extra(
    batch: Batch,
    participation: Participation,
    done: int,
    now: datetime,
    *,
    has_regular_work: Callable[[], bool],
) -> Assignment | None:
    """An attention check or a repeat lease, when one is due; the caller holds the
    participation's row lock. Neither is handed out once no regular work remains."""
    changed: list[str] = []
    for field, every in (
        ("next_check_after", batch.check_every),
        ("next_repeat_after", batch.repeat_every),
    ):
        if every and getattr(participation, field) is None:
            setattr(participation, field, next_due(every, 0))
            changed.append(field)
    lease = None
    if is_due(batch.check_every, participation.next_check_after, done) and has_regular_work():
        participation.next_check_after = next_due(batch.check_every, done)
        changed.append("next_check_after")
        lease = _check_lease(batch, participation.annotator_id, now)
    elif is_due(batch.repeat_every, participation.next_repeat_after, done) and has_regular_work():
        participation.next_repeat_after = next_due(batch.repeat_every, done)
        changed.append("next_repeat_after")
        lease = _repeat_lease(batch, participation.annotator_id, now)
    if changed:
        participation.save(update_fields=sorted(set(changed)))
    return lease


def _check_lease(batch: Batch, annotator_id: int, now: datetime) -> Assignment | None:
    unseen = (
        Item.objects.filter(batch=batch, is_check=True)
        .exclude(assignments__annotator_id=annotator_id)
        .values_list("pk", flat=True)
    )
    pool = list(unseen)
    if not pool:
        return None  # every check seen: no more checks for this annotator
    # A pair is shown in a random order, like a regular pair: in the imported order
    # always, a worker who always picks "Response 1" would pass every check whose answer
    # is A. The answer is judged in canonical terms (``TaskKind.canonical``), so a gold
    # tie stays a tie whichever order was shown.
    order = random.choice(ORDERS) if batch.task_kind.comparison else ""
    return new_lease(
        batch, annotator_id, random.choice(pool), now, purpose=Purpose.CHECK, shown_order=order
    )


def _repeat_lease(batch: Batch, annotator_id: int, now: datetime) -> Assignment | None:
    labelled = list(
        Label.objects.filter(batch=batch, annotator_id=annotator_id, status__in=REGULAR_STATUSES)
        .order_by("-submitted_at", "-pk")
        .values_list("item_id", "shown_order")
    )
    repeated = set(
        Assignment.objects.filter(
            batch=batch, annotator_id=annotator_id, purpose=Purpose.REPEAT
        ).values_list("item_id", flat=True)
    )
    pool = [(item, order) for item, order in labelled[1:] if item not in repeated]
    if not pool:
        return None
    item_pk, order = random.choice(pool)
    return new_lease(batch, annotator_id, item_pk, now, purpose=Purpose.REPEAT, shown_order=order)


def flags(batch: Batch, annotator_id: int, value: int | None, duration_ms: int | None):
    """(too_fast, straightlined) of a new regular label, before it is stored."""
    too_fast = bool(
        batch.min_seconds_per_item
        and duration_ms is not None
        and duration_ms < batch.min_seconds_per_item * 1000
    )
    run = batch.straightline_run
    straightlined = False
    if run and run > 1 and value is not None:
        previous = list(
            Label.objects.filter(
                batch=batch, annotator_id=annotator_id, status__in=REGULAR_STATUSES
            )
            .order_by("-submitted_at", "-pk")
            .values_list("value", flat=True)[: run - 1]
        )
        straightlined = len(previous) == run - 1 and all(v == value for v in previous)
    elif run == 1 and value is not None:
        straightlined = True
    return too_fast, straightlined
