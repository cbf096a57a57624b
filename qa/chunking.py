"""Turn talks and events into the texts that are embedded (pure functions)."""

from __future__ import annotations

import re

from .records import Chunk, Event, Talk

__all__ = ["CHUNKER_VERSION", "chunk_talk", "event_text", "split_sentences", "talk_header"]

CHUNKER_VERSION = "1"
CHUNK_WORDS = 120
_SENTENCE = re.compile(r"(?<=[.!?…])\s+(?=[A-Z0-9“\"(])")


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences.

    >>> split_sentences("Arctic is a 480B MoE. It trained fast… More here")
    ['Arctic is a 480B MoE.', 'It trained fast…', 'More here']
    """
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def talk_header(talk: Talk) -> str:
    parts = [talk.title]
    if talk.speakers:
        parts.append("Speakers: " + ", ".join(talk.speakers))
    if talk.event:
        parts.append("Event: " + talk.event)
    return "\n".join(parts)


def chunk_talk(talk: Talk, max_words: int = CHUNK_WORDS) -> list[Chunk]:
    """Chunks of a talk: its header plus up to ``max_words`` of abstract, one sentence overlap.

    >>> t = Talk(id="e/t", title="T", abstract="One two. Three four.")
    >>> [c.text for c in chunk_talk(t)]
    ['T\\n\\nOne two. Three four.']
    """
    header = talk_header(talk)
    sentences = split_sentences(talk.abstract)
    groups: list[list[str]] = []
    current: list[str] = []
    for sentence in sentences:
        if current and sum(len(s.split()) for s in current) + len(sentence.split()) > max_words:
            groups.append(current)
            current = [current[-1]]
        current.append(sentence)
    if current or not groups:
        groups.append(current)
    return [
        Chunk(id=f"{talk.id}#{i}", talk_id=talk.id, index=i, text=f"{header}\n\n{' '.join(g)}".strip())
        for i, g in enumerate(groups)
    ]


def event_text(event: Event) -> str:
    lines = [event.name]
    if event.date:
        lines.append(f"Date: {event.date}" + (f" ({event.format})" if event.format else ""))
    if event.audience:
        lines.append("Who it's for: " + ", ".join(event.audience))
    if event.topics:
        lines.append("Topics: " + "; ".join(event.topics))
    return "\n".join(lines)
