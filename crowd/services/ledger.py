"""The one writer of a bonus run's state: each change is audited in the same transaction."""

from django.db import transaction

from core import audit
from core.audit import Actor
from core.errors import Conflict
from crowd.models import BonusRun


def set_state(
    run: BonusRun,
    state: str,
    *,
    actor: Actor,
    detail: str = "",
    expected: tuple[str, ...] = (),
    **fields,
) -> BonusRun:
    """Move ``run`` to ``state``. With ``expected``, only from one of those states, read
    under the row's lock: two requests paying the same run cannot both take a step (the
    second gets ``Conflict`` and sends nothing)."""
    with transaction.atomic():
        run = BonusRun.objects.select_for_update().get(pk=run.pk)
        previous = run.state
        if expected and previous not in expected:
            raise Conflict(
                f"bonus run {run.pk} is {previous} now: another request is settling it; "
                f"reload to see how it ended"
            )
        run.state = state
        run.detail = detail[:2000]
        for name, value in fields.items():
            setattr(run, name, value)
        run.save()
        audit.record(
            f"{run.platform}.bonus.{state}",
            subject=run.batch,
            actor=actor,
            changes={
                "run": run.pk,
                "state": [previous, state],
                **{k: str(v) for k, v in fields.items()},
            },
            reason=detail[:2000],
        )
    return run
