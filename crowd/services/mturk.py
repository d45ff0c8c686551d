"""Amazon Mechanical Turk through boto3 (the ``mturk`` client, API 2017-01-17).

* **HIT creation** — an ExternalQuestion (the batch's link, shown in a frame of
  ``frame_height`` pixels; MTurk adds ``assignmentId``, ``hitId``, ``workerId`` and
  ``turkSubmitTo``), the reward, ``MaxAssignments`` = the participants the batch still
  needs (``places.plan_places``), and a qualification that keeps earlier participants
  out (``DoesNotExist``, guarding discovery, preview and accept): every MTurk worker
  who entered the batch is given it (``exclude_earlier_workers``).
* **Sync** — ``list_assignments_for_hit`` for each HIT of the batch, statuses applied
  like Prolific's (``submissions.apply_status``).
* **Review** — the same proposals as Prolific (``review.propose``); approve and reject
  one assignment at a time, each decision stored before its call.
* **Bonuses** — ``send_bonus`` per line with the line's ``UniqueRequestToken``: MTurk
  refuses a second bonus with the same token, so a line whose answer was lost is sent
  again with its own token, never a new one.

The sandbox unless ``MTURK_SANDBOX=0``; ``MTURK_ENDPOINT_URL`` overrides the endpoint.
Every call that changes something is recorded as a ``PlatformCall``.
"""

import time
from decimal import Decimal
from xml.sax.saxutils import escape

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from annotation.models import Annotator, Batch
from core import audit
from core.audit import Actor
from core.errors import Conflict, InvalidInput
from crowd.models import BonusLine, BonusRun, MTurkHIT, Platform, PlatformCall, ReviewAction
from crowd.services import review
from crowd.services.ledger import set_state
from crowd.services.places import plan_places
from crowd.services.submissions import apply_status

SANDBOX_ENDPOINT = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
PRODUCTION_ENDPOINT = "https://mturk-requester.us-east-1.amazonaws.com"
EXTERNAL_QUESTION_NS = (
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/"
    "ExternalQuestion.xsd"
)
REGION = "us-east-1"


def endpoint_url() -> str:
    if settings.MTURK_ENDPOINT_URL:
        return settings.MTURK_ENDPOINT_URL
    return SANDBOX_ENDPOINT if settings.MTURK_SANDBOX else PRODUCTION_ENDPOINT


def make_client():
    import boto3

    return boto3.client("mturk", region_name=REGION, endpoint_url=endpoint_url())


def external_question(url: str, frame_height: int) -> str:
    return (
        f'<ExternalQuestion xmlns="{EXTERNAL_QUESTION_NS}">'
        f"<ExternalURL>{escape(url)}</ExternalURL>"
        f"<FrameHeight>{int(frame_height)}</FrameHeight>"
        "</ExternalQuestion>"
    )


def call(client, operation: str, **params):
    """One boto3 call, recorded (writes only)."""
    from botocore.exceptions import BotoCoreError, ClientError

    started, clock = timezone.now(), time.monotonic()
    status, error = None, ""
    try:
        answer = getattr(client, operation)(**params)
        status = answer.get("ResponseMetadata", {}).get("HTTPStatusCode", 200)
        return answer
    except ClientError as refused:
        status = refused.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        error = str(refused)
        raise
    except BotoCoreError as lost:
        error = str(lost)
        raise
    finally:
        if not operation.startswith(("list_", "get_")):
            PlatformCall.objects.create(
                platform=Platform.MTURK,
                method=operation,
                path=endpoint_url(),
                request_body={k: v for k, v in params.items() if k != "Question"},
                status_code=status,
                error=error[:2000],
                started_at=started,
                duration_ms=int((time.monotonic() - clock) * 1000),
            )


def hit_url(batch: Batch, base_url: str) -> str:
    if not base_url.startswith("https://"):
        raise InvalidInput("base_url", "must be the site's https:// address (MTurk requires it)")
    return f"{base_url.rstrip('/')}/work/{batch.slug}/"


