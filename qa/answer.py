"""The offline answerer: deterministic, extractive, grounded by construction.

Every sentence it writes is either a talk's own field (title, speakers, event, length) set in a
fixed template, or a sentence copied from a cited talk's abstract. It never calls a model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .catalog import Catalog
from .passages import best_sentences
from .query import Intent, terms
from .records import Answer, Citation, Event, Hit, Talk

__all__ = [
    "ANSWERER_NAME",
    "compose",
    "event_answer",
    "format_talk_line",
    "no_answer",
    "pieces",
    "polite_refusal",
]

ANSWERER_NAME = "offline"
TRUNCATED_NOTE = "*(the listing cuts this abstract short)*"
_CUE = re.compile(
    r"^\s*(which|what|list|any|show me|show|find|are there|were there|is there|did anyone give)\s+"
    r"(talks?|sessions?|presentations?)\s+(were there\s+|are there\s+)?"
    r"(that\s+|which\s+)?(cover(s|ed)?|discuss(es|ed)?|mention(s|ed)?|talk(s|ed)? about|are about|about|on|"
    r"deal with|address(es)?|describe[sd]?|explain(s|ed)?)?\s*",
    re.I,
)
_NUMBER_WORDS = ["No", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten"]


@dataclass(frozen=True, slots=True)
class Draft:
    """An answer being assembled: lead line, one entry per citation."""

    lead: str
    entries: tuple[str, ...]
    citations: tuple[Citation, ...]

    def text(self) -> str:
        return "\n\n".join([self.lead, *self.entries]).strip()


def count_words(n: int) -> str:
    """>>> count_words(2), count_words(12)
    ('Two', '12')
    """
    return _NUMBER_WORDS[n] if n < len(_NUMBER_WORDS) else str(n)


def topic_of(question: str) -> str:
    """The subject of a list question.

    >>> topic_of("which talks cover PFC tuning?")
    'PFC tuning'

    Citation-like markers in the question are defused, so an echo never looks like a citation:

    >>> topic_of("which talks cover zzqx [7]?")
    'zzqx (7)'
    """
    topic = _CUE.sub("", question).strip().rstrip("?.! ") or question.strip().rstrip("?.! ")
    return re.sub(r"\[(\d+)\]", r"(\1)", topic)


def format_talk_line(talk: Talk) -> str:
    """``**Title** — speakers · event (date) · N min`` from the talk's fields only."""
    bits = []
    if talk.speakers:
        bits.append(", ".join(talk.speakers))
    if talk.event:
        bits.append(talk.event + (f" ({talk.event_date})" if talk.event_date else ""))
    if talk.duration_min is not None:
        bits.append(f"{talk.duration_min} min")
    title = talk.title + (" *(title derived from the abstract)*" if talk.title_derived else "")
    return f"**{title}**" + (" — " + " · ".join(bits) if bits else "")


def _quote(talk: Talk, query_terms: Sequence[str], idf: dict[str, float], limit: int = 2) -> str:
    sentences = best_sentences(talk, query_terms, idf, limit=limit)
    return " ".join(sentences)


def _entry(number: int, talk: Talk, quote: str) -> str:
    lines = [f"[{number}] {format_talk_line(talk)}"]
    if quote:
        note = f" {TRUNCATED_NOTE}" if talk.truncated and quote.rstrip().endswith(("…", "...")) else ""
        lines.append(f"> {quote}{note}")
    return "\n".join(lines)


def _draft(lead: str, talks: Sequence[Talk], query_terms: Sequence[str], idf: dict[str, float]) -> Draft:
    entries, citations = [], []
    for number, talk in enumerate(talks, 1):
        quote = _quote(talk, query_terms, idf)
        entries.append(_entry(number, talk, quote))
        citations.append(Citation(number=number, talk=talk, quote=quote))
    return Draft(lead=lead, entries=tuple(entries), citations=tuple(citations))


