"""The crowd of ``tests/annotation/test_concurrency.py`` made patient, as the rating page
is: an answer of 502/503/504 (the database restarting, the app restarting behind the
proxy) is retried after a pause instead of being a protocol error. Standard library only,
like the scenario itself: spawned client processes import this without Django set up.
"""

import time

from tests.annotation import test_concurrency as scenario

OUTAGE_STATUSES = {502, 503, 504}
PATIENCE_S = 90  # longer than any outage the tests cause
PAUSE_S = 0.5  # the page waits per Retry-After; a test need not wait that long


class PatientBrowser(scenario.WorkerBrowser):
    def request(self, method: str, path: str, **body):
        give_up = time.monotonic() + PATIENCE_S
        waited = False
        while True:
            status, answer = super().request(method, path, **body)
            if _told_to_wait(answer) and time.monotonic() < give_up:
                # every free item is leased to someone else: the page asks again later
                self.stats["told_to_wait"] += 1
                time.sleep(PAUSE_S)
                continue
            if status not in OUTAGE_STATUSES or time.monotonic() > give_up:
                # an answer lost in an outage may have been stored: a retry may see 200
                self.resent = self.resent or waited
                return status, answer
            self.stats[f"answered_{status}"] += 1
            waited = True
            time.sleep(PAUSE_S)


def _told_to_wait(answer) -> bool:
    return (
        isinstance(answer, dict)
        and answer.get("assignment", 0) is None
        and (answer.get("reason") == "wait")
    )


def patient_client_process(
    base_url, slug, worker_ids, seed, drained, deadline, out_path, kind="absolute"
):
    """``scenario.client_process`` with every annotator's browser patient."""
    scenario.WorkerBrowser = PatientBrowser  # this spawned process only
    scenario.client_process(base_url, slug, worker_ids, seed, drained, deadline, out_path, kind)
