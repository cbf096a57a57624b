"""LLM-written answers over the OpenAI API or any OpenAI-compatible server, verified in code.

``make_llm_answerer(settings)`` returns an ``OpenAIAnswerer`` (the ``LLMAnswerer`` seam of
``qa.api``). It sends ``qa.prompts.build_prompt`` with the official ``openai`` client and passes the
reply through ``qa.grounding.verify``: invalid markers dropped, unsupported sentences removed,
citations renumbered. If nothing supported remains, the offline answer is returned with a notice.

Failures and streaming (the contract ``TalkQA`` relies on):

* ``answer()`` raises ``LLMError`` for every failure: connection refused, timeout, HTTP 4xx/5xx,
  rate limit, empty or malformed output. The message is one line and never holds the API key.
* ``stream()`` sends the request and waits for the first piece of text *before* yielding
  anything, so a failed connection, HTTP error, timeout or empty reply raises ``LLMError``
  while nothing has been shown yet; the caller can still answer offline.
* Once text has been yielded, ``stream()`` never raises: if the stream breaks (timeout, dropped
  connection, no finish reason), its last item is the fallback ``Answer`` with ``notice`` set.
* The streamed pieces are the model's raw text. The last item is always the final, verified
  ``Answer``; a UI must replace the streamed text with ``answer.text`` (which may have lost
  sentences and have renumbered markers).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from .config import Settings
from .errors import LLMError
from .grounding import Verified, verify
from .prompts import build_prompt, numbered_talks
from .records import Answer, Hit

__all__ = ["OpenAIAnswerer", "make_llm_answerer", "scrub"]

logger = logging.getLogger(__name__)

#: Sent as the key to servers that need none (a local ``talkqa llm-server``).
NO_KEY = "no-key-needed"
MAX_MESSAGE_CHARS = 240
_KEYLIKE = re.compile(r"\b(sk-[A-Za-z0-9_\-]{6,}|Bearer\s+\S+)")
_SENTENCE_END = re.compile(r"[.!?][\"”’')]*(?:\s*\[\d+(?:\s*,\s*\d+)*\])*")


def scrub(message: str, secret: str | None) -> str:
    """One line, no secret, no key-like token, at most ``MAX_MESSAGE_CHARS`` characters.

    >>> scrub("bad key sk-abc123456789\\nsee https://x", "sk-abc123456789")
    'bad key *** see https://x'
    """
    if secret:
        message = message.replace(secret, "***")
    message = _KEYLIKE.sub("***", message)
    message = " ".join(message.split())
    return message if len(message) <= MAX_MESSAGE_CHARS else message[: MAX_MESSAGE_CHARS - 1] + "…"


class OpenAIAnswerer:
    """Answers with a chat model behind an OpenAI-compatible API; see the module docstring."""

    def __init__(self, settings: Settings, client: Any = None) -> None:
        self.settings = settings
        self.name = f"llm:{settings.llm_model}"
        self._secret = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        self._client = client

    # ---- transport ---------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        if self._client is None:
            s = self.settings
            if self._secret is None and s.openai_base_url is None:
                raise LLMError(
                    "no OPENAI_API_KEY is set; export it, or point OPENAI_BASE_URL at a local server "
                    "(`talkqa llm-server`)"
                )
            from openai import OpenAI

            self._client = OpenAI(
                api_key=self._secret or NO_KEY,
                base_url=s.openai_base_url,
                timeout=s.llm_timeout,
                max_retries=s.llm_retries,
            )
        return self._client

    def _where(self) -> str:
        return self.settings.openai_base_url or "the OpenAI API"

    def _error(self, exc: BaseException) -> LLMError:
        """One ``LLMError`` with a fix-it message for any failure of the openai client."""
        import httpx
        import openai

        s = self.settings
        if isinstance(exc, LLMError):
            return exc
        if isinstance(exc, (openai.APITimeoutError, httpx.TimeoutException)):
            text = f"no reply from {self._where()} within {s.llm_timeout:g}s; raise TALKQA_LLM_TIMEOUT"
        elif isinstance(exc, (openai.APIConnectionError, httpx.TransportError)):
            text = f"cannot connect to {self._where()}; start the server or fix OPENAI_BASE_URL"
        elif isinstance(exc, openai.RateLimitError):
            text = f"rate limited by {self._where()} (HTTP 429); wait and ask again"
        elif isinstance(exc, openai.AuthenticationError):
            text = f"{self._where()} rejected the API key (HTTP 401); check OPENAI_API_KEY"
        elif isinstance(exc, openai.APIStatusError):
            detail = str(getattr(exc, "message", "") or "")[:120]
            text = f"HTTP {exc.status_code} from {self._where()}: {detail}"
        else:
            text = f"{type(exc).__name__} talking to {self._where()}: {exc}"
        return LLMError(scrub(text, self._secret))

    def _request(self, question: str, hits: Sequence[Hit], *, stream: bool) -> Any:
        s = self.settings
        try:
            return self.client.chat.completions.create(
                model=s.llm_model,
                messages=build_prompt(question, hits),
                temperature=s.llm_temperature,
                max_tokens=s.llm_max_tokens,
                stream=stream,
            )
        except Exception as exc:
            raise self._error(exc) from None

    # ---- the LLMAnswerer seam ----------------------------------------------------------------
    def answer(self, question: str, hits: Sequence[Hit], fallback: Answer) -> Answer:
        """The verified LLM answer; ``LLMError`` on any failure (the caller answers offline)."""
        response = self._request(question, hits, stream=False)
        try:
            choice = response.choices[0]
            text = choice.message.content
            finish = choice.finish_reason
        except (AttributeError, IndexError, TypeError) as exc:
            raise LLMError(scrub(f"malformed reply from {self._where()}: {exc}", self._secret)) from None
        if not isinstance(text, str) or not text.strip():
            raise LLMError(f"empty reply from {self._where()}")
        return self._finish(question, hits, fallback, text, finish)

    def stream(self, question: str, hits: Sequence[Hit], fallback: Answer) -> Iterator[str | Answer]:
        """Raw text pieces, then the verified ``Answer``; raises ``LLMError`` only before any text."""
        response = self._request(question, hits, stream=True)
        try:
            yield from self._relay(question, hits, fallback, response)
        finally:
            close = getattr(response, "close", None)
            if close is not None:
                close()

    def _relay(self, question: str, hits: Sequence[Hit], fallback: Answer, response: Any) -> Iterator[str | Answer]:
        pieces = self._deltas(response)
        finish: str | None = None
        first: str | None = None
        # Nothing is yielded until the first piece of text has arrived: up to here we may raise.
        try:
            for piece in pieces:
                if isinstance(piece, _Finish):
                    finish = piece.reason
                    continue
                first = piece
                break
        except Exception as exc:
            raise self._error(exc) from None
        if first is None:
            raise LLMError(f"empty reply from {self._where()}")
        parts = [first]
        yield first
        try:
            for piece in pieces:
                if isinstance(piece, _Finish):
                    finish = piece.reason
                    continue
                parts.append(piece)
                yield piece
        except Exception as exc:
            error = self._error(exc)
            logger.warning("LLM stream broke after %d pieces: %s", len(parts), error)
            yield self._fallback(fallback, f"the answer stopped halfway ({error})")
            return
        if finish is None:
            logger.warning("LLM stream ended without a finish reason after %d pieces", len(parts))
            yield self._fallback(fallback, "the answer stopped halfway (the stream was cut)")
            return
        yield self._finish(question, hits, fallback, "".join(parts), finish)

    # ---- helpers -----------------------------------------------------------------------------
    def _deltas(self, response: Any) -> Iterator[str | _Finish]:
        """Non-empty text deltas of a streamed reply, and a ``_Finish`` when a finish reason comes."""
        for chunk in response:
            choices = getattr(chunk, "choices", None) or []
            if not choices:
                continue
            choice = choices[0]
            content = getattr(choice.delta, "content", None) if choice.delta is not None else None
            if content:
                yield content
            if choice.finish_reason:
                yield _Finish(choice.finish_reason)

    def _fallback(self, fallback: Answer, why: str) -> Answer:
        return replace(
            fallback,
            notice=_join(fallback.notice, f"The LLM ({self.name}) failed: {why}; this is the offline answer."),
        )

    def _finish(self, question: str, hits: Sequence[Hit], fallback: Answer, text: str, finish: str | None) -> Answer:
        notes: list[str] = []
        if finish == "length":
            cut = _complete_sentences(text)
            if cut != text:
                notes.append("the LLM ran out of tokens, so its last, unfinished sentence was cut")
            text = cut
        verified: Verified = verify(text, numbered_talks(hits))
        logger.info(
            "LLM answer: %d sentences unsupported, %d markers dropped, %.0f%% supported",
            len(verified.unsupported_sentences),
            len(verified.dropped),
            100 * verified.supported_share,
        )
        if not verified.ok:
            return self._fallback(fallback, "its answer had no sentence the cited talks support")
        if verified.unsupported_sentences:
            n = len(verified.unsupported_sentences)
            were = (
                "sentences the cited talks do not support were"
                if n != 1
                else "sentence the cited talks do not support was"
            )
            notes.append(f"{n} {were} removed")
        if verified.dropped:
            notes.append("citations of sources that were not given were dropped: " + ", ".join(verified.dropped))
        notice = "; ".join(notes)
        return Answer(
            question=question,
            text=verified.text,
            citations=verified.citations,
            answerer=self.name,
            notice=_join(fallback.notice, notice[:1].upper() + notice[1:] + "." if notice else None),
            searched=fallback.searched,
            dropped=verified.dropped,
        )


class _Finish:
    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _join(*notes: str | None) -> str | None:
    kept = [n for n in notes if n]
    return " ".join(kept) if kept else None


def _complete_sentences(text: str) -> str:
    """``text`` up to the end of its last complete sentence (all of it if none ends).

    >>> _complete_sentences("PFC is tuned [1]. ECN is")
    'PFC is tuned [1].'
    """
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    return text[: ends[-1]].rstrip() if ends else text


def make_llm_answerer(settings: Settings) -> OpenAIAnswerer:
    """The LLM answerer for ``settings`` (the client is built on first use, so this never fails)."""
    return OpenAIAnswerer(settings)
