"""Where a gunicorn worker's time goes: py-spy samples of one worker under load.

``py-spy record --idle --format raw`` samples the worker's stack (also while it waits on
PostgreSQL: wall time, not only CPU). Only samples inside a request (under gunicorn's
``handle_request``) are kept. A function's cumulative share is the share of those
samples in which it is on the stack. The samples are split by view, from the line
ranges of ``NextItemView.post`` and ``SubmitLabelView.post`` (py-spy names methods by class; the
line ranges in ``annotation/api/worker.py`` are the fallback); what is outside both
(middleware, session, routing, DRF's authentication) is "around the views". Frames on
every request's stack (gunicorn, Django's handler and middleware wrappers, DRF's
dispatch, the cursor wrappers) are left out of the lists. Each sample is also put in one
of three: connecting to PostgreSQL, waiting for its answer, or running Python.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

from bench.crowd.setup_db import code_dir

FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")
VIEWS = {"next": "NextItemView", "label": "SubmitLabelView"}


def py_spy() -> str | None:
    here = Path(sys.executable).with_name("py-spy")
    return str(here) if here.exists() else shutil.which("py-spy")


def view_lines() -> dict[str, range]:
    """The line range of each view's ``post`` method in annotation/api/worker.py."""
    path = code_dir() / "annotation" / "api" / "worker.py"
    tree = ast.parse(path.read_text())
    ranges = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for name, cls in VIEWS.items():
                if node.name != cls:
                    continue
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "post":
                        ranges[name] = range(item.lineno, (item.end_lineno or item.lineno) + 1)
    return ranges


def record(pid: int, seconds: float, out: Path, rate: int = 250) -> subprocess.Popen:
    """Start py-spy on ``pid`` in the background; wait for it with ``.wait()``."""
    command = [
        py_spy() or "py-spy",
        "record",
        "--pid",
        str(pid),
        "--duration",
        str(int(seconds)),
        "--rate",
        str(rate),
        "--idle",
        "--nonblocking",
        "--format",
        "raw",
        "--output",
        str(out),
    ]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _frames(stack: str) -> list[tuple[str, str, int | None]]:
    frames = []
    for raw in stack.split(";"):
        match = FRAME.match(raw.strip())
        if not match:
            frames.append((raw.strip(), "", None))
            continue
        line = match.group("line")
        frames.append((match.group("func"), match.group("file"), int(line) if line else None))
    return frames


# frames on every request's stack that say nothing about where the time goes
GENERIC_FILES = (
    "gunicorn/",
    "django/core/handlers/",
    "django/utils/deprecation.py",
    "django/views/decorators/csrf.py",
    "django/views/generic/base.py",
)


GENERIC_FUNCS = {
    "WhiteNoiseMiddleware.__call__",
    "APIView.dispatch",
    "CursorWrapper._execute",
    "CursorWrapper._execute_with_wrappers",
    "CursorDebugWrapper.execute",
    "View.as_view.<locals>.view",
}


def _generic(func: str, file: str) -> bool:
    return (
        func == "<module>"
        or func in GENERIC_FUNCS
        or any(marker in file for marker in GENERIC_FILES)
    )


def _category(frames) -> str:
    """What the sampled worker was doing: connecting to PostgreSQL, waiting for its
    answer to a statement, or running Python."""
    names = {
        (func, file.rsplit("psycopg/", 1)[-1]) for func, file, _ in frames if "psycopg/" in file
    }
    if any(func == "Connection.connect" for func, _ in names):
        return "connecting to PostgreSQL"
    if any(func == "Connection.wait" for func, _ in names):
        return "waiting for PostgreSQL (statement sent, answer not yet read)"
    return "Python (Django, DRF, app code, gunicorn I/O)"


def _short(func: str, file: str) -> str:
    path = file
    for marker in ("site-packages/", str(code_dir()) + "/"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return f"{func} ({path})"


def analyse(raw_path: Path, top: int = 15) -> dict:
    ranges = view_lines()
    groups = {"all": Counter(), "next": Counter(), "label": Counter(), "around": Counter()}
    categories = {key: Counter() for key in groups}
    totals = Counter()
    for line in raw_path.read_text().splitlines():
        if not line.strip():
            continue
        stack, _, count = line.rpartition(" ")
        count = int(count)
        frames = _frames(stack)
        if not any(func.endswith("handle_request") for func, _, _ in frames):
            continue  # the worker waiting for a connection
        group = "around"
        for func, file, lineno in frames:
            for name, cls in VIEWS.items():
                if func == f"{cls}.post":
                    group = name
            if func == "post" and file.endswith("annotation/api/worker.py") and lineno:
                for name, lines in ranges.items():
                    if lineno in lines:
                        group = name
        seen = {_short(func, file) for func, file, _ in frames if not _generic(func, file)}
        category = _category(frames)
        for key in ("all", group):
            totals[key] += count
            categories[key][category] += count
            for name in seen:
                groups[key][name] += count
    result = {"samples_in_requests": totals["all"], "by_group": {}}
    for key, counter in groups.items():
        total = totals[key]
        result["by_group"][key] = {
            "samples": total,
            "share_of_request_time": round(total / totals["all"], 3) if totals["all"] else None,
            "doing": {name: round(n / total, 3) for name, n in categories[key].most_common()}
            if total
            else {},
            "top": [
                {"function": name, "cumulative_share": round(n / total, 3)}
                for name, n in counter.most_common(top)
            ]
            if total
            else [],
        }
    return result
