"""Bonuses computed from the labels, paid once (the ledger: ``BonusRun``, ``BonusLine``).

What each participant earns:

* ``per_item`` AMOUNT — AMOUNT for each of their counted or surplus labels (labels of
  regular items that were not excluded; checks and repeats earn nothing);
* ``top_up_hourly`` RATE — enough for their pay to reach RATE per hour of **active
  time** (``crowd.services.active_time``: the time the page measured on each of their
  labels in the batch, checks and repeats included, each at most as long as its lease
  existed; time between items, reading the instructions and the consent are not
  measured and not counted). Owed = RATE × active hours − the batch's
  ``reward_per_participant`` − every bonus already paid to them in the batch.

Only participants whose submission the platform shows as taking part (Prolific:
``APPROVED`` or ``AWAITING REVIEW``; MTurk: ``Submitted`` or ``Approved``) and who are not
excluded are paid. What is owed is what they earn minus the lines of runs that may
have paid (``BonusRun.MAY_HAVE_PAID``), so a repeated run pays only what was added since,
and a run whose outcome is unknown blocks further payment until it is resolved.
"""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from django.db import transaction
from django.db.models import Count, Q

from annotation.models import Batch, Label, LabelStatus, Participation
from core import audit
from core.audit import Actor
from core.errors import Conflict, InvalidInput
from crowd.models import BonusLine, BonusRun, Platform, PlatformSubmission
from crowd.services.active_time import active_ms_by_annotator
from crowd.services.ledger import set_state

CENT = Decimal("0.01")
# a rate's precision (``BonusRun.rate``): a per-item amount may be a fraction of a cent
RATE_DECIMALS = 4
RATE_STEP = Decimal(1).scaleb(-RATE_DECIMALS)
TAKING_PART = {
    Platform.PROLIFIC: ("APPROVED", "AWAITING REVIEW"),
    Platform.MTURK: ("Submitted", "Approved"),
}
UNSETTLED = ("planned", "created", "paying", "unknown")


@dataclass(frozen=True)
class BonusRow:
    participant_id: str
    annotator: str
    assignment_id: str
    paid_labels: int
    active_ms: int
    earned: Decimal
    already: Decimal
    owed: Decimal


def compute(batch: Batch, platform: str, basis: str, rate: Decimal) -> list[BonusRow]:
    """Every eligible participant's bonus row (owed may be zero)."""
    rate = _amount(str(basis), rate)  # the parameter is named by its basis
    if basis == BonusRun.Basis.TOP_UP_HOURLY and batch.reward_per_participant is None:
        raise InvalidInput(
            "reward_per_participant", "is needed for a top-up: set it on the batch first"
        )
    submissions = {
        s.participant_id: s
        for s in PlatformSubmission.objects.filter(
            batch=batch, platform=platform, status__in=TAKING_PART[platform]
        ).order_by("submission_id")
    }
    participations = Participation.objects.filter(
        batch=batch,
        annotator__platform=platform,
        annotator__platform_id__in=list(submissions),
        status=Participation.Status.ACTIVE,
    ).select_related("annotator")
    figures = {
        row["annotator_id"]: row
        for row in Label.objects.filter(batch=batch)
        .values("annotator_id")
        .annotate(paid=Count("pk", filter=Q(status__in=[LabelStatus.COUNTED, LabelStatus.SURPLUS])))
    }
    active = active_ms_by_annotator(batch)
    paid_so_far = _paid_so_far(batch, platform)
    rows = []
    for participation in sorted(participations, key=lambda p: p.annotator.platform_id):
        pid = participation.annotator.platform_id
        figure = figures.get(participation.annotator_id, {"paid": 0})
        active_ms = active.get(participation.annotator_id, 0)
        if basis == BonusRun.Basis.PER_ITEM:
            earned = rate * figure["paid"]
            already = paid_so_far.get((pid, BonusRun.Basis.PER_ITEM), Decimal(0))
        else:
            hours = Decimal(active_ms) / Decimal(3_600_000)
            earned = max(Decimal(0), rate * hours - batch.reward_per_participant)
            already = sum(
                (amount for (who, _), amount in paid_so_far.items() if who == pid), Decimal(0)
            )
        earned = earned.quantize(CENT, ROUND_HALF_UP)
        owed = max(Decimal(0), earned - already).quantize(CENT, ROUND_HALF_UP)
        rows.append(
            BonusRow(
                participant_id=pid,
                annotator=participation.annotator.pseudonym,
                assignment_id=submissions[pid].submission_id,
                paid_labels=figure["paid"],
                active_ms=active_ms,
                earned=earned,
                already=already,
                owed=owed,
            )
        )
    return rows


