"""A response pool's checks across rows, once every row has been read (``imports``).

The loader keeps, per response, a 64-bit hash of its id and the positions of its query,
model and sample, each with its line, in compact arrays (about 50 bytes a response, so a
pool of millions is checked without holding its rows). Sorting those arrays finds the
repeats; a response id whose hash repeats is confirmed by reading its lines again, so a
hash collision is never reported.
"""

from collections.abc import Callable

import numpy as np

__all__ = ["report_repeats"]


def report_repeats(loader, reread: Callable[[set[int]], dict[int, str]]) -> None:
    """Collect, in ``loader.problems``, each repeated response id and each repeated (query,
    model, sample), at its later line and naming the first; ``reread(lines)`` gives the
    response ids on those lines of the file."""
    hashes = np.frombuffer(loader.id_hashes, dtype=np.int64)
    lines = np.frombuffer(loader.id_lines, dtype=np.int64)
    order = np.argsort(hashes, kind="stable")
    same = hashes[order][1:] == hashes[order][:-1]
    if same.any():
        suspects = set(lines[order][1:][same].tolist()) | set(lines[order][:-1][same].tolist())
        ids = reread(suspects)
        first_line: dict[str, int] = {}
        for line in sorted(ids):
            response_id = ids[line]
            if response_id in first_line:
                loader.problems.add(
                    line,
                    "response_id",
                    f"{response_id!r} already appears on line {first_line[response_id]}",
                )
            else:
                first_line[response_id] = line
    queries = np.frombuffer(loader.key_query, dtype=np.int64)
    models = np.frombuffer(loader.key_model, dtype=np.int64)
    samples = np.frombuffer(loader.key_sample, dtype=np.int64)
    key_lines = np.frombuffer(loader.key_lines, dtype=np.int64)
    order = np.lexsort((key_lines, samples, models, queries))
    q, m, s, at = queries[order], models[order], samples[order], key_lines[order]
    repeated = np.flatnonzero((q[1:] == q[:-1]) & (m[1:] == m[:-1]) & (s[1:] == s[:-1])) + 1
    if repeated.size:
        model_names = list(loader.models)
        for index in repeated.tolist():
            first = index - 1
            while first > 0 and (q[first - 1], m[first - 1], s[first - 1]) == (
                q[index],
                m[index],
                s[index],
            ):
                first -= 1
            query = loader.query_list[int(q[index])]
            loader.problems.add(
                int(at[index]),
                "sample",
                f"model {model_names[int(m[index])]!r} already has sample {int(s[index])} "
                f"of query {query.query_id!r} on line {int(at[first])}",
            )
