"""Automatic exclusion: the batch's quality policies, applied after each label is stored.

At the ``exclude_after_failed_checks``-th failed attention check, or — with
``flag_policy = exclude`` — once more than ``flagged_share_to_exclude`` of an annotator's
regular labels are flagged too fast or straight-lined (judged from
``FLAG_POLICY_MIN_LABELS`` labels on), the annotator is excluded through the usual
exclusion (their labels kept as ``excluded``, their slots reopened, exactly N still
holds), recorded in the audit trail as done by the policy, with the reason. The worker's
next request then shows the screen-out page.
"""

from django.db.models import Q

from annotation.models import REGULAR_STATUSES, Batch, Label, LabelStatus, Participation
from annotation.services.annotators import exclude_annotator
from core.audit import Actor

# a share of flagged labels means little over a handful of them
FLAG_POLICY_MIN_LABELS = 10


def apply_policies(batch: Batch, annotator_id: int) -> str | None:
    """Exclude the annotator if a policy of the batch says so; returns the reason, or None.

    Run after a label is stored (its own transaction): a label is never lost because a
    policy acted on it. A batch without policies costs no query.
    """
    if not batch.exclude_after_failed_checks and not _flag_policy_excludes(batch):
        return None
    participation = (
        Participation.objects.filter(batch=batch, annotator_id=annotator_id)
        .select_related("annotator")
        .first()
    )
    if participation is None or participation.status == Participation.Status.EXCLUDED:
        return None
    reason, policy = _policy_reason(batch, annotator_id)
    if reason is None:
        return None
    exclude_annotator(
        batch, participation.annotator, actor=Actor.policy(policy), reason=reason, automatic=True
    )
    return reason


def _flag_policy_excludes(batch: Batch) -> bool:
    return batch.flag_policy == "exclude" and batch.flagged_share_to_exclude is not None


def _policy_reason(batch: Batch, annotator_id: int) -> tuple[str | None, str]:
    labels = Label.objects.filter(batch=batch, annotator_id=annotator_id)
    if batch.exclude_after_failed_checks:
        checks = labels.filter(status=LabelStatus.CHECK)
        failed = checks.filter(check_passed=False).count()
        if failed >= batch.exclude_after_failed_checks:
            seen = checks.count()
            return f"failed {failed} of {seen} attention checks", "attention checks"
    if _flag_policy_excludes(batch):
        regular = labels.filter(status__in=REGULAR_STATUSES)
        total = regular.count()
        if total >= FLAG_POLICY_MIN_LABELS:
            flagged = regular.filter(Q(too_fast=True) | Q(straightlined=True)).count()
            if flagged / total > batch.flagged_share_to_exclude:
                return (
                    f"{flagged} of {total} labels flagged as too fast or straight-lined "
                    f"(more than {batch.flagged_share_to_exclude:.0%})",
                    "quality flags",
                )
    return None, ""
