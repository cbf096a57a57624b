"""Start and stop a real ``chroma run`` server on loopback (used by the benchmarks and tests)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

__all__ = ["ChromaServer", "free_port"]

HEARTBEAT = "/api/v2/heartbeat"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ChromaServer:
    """``chroma run --host 127.0.0.1 --port PORT --path PATH`` as a child process, stopped by PID."""

    def __init__(self, path: Path, port: int | None = None, log: Path | None = None) -> None:
        self.path = path
        self.port = port or free_port()
        self.log = log or path.with_suffix(".log")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> ChromaServer:
        exe = Path(sys.executable).parent / "chroma"
        self.path.mkdir(parents=True, exist_ok=True)
        cmd = [str(exe), "run", "--host", "127.0.0.1", "--port", str(self.port), "--path", str(self.path)]
        env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chroma exited with {self.proc.returncode}; see {self.log}")
            try:
                with urllib.request.urlopen(self.url + HEARTBEAT, timeout=1) as resp:
                    if resp.status == 200:
                        return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"chroma did not answer {HEARTBEAT} within {timeout}s; see {self.log}")

    def stop(self) -> None:
        """Stop the server by its PID (SIGTERM, then SIGKILL)."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> ChromaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
