"""Records the platform keeps for every app: background jobs and the audit trail.

Both point at what they concern (a batch, a corpus, ...) through a generic relation, so
that ``core`` needs no app's models: an app that wants ``subject.jobs`` or
``subject.audit_events`` declares a ``GenericRelation`` on its own model.
"""

import uuid

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey, GenericRelation
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.db.models import Q
from django.utils import timezone


class Job(models.Model):
    """A long operation (import, export, analysis, ...) run by Celery, polled by pages and API.

    ``kind`` names a runner registered in ``core.jobs.kinds``; a system check makes sure
    that every kind an app declares has one.
    """

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=32)
    subject_type = models.ForeignKey(
        ContentType, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    subject_id = models.PositiveBigIntegerField(null=True, blank=True)
    subject = GenericForeignKey("subject_type", "subject_id")
    params = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    progress = models.PositiveBigIntegerField(default=0)
    total = models.PositiveBigIntegerField(null=True, blank=True)
    message = models.TextField(blank=True, default="")
    result_path = models.CharField(max_length=500, blank=True, default="")
    result = models.JSONField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # when the running job last reported progress: a job is stale when this is old, not
    # when it started long ago (core.jobs.staleness)
    last_progress_at = models.DateTimeField(null=True, blank=True)
    # when the process running the job last said it is alive (written every
    # JOB_HEARTBEAT_SECONDS by a thread beside the job, in a Celery worker): a job whose
    # worker died whole, machine and all, is failed within JOB_HEARTBEAT_TIMEOUT_SECONDS
    alive_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(state__in=["pending", "running", "succeeded", "failed"]),
                name="core_job_state_known",
            ),
        ]
        indexes = [
            models.Index(fields=["subject_type", "subject_id", "kind"], name="job_subject_kind"),
            models.Index(fields=["state", "created_at"], name="job_state_created"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.pk} ({self.state})"


class JobChunk(models.Model):
    """One part of a job that workers run in parallel (``core.jobs.chunks``): a range of
    rows, a set of queries. ``spec`` says which; the job's kind computes it.

    The ``final`` chunk assembles the parts' results into the job's result: it may be taken
    once every other chunk of the job is ``done``. A chunk is taken by one task at a time
    (``claim`` holds that task's id) and says it is alive (``alive_at``) while it runs; one
    whose worker died is taken again, at most ``core.jobs.chunks.MAX_ATTEMPTS`` times.
    ``seconds`` is how long its computation took (the benchmarks' per-chunk cost).
    """

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    final = models.BooleanField(default=False)
    spec = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    claim = models.CharField(max_length=64, blank=True, default="")
    attempts = models.PositiveSmallIntegerField(default=0)
    worker = models.CharField(max_length=200, blank=True, default="")
    alive_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["job", "index"]
        constraints = [
            models.UniqueConstraint(fields=["job", "index"], name="core_jobchunk_index"),
            models.UniqueConstraint(
                fields=["job"], condition=Q(final=True), name="core_jobchunk_one_final"
            ),
            models.CheckConstraint(
                condition=Q(state__in=["pending", "running", "done"]),
                name="core_jobchunk_state_known",
            ),
        ]
        indexes = [models.Index(fields=["job", "state"], name="jobchunk_job_state")]

    def __str__(self) -> str:
        return f"{self.job_id}#{self.index} ({self.state})"


class AuditEvent(models.Model):
    """One state-changing action by a staff member, a command or an automatic policy.

    ``changes`` holds what changed as ``{"field": [before, after]}`` or, for actions
    that are not edits (an exclusion, an upload), the facts that identify them.
    ``subject_label`` keeps a readable name even if the subject is deleted later.
    """

    at = models.DateTimeField(default=timezone.now)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    actor_name = models.CharField(max_length=200)
    action = models.CharField(max_length=64)
    subject_type = models.ForeignKey(
        ContentType, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    subject_id = models.PositiveBigIntegerField(null=True, blank=True)
    subject = GenericForeignKey("subject_type", "subject_id")
    subject_label = models.CharField(max_length=200, blank=True, default="")
    changes = models.JSONField(default=dict, blank=True)
    reason = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [
            models.Index(fields=["subject_type", "subject_id", "at"], name="audit_subject_time"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor_name} {self.action} {self.subject_label}"


class StudySubject(models.Model):
    """What a study type analyses (a census, a Genie set, a corpus; core.jobs.study_types):
    who imported it and when, and its jobs."""

    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    jobs = GenericRelation(
        "core.Job",
        content_type_field="subject_type",
        object_id_field="subject_id",
    )

    class Meta:
        abstract = True