def _paid_so_far(batch: Batch, platform: str) -> dict[tuple[str, str], Decimal]:
    """(participant, basis) → the amounts of lines that may have reached them."""
    totals: dict[tuple[str, str], Decimal] = {}
    lines = BonusLine.objects.filter(run__batch=batch, run__platform=platform).filter(
        Q(run__state__in=BonusRun.MAY_HAVE_PAID) & ~Q(state="failed")
        | Q(state__in=["sent", "paid", "unknown"])
    )
    for pid, basis, amount in lines.values_list("participant_id", "run__basis", "amount"):
        totals[(pid, basis)] = totals.get((pid, basis), Decimal(0)) + amount
    return totals


def unsettled_run(batch: Batch, platform: str) -> BonusRun | None:
    return (
        BonusRun.objects.filter(batch=batch, platform=platform, state__in=UNSETTLED)
        .order_by("pk")
        .first()
    )


def how_to_settle(batch: Batch, run: BonusRun) -> str:
    """What a person does about an unsettled run before anything more is paid."""
    if run.platform == Platform.PROLIFIC and run.state in (
        BonusRun.State.PAYING,
        BonusRun.State.UNKNOWN,
    ):
        return (
            f"bonus run {run.pk} may have paid (its answer was lost): check the study's "
            f"bonus payments on Prolific, then `manage.py prolific bonus {batch.slug} "
            f"--resolve {run.pk} paid` (or unpaid)."
        )
    if run.platform == Platform.PROLIFIC and run.state == BonusRun.State.CREATED:
        return f"bonus run {run.pk} is set up on Prolific but not paid: --apply pays it."
    if run.platform == Platform.PROLIFIC:
        return f"bonus run {run.pk} was planned but never set up: --apply replaces it."
    return f"bonus run {run.pk} is {run.state}: --apply resumes it with the same tokens."


def plan_run(
    batch: Batch, platform: str, basis: str, rate: Decimal, rows: list[BonusRow], actor: Actor
) -> BonusRun | None:
    """Store the intent (the run and its lines) before anything is sent; ``None`` when
    nobody is owed anything."""
    owed = [row for row in rows if row.owed > 0]
    if not owed:
        return None
    with transaction.atomic():
        run = BonusRun.objects.create(
            batch=batch,
            platform=platform,
            basis=basis,
            rate=rate,
            currency=batch.reward_currency,
            created_by=actor.name[:200],
        )
        BonusLine.objects.bulk_create(
            BonusLine(
                run=run,
                participant_id=row.participant_id,
                assignment_id=row.assignment_id,
                amount=row.owed,
                request_token=f"b{batch.pk}-r{run.pk}-{row.participant_id}"[:64],
            )
            for row in owed
        )
        audit.record(
            f"{platform}.bonus.plan",
            subject=batch,
            actor=actor,
            changes={
                "run": run.pk,
                "basis": basis,
                "rate": str(rate),
                "participants": len(owed),
                "total": str(sum(row.owed for row in owed)),
            },
        )
    return run


def pay_prolific(batch: Batch, client, *, actor: Actor, run: BonusRun) -> BonusRun:
    """Pay a planned (or set-up) run through Prolific's two steps. Never sends the pay
    request twice: after an unclear failure the run is ``unknown`` until resolved."""
    from crowd.services.prolific_client import Ambiguous, ProlificError

    if run.state == BonusRun.State.PLANNED:
        amounts = {
            line.participant_id: line.amount for line in run.lines.order_by("participant_id")
        }
        try:
            created = client.set_up_bonuses(batch.prolific_study_id, amounts)
        except (ProlificError, Ambiguous) as failed:
            # nothing can have been paid: a bulk payment is only paid by the pay request
            return set_state(
                run,
                BonusRun.State.ABANDONED,
                actor=actor,
                detail=f"set-up failed: {failed}",
                expected=(BonusRun.State.PLANNED,),
            )
        total = created.get("total_amount")
        # a run another request abandoned meanwhile stops here: its set-up is never paid
        run = set_state(
            run,
            BonusRun.State.CREATED,
            actor=actor,
            expected=(BonusRun.State.PLANNED,),
            remote_id=str(created.get("id", "")),
            platform_total=Decimal(str(total)).quantize(CENT) if total is not None else None,
        )
    if run.state != BonusRun.State.CREATED or not run.remote_id:
        raise Conflict(f"bonus run {run.pk} is {run.state}: it cannot be paid now")
    # one pay request per run, whoever else is at it
    run = set_state(run, BonusRun.State.PAYING, actor=actor, expected=(BonusRun.State.CREATED,))
    try:
        client.pay_bonuses(run.remote_id)
    except ProlificError as refused:
        return set_state(run, BonusRun.State.FAILED, actor=actor, detail=str(refused))
    except Ambiguous as lost:
        return set_state(
            run,
            BonusRun.State.UNKNOWN,
            actor=actor,
            detail=f"{lost}; check the study's bonus payments on Prolific, then resolve the run",
        )
    return set_state(run, BonusRun.State.PAID, actor=actor)


