"""Running a measurement against an earlier version of the code, side by side in one run.

``code_tree(ref)`` writes the files of a git commit (``git archive``) to a folder under the
system's temporary directory (kept for later runs, one per commit); a benchmark then runs
its measurement in a fresh process of this repository's ``.venv`` with that folder first on
``sys.path`` (``run_measurement``), alternating with the same measurement of the current
code, and reports each phase as a ratio of the two. Both versions read the same database
and the same jobs folder, so the earlier version must understand today's schema (a
benchmark of a change that migrates has no such baseline).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def resolve(ref: str) -> str:
    """The full commit hash of ``ref``."""
    return subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--verify", f"{ref}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def code_tree(ref: str) -> Path:
    """The files of commit ``ref`` in a folder of their own (made once per commit)."""
    commit = resolve(ref)
    folder = Path(tempfile.gettempdir()) / f"dense-judgments-baseline-{commit[:12]}"
    if not (folder / "manage.py").exists():
        folder.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", "--format=tar", commit],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def run_measurement(script: Path, code_root: Path, arguments: list[str]) -> dict:
    """Run ``script --measure --code-root code_root *arguments`` in a fresh process and
    return the JSON it prints on its last line."""
    command = [sys.executable, str(script), "--measure", "--code-root", str(code_root)]
    finished = subprocess.run(
        command + arguments, check=True, capture_output=True, text=True, env=dict(os.environ)
    )
    return json.loads(finished.stdout.strip().splitlines()[-1])


def use_code_root(code_root: str | None) -> None:
    """Import the project from ``code_root`` (this repository when ``None``)."""
    root = str(Path(code_root).resolve()) if code_root else str(REPO)
    # neither this checkout nor its bench folder (whose analysis.py would shadow the app)
    ours = {REPO, REPO / "bench"}
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() not in ours]
    sys.path.insert(0, root)
    os.chdir(root)


def best(runs: list[dict]) -> dict:
    """Per phase, the smallest of the runs' seconds (the machine is shared)."""
    return {phase: min(run[phase] for run in runs) for phase in runs[0]}


def ratios(current: dict, baseline: dict) -> dict:
    """Per phase, the current code's seconds over the baseline's."""
    return {
        phase: round(current[phase] / baseline[phase], 3)
        for phase in current
        if phase in baseline and baseline[phase] > 0
    }


def write_results(name: str, run: dict, lines: list[str]) -> None:
    """``bench/results/<name>.json`` (the run) and ``.md`` (its table), and the table printed."""
    results = REPO / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / f"{name}.json").write_text(json.dumps(run, indent=2) + "\n")
    (results / f"{name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
