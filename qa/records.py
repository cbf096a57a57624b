"""Typed records passed between the pipeline stages: seeds → index → retrieve → answer."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Answer", "Chunk", "Citation", "Event", "Hit", "Talk"]


@dataclass(frozen=True, slots=True)
class Event:
    """One conference event as its listing describes it."""

    id: str
    name: str
    date: str | None = None
    format: str | None = None
    year: int | None = None
    audience: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    series: tuple[str, ...] = ()
    source: str = ""
    line: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Talk:
    """One talk. ``id`` is stable across runs and unique across the corpus."""

    id: str
    title: str
    speakers: tuple[str, ...] = ()
    duration_min: int | None = None
    abstract: str = ""
    truncated: bool = False
    event: str | None = None
    event_id: str | None = None
    event_date: str | None = None
    year: int | None = None
    source: str = ""
    line: int = 0
    title_derived: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def abstract_text(self) -> str:
        """The abstract without the listing's trailing ellipsis."""
        return self.abstract.rstrip().removesuffix("…").removesuffix("...").rstrip()


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a talk's text that is embedded; it always knows its talk."""

    id: str
    talk_id: str
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class Hit:
    """A retrieved talk (chunks collapsed) with its fused score and best passage."""

    talk: Talk
    score: float
    passage: str = ""
    dense: float = 0.0
    lexical: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "talk": self.talk.to_dict(),
            "score": self.score,
            "passage": self.passage,
            "dense": self.dense,
            "lexical": self.lexical,
        }


@dataclass(frozen=True, slots=True)
class Citation:
    """``[number]`` in an answer's text refers to ``talk``; ``quote`` supports it."""

    number: int
    talk: Talk
    quote: str

    def to_dict(self) -> dict[str, Any]:
        return {"number": self.number, "talk": self.talk.to_dict(), "quote": self.quote}


@dataclass(frozen=True, slots=True)
class Answer:
    """A markdown answer with ``[n]`` markers that match ``citations``."""

    question: str
    text: str
    citations: tuple[Citation, ...] = ()
    answerer: str = "offline"
    notice: str | None = None
    searched: int = 0
    dropped: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "text": self.text,
            "citations": [c.to_dict() for c in self.citations],
            "answerer": self.answerer,
            "notice": self.notice,
            "searched": self.searched,
            "dropped": list(self.dropped),
        }
