"""One settings object, read once from ``TALKQA_*`` environment variables (and flags).

``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` keep the openai SDK's own names.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["Settings", "default_home", "default_seed_dirs"]

ENV_PREFIX = "TALKQA_"
DEFAULT_COLLECTION = "talks"
DEFAULT_EMBED_BACKEND: Literal["minilm-onnx", "openai"] = "minilm-onnx"
DEFAULT_EMBED_BATCH = 32
DEFAULT_THREADS = 1
DEFAULT_LLM_MODEL = "gpt-4o-mini"
DEFAULT_LLM_TIMEOUT_S = 30.0
DEFAULT_LLM_RETRIES = 1
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7860
MAX_QUESTION_CHARS = 2000
DEFAULT_TOP_K = 5
#: Calibrated on the seeds with eval/questions.jsonl (see eval/README.md).
DEFAULT_DENSE_FLOOR = 0.42
DEFAULT_LEXICAL_FLOOR = 0.4

_REPO_ROOT = Path(__file__).resolve().parent.parent


def default_home() -> Path:
    """Per-user data dir: ``$XDG_DATA_HOME/talkqa`` or ``~/.local/share/talkqa``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "talkqa"


def default_seed_dirs() -> list[Path]:
    """The bundled seed listings: the checkout's ``seeds/`` or the copy inside the wheel."""
    for candidate in (_REPO_ROOT / "seeds", Path(__file__).resolve().parent / "_seeds"):
        if candidate.is_dir():
            return [candidate]
    return []


class Settings(BaseSettings):
    """Every knob of TalkQA, each with a default; ``TALKQA_<NAME>`` overrides it."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", populate_by_name=True)

    home: Path = Field(default_factory=default_home, description="Data dir for the index (TALKQA_HOME).")
    seeds: list[Path] = Field(default_factory=default_seed_dirs, description="Listing files or folders to ingest.")
    chroma_url: str | None = Field(
        None, description="http://host:port of a Chroma server; unset uses the embedded store."
    )
    collection: str = Field(DEFAULT_COLLECTION, description="Chroma collection name.")
    embed_backend: Literal["minilm-onnx", "openai"] = Field(
        DEFAULT_EMBED_BACKEND, description="Embedding backend: packaged ONNX model or OpenAI API."
    )
    embed_model: str = Field("text-embedding-3-small", description="Model name for the openai backend.")
    embed_batch: int = Field(DEFAULT_EMBED_BATCH, ge=1, description="Texts per embedding batch.")
    threads: int = Field(DEFAULT_THREADS, ge=1, description="Threads for onnxruntime.")
    answerer: Literal["auto", "offline", "llm"] = Field(
        "auto", description="offline (extractive), llm, or auto (llm when an API key or base URL is set)."
    )
    llm_model: str = Field(DEFAULT_LLM_MODEL, description="Chat model name for the llm answerer.")
    llm_temperature: float = Field(0.0, ge=0.0, le=2.0, description="Sampling temperature.")
    llm_timeout: float = Field(DEFAULT_LLM_TIMEOUT_S, gt=0, description="Seconds before an LLM call gives up.")
    llm_retries: int = Field(DEFAULT_LLM_RETRIES, ge=0, le=5, description="Retries of a failed LLM call.")
    llm_max_tokens: int = Field(400, ge=16, description="Token budget of one LLM answer.")
    openai_api_key: SecretStr | None = Field(
        None, validation_alias="OPENAI_API_KEY", description="OpenAI (or compatible) API key."
    )
    openai_base_url: str | None = Field(
        None, validation_alias="OPENAI_BASE_URL", description="OpenAI-compatible server URL."
    )
    top_k: int = Field(DEFAULT_TOP_K, ge=1, le=100, description="Talks returned by search by default.")
    dense_floor: float = Field(DEFAULT_DENSE_FLOOR, description="Cosine similarity that makes a talk relevant.")
    lexical_floor: float = Field(DEFAULT_LEXICAL_FLOOR, description="Share of rare query terms a talk must hold.")
    max_question_chars: int = Field(MAX_QUESTION_CHARS, ge=10, description="Longer questions are cut.")
    host: str = Field(DEFAULT_HOST, description="UI host; 127.0.0.1 unless you mean to share.")
    port: int = Field(DEFAULT_PORT, ge=0, le=65535, description="UI port.")

    @property
    def chroma_path(self) -> Path:
        return self.home / "chroma"

    def wants_llm(self) -> bool:
        if self.answerer == "llm":
            return True
        if self.answerer == "offline":
            return False
        return self.openai_api_key is not None or self.openai_base_url is not None
