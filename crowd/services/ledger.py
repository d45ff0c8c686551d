"""The one writer of a bonus run's state: each change is audited in the same transaction."""

from django.db import transaction

from core import audit
from core.audit import Actor
from crowd.models import BonusRun


def set_state(run: BonusRun, state: str, *, actor: Actor, detail: str = "", **fields) -> BonusRun:
    with transaction.atomic():
        run = BonusRun.objects.select_for_update().get(pk=run.pk)
        previous = run.state
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
