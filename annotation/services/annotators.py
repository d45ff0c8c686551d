"""Identifying annotators and their membership of a batch."""

from django.db import IntegrityError, transaction

from annotation.models import Annotator, Batch, Participation
from annotation.services.errors import InvalidInput

MAX_PLATFORM_ID_LENGTH = 200


def identify_annotator(platform: str, platform_id: str) -> Annotator:
    """The annotator with this platform id, created on first sight (race-safe)."""
    platform_id = (platform_id or "").strip()
    if not platform_id:
        raise InvalidInput("platform_id", "is empty")
    if len(platform_id) > MAX_PLATFORM_ID_LENGTH:
        raise InvalidInput("platform_id", f"is longer than {MAX_PLATFORM_ID_LENGTH} characters")
    if platform not in Annotator.Platform.values:
        raise InvalidInput("platform", f"{platform!r} is not a known platform")
    existing = Annotator.objects.filter(platform=platform, platform_id=platform_id).first()
    if existing:
        return existing
    try:
        with transaction.atomic():
            return Annotator.objects.create(platform=platform, platform_id=platform_id)
    except IntegrityError:
        # Two first requests of the same person raced; the other one created the row.
        return Annotator.objects.get(platform=platform, platform_id=platform_id)


def join_batch(
    batch: Batch, annotator: Annotator, entry_params: dict | None = None
) -> Participation:
    """Record that the annotator entered the batch (idempotent); keeps the first entry's params."""
    participation = Participation.objects.filter(batch=batch, annotator=annotator).first()
    if participation:
        return participation
    try:
        with transaction.atomic():
            return Participation.objects.create(
                batch=batch, annotator=annotator, entry_params=entry_params or {}
            )
    except IntegrityError:
        return Participation.objects.get(batch=batch, annotator=annotator)
