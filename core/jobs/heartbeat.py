"""A running job's sign of life, written beside it while it runs in a Celery worker.

The worker's main process fails a job whose *child* dies (``core.tasks``), but when the
main process dies too (``kill -9`` of the whole worker, a lost machine) nobody is left to
say so, and the job's progress alone cannot tell a dead job from a slow step. So a thread
beside the job writes ``Job.alive_at`` every ``JOB_HEARTBEAT_SECONDS``; a running job whose
``alive_at`` is older than ``JOB_HEARTBEAT_TIMEOUT_SECONDS`` has lost its worker and is
failed (``core.jobs.staleness``), which releases what it held.

A chunk of a job that workers run in parallel says it is alive the same way
(``core.jobs.chunks.ChunkHeartbeat``, on ``JobChunk.alive_at``). Not used when a job runs
in the web process (no ``REDIS_URL``): the request that started it waits for it, and the
no-progress bound applies.
"""

import logging
import threading

from django.conf import settings
from django.db import connection
from django.utils import timezone

from core.models import Job

logger = logging.getLogger(__name__)


class JobHeartbeat:
    """``with JobHeartbeat(job_id):`` keeps ``alive_at`` fresh until the block ends."""

    def __init__(self, job_id, interval: float | None = None):
        self.job_id = job_id
        self.interval = settings.JOB_HEARTBEAT_SECONDS if interval is None else interval
        self._stop = threading.Event()
        # (group, target, name) by position
        self._thread = threading.Thread(None, self._beat, f"job-heartbeat-{job_id}", daemon=True)

    def __enter__(self) -> "JobHeartbeat":
        self._thread.start()
        return self

    def __exit__(self, *_) -> None:
        self._stop.set()
        self._thread.join(timeout=self.interval + 5)

    def write(self) -> None:
        """Say the job is alive (once)."""
        Job.objects.filter(pk=self.job_id, state=Job.State.RUNNING).update(alive_at=timezone.now())

    def _beat(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                try:
                    self.write()
                except Exception:  # a database blip: say so and try again next beat
                    logger.warning("job %s: heartbeat not written", self.job_id, exc_info=True)
                    connection.close()
        finally:
            connection.close()  # this thread's own connection
