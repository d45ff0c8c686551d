"""The memory a step adds to this process at its peak, for the benchmarks that report it
(``bench/corpus_import.py``, ``bench/export.py``).

Linux keeps the process's peak resident size in ``VmHWM``; writing ``5`` to
``/proc/self/clear_refs`` resets it to the current size (Linux >= 4.0), so the peak of one
step is ``VmHWM`` after it less ``VmRSS`` before it. Where the reset is refused the figure
is NaN rather than the peak of everything the process did before.
"""

from __future__ import annotations


def _reset_peak() -> bool:
    """Set ``VmHWM`` to the current resident size; whether the kernel allowed it."""
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
        return True
    except OSError:
        return False


def _status_kb(name: str) -> int:
    """The kB figure ``name`` of ``/proc/self/status`` (0 where it is missing)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(name + ":"):
                return int(line.split()[1])
    return 0


class PeakAdded:
    """``with PeakAdded() as peak: step()``, then ``peak.mb``: the MB the step added to the
    process at its peak (NaN where the peak cannot be reset)."""

    def __enter__(self) -> PeakAdded:
        self.known = _reset_peak()
        self.before = _status_kb("VmRSS")
        self.mb = float("nan")
        return self

    def __exit__(self, *exc_info) -> None:
        if self.known:
            self.mb = max((_status_kb("VmHWM") - self.before) / 1024, 0.0)
