"""CPU time of process trees from ``/proc`` (Linux), and facts about the machine.

A tree's CPU time is its root's own user+system time, plus the user+system time its
reaped children left in the root's ``cutime``/``cstime``, plus the time of its live
children. Sampled before and after a window, the difference counts every process that
ran in it, also those that started and ended in it (a PostgreSQL backend per request
when ``CONN_MAX_AGE=0``, a gunicorn worker restarted after a timeout).
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # the command name (field 2) may contain spaces; it is closed by the last ')'
    return raw[raw.rfind(")") + 2 :].split()


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields:
            tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def process_seconds(pid: int, with_reaped: bool = True) -> float:
    """User+system CPU seconds of ``pid`` (plus its reaped children's, by default)."""
    fields = _stat_fields(pid)
    if fields is None:
        return 0.0
    # after the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14)
    ticks = int(fields[11]) + int(fields[12])
    if with_reaped:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / TICK


def tree_seconds(root: int) -> float:
    """CPU seconds of ``root`` and all its descendants, dead (reaped) or alive."""
    tree = _children()
    total = process_seconds(root)
    stack = list(tree.get(root, []))
    while stack:
        pid = stack.pop()
        total += process_seconds(pid, with_reaped=False)
        stack.extend(tree.get(pid, []))
    return total


def find_postmaster() -> int | None:
    """The PostgreSQL server's main process: a ``postgres`` whose parent is not one."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        if comm not in ("postgres", "postmaster"):
            continue
        fields = _stat_fields(pid)
        if not fields:
            continue
        try:
            parent = Path(f"/proc/{fields[1]}/comm").read_text().strip()
        except OSError:
            parent = ""
        if parent not in ("postgres", "postmaster"):
            return pid
    return None


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, from ``/proc/stat``."""
    first = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    values = [int(v) for v in first]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    total = sum(values[:8])  # user nice system idle iowait irq softirq steal
    return (total - idle) / TICK, total / TICK


def load_average() -> list[float]:
    return [float(v) for v in Path("/proc/loadavg").read_text().split()[:3]]


def machine_info() -> dict:
    cpu_model = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu_model = line.split(":", 1)[1].strip()
            break
    mem_kb = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            mem_kb = int(line.split()[1])
    return {
        "cores": os.cpu_count(),
        "cpu_model": cpu_model,
        "memory_gib": round(mem_kb / 1024 / 1024, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "load_average_before": load_average(),
    }


def git_info(repo: Path, rev: str | None = None) -> dict:
    """The commit benchmarked: ``rev`` (exported, so exactly that commit), or HEAD plus
    the number of files changed in the work tree."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
        return done.stdout.strip()

    if rev:
        commit = git("rev-parse", f"{rev}^{{commit}}")
        return {
            "commit": commit,
            "subject": git("log", "-1", "--format=%s", commit),
            "dirty_files": 0,
            "source": f"git archive {commit} (the work tree was not used)",
        }
    dirty = [line for line in git("status", "--porcelain").splitlines() if line.strip()]
    return {
        "commit": git("rev-parse", "HEAD"),
        "subject": git("log", "-1", "--format=%s"),
        "dirty_files": len(dirty),
        "source": "the work tree as it was",
    }
