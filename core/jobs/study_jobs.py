"""The analysis job of every study type (``core.jobs.study_types``): one runner, one way to
run it now, one way to read its newest report.

The runner checks the job's parameters with the type's ``params`` (as the page, the API and
the command did before starting it: a subject or a batch may have changed since), builds
the report with the type's ``analyse``, keeps it as ``<job>-<slug>-<name>-report.json`` in
the jobs folder and draws the page's charts once, so the page's first view does not wait
for them."""

from core.audit import Actor
from core.errors import NotFound
from core.files import write_json
from core.jobs.execution import JobProgress, job_files_dir, newest_report
from core.jobs.kinds import register_job_kind
from core.jobs.queue import run_now
from core.jobs.stored_charts import FILES_KEY as CHARTS
from core.jobs.stored_charts import store_charts
from core.models import Job


def register_runner(study) -> None:
    """Register the job kind of ``study`` (a ``StudyType``)."""

    def run_study_analysis(job: Job, progress: JobProgress) -> tuple[dict, str]:
        subject = job.subject
        if subject is None:
            raise NotFound(
                f"{study.slug}: the {study.subject_label} of this analysis no longer exists"
            )
        params = study.params(**(job.params or {}))
        report = study.analyse(subject, params, progress)
        filename = f"{job.pk}-{study.slug}-{subject.name}-report.json"
        write_json(job_files_dir() / filename, report)
        summary = dict(study.summary(report))
        if study.draw_charts is not None:
            charts = study.draw_charts(report)
            files = {**summary.get("files", {}), CHARTS: store_charts(job, charts)}
            summary["files"] = files
        return summary, filename

    run_study_analysis.__qualname__ = f"run_{study.slug}_analysis"
    register_job_kind(study.job_kind, can_view=study.can_analyse)(run_study_analysis)


def analyse_now(study, subject, params: dict, actor: Actor | None = None) -> Job:
    """Record an analysis job of ``subject`` and run it in this process, whatever the queue
    (``core.jobs.queue.run_now``), so its page shows the report; the finished (or failed)
    job."""
    return run_now(study.job_kind, subject, params, actor)


def latest_report(study, subject) -> tuple[Job, dict] | None:
    """The newest finished analysis of ``subject`` and its report, if any."""
    return newest_report(subject, study.job_kind)
