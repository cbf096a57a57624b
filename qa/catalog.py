"""The in-memory view of what is indexed: talks, events, speakers and term statistics."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import cached_property

from .chunking import chunk_talk, talk_header
from .query import STOPWORDS, content_words, normalise_name, terms
from .records import Event, Talk

__all__ = ["Catalog", "edit_distance"]

#: ``qa.query.speaker_matches``'s default threshold (tests/test_scale.py checks the two agree).
SPEAKER_THRESHOLD = 0.84


def edit_distance(a: str, b: str, limit: int = 2) -> int:
    """Optimal-string-alignment distance (transpositions count once), capped at ``limit + 1``.

    >>> edit_distance("modles", "models"), edit_distance("tuning", "trunking"), edit_distance("artic", "arctic")
    (1, 2, 1)
    """
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return min(prev[-1], limit + 1)


@dataclass(slots=False)
class Catalog:
    """Talks and events by id, with per-talk term sets and IDF for lexical relevance."""

    talks: dict[str, Talk] = field(default_factory=dict)
    events: dict[str, Event] = field(default_factory=dict)

    @classmethod
    def of(cls, talks: Iterable[Talk], events: Iterable[Event]) -> Catalog:
        return cls({t.id: t for t in talks}, {e.id: e for e in events})

    @cached_property
    def position(self) -> dict[str, int]:
        """Each talk's place in catalog order."""
        return {talk_id: i for i, talk_id in enumerate(self.talks)}

    @cached_property
    def talk_ids_by_year(self) -> dict[int, list[str]]:
        by_year: dict[int, list[str]] = {}
        for talk in self.talks.values():
            if talk.year:
                by_year.setdefault(talk.year, []).append(talk.id)
        return by_year

    @cached_property
    def talk_ids_by_event(self) -> dict[str, list[str]]:
        by_event: dict[str, list[str]] = {}
        for talk in self.talks.values():
            if talk.event_id:
                by_event.setdefault(talk.event_id, []).append(talk.id)
        return by_event

    def chunk_ids(self, talk_id: str) -> list[str]:
        """Ids of a talk's chunks in the index (as ``qa.index`` wrote them), computed once per talk."""
        cache: dict[str, list[str]] = self.__dict__.setdefault("_chunk_ids", {})
        if talk_id not in cache:
            cache[talk_id] = [c.id for c in chunk_talk(self.talks[talk_id])]
        return cache[talk_id]

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
    def vocabulary(self) -> frozenset[str]:
        """Every content word of the talks, unstemmed (for spelling correction)."""
        words: set[str] = set()
        for talk in self.talks.values():
            words.update(content_words(f"{talk.title} {talk.abstract}"))
        return frozenset(w for w in words if len(w) >= 3 and not w.isdigit())

    @cached_property
    def _vocabulary_by_start(self) -> dict[tuple[str, int], list[str]]:
        """The vocabulary by first letter and length: the only words ``correct`` compares with."""
        by_start: dict[tuple[str, int], list[str]] = {}
        for word in self.vocabulary:
            by_start.setdefault((word[0], len(word)), []).append(word)
        return by_start

    def correct(self, text: str) -> str:
        """Replace misspelt words with the closest word the talks use.

        >>> Catalog.of([Talk(id="a", title="Training Arctic", abstract="480B parameters")], []).correct(
        ...     "how many paramters does artic have")
        'how many parameters does arctic have'
        """
        vocab = self.vocabulary
        if not vocab:
            return text

        def fix(match: re.Match[str]) -> str:
            word = match.group(0)
            low = word.lower()
            if len(low) < 5 or low in vocab or low in STOPWORDS or not low.isalpha():
                return word
            limit = 1 if len(low) < 8 else 2
            best = [
                v
                for size in range(len(low) - limit, len(low) + limit + 1)
                for v in self._vocabulary_by_start.get((low[0], size), ())
                if edit_distance(low, v, limit) <= limit
            ]
            return min(best, key=lambda v: (edit_distance(low, v, limit), v)) if best else word

        return re.sub(r"[A-Za-z]+", fix, text)

    @cached_property
    def speakers(self) -> list[str]:
        names = {s for t in self.talks.values() for s in t.speakers}
        return sorted(names, key=lambda n: (-len(normalise_name(n)), n))

    @cached_property
    def _speakers_by_prefix(self) -> dict[str, list[int]]:
        by_prefix: dict[str, list[int]] = {}
        for i, name in enumerate(self.speakers):
            for prefix in {word[:3] for word in normalise_name(name).split()}:
                by_prefix.setdefault(prefix, []).append(i)
        return by_prefix

    def speaker_candidates(self, question: str) -> list[str]:
        """The speakers ``qa.query.find_speakers`` would compare with ``question`` (in ``speakers`` order).

        That is, names with a word starting like one of the question's words; passing these instead
        of every name gives the same speakers without normalising every name per question.

        >>> Catalog.of([Talk(id="a", title="T", speakers=("Sumit Gupta", "Zhenyu Gu"))], []).speaker_candidates(
        ...     "what did sumit present?")
        ['Sumit Gupta']
        """
        prefixes = {word[:3] for word in normalise_name(question).split()}
        rows = sorted({i for p in prefixes for i in self._speakers_by_prefix.get(p, ())})
        return [self.speakers[i] for i in rows]

    @cached_property
    def _talks_of_speaker(self) -> dict[str, list[tuple[int, Talk]]]:
        by_name: dict[str, list[tuple[int, Talk]]] = {}
        for position, talk in enumerate(self.talks.values()):
            for name in dict.fromkeys(talk.speakers):
                by_name.setdefault(name, []).append((position, talk))
        return by_name

    @cached_property
    def _speaker_words(self) -> dict[str, tuple[str, ...]]:
        return {name: tuple(normalise_name(name).split()) for name in self._talks_of_speaker}

    @cached_property
    def _speakers_by_word(self) -> dict[str, list[str]]:
        by_word: dict[str, list[str]] = {}
        for name, words in self._speaker_words.items():
            for word in dict.fromkeys(words):
                by_word.setdefault(word, []).append(name)
        return by_word

    def talks_by_speaker(self, wanted: str) -> list[Talk]:
        """Talks with a speaker ``wanted`` names, in catalog order (``qa.query.speaker_matches``'s rule).

        Names are normalised once per catalog, and a partial name is matched word by word against
        the distinct words of all names rather than against every name.
        """
        found = {
            position: talk
            for name in self._speakers_matching(wanted)
            for position, talk in self._talks_of_speaker[name]
        }
        return [found[p] for p in sorted(found)]

    def _speakers_matching(self, wanted: str) -> set[str]:
        want = normalise_name(wanted).split()
        if not want:
            return set()
        # a name with no more words than ``wanted``: the whole names must be alike
        matcher = SequenceMatcher(None, " ".join(want), "")
        names = set()
        for name, have in self._speaker_words.items():
            if have and len(have) <= len(want):
                matcher.set_seq2(" ".join(have))
                # the cheap upper bounds first, as difflib suggests
                if (
                    matcher.real_quick_ratio() >= SPEAKER_THRESHOLD
                    and matcher.quick_ratio() >= SPEAKER_THRESHOLD
                    and matcher.ratio() >= SPEAKER_THRESHOLD
                ):
                    names.add(name)
        # a longer name: every wanted word must be like one of its words
        candidates: set[str] | None = None
        for w in want:
            with_word = {
                name
                for word, holders in self._speakers_by_word.items()
                if min(len(w), len(word)) >= 3 and SequenceMatcher(None, w, word).ratio() >= SPEAKER_THRESHOLD
                for name in holders
            }
            candidates = with_word if candidates is None else candidates & with_word
        names.update(n for n in candidates or () if len(self._speaker_words[n]) > len(want))
        return names

    @cached_property
    def _event_terms(self) -> dict[str, frozenset[str]]:
        return {e.id: frozenset(terms(f"{e.name} {e.id}", keep_stopwords=True)) for e in self.events.values()}

    def resolve_event(self, wanted: str) -> list[Event]:
        """Events named by ``wanted`` (an id, the name, or a distinctive part of it)."""
        want = set(terms(wanted, keep_stopwords=True)) - {"scale"}
        if not want:
            return []
        exact = [e for e in self.events.values() if wanted.strip().lower() in (e.id, e.name.lower())]
        if exact:
            return exact
        return [e for e in self.events.values() if want <= self._event_terms[e.id]]

    @cached_property
    def _event_name_words(self) -> list[tuple[Event, frozenset[str], frozenset[str]]]:
        out = []
        for event in self.events.values():
            words = frozenset(terms(event.name, keep_stopwords=True)) - {"scale"}
            out.append((event, words, frozenset(w for w in words if not w.isdigit())))
        return out

    @cached_property
    def _topic_rows(self) -> tuple[list[tuple[Event, str]], dict[str, set[int]]]:
        rows = [(event, topic) for event in self.events.values() for topic in event.topics]
        by_term: dict[str, set[int]] = {}
        for i, (_, topic) in enumerate(rows):
            for term in terms(topic):
                by_term.setdefault(term, set()).add(i)
        return rows, by_term

    def topics_covering(self, query_terms: set[str]) -> list[tuple[Event, str]]:
        """(event, topic) pairs whose topic holds every query term ("talk" holds anywhere), in event order.

        >>> catalog = Catalog.of([], [Event(id="n", name="N", topics=("PFC tuning", "QUIC"))])
        >>> [(e.id, topic) for e, topic in catalog.topics_covering({"pfc", "talk"})]
        [('n', 'PFC tuning')]
        """
        rows, by_term = self._topic_rows
        if not query_terms:
            return []
        found: set[int] | None = None
        for term in query_terms - {"talk"}:
            found = by_term.get(term, set()) if found is None else found & by_term.get(term, set())
        return [rows[i] for i in (sorted(found) if found is not None else range(len(rows)))]

    def events_in(self, question: str) -> list[Event]:
        """Events the question names: all of an event's distinctive name words appear in it.

        Falls back to the name words without numbers (years, editions); of several matches, those
        naming the most words win.

        >>> catalog = Catalog.of([], [Event(id="n25", name="Networking @Scale 2025")])
        >>> [e.id for e in catalog.events_in("Networking @Scale talks")]
        ['n25']
        """
        words = set(terms(question, keep_stopwords=True))
        best = [(len(name), e) for e, name, _ in self._event_name_words if name and name <= words]
        if not best:
            best = [(len(name), e) for e, _, name in self._event_name_words if name and name <= words]
        if not best:
            return []
        top = max(n for n, _ in best)
        return [e for n, e in best if n == top]
