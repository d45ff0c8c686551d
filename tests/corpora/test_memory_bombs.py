"""Decompression and alias bombs are refused before they are materialised: the peak
memory of each refusal, measured in a fresh process, stays under 100 MB over what the
process held before reading (README "Deployment", the size caps).

* a Parquet file of under a kilobyte whose second row holds 150 million float32 zeros
  (2.6 GB decoded), one that hides a 30-million-value row behind 5,000 short rows, and
  one whose *first* row holds 150 million zeros ahead of 3,000 short rows;
* a ~600-byte questionnaire whose anchors nest 8 deep with a fan-out of 10.
"""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LIMIT_MB = 100

pytestmark = pytest.mark.slow

MAKE_PARQUET = """
import sys
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
path, huge, pad, first = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
if first:  # the huge row first, then short rows: the metadata's count allows it
    offsets = np.array([0, huge] + [huge + 4 * (i + 1) for i in range(pad + 1)], dtype=np.int64)
else:
    offsets = np.array([0, 4] + [4] * pad + [4 + huge], dtype=np.int64)
values = pa.array(np.zeros(int(offsets[-1]), dtype=np.float32))
embedding = pa.LargeListArray.from_arrays(pa.array(offsets), values)
ids = ["a"] + [f"pad{i}" for i in range(pad)] + ["b"]
table = pa.table({"response_id": ids, "embedding": embedding})
pq.write_table(table, path, compression="zstd", row_group_size=10**7)
"""

MEASURE = """
import json, os, resource, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django
django.setup()
import pyarrow, pyarrow.compute, pyarrow.parquet  # imported before the baseline
from annotation.services.questionnaire import clean_definition, parse_file_text
from core.errors import InvalidInput
from core.tabular import Problems
from diversity.corpora.services import embedding_readers

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

what, path = sys.argv[1], sys.argv[2]
before = peak_mb()
problems = []
if what == "questionnaire":
    try:
        clean_definition(parse_file_text(open(path).read(), "q.yaml"))
    except InvalidInput as error:
        problems.append(str(error))
else:
    found = Problems(os.path.basename(path))
    try:
        with open(path, "rb") as handle:
            for chunk in embedding_readers.READERS[what](handle, found):
                pass
    except embedding_readers._Refused:
        pass
    problems = found.lines()
print(json.dumps({"grew_mb": peak_mb() - before, "problems": problems}))
"""


def _python(code: str, *arguments: str) -> str:
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *arguments],
        cwd=REPO, capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def _refusal(what: str, path: Path) -> dict:
    measured = json.loads(_python(MEASURE, what, str(path)).strip().splitlines()[-1])
    print(f"\n[bomb] {path.name}: peak grew {measured['grew_mb']:.0f} MB; {measured['problems']}")
    return measured


@pytest.mark.parametrize(
    "huge, pad, first, reason",
    [
        (150_000_000, 0, False, "more than 65,536 per row"),
        (30_000_000, 5_000, False, "longer than the first row's 4 values"),
        # 3,001 rows may hold 196 M values by the metadata: the first row's 150 M are
        # found too long by a memory-capped process (parquet_first_row)
        (150_000_000, 3_000, True, "cannot be read within 256 MB"),
    ],
)
def test_a_parquet_bomb_is_refused_from_its_metadata(tmp_path, huge, pad, first, reason):
    bomb = tmp_path / "bomb.parquet"
    _python(MAKE_PARQUET, str(bomb), str(huge), str(pad), "1" if first else "0")
    assert bomb.stat().st_size < 64 * 1024
    measured = _refusal("parquet", bomb)
    assert measured["problems"] and reason in measured["problems"][0]
    assert "nothing was read" in measured["problems"][0]
    assert measured["grew_mb"] < LIMIT_MB


def test_a_questionnaire_alias_bomb_is_refused_without_expanding(tmp_path):
    # the anchors hide in a question's unused keys; the options expand to 10^8 strings
    lines = ["- id: a", "  text: t", "  x0: &a [x,x,x,x,x,x,x,x,x,x]"] + [
        f"  x{level + 1}: &{chr(98 + level)} [{','.join(['*' + chr(97 + level)] * 10)}]"
        for level in range(7)
    ]
    lines += ["- id: q", "  text: t", "  type: choice", "  options: [*h, *h]"]
    bomb = tmp_path / "q.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    assert bomb.stat().st_size < 1000
    measured = _refusal("questionnaire", bomb)
    assert "anchors and aliases" in measured["problems"][0]
    assert measured["grew_mb"] < LIMIT_MB