def no_answer(question: str, searched: int, catalog: Catalog | None = None) -> Draft:
    """The honest "no talk covers this", saying how much was searched."""
    if searched == 0:
        return Draft(
            lead="No talk matches the chosen filters (event, year or speaker); clear them to search all talks.",
            entries=(),
            citations=(),
        )
    lead = f"No talk covers that. I searched {searched} talks and none of them matches “{topic_of(question)}”."
    extra = []
    if catalog:
        query_terms = set(terms(question))
        for event, topic in catalog.topics_covering(query_terms):
            extra.append(f"The topic list of {event.name} names “{topic}”, but no talk abstract in the listing does.")
    return Draft(lead=" ".join([lead, *extra[:2]]), entries=(), citations=())


def polite_refusal(reason: str) -> Draft:
    return Draft(lead=reason, entries=(), citations=())


def compose(
    question: str,
    intent: Intent,
    hits: Sequence[Hit],
    catalog: Catalog,
    searched: int,
    scope: str = "",
) -> Draft:
    """Write the offline answer for hits that were already judged relevant.

    ``scope`` (e.g. " in 2024") says which filters narrowed the search; it ends the lead line.
    """
    query_terms = terms(question)
    idf = {t: catalog.term_weight(t) for t in query_terms}
    talks = [h.talk for h in hits]
    if not talks:
        return no_answer(question, searched, catalog)
    if intent.speakers:
        names = " and ".join(intent.speakers)
        lead = f"{names} gave {count_words(len(talks)).lower()} talk{'s' if len(talks) != 1 else ''}{scope}:"
        return _draft(lead, talks, query_terms, idf)
    if intent.is_metadata:
        return _draft(_metadata_lead(intent, talks), talks, query_terms, idf)
    if intent.wants_list:
        n = len(talks)
        plural = "s" if n != 1 else ""
        if _CUE.match(question) and _CUE.match(question).group(5):  # type: ignore[union-attr]
            lead = f"{count_words(n)} talk{plural}{scope} cover{'s' if n == 1 else ''} {topic_of(question)}:"
        else:
            lead = f"{count_words(n)} talk{plural}{scope} match{'es' if n == 1 else ''} your question:"
        return _draft(lead, talks, query_terms, idf)
    draft = _draft("", talks, query_terms, idf)
    top = draft.citations[0]
    best = best_sentences(top.talk, query_terms, idf, limit=1)
    lead_sentence = best[0] if best else top.talk.title
    lead = f"{lead_sentence} [1]"
    if len(talks) > 1:
        lead += f"\n\nMore on this in {count_words(len(talks) - 1).lower()} other talk{'s' if len(talks) > 2 else ''}."
    return Draft(lead=lead, entries=draft.entries, citations=draft.citations)


def _metadata_lead(intent: Intent, talks: Sequence[Talk]) -> str:
    n = len(talks)
    plural = "s" if n != 1 else ""
    if intent.n_speakers is not None:
        return f"{count_words(n)} talk{plural} had {intent.n_speakers} speakers:"
    if intent.exact_minutes is not None:
        return f"{count_words(n)} talk{plural} ran {intent.exact_minutes} minutes:"
    if intent.extreme:
        minutes = talks[0].duration_min
        return f"The {intent.extreme} talk{plural} ran {minutes} minutes:"
    if intent.min_minutes is not None and intent.max_minutes is not None:
        return f"{count_words(n)} talk{plural} ran between {intent.min_minutes} and {intent.max_minutes} minutes:"
    if intent.min_minutes is not None:
        return f"{count_words(n)} talk{plural} ran longer than {intent.min_minutes} minutes:"
    return f"{count_words(n)} talk{plural} ran shorter than {intent.max_minutes} minutes:"


