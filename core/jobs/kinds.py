"""The registry of job kinds: which function runs a kind, and who may see its jobs.

An app registers its kinds when its modules are imported (from ``AppConfig.ready``)::

    @register_job_kind("export", can_view=can_export)
    def run_export(job, progress) -> tuple[dict, str]: ...

A runner reports progress through ``JobProgress`` and returns ``(result dict, result
file name in the jobs folder or "")``. It raises a ``ServiceError`` for input the user
must fix; the job then fails with that message (and its ``problems``, if any).
"""

from collections.abc import Callable
from dataclasses import dataclass

from core.models import Job

# runner(job, progress) -> (result, file name); progress is a core.jobs.execution.JobProgress
Runner = Callable[[Job, Callable[..., None]], tuple[dict, str]]


@dataclass(frozen=True)
class JobKind:
    name: str
    runner: Runner
    can_view: Callable[[object], bool]


_KINDS: dict[str, JobKind] = {}


def register_job_kind(name: str, *, can_view: Callable[[object], bool]):
    """Decorator registering ``runner`` for jobs of kind ``name`` (once per kind)."""

    def decorate(runner: Runner) -> Runner:
        known = _KINDS.get(name)
        if known is not None and known.runner is not runner:
            raise ValueError(f"job kind {name!r} is already registered by {known.runner!r}")
        _KINDS[name] = JobKind(name, runner, can_view)
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
