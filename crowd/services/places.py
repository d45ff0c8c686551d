"""How many participants the study still needs, and the Prolific study following the batch.

Places: ``remaining`` = Σ over regular items of (N − counted labels); each new
participant does about ``per_participant`` items — the batch's quota, else the median of
regular labels per participant who did any, else nothing can be said yet. Participants
now working (Prolific ``ACTIVE``) are expected to do theirs; so

    needed = ceil(max(0, remaining − active × per_participant) / per_participant × (1 + margin))
    total_available_places = places already taken + needed

where places taken are the submissions that hold a place (every status but
``RETURNED``, ``TIMED-OUT`` and ``REJECTED``, whose places Prolific gives back). The
total never goes below the places taken.

Pause / resume: the study should be ``ACTIVE`` while the batch is live and not full, and
``PAUSED`` otherwise (paused, closed, or every item complete). A study in any other status
(unpublished, awaiting review, completed) is left alone; closing never stops a study
(stopping cannot be undone on Prolific).
"""

import math
import statistics
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Count, F, Sum

from annotation.models import REGULAR_STATUSES, Batch, BatchState, Item, Label
from core import audit
from core.audit import Actor
from crowd.models import Platform, PlatformSubmission
from crowd.services.submissions import PROLIFIC_DEPARTED


@dataclass(frozen=True)
class PlacesPlan:
    remaining_slots: int
    per_participant: float | None
    per_participant_source: str
    active: int
    taken: int
    needed: int | None
    total: int | None  # None: cannot be computed yet
    why: str


def remaining_slots(batch: Batch) -> int:
    left = Item.objects.filter(batch=batch, is_check=False).aggregate(
        left=Sum(F("target") - F("counted_count"))
    )["left"]
    return int(left or 0)


def items_per_participant(batch: Batch) -> tuple[float | None, str]:
    if batch.quota_per_annotator:
        return float(batch.quota_per_annotator), "the batch's quota"
    per_person = list(
        Label.objects.filter(batch=batch, status__in=REGULAR_STATUSES)
        .values("annotator_id")
        .annotate(n=Count("pk"))
        .values_list("n", flat=True)
    )
    if not per_person:
        return None, "no quota and no labels yet"
    return float(statistics.median(per_person)), f"the median of {len(per_person)} participants"


def plan_places(batch: Batch, margin: float | None = None) -> PlacesPlan:
    margin = settings.CROWD_PLACES_MARGIN if margin is None else margin
    remaining = remaining_slots(batch)
    per, source = items_per_participant(batch)
    submissions = PlatformSubmission.objects.filter(batch=batch, platform=Platform.PROLIFIC)
    taken = submissions.exclude(status__in=PROLIFIC_DEPARTED).count()
    active = submissions.filter(status="ACTIVE").count()
    if per is None or per <= 0:
        return PlacesPlan(
            remaining, None, source, active, taken, None, None, f"cannot say: {source}"
        )
    needed = math.ceil(max(0.0, remaining - active * per) / per * (1 + margin)) if remaining else 0
    return PlacesPlan(
        remaining,
        per,
        source,
        active,
        taken,
        needed,
        taken + needed,
        f"{remaining} slots left ÷ {per:g} items per participant ({source}), "
        f"{active} working now, margin {margin:.0%}",
    )


def desired_study_status(batch: Batch) -> str:
    if batch.state == BatchState.LIVE and remaining_slots(batch) > 0:
        return "ACTIVE"
    return "PAUSED"


def follow_batch(
    batch: Batch,
    client,
    *,
    actor: Actor,
    places: bool,
    margin: float | None = None,
    study: dict | None = None,
) -> dict:
    """Bring the study in line with the batch: places (when asked) and pause/resume."""
    study = study if study is not None else client.study(batch.prolific_study_id)
    done = {"places": None, "transition": None, "study_status": study.get("status")}
    if places:
        plan = plan_places(batch, margin)
        current = study.get("total_available_places")
        if plan.total is not None:
            target = max(plan.total, int(study.get("places_taken") or 0))
            if target != current:
                client.set_places(batch.prolific_study_id, target)
                audit.record(
                    "prolific.places",
                    subject=batch,
                    actor=actor,
                    changes={"total_available_places": [current, target]},
                    reason=plan.why,
                )
                done["places"] = target
    wanted = desired_study_status(batch)
    status = study.get("status")
    action = None
    if status == "ACTIVE" and wanted == "PAUSED":
        action = "PAUSE"
    elif status == "PAUSED" and wanted == "ACTIVE":
        action = "START"
    if action:
        client.transition_study(batch.prolific_study_id, action)
        audit.record(
            f"prolific.study.{action.lower()}",
            subject=batch,
            actor=actor,
            changes={"study_status": [status, wanted]},
            reason=f"the batch is {batch.state}" + ("" if wanted == "ACTIVE" else " or full"),
        )
        done["transition"] = action
    return done