def filter_by_duration(talks: Sequence[Talk], intent: Intent) -> list[Talk]:
    """Talks whose length (or number of speakers) meets the question's constraint, longest first."""
    if intent.n_speakers is not None:
        return [t for t in talks if len(t.speakers) == intent.n_speakers]
    timed = [t for t in talks if t.duration_min is not None]
    if intent.exact_minutes is not None:
        return [t for t in timed if t.duration_min == intent.exact_minutes]
    if intent.extreme:
        if not timed:
            return []
        pick = max if intent.extreme == "longest" else min
        target = pick(t.duration_min or 0 for t in timed)
        return [t for t in timed if t.duration_min == target]
    out = [
        t
        for t in timed
        if (intent.min_minutes is None or (t.duration_min or 0) > intent.min_minutes)
        and (intent.max_minutes is None or (t.duration_min or 0) < intent.max_minutes)
    ]
    return sorted(out, key=lambda t: (-(t.duration_min or 0), t.title))


def event_answer(intent: Intent, events: Sequence[Event], catalog: Catalog) -> Draft:
    """Answer an event-level question from the event records' fields."""
    lines = []
    for event in events:
        talks = catalog.talk_ids_by_event.get(event.id, ())
        if intent.count:
            lines.append(f"{event.name} lists {len(talks)} talks.")
        if intent.event_date:
            if event.date:
                fmt = f" ({event.format})" if event.format else ""
                lines.append(f"{event.name} was held on {event.date}{fmt}.")
            else:
                year = f" It is a {event.year} event." if event.year else ""
                lines.append(f"The listing for {event.name} gives no date.{year}")
        if intent.event_audience:
            who = ", ".join(event.audience) if event.audience else "no audience given"
            lines.append(f"{event.name} is for: {who}.")
        if intent.event_topics:
            lines.append(f"{event.name} topics: " + ("; ".join(event.topics) or "none listed") + ".")
        if intent.event_format and not intent.event_date:
            if event.format:
                when = f" on {event.date}" if event.date else ""
                lines.append(f"{event.name} was held {event.format}{when}.")
            else:
                lines.append(f"The listing for {event.name} does not say whether it was online or in person.")
        if intent.event_series:
            earlier = [s for s in event.series if s != event.name]
            if earlier:
                lines.append(f"The listing of {event.name} names these editions of the series: {', '.join(earlier)}.")
            else:
                lines.append(f"The listing of {event.name} names no other editions.")
    sources = sorted({e.source for e in events})
    if sources:
        lines.append(f"*(from the event listing{'s' if len(sources) > 1 else ''}: {', '.join(sources)})*")
    return Draft(lead="\n\n".join(lines), entries=(), citations=())


def events_by_topic(question: str, events: Sequence[Event]) -> list[tuple[Event, list[str]]]:
    """Events whose topic list shares words with the question, with the matching topics.

    >>> ev = Event(id="e", name="E", topics=("Slurm cluster scheduling", "liquid cooling via CDUs"))
    >>> events_by_topic("which event covered liquid cooling?", [ev])[0][1]
    ['liquid cooling via CDUs']
    """
    wanted = set(terms(question)) - {"topic", "list", "among", "its"}
    found = []
    for event in events:
        matching = [t for t in event.topics if len(wanted & set(terms(t))) >= min(2, len(set(terms(t))))]
        if matching:
            found.append((event, matching))
    return sorted(found, key=lambda item: -len(item[1]))


def topic_event_answer(found: Sequence[tuple[Event, list[str]]]) -> Draft:
    lines = [f"{event.name} lists these topics: " + "; ".join(topics) + "." for event, topics in found]
    sources = sorted({event.source for event, _ in found})
    lines.append(f"*(from the event listing{'s' if len(sources) > 1 else ''}: {', '.join(sources)})*")
    return Draft(lead="\n\n".join(lines), entries=(), citations=())


def to_answer(question: str, draft: Draft, *, searched: int, notice: str | None = None) -> Answer:
    return Answer(
        question=question,
        text=draft.text(),
        citations=draft.citations,
        answerer=ANSWERER_NAME,
        notice=notice,
        searched=searched,
    )


def pieces(answer: Answer) -> Iterator[str]:
    """The answer's text in paragraph pieces (for streaming); joined, they equal ``answer.text``."""
    parts = answer.text.split("\n\n")
    for i, part in enumerate(parts):
        yield part + ("\n\n" if i < len(parts) - 1 else "")
