"""The local embedding model: paraphrases closer than unrelated sentences (skipped when the
optional ``embed`` extra is not installed), and a clear error when it is missing."""

import numpy as np
import pytest

from diversity.homogeneity import embedding
from diversity.homogeneity.embedding import (
    DIMENSION,
    EMBED_EXTRA,
    EmbeddingModelUnavailable,
    embed_texts,
    embedding_model_available,
)

PARAPHRASES = [
    ("The cat sat on the mat.", "A cat was sitting on the rug."),
    ("How do I reset my password?", "What are the steps to change my login password?"),
    ("The stock market fell sharply today.", "Share prices dropped steeply on the exchange today."),
    ("She plays the violin beautifully.", "Her violin playing is lovely."),
    (
        "Plants turn sunlight into chemical energy.",
        "Photosynthesis stores light as chemical energy.",
    ),
    ("The train to Paris leaves at noon.", "At midday the Paris train departs."),
]

needs_model = pytest.mark.skipif(
    not embedding_model_available(),
    reason=f"optional local embedding model not installed ({EMBED_EXTRA})",
)


@needs_model
def test_paraphrases_are_closer_than_unrelated_sentences(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    sentences = [s for pair in PARAPHRASES for s in pair]
    vectors = embed_texts(sentences, batch_size=5)
    assert vectors.shape == (12, DIMENSION) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors @ vectors.T
    for i in range(len(PARAPHRASES)):
        first, second = 2 * i, 2 * i + 1
        unrelated = [j for j in range(12) if j // 2 != i]
        assert similarity[first, second] > similarity[first, unrelated].max()
        assert similarity[second, first] > similarity[second, unrelated].max()


@needs_model
def test_order_and_batching_do_not_change_vectors():
    sentences = ["short", "a much longer sentence about the weather in spring", "", "mid size text"]
    whole = embed_texts(sentences, batch_size=4)
    np.testing.assert_allclose(embed_texts(sentences, batch_size=1), whole, atol=1e-5)
    np.testing.assert_allclose(embed_texts(sentences[::-1])[::-1], whole, atol=1e-5)
    assert embed_texts([]).shape == (0, DIMENSION)


def test_missing_extra_raises_a_clear_error(monkeypatch):
    monkeypatch.setattr(embedding, "_missing_parts", lambda: ["onnxruntime"])
    embedding._model.cache_clear()
    try:
        with pytest.raises(EmbeddingModelUnavailable, match=r'pip install -e "\.\[embed\]"'):
            embed_texts(["anything"])
        assert not embedding_model_available()
    finally:
        embedding._model.cache_clear()


def test_rejects_batch_size_below_one():
    with pytest.raises(ValueError):
        embed_texts(["x"], batch_size=0)


def test_the_gpu_is_used_when_the_runtime_has_it_and_the_cpu_otherwise():
    from diversity.homogeneity.embedding import execution_providers

    gpu_build = ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]
    cpu_build = ["AzureExecutionProvider", "CPUExecutionProvider"]
    assert execution_providers(gpu_build) == ["CUDAExecutionProvider", "CPUExecutionProvider"]
    assert execution_providers(gpu_build, "cuda")[0] == "CUDAExecutionProvider"
    assert execution_providers(gpu_build, "cpu") == ["CPUExecutionProvider"]
    assert execution_providers(cpu_build) == ["CPUExecutionProvider"]
    with pytest.raises(EmbeddingModelUnavailable, match=r"\[embed-gpu\]"):
        execution_providers(cpu_build, "cuda")
    with pytest.raises(ValueError, match="device must be one of auto, cpu, cuda"):
        execution_providers(cpu_build, "tpu")


@needs_model
def test_a_texts_vector_is_the_same_in_any_batch_and_with_any_number_of_threads():
    texts = [" ".join(["word"] * n) + f" number {n}" for n in (1, 7, 40, 120, 300)]
    alone = np.vstack([embed_texts([text], threads=1) for text in texts])
    assert np.array_equal(embed_texts(texts, batch_size=16, threads=2), alone)
    assert np.array_equal(embed_texts(texts[::-1], batch_size=2, threads=1)[::-1], alone)
    assert embedding.active_providers(1) == ["CPUExecutionProvider"]
