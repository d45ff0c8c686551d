"""Importing a corpus's embeddings (FORMATS.md, "Response embeddings"): Parquet, .npz and
.npy files of any dimension stored as unit float32/float16 rows by ``row_index``, and
files refused whole (nothing replaced) on a missing, extra, repeated or wrong-dimension row
or a value that is not a finite number."""

import io
import time
import tracemalloc
import zipfile

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.management import CommandError, call_command

from core.models import AuditEvent
from core.tabular import ImportRejected, Problems
from diversity.corpora.services import embedding_readers, embeddings
from diversity.corpora.services.embeddings import import_embeddings
from diversity.corpora.storage import corpus_dir, embedding_path, open_embeddings
from tests.corpora.pools import imported_pool

pytestmark = pytest.mark.django_db

DIM = 5


@pytest.fixture
def corpus(tmp_path):
    # 12 responses
    return imported_pool(tmp_path, n_queries=3, models=("alpha", "beta"), samples=2)


def ids_of(corpus) -> list[str]:
    return list(corpus.responses.order_by("row_index").values_list("response_id", flat=True))


def vectors(n: int, dim: int = DIM, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, dim)) * 10


def unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def parquet_file(path, ids, matrix, fixed: bool = False):
    values = [list(map(float, row)) for row in matrix]
    if fixed:
        column = pa.FixedSizeListArray.from_arrays(
            pa.array(np.asarray(matrix, dtype=np.float32).ravel()), np.asarray(matrix).shape[1]
        )
    else:
        column = pa.array(values, type=pa.list_(pa.float64()))
    pq.write_table(pa.table({"response_id": pa.array(ids), "embedding": column}), path)
    return path


def npz_file(path, ids, matrix):
    np.savez(path, response_id=np.array(ids), embedding=np.asarray(matrix, dtype=np.float32))
    return path


def refused(corpus, path) -> list[str]:
    before = (corpus.embedding_file, sorted(p.name for p in corpus_dir(corpus).iterdir()))
    with pytest.raises(ImportRejected) as caught:
        import_embeddings(corpus, path)
    corpus.refresh_from_db()
    after = (corpus.embedding_file, sorted(p.name for p in corpus_dir(corpus).iterdir()))
    assert after == before  # nothing replaced, no file left behind
    return caught.value.problems


# --------------------------------------------------------------------------- good files


@pytest.mark.parametrize("fixed", [False, True], ids=["list", "fixed-size-list"])
def test_a_parquet_file_in_any_order_lands_on_the_rows_of_its_responses(corpus, tmp_path, fixed):
    ids = ids_of(corpus)
    matrix = vectors(len(ids))
    order = np.random.default_rng(3).permutation(len(ids))
    path = parquet_file(
        tmp_path / "emb.parquet", [ids[i] for i in order], matrix[order], fixed=fixed
    )
    corpus = import_embeddings(corpus, path)

    assert corpus.has_embeddings and corpus.embedding_source == "imported"
    assert (corpus.embedding_dimension, corpus.embedding_dtype) == (DIM, "float32")
    assert corpus.embedding_origin == "emb.parquet" and len(corpus.embedding_sha256) == 64
    stored = open_embeddings(corpus)
    assert isinstance(stored, np.memmap) and stored.dtype == np.float32
    np.testing.assert_allclose(stored, unit(matrix), atol=1e-6)
    assert AuditEvent.objects.filter(action="corpus.embeddings").count() == 1


@pytest.mark.parametrize("as_upload", [False, True], ids=["path", "file-object"])
def test_a_big_first_row_group_has_its_first_row_measured_in_a_capped_process(
    corpus, tmp_path, monkeypatch, as_upload
):
    from diversity.corpora.services import parquet_first_row

    calls = []
    real = parquet_first_row.first_length_in_a_bounded_process
    monkeypatch.setattr(parquet_first_row, "IN_PROCESS_VALUES", 0)  # every file is "big"
    monkeypatch.setattr(
        parquet_first_row,
        "first_length_in_a_bounded_process",
        lambda handle: calls.append(handle) or real(handle),
    )
    ids = ids_of(corpus)
    matrix = vectors(len(ids))
    path = parquet_file(tmp_path / "emb.parquet", ids, matrix)
    source = io.BytesIO(path.read_bytes()) if as_upload else path
    if as_upload:
        source.name = "emb.parquet"
    corpus = import_embeddings(corpus, source)
    assert calls, "the first row was not measured in the capped process"
    assert corpus.has_embeddings and corpus.embedding_dimension == DIM
    np.testing.assert_allclose(open_embeddings(corpus), unit(matrix), atol=1e-6)


