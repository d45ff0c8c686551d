"""The Prolific study follows the batch: a state change (publish, pause, resume, close)
is passed on once the transaction that made it has committed."""

import logging

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_save

logger = logging.getLogger(__name__)


def _batch_saved(sender, instance, update_fields=None, created=False, **kwargs) -> None:
    if created or not instance.prolific_study_id or not settings.PROLIFIC_API_TOKEN:
        return
    if update_fields is not None and "state" not in update_fields:
        return
    pk = instance.pk
    transaction.on_commit(lambda: _follow(pk))


def _follow(batch_pk: int) -> None:
    from crowd.tasks import follow_prolific_study

    try:
        follow_prolific_study.delay(batch_pk)
    except Exception:  # the beat task brings the study in line within a minute anyway
        logger.exception("could not queue the Prolific study update of batch %s", batch_pk)


def connect() -> None:
    from annotation.models import Batch

    post_save.connect(_batch_saved, sender=Batch, dispatch_uid="crowd-follow-batch")
