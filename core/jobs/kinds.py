"""The registry of job kinds: which function runs a kind, and who may see its jobs.

An app registers its kinds when its modules are imported (from ``AppConfig.ready``)::

    @register_job_kind("export", can_view=can_export)
    def run_export(job, progress) -> tuple[dict, str]: ...

A runner reports progress through ``JobProgress`` and returns ``(result dict, result
file name in the jobs folder or "")``. It raises a ``ServiceError`` for input the user
must fix; the job then fails with that message (and its ``problems``, if any).

A kind whose work splits into parts that workers run in parallel registers a
``core.jobs.chunks.ChunkedWork`` instead (``register_chunked_job_kind``): in a Celery
worker the job hands its parts to the workers; elsewhere its runner runs them one after
another in this process.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.models import Job

# runner(job, progress) -> (result, file name); progress is a core.jobs.execution.JobProgress
Runner = Callable[[Job, Callable[..., None]], tuple[dict, str]]


@dataclass(frozen=True)
class JobKind:
    name: str
    runner: Runner
    can_view: Callable[[object], bool]
    # a core.jobs.chunks.ChunkedWork when the kind's parts may run on several workers
    chunked: Any = None


_KINDS: dict[str, JobKind] = {}


def register_job_kind(name: str, *, can_view: Callable[[object], bool], chunked: Any = None):
    """Decorator registering ``runner`` for jobs of kind ``name`` (once per kind);
    ``chunked``: the kind's ``ChunkedWork`` (see the module doc)."""

    def decorate(runner: Runner) -> Runner:
        known = _KINDS.get(name)
        if known is not None and known.runner is not runner:
            raise ValueError(f"job kind {name!r} is already registered by {known.runner!r}")
        _KINDS[name] = JobKind(name, runner, can_view, chunked)
        return runner

    return decorate


def job_kind(name: str) -> JobKind | None:
    return _KINDS.get(name)


def registered_kinds() -> list[str]:
    return sorted(_KINDS)


def can_view_job(user, kind: str) -> bool:
    known = _KINDS.get(kind)
    return bool(known is not None and known.can_view(user))


def can_view_any_job(user) -> bool:
    return any(kind.can_view(user) for kind in _KINDS.values())