def resolve(batch: Batch, run_id: int, outcome: str, *, actor: Actor) -> BonusRun:
    """A person's word on a run whose outcome is unknown (from the platform's records)."""
    run = BonusRun.objects.filter(batch=batch, pk=run_id).first()
    if run is None:
        raise InvalidInput("run", f"no bonus run {run_id} in {batch.slug}")
    if run.state not in (BonusRun.State.UNKNOWN, BonusRun.State.PAYING):
        raise Conflict(f"bonus run {run.pk} is {run.state}: only an unknown outcome is resolved")
    if outcome not in ("paid", "unpaid"):
        raise InvalidInput("outcome", "is paid or unpaid")
    state = BonusRun.State.PAID if outcome == "paid" else BonusRun.State.FAILED
    return set_state(
        run,
        state,
        actor=actor,
        detail=f"resolved by {actor.name}: {outcome}",
        expected=(BonusRun.State.UNKNOWN, BonusRun.State.PAYING),
    )


def _amount(field: str, value) -> Decimal:
    """A rate as given, to at most ``RATE_STEP`` (a per-item amount may be a fraction of a
    cent: 0.005 × 3 labels earns 0.015, paid 0.02; only what is paid is rounded)."""
    try:
        amount = Decimal(str(value))
        exact = amount.quantize(RATE_STEP) == amount
    except ArithmeticError as wrong:
        raise InvalidInput(field, "is not an amount") from wrong
    if not amount.is_finite():
        raise InvalidInput(field, "is not an amount")
    if not exact:
        raise InvalidInput(field, f"has more than {RATE_DECIMALS} decimals")
    if amount <= 0:
        raise InvalidInput(field, "must be more than zero")
    return amount


def pay_owed(
    batch: Batch, platform: str, basis: str, rate: Decimal, *, client, actor: Actor
) -> tuple[list[BonusRow], BonusRun | None]:
    """Pay what is owed (after a sync by the caller), or finish the run left unsettled.

    Prolific: a run set up but not paid is paid now; one only planned is abandoned (it
    was never paid); one whose pay request got no answer stops everything until
    ``resolve``. MTurk: an unsettled run is resumed line by line with the same tokens.
    Returns the rows computed (empty when a run was resumed) and the run (``None``:
    nobody is owed anything).
    """
    from crowd.services import mturk

    # What is owed is read and the run planned under the batch's lock: a second request
    # (a double click, a retry, another admin) waits, then sees this run in the ledger.
    # The lock is a short transaction; the platform is called after it, each step of the
    # run taken only from the state it expects (``set_state``).
    with transaction.atomic():
        Batch.objects.select_for_update(no_key=True).filter(pk=batch.pk).first()
        pending = unsettled_run(batch, platform)
        if platform == Platform.PROLIFIC and pending is not None:
            if pending.state in (BonusRun.State.PAYING, BonusRun.State.UNKNOWN):
                raise Conflict(f"{how_to_settle(batch, pending)} Nothing was sent.")
            if pending.state == BonusRun.State.PLANNED:
                set_state(
                    pending,
                    BonusRun.State.ABANDONED,
                    actor=actor,
                    detail="never set up",
                    expected=(BonusRun.State.PLANNED,),
                )
                pending = None
        rows: list[BonusRow] = []
        run = pending
        if run is None:
            rows = compute(batch, platform, basis, rate)
            run = plan_run(batch, platform, basis, Decimal(str(rate)), rows, actor)
            if run is None:
                return rows, None
    if platform == Platform.PROLIFIC:
        return rows, pay_prolific(batch, client, actor=actor, run=run)
    return rows, mturk.pay_run(batch, client, actor=actor, run=run)
