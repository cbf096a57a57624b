"""The in-memory view of what is indexed: talks, events, speakers and term statistics."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from .chunking import talk_header
from .query import normalise_name, speaker_matches, terms
from .records import Event, Talk

__all__ = ["Catalog"]


@dataclass(slots=False)
class Catalog:
    """Talks and events by id, with per-talk term sets and IDF for lexical relevance."""

    talks: dict[str, Talk] = field(default_factory=dict)
    events: dict[str, Event] = field(default_factory=dict)

    @classmethod
    def of(cls, talks: Iterable[Talk], events: Iterable[Event]) -> Catalog:
        return cls({t.id: t for t in talks}, {e.id: e for e in events})

    @cached_property
    def talk_terms(self) -> dict[str, set[str]]:
        return {t.id: set(terms(f"{talk_header(t)} {t.abstract}")) for t in self.talks.values()}

    @cached_property
    def idf(self) -> dict[str, float]:
        df: Counter[str] = Counter()
        for term_set in self.talk_terms.values():
            df.update(term_set)
        n = max(len(self.talks), 1)
        return {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    def term_weight(self, term: str) -> float:
        """IDF of a term; a term in no talk weighs as much as the rarest."""
        return self.idf.get(term, math.log(1 + (len(self.talks) + 0.5) / 0.5))

    @cached_property
    def speakers(self) -> list[str]:
        names = {s for t in self.talks.values() for s in t.speakers}
        return sorted(names, key=lambda n: (-len(normalise_name(n)), n))

    def talks_by_speaker(self, wanted: str) -> list[Talk]:
        return [t for t in self.talks.values() if any(speaker_matches(wanted, s) for s in t.speakers)]

    def resolve_event(self, wanted: str) -> list[Event]:
        """Events named by ``wanted`` (an id, the name, or a distinctive part of it)."""
        want = set(terms(wanted, keep_stopwords=True)) - {"scale"}
        if not want:
            return []
        exact = [e for e in self.events.values() if wanted.strip().lower() in (e.id, e.name.lower())]
        if exact:
            return exact
        scored = []
        for event in self.events.values():
            have = set(terms(f"{event.name} {event.id}", keep_stopwords=True))
            share = len(want & have) / len(want)
            if share == 1.0:
                scored.append(event)
        return scored