def test_an_npz_archive_of_another_dimension_is_stored_as_float16(corpus, tmp_path):
    ids = ids_of(corpus)
    matrix = vectors(len(ids), dim=3)
    corpus = import_embeddings(corpus, npz_file(tmp_path / "emb.npz", ids, matrix), dtype="float16")
    stored = open_embeddings(corpus)
    assert stored.shape == (12, 3) and stored.dtype == np.float16
    np.testing.assert_allclose(stored, unit(matrix), atol=2e-3)


def test_a_bare_npy_is_read_in_the_corpus_order_and_replaces_the_old_file(
    corpus, tmp_path, django_capture_on_commit_callbacks
):
    first = vectors(12)
    np.save(tmp_path / "a.npy", first)
    corpus = import_embeddings(corpus, tmp_path / "a.npy")
    old = embedding_path(corpus)
    second = vectors(12, dim=7, seed=2)
    np.save(tmp_path / "b.npy", second.astype(np.float32))
    with django_capture_on_commit_callbacks(execute=True):
        corpus = import_embeddings(corpus, tmp_path / "b.npy")
    assert not old.exists() and embedding_path(corpus).exists()
    np.testing.assert_allclose(open_embeddings(corpus), unit(second), atol=1e-6)


def test_a_file_read_in_several_chunks_gives_the_same_rows(corpus, tmp_path, monkeypatch):
    monkeypatch.setattr(embedding_readers, "READ_CHUNK_ROWS", 5)
    monkeypatch.setattr(embeddings, "REMAP_BYTES", 64)  # the file is mapped anew every chunk
    ids = ids_of(corpus)
    matrix = vectors(12)
    for path in (
        parquet_file(tmp_path / "e.parquet", ids, matrix),
        npz_file(tmp_path / "e.npz", ids, matrix),
    ):
        corpus = import_embeddings(corpus, path)
        np.testing.assert_allclose(open_embeddings(corpus), unit(matrix), atol=1e-6)


def test_the_command_imports_embeddings(corpus, tmp_path):
    ids = ids_of(corpus)
    path = npz_file(tmp_path / "emb.npz", ids, vectors(12))
    out = io.StringIO()
    call_command(
        "import_embeddings",
        "pool",
        str(path),
        "--dtype",
        "float16",
        stdout=out,
        stderr=io.StringIO(),
    )
    assert "12 x 5 (float16) from emb.npz" in out.getvalue()


# --------------------------------------------------------------------------- bad files


@pytest.mark.parametrize("writer", [parquet_file, npz_file], ids=["parquet", "npz"])
def test_a_missing_row_is_refused_with_the_ids_it_lacks(corpus, tmp_path, writer):
    ids = ids_of(corpus)
    path = writer(tmp_path / f"e.{writer.__name__[:-5]}", ids[:-2], vectors(10))
    problems = refused(corpus, path)
    assert len(problems) == 1
    assert problems[0].endswith(
        "1: response_id: 2 of the corpus's 12 responses have no embedding: 'q2-beta-1', 'q2-beta-2'"
    )


@pytest.mark.parametrize("writer", [parquet_file, npz_file], ids=["parquet", "npz"])
def test_an_extra_or_repeated_row_is_refused(corpus, tmp_path, writer):
    ids = ids_of(corpus)
    path = writer(tmp_path / f"e.{writer.__name__[:-5]}", [*ids, "stranger", ids[0]], vectors(14))
    problems = refused(corpus, path)
    name = path.name
    assert problems == [
        f"{name}:13: response_id: 'stranger' is not a response of corpus 'pool'",
        f"{name}:14: response_id: 'q0-alpha-1' already has an embedding in row 1",
    ]


def test_an_npy_with_more_or_fewer_rows_than_responses_is_refused(corpus, tmp_path):
    np.save(tmp_path / "long.npy", vectors(13))
    problems = refused(corpus, tmp_path / "long.npy")
    assert problems[0].startswith("long.npy:13: embedding: the array has more rows than the")
    np.save(tmp_path / "short.npy", vectors(11))
    problems = refused(corpus, tmp_path / "short.npy")
    assert "1 of the corpus's 12 responses have no embedding: 'q2-beta-2'" in problems[0]