def exclude_earlier_workers(batch: Batch, client, qualification_type_id: str) -> int:
    """Give the batch's qualification to every MTurk worker who entered it."""
    workers = (
        Annotator.objects.filter(platform=Annotator.Platform.MTURK, participations__batch=batch)
        .order_by("platform_id")
        .values_list("platform_id", flat=True)
    )
    for worker in workers:
        call(
            client,
            "associate_qualification_with_worker",
            QualificationTypeId=qualification_type_id,
            WorkerId=worker,
            IntegerValue=1,
            SendNotification=False,
        )
    return len(workers)


def qualification_for(batch: Batch, client) -> str:
    known = batch.mturk_hits.exclude(qualification_type_id="").first()
    if known:
        return known.qualification_type_id
    created = call(
        client,
        "create_qualification_type",
        Name=f"Took part in {batch.slug} ({batch.pk})",
        Description="Given to every worker who entered this study, so that nobody takes it twice.",
        QualificationTypeStatus="Active",
    )
    return created["QualificationType"]["QualificationTypeId"]


def create_hit(
    batch: Batch,
    client,
    *,
    base_url: str,
    reward: Decimal,
    actor: Actor,
    frame_height: int = 800,
    lifetime_seconds: int = 7 * 24 * 3600,
    assignment_seconds: int | None = None,
    max_assignments: int | None = None,
    title: str = "",
    description: str = "",
    keywords: str = "rating, language models, judgment",
) -> MTurkHIT:
    """A HIT for the batch: its link, the reward, as many assignments as it needs."""
    url = hit_url(batch, base_url)
    if max_assignments is None:
        plan = plan_places(batch)
        if plan.needed is None:
            raise Conflict(f"max_assignments: {plan.why}; give --max-assignments")
        max_assignments = plan.needed
    if max_assignments < 1:
        raise Conflict("max_assignments: the batch needs nobody more")
    qualification = qualification_for(batch, client)
    exclude_earlier_workers(batch, client, qualification)
    created = call(
        client,
        "create_hit",
        MaxAssignments=max_assignments,
        LifetimeInSeconds=lifetime_seconds,
        AssignmentDurationInSeconds=assignment_seconds or max(batch.lease_cap_seconds * 4, 3600),
        Reward=f"{reward:.2f}",
        Title=title or batch.title,
        Description=description or batch.title,
        Keywords=keywords,
        Question=external_question(url, frame_height),
        RequesterAnnotation=batch.slug[:255],
        QualificationRequirements=[
            {
                "QualificationTypeId": qualification,
                "Comparator": "DoesNotExist",
                "ActionsGuarded": "DiscoverPreviewAndAccept",
            }
        ],
        UniqueRequestToken=f"hit-{batch.pk}-{MTurkHIT.objects.filter(batch=batch).count() + 1}",
    )["HIT"]
    with transaction.atomic():
        hit = MTurkHIT.objects.create(
            batch=batch,
            hit_id=created["HITId"],
            hit_type_id=created.get("HITTypeId", ""),
            qualification_type_id=qualification,
            max_assignments=max_assignments,
            reward=reward,
            sandbox=settings.MTURK_SANDBOX,
        )
        audit.record(
            "mturk.hit.create",
            subject=batch,
            actor=actor,
            changes={
                "hit": hit.hit_id,
                "max_assignments": max_assignments,
                "reward": f"{reward:.2f}",
                "sandbox": hit.sandbox,
            },
        )
    return hit


def sync(batch: Batch, client, *, actor: Actor | None = None) -> dict:
    summary = {"assignments": 0, "released": 0}
    for hit in batch.mturk_hits.all():
        token = None
        while True:
            params = {
                "HITId": hit.hit_id,
                "MaxResults": 100,
                "AssignmentStatuses": ["Submitted", "Approved", "Rejected"],
            }
            if token:
                params["NextToken"] = token
            page = client.list_assignments_for_hit(**params)
            for assignment in page.get("Assignments", []):
                outcome = apply_status(
                    batch,
                    Platform.MTURK,
                    submission_id=assignment["AssignmentId"],
                    participant_id=assignment["WorkerId"],
                    status=assignment["AssignmentStatus"],
                    started_at=assignment.get("AcceptTime"),
                    completed_at=assignment.get("SubmitTime"),
                    hit_id=hit.hit_id,
                    actor=actor,
                )
                summary["assignments"] += 1
                summary["released"] += outcome["released"]
            token = page.get("NextToken")
            if not token:
                break
        if hit.qualification_type_id:
            exclude_earlier_workers(batch, client, hit.qualification_type_id)
    return summary


