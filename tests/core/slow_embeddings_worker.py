"""Imported by the Celery worker of ``test_lost_worker`` (``--include``): the worker's
embeddings jobs sleep, reporting progress, so that the test can kill the child while one
runs. Never imported by the test process itself."""

import time

from core.jobs import kinds
from diversity.corpora.services.embeddings import JOB_KIND


def _sleeping_runner(job, progress):
    for step in range(600):
        progress(step, 600, "working")
        time.sleep(0.1)
    return {}, ""


real = kinds._KINDS[JOB_KIND]
kinds._KINDS[JOB_KIND] = kinds.JobKind(JOB_KIND, _sleeping_runner, real.can_view)