def test_a_row_of_another_dimension_is_refused(corpus, tmp_path):
    ids = ids_of(corpus)
    rows = [list(v) for v in vectors(12)]
    rows[4] = rows[4][:3]
    table = pa.table({"response_id": ids, "embedding": pa.array(rows, type=pa.list_(pa.float32()))})
    pq.write_table(table, tmp_path / "e.parquet")
    problems = refused(corpus, tmp_path / "e.parquet")
    assert problems == ["e.parquet:5: embedding: has 3 values; the first row has 5"]


def peak_bytes(run) -> int:
    """The most memory Python and NumPy held at once while ``run()`` ran."""
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_small_parquet_with_one_long_row_is_refused_without_padding(corpus, tmp_path):
    rows = [[0.0] * 3 for _ in range(8192)]
    rows[0] = [0.0] * 20_000  # every other row would be padded to this length
    table = pa.table(
        {
            "response_id": [f"x{i}" for i in range(8192)],
            "embedding": pa.array(rows, type=pa.list_(pa.float64())),
        }
    )
    pq.write_table(table, tmp_path / "e.parquet")
    assert (tmp_path / "e.parquet").stat().st_size < 100_000
    problems = []
    peak = peak_bytes(lambda: problems.extend(refused(corpus, tmp_path / "e.parquet")))
    assert "e.parquet:2: embedding: has 3 values; the first row has 20000" in problems
    assert peak < 200e6  # padded: 8192 x 20,000 x 8 bytes = 1.3 GB


def test_an_array_wider_than_the_limit_is_refused_from_its_header(corpus, tmp_path):
    header = {"descr": "<f8", "fortran_order": False, "shape": (1_000_000, 70_000)}
    with open(tmp_path / "wide.npy", "wb") as stream:
        np.lib.format.write_array_header_2_0(stream, header)
    problems = []
    peak = peak_bytes(lambda: problems.extend(refused(corpus, tmp_path / "wide.npy")))
    assert problems == ["wide.npy:1: embedding: has 70,000 values; at most 65,536 are read"]
    assert peak < 50e6


def test_wide_rows_are_read_a_few_megabytes_at_a_time(corpus, tmp_path):
    # the header promises 8192 rows of 65,536 values (2 GB); the file holds 10 of them
    header = {"descr": "<f4", "fortran_order": False, "shape": (8192, 65_536)}
    with open(tmp_path / "e.npy", "wb") as stream:
        np.lib.format.write_array_header_2_0(stream, header)
        stream.write(np.ones((10, 65_536), dtype=np.float32).tobytes())
    found = Problems("e.npy")

    def read():  # the reader alone: the import refuses 8192 rows for 12 responses at once
        with open(tmp_path / "e.npy", "rb") as handle:
            for _ in embedding_readers.READERS["npy"](handle, found):
                pass

    peak = peak_bytes(lambda: pytest.raises(embedding_readers._Refused, read))
    assert found.lines() == ["e.npy:11: embedding: the file ends before its last row"]
    assert peak < 200e6
    assert refused(corpus, tmp_path / "e.npy") == [
        "e.npy:13: embedding: the array has more rows than the corpus has responses (12): "
        "8,192 rows by its header; nothing was read"
    ]


def test_chunks_are_sized_by_bytes(corpus, tmp_path, monkeypatch):
    ids = ids_of(corpus)
    id_bytes = np.array(ids).itemsize  # in an .npz the ids are read with the rows
    matrix = vectors(12)
    np.save(tmp_path / "e.npy", matrix)
    for path, row_bytes in (
        (parquet_file(tmp_path / "e.parquet", ids, matrix), DIM * 8),  # values as float64
        (npz_file(tmp_path / "e.npz", ids, matrix), DIM * 8 + id_bytes),
        (tmp_path / "e.npy", DIM * 8),
    ):
        monkeypatch.setattr(embedding_readers, "READ_CHUNK_BYTES", 5 * row_bytes)  # five rows
        first_rows = []
        corpus = import_embeddings(
            corpus, path, progress=lambda row, *_, seen=first_rows: seen.append(row)
        )
        assert first_rows == [1, 6, 11]
        np.testing.assert_allclose(open_embeddings(corpus), unit(matrix), atol=1e-6)


