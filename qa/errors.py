"""Exceptions raised by TalkQA.

Every message says what went wrong and how to fix it. The tree::

    QAError                      base of everything TalkQA raises on purpose
    ├── SeedFormatError          a listing file could not be parsed (names file and line)
    ├── IndexNotReadyError       no usable index at the data dir or Chroma server
    ├── StoreUnavailableError    the Chroma server is unreachable
    ├── QuestionError            the question is empty or unusable
    └── LLMError                 the LLM call failed (connection, timeout, HTTP status, bad output)

The CLI turns these into one-line messages; the UI into ``gr.Error``.
"""

from __future__ import annotations

__all__ = [
    "IndexNotReadyError",
    "LLMError",
    "QAError",
    "QuestionError",
    "SeedFormatError",
    "StoreUnavailableError",
]


class QAError(Exception):
    """Base class for every error TalkQA raises on purpose."""


class SeedFormatError(QAError):
    """A listing file is malformed; ``source`` and ``line`` say where."""

    def __init__(self, source: str, line: int, reason: str) -> None:
        self.source = source
        self.line = line
        self.reason = reason
        super().__init__(f"{source}:{line}: {reason}. Fix or remove this file; the other listings are still indexed.")


class IndexNotReadyError(QAError):
    """The vector index is missing or was built by another embedding model."""


class StoreUnavailableError(QAError):
    """The Chroma server cannot be reached."""


class QuestionError(QAError):
    """The question cannot be answered as asked (empty, only control characters)."""


class LLMError(QAError):
    """The LLM failed; callers fall back to the offline answer."""
