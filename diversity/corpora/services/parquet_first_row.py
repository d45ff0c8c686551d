"""The number of values in a Parquet file's first embedding row, found within a memory
bound.

Parquet's metadata counts a row group's values, not each row's, and the first row's
length is what every other row is checked against (``embedding_readers``). A row group of
many short rows may hide one first row of a billion zeros in a few bytes: decoding it to
learn its length would take gigabytes. When the first row group holds more values than
``IN_PROCESS_VALUES`` (so its first rows could be that large), the length is read by a
separate Python process whose address space is capped at ``PROBE_MEMORY_BYTES`` over what
its imports take: a first row too long for the cap is refused without the importing
process (a web or Celery worker) growing at all.
"""

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from typing import IO

logger = logging.getLogger(__name__)

# Below this many values in the first row group its first rows are decoded in process:
# at most 8 bytes each, 32 MB.
IN_PROCESS_VALUES = 4 * 1024 * 1024
PROBE_MEMORY_BYTES = 256 * 1024 * 1024
PROBE_TIMEOUT_SECONDS = 60

_PROBE = r"""
import json, resource, sys
import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

path, budget = sys.argv[1], int(sys.argv[2])
with open("/proc/self/status") as status:
    size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (size + budget, size + budget))
row = 1
try:
    parquet = pq.ParquetFile(path)
    for batch in parquet.iter_batches(batch_size=16, columns=["embedding"], use_threads=False):
        lengths = pc.list_value_length(batch.column(0)).to_numpy(zero_copy_only=False)
        lengths = np.where(np.isnan(lengths.astype(float)), -1, lengths).astype(np.int64)
        given = np.flatnonzero(lengths >= 0)
        if given.size:
            print(json.dumps({"length": int(lengths[given[0]]), "row": row + int(given[0])}))
            break
        row += len(lengths)
    else:
        print(json.dumps({"length": None, "row": 1}))
except MemoryError:
    print(json.dumps({"too_long": True, "row": row}))
"""


class FirstRowTooLong(Exception):
    """The first row could not be decoded within ``PROBE_MEMORY_BYTES``."""

    def __init__(self, row: int):
        super().__init__(row)
        self.row = row


def first_length_in_a_bounded_process(handle: IO) -> tuple[int | None, int]:
    """(values in the first non-missing row or ``None``, that row's number), read by a
    memory-capped process; raises ``FirstRowTooLong``. ``handle`` is a binary file; one
    without a path on disk is copied to a temporary file first."""
    path = _path_of(handle)
    copy = None
    if path is None:
        copy = tempfile.NamedTemporaryFile(suffix=".parquet", delete=False)
        with copy:
            start = handle.tell()
            handle.seek(0)  # the whole file: the reader has moved about in it
            shutil.copyfileobj(handle, copy, length=1024 * 1024)
            handle.seek(start)
        path = copy.name
    try:
        run = subprocess.run(
            [sys.executable, "-c", _PROBE, path, str(PROBE_MEMORY_BYTES)],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            # the system allocator: Arrow's own pools reserve address space up front
            env={**os.environ, "ARROW_DEFAULT_MEMORY_POOL": "system"},
        )
    except subprocess.TimeoutExpired as error:
        raise FirstRowTooLong(1) from error
    finally:
        if copy is not None:
            os.unlink(copy.name)
    lines = run.stdout.strip().splitlines()
    if run.returncode != 0 or not lines:
        logger.warning("the first-row probe ended with %s: %s", run.returncode, run.stderr[-2000:])
        raise FirstRowTooLong(1)  # killed or crashed for want of memory
    answer = json.loads(lines[-1])
    if answer.get("too_long"):
        raise FirstRowTooLong(answer["row"])
    return answer["length"], answer["row"]


def _path_of(handle: IO) -> str | None:
    if hasattr(handle, "temporary_file_path"):  # Django's upload kept on disk
        return handle.temporary_file_path()
    name = getattr(handle, "name", None)
    if isinstance(name, str) and os.path.isfile(name) and hasattr(handle, "fileno"):
        return name
    return None