def test_nan_infinite_and_null_values_are_refused(corpus, tmp_path):
    ids = ids_of(corpus)
    matrix = vectors(12)
    matrix[2, 1] = np.nan
    matrix[7, 4] = np.inf
    problems = refused(corpus, npz_file(tmp_path / "e.npz", ids, matrix))
    assert problems == [
        "e.npz:3: embedding: value 2 is nan (not a finite number)",
        "e.npz:8: embedding: value 5 is inf (not a finite number)",
    ]
    rows = [list(v) for v in vectors(12)]
    rows[0] = None
    table = pa.table({"response_id": ids, "embedding": pa.array(rows, type=pa.list_(pa.float64()))})
    pq.write_table(table, tmp_path / "n.parquet")
    assert "n.parquet:1: embedding: is missing (null)" in refused(corpus, tmp_path / "n.parquet")


def test_a_zero_vector_is_refused(corpus, tmp_path):
    # it has no direction: every similarity with it would be 0 and its scaling undefined
    matrix = vectors(12)
    matrix[4] = 0.0
    np.save(tmp_path / "z.npy", matrix)
    assert refused(corpus, tmp_path / "z.npy") == [
        "z.npy:5: embedding: every value is 0: a vector without a direction cannot be compared"
    ]


def test_malformed_files_are_refused_with_a_clear_message(corpus, tmp_path):
    np.save(tmp_path / "ints.npy", np.ones((12, 4), dtype=np.int64))
    assert refused(corpus, tmp_path / "ints.npy") == [
        "ints.npy:1: embedding: must hold floating-point numbers, not int64"
    ]
    np.save(tmp_path / "flat.npy", np.ones(12))
    assert "must be a 2-dimensional array" in refused(corpus, tmp_path / "flat.npy")[0]
    np.savez(tmp_path / "other.npz", vectors=np.ones((12, 4)))
    assert refused(corpus, tmp_path / "other.npz") == [
        "other.npz:1: response_id: the archive has no array 'response_id'",
        "other.npz:1: embedding: the archive has no array 'embedding'",
    ]
    (tmp_path / "junk.parquet").write_bytes(b"not parquet at all")
    assert refused(corpus, tmp_path / "junk.parquet")[0].startswith(
        "junk.parquet:1: file: not a Parquet file"
    )
    (tmp_path / "e.txt").write_text("1,2")
    assert "unsupported file type" in refused(corpus, tmp_path / "e.txt")[0]


def test_a_refused_file_keeps_the_embeddings_the_corpus_had(corpus, tmp_path):
    good = vectors(12)
    np.save(tmp_path / "good.npy", good)
    corpus = import_embeddings(corpus, tmp_path / "good.npy")
    np.save(tmp_path / "bad.npy", vectors(11))
    refused(corpus, tmp_path / "bad.npy")
    np.testing.assert_allclose(open_embeddings(corpus), unit(good), atol=1e-6)


def test_the_command_lists_the_problems_and_exits_non_zero(corpus, tmp_path):
    np.save(tmp_path / "bad.npy", vectors(11))
    with pytest.raises(CommandError, match="no embedding: 'q2-beta-2'"):
        call_command("import_embeddings", "pool", str(tmp_path / "bad.npy"), "--quiet")
    with pytest.raises(CommandError, match="corpus 'nope' does not exist"):
        call_command("import_embeddings", "nope", str(tmp_path / "bad.npy"))


def test_an_archive_promising_far_more_rows_than_the_corpus_is_refused_from_its_header(
    corpus, tmp_path
):
    # a header of 50 million rows over deflated zeros: refused before a row is unpacked
    path = tmp_path / "bomb.npz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, array in (
            ("response_id", np.array(["x"] * 3, dtype="<U8")),
            ("embedding", np.zeros((3, DIM), dtype=np.float32)),
        ):
            buffer = io.BytesIO()
            np.lib.format.write_array_header_1_0(
                buffer,
                {
                    "descr": array.dtype.str,
                    "fortran_order": False,
                    "shape": (50_000_000, *array.shape[1:]),
                },
            )
            buffer.write(array.tobytes() + bytes(4 * 1024 * 1024))
            archive.writestr(f"{name}.npy", buffer.getvalue())
    started = time.monotonic()
    problems = refused(corpus, path)
    assert time.monotonic() - started < 5
    assert problems == [
        "bomb.npz:1025: embedding: the array has more rows than the corpus has responses "
        "(12): 50,000,000 rows by its header; nothing was read"
    ]
