"""The annotators, and their membership of each batch."""

import secrets

from django.conf import settings
from django.db import models

from annotation.models.batch import Batch


class Annotator(models.Model):
    """A person; identified by crowd platform id (or a staff user), exported by pseudonym."""

    class Platform(models.TextChoices):
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "Amazon Mechanical Turk"
        GENERIC = "generic", "Invitation link"
        STAFF = "staff", "Staff user"

    platform = models.CharField(max_length=16, choices=Platform.choices)
    platform_id = models.CharField(max_length=200)
    pseudonym = models.CharField(max_length=32, unique=True, editable=False)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["platform", "platform_id"], name="annotator_unique_platform_id"
            )
        ]

    def __str__(self) -> str:
        return self.pseudonym

    def save(self, *args, **kwargs):
        if not self.pseudonym:
            self.pseudonym = "ann-" + secrets.token_hex(6)
        super().save(*args, **kwargs)


class Participation(models.Model):
    """An annotator's membership of one batch: entry parameters, consent, exclusion."""

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        EXCLUDED = "excluded", "Excluded"

    # indexed by participation_unique_annotator (batch, annotator), which leads with it
    batch = models.ForeignKey(
        Batch, on_delete=models.CASCADE, related_name="participations", db_index=False
    )
    annotator = models.ForeignKey(
        Annotator, on_delete=models.CASCADE, related_name="participations"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    entry_params = models.JSONField(default=dict, blank=True)
    consented_at = models.DateTimeField(null=True, blank=True)
    questionnaire_answers = models.JSONField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    # quality control: when the next attention check / repeated item is due (regular items
    # done), and why the annotator was excluded when a policy did it
    next_check_after = models.PositiveIntegerField(null=True, blank=True)
    next_repeat_after = models.PositiveIntegerField(null=True, blank=True)
    # the participant's labels of regular items (counted, surplus or excluded): what
    # quotas, progress and due checks count; written only by annotation.services.labelling
    # with each label it stores, so that asking for work never counts label rows
    regular_labels = models.PositiveIntegerField(default=0, db_default=0)
    excluded_automatically = models.BooleanField(default=False, db_default=False)
    exclusion_reason = models.TextField(blank=True, default="", db_default="")
    # integrity: where the participation was opened, and the browser it is bound to
    entry_ip = models.GenericIPAddressField(null=True, blank=True)
    device_id = models.CharField(max_length=64, blank=True, default="", db_default="")
    browser_key = models.CharField(max_length=64, blank=True, default="", db_default="")
    browser_switches = models.PositiveIntegerField(default=0, db_default=0)
    # the language the participant's pages were shown in (a code of settings.LANGUAGES)
    language = models.CharField(max_length=16, blank=True, default="", db_default="")
    # the crowd platform's own word on this person's submission (e.g. Prolific's
    # RETURNED, APPROVED), kept in step by the platform's sync; empty: not known
    platform_status = models.CharField(max_length=32, blank=True, default="", db_default="")
    platform_status_at = models.DateTimeField(null=True, blank=True)
    # when the platform said this person left the study (Prolific: returned, timed out,
    # rejected): from then on they get no more items (``leasing``); empty: taking part
    departed_at = models.DateTimeField(null=True, blank=True)
    first_seen_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["batch", "annotator"], name="participation_unique_annotator"
            )
        ]
        indexes = [
            models.Index(fields=["batch", "entry_ip"], name="participation_batch_ip"),
            models.Index(fields=["batch", "device_id"], name="participation_batch_device"),
        ]

    def __str__(self) -> str:
        return f"{self.annotator_id} in {self.batch_id}"