def _review_verdict(error: Exception) -> str | None:
    """How an approval or rejection call ended (``review.send_decision``): a server fault
    or no answer leaves it unknown, any other answer from MTurk refused it."""
    from botocore.exceptions import BotoCoreError, ClientError

    if isinstance(error, ClientError):
        return "unknown" if _server_fault(error) else "refused"
    return "unknown" if isinstance(error, BotoCoreError) else None


def apply_review(batch: Batch, client, *, actor: Actor, reject_failed_checks: bool = False) -> dict:
    sync(batch, client, actor=actor)
    grouped = review.actionable(
        review.propose(batch, Platform.MTURK, reject_failed_checks=reject_failed_checks)
    )
    outcome = {"approved": 0, "rejected": 0, "refused": 0, "unknown": 0}
    for action, counter, new_status in (
        (ReviewAction.APPROVE, "approved", "Approved"),
        (ReviewAction.REJECT, "rejected", "Rejected"),
    ):
        for proposal in grouped.get(action, []):
            if action == ReviewAction.APPROVE:
                arguments = {"AssignmentId": proposal.submission_id}
            else:
                feedback = gettext("Your work failed %(failed)s of the task's attention checks.")
                arguments = {
                    "AssignmentId": proposal.submission_id,
                    "RequesterFeedback": feedback % {"failed": proposal.checks_failed},
                }
            operation = (
                "approve_assignment" if action == ReviewAction.APPROVE else "reject_assignment"
            )
            review.send_decision(
                batch,
                Platform.MTURK,
                [proposal],
                actor,
                outcome,
                call=lambda operation=operation, arguments=arguments: call(
                    client, operation, **arguments
                ),
                verdict=_review_verdict,
                counter=counter,
                new_status=new_status,
            )
    return outcome


def pay_run(batch: Batch, client, *, actor: Actor, run: BonusRun) -> BonusRun:
    """Send each unpaid line's bonus with its own token; a retry of a line whose answer
    was lost reuses the token, so MTurk never pays it twice."""
    from botocore.exceptions import BotoCoreError, ClientError

    if run.state == BonusRun.State.PLANNED:
        # resumed by two requests at once, the lines' tokens keep MTurk from paying twice
        run = set_state(
            run,
            BonusRun.State.PAYING,
            actor=actor,
            expected=(BonusRun.State.PLANNED, BonusRun.State.PAYING),
        )
    lines = run.lines.exclude(state__in=["paid", "failed"]).order_by("participant_id")
    for line in lines:
        BonusLine.objects.filter(pk=line.pk).update(state="sent")
        try:
            call(
                client,
                "send_bonus",
                WorkerId=line.participant_id,
                BonusAmount=f"{line.amount:.2f}",
                AssignmentId=line.assignment_id,
                Reason=gettext("A bonus for your work on this study. Thank you!"),
                UniqueRequestToken=line.request_token,
            )
        except ClientError as refused:
            if _server_fault(refused):
                BonusLine.objects.filter(pk=line.pk).update(state="unknown")
                continue
            # the token already used: an earlier attempt of this very line was paid
            paid_before = "uniquerequesttoken" in str(refused).lower()
            BonusLine.objects.filter(pk=line.pk).update(state="paid" if paid_before else "failed")
        except BotoCoreError:
            BonusLine.objects.filter(pk=line.pk).update(state="unknown")
        else:
            BonusLine.objects.filter(pk=line.pk).update(state="paid")
    states = set(run.lines.values_list("state", flat=True))
    final = BonusRun.State.PAID if states <= {"paid", "failed"} else BonusRun.State.UNKNOWN
    if states == {"failed"}:
        final = BonusRun.State.FAILED
    return set_state(run, final, actor=actor, detail=", ".join(sorted(states)))


def _server_fault(error) -> bool:
    """A 5xx: the request may have taken effect."""
    status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
    return status >= 500
