"""Helpers for the LLM tests: a free port, and a fault-injecting HTTP proxy in front of the real server.

The proxy is a ``ThreadingHTTPServer`` on 127.0.0.1 that forwards ``POST /v1/...`` to the real
llama.cpp server and records what passed through. Its ``mode`` decides what the client sees:

* ``"pass"``    the server's reply as is;
* ``"inject"``  the reply plus one sentence naming source [1]'s title, cited ``[1][9]`` (``[9]`` is
                not a valid key), so the verifier has one invalid marker to drop, deterministically;
* ``"sleep"``   nothing for ``sleep_s`` seconds (a timeout);
* ``"status"``  HTTP ``status`` with an error body that echoes the request's API key;
* ``"cut"``     a streamed reply's first events, then the connection closes (no finish reason);
* ``"stall"``   a streamed reply's first events, then nothing for ``sleep_s`` seconds (a read timeout).
"""

from __future__ import annotations

import contextlib
import json
import queue
import re
import socket
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAKE_KEY = "sk-test-not-a-real-key"
_TITLE_1 = re.compile(r"^\[1\] (.+)$", re.M)


def free_port() -> int:
    """A loopback port nobody listens on (bound once, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def injected_sentence(request: dict[str, Any]) -> str:
    """A sentence that source [1] supports, cited with a valid and an invalid key."""
    user = request["messages"][-1]["content"]
    match = _TITLE_1.search(user)
    title = match.group(1) if match else "the first source"
    return f"\n\nSee the talk {title} [1][9]."


def sse_content(body: bytes) -> str:
    """The text of a streamed chat completion (concatenated deltas)."""
    text = []
    for line in body.decode().splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            event = json.loads(line[6:])
            for choice in event.get("choices", []):
                text.append((choice.get("delta") or {}).get("content") or "")
    return "".join(text)


class FaultProxy:
    """See the module docstring; ``url`` is the OpenAI base URL to hand the client."""

    def __init__(self, upstream: str, mode: str = "pass", *, sleep_s: float = 0.0, status: int = 500) -> None:
        self.upstream = upstream.rstrip("/")
        self.mode = mode
        self.sleep_s = sleep_s
        self.status = status
        self.requests: list[dict[str, Any]] = []
        self.replies: list[str] = []  # the reply text the client was sent
        self.auth_headers: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                request = json.loads(raw or b"{}")
                proxy.requests.append(request)
                proxy.auth_headers.append(self.headers.get("Authorization", ""))
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    proxy._handle(self, raw, request)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def _forward(self, path: str, raw: bytes) -> tuple[int, bytes, str]:
        req = urllib.request.Request(
            self.upstream + path, data=raw, headers={"Content-Type": "application/json"}, method="POST"
        )
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, resp.read(), resp.headers.get("Content-Type", "application/json")

    def _handle(self, h: BaseHTTPRequestHandler, raw: bytes, request: dict[str, Any]) -> None:
        path = h.path.removeprefix("/v1")
        upstream_path = "/v1" + path
        if self.mode == "sleep":
            time.sleep(self.sleep_s)
            return
        if self.mode == "status":
            key = h.headers.get("Authorization", "").removeprefix("Bearer ")
            body = json.dumps({"error": {"message": f"upstream broke (key {key})", "type": "server_error"}})
            self._send(h, self.status, body.encode(), "application/json")
            return
        streamed = bool(request.get("stream"))
        if self.mode in ("cut", "stall") and streamed:
            self._break_stream(h, upstream_path, raw)
            return
        status, body, ctype = self._forward(upstream_path, raw)
        if self.mode == "inject":
            body = self._inject(body, request, streamed)
        self.replies.append(sse_content(body) if streamed else json.loads(body)["choices"][0]["message"]["content"])
        self._send(h, status, body, ctype)

    def _break_stream(self, h: BaseHTTPRequestHandler, path: str, raw: bytes, events: int = 6) -> None:
        """Relay the first ``events`` events as they come, then close ("cut") or go silent ("stall").

        While the model reads its prompt the proxy sends SSE comments, so a short client timeout
        measures the silence after the first text, not the prompt's processing time.
        """
        lines: queue.Queue[bytes | None] = queue.Queue()

        def pump() -> None:
            req = urllib.request.Request(
                self.upstream + path, data=raw, headers={"Content-Type": "application/json"}, method="POST"
            )
            try:
                with urllib.request.urlopen(req, timeout=120) as resp:
                    for line in resp:
                        if line.startswith(b"data: "):
                            lines.put(line)
                            if lines.qsize() >= events:
                                break
            finally:
                lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Connection", "close")
        h.end_headers()
        sent: list[bytes] = []
        while len(sent) < events:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                h.wfile.write(b": waiting\n\n")
                h.wfile.flush()
                continue
            if line is None:
                break
            h.wfile.write(line.rstrip(b"\n") + b"\n\n")
            h.wfile.flush()
            sent.append(line)
        self.replies.append(sse_content(b"\n".join(sent)))
        if self.mode == "stall":
            time.sleep(self.sleep_s)
        h.close_connection = True

    def _inject(self, body: bytes, request: dict[str, Any], streamed: bool) -> bytes:
        extra = injected_sentence(request)
        if not streamed:
            reply = json.loads(body)
            reply["choices"][0]["message"]["content"] = (reply["choices"][0]["message"]["content"] or "") + extra
            return json.dumps(reply).encode()
        events = [e for e in body.decode().split("\n\n") if e.strip()]
        out = []
        for event in events:
            if event.startswith("data: ") and event != "data: [DONE]":
                data = json.loads(event[6:])
                choices = data.get("choices") or []
                if choices and choices[0].get("finish_reason"):
                    piece = json.loads(json.dumps(data))
                    piece["choices"][0]["finish_reason"] = None
                    piece["choices"][0]["delta"] = {"content": extra}
                    out.append("data: " + json.dumps(piece))
            out.append(event)
        return ("\n\n".join(out) + "\n\n").encode()

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, body: bytes, ctype: str) -> None:
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
