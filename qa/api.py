"""``TalkQA``: the library's front door, wiring seeds → index → retrieve → answer."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from . import answer as offline
from .catalog import Catalog
from .config import Settings
from .embedding import make_embedding
from .errors import LLMError, QAError
from .index import IngestReport, all_records, generation, ingest
from .query import Intent, analyse, clean_question, strip_instructions, terms
from .records import Answer, Event, Hit, Talk
from .relevance import select
from .retrieve import Filters, HybridRetriever
from .seeds import load_seeds
from .store import make_client, open_collection

__all__ = ["AnswerStream", "LLMAnswerer", "TalkQA"]

logger = logging.getLogger(__name__)

RELOAD_CHECK_SECONDS = 2.0
EMPTY_QUESTION = (
    "Please ask a question about the talks, for example “which talks cover PFC tuning?” "
    "or “what did Sumit Gupta present?”."
)
_FOLLOW_UP = re.compile(
    r"^\s*(and|also|what about|how about|which of (those|these|them)|of (those|these)|those|these|them)\b"
    r"|\b(of (those|these|them)|among (those|these|them))\b",
    re.I,
)


class LLMAnswerer(Protocol):
    """The seam for LLM-written answers (see ``qa.llm``)."""

    name: str

    def answer(self, question: str, hits: Sequence[Hit], fallback: Answer) -> Answer: ...

    def stream(self, question: str, hits: Sequence[Hit], fallback: Answer) -> Iterator[str | Answer]: ...


class AnswerStream:
    """Iterate for the answer's text pieces; ``.answer`` holds the final ``Answer`` afterwards."""

    def __init__(self, source: Iterator[str | Answer]) -> None:
        self._source = source
        self.answer: Answer | None = None

    def __iter__(self) -> Iterator[str]:
        for item in self._source:
            if isinstance(item, Answer):
                self.answer = item
            else:
                yield item


class TalkQA:
    """Ask questions of a conference programme; every answer cites the talks it used.

    >>> qa = TalkQA()                                     # doctest: +SKIP
    >>> qa.ask("which talks cover PFC tuning?").citations[0].talk.title   # doctest: +SKIP
    'Live Q&A Session #2 – Adi Gangadi'
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        embed: Any = None,
        llm: LLMAnswerer | None = None,
        auto_ingest: bool | Literal["if-empty"] = True,
        **overrides: Any,
    ) -> None:
        base = settings or Settings()
        self.settings = base.model_copy(update=overrides) if overrides else base
        self._embed = embed
        self._llm = llm
        self._llm_built = llm is not None
        self._auto_ingest = auto_ingest
        self._client: Any = None
        self._collection: Any = None
        self._retriever: HybridRetriever | None = None
        self._lock = threading.RLock()  # opening the store, (re)building the retriever
        self._ingest_lock = threading.Lock()  # one ingest at a time; asks go on meanwhile
        self._built_from: str | None = None
        self._checked_at = 0.0
        self.last_ingest: IngestReport | None = None

    # ---- wiring ----------------------------------------------------------------------------
    @property
    def embed(self) -> Any:
        if self._embed is None:
            s = self.settings
            self._embed = make_embedding(s.embed_backend, threads=s.threads, batch=s.embed_batch, model=s.embed_model)
        return self._embed

    def _open(self) -> Any:
        with self._lock:
            if self._collection is None:
                self._client = make_client(self.settings)
                self._collection = open_collection(
                    self._client, self.settings.collection, self.embed.model_name, create=True
                )
                if self._auto_ingest is True or (self._auto_ingest == "if-empty" and not self._collection.count()):
                    # adds and updates the seeds' talks; never deletes what another ingest added
                    self.ingest(prune=False)
            return self._collection

    @property
    def retriever(self) -> HybridRetriever:
        with self._lock:
            collection = self._open()
            if self._retriever is not None and self._changed_elsewhere(collection):
                logger.info("the index changed in another process; reloading it")
                self._retriever = None
                collection = self._collection
            if self._retriever is None:
                self._built_from = generation(collection)
                talks, events = all_records(collection, cache_dir=self.settings.home / "catalog")
                self._retriever = HybridRetriever(
                    collection, self.embed, Catalog.of(talks, events), self.settings.home / "bm25"
                )
            return self._retriever

    def _changed_elsewhere(self, collection: Any) -> bool:
        """Has another process ingested since the retriever was built? Checked at most every few seconds."""
        now = time.monotonic()
        if now - self._checked_at < RELOAD_CHECK_SECONDS:
            return False
        self._checked_at = now
        try:
            fresh = self._client.get_collection(collection.name)
        except Exception:  # the store is unreachable: keep serving what we have
            return False
        token = generation(fresh)
        if token is None or token == self._built_from:
            return False
        self._collection = fresh  # its metadata names the new generation's caches
        return True

    @property
    def llm(self) -> LLMAnswerer | None:
        if not self._llm_built:
            self._llm_built = True
            if self.settings.wants_llm():
                from .llm import make_llm_answerer

                self._llm = make_llm_answerer(self.settings)
        return self._llm

    @property
    def answerer_name(self) -> str:
        llm = self.llm
        return llm.name if llm else offline.ANSWERER_NAME

    # ---- ingest ------------------------------------------------------------------------------
    def ingest(
        self,
        paths: Sequence[Path] | None = None,
        *,
        progress: Callable[[int, int], None] | None = None,
        prune: bool | None = None,
    ) -> IngestReport:
        """Parse listings (default: the settings' seeds) and bring the index in line with them.

        Extra ``paths`` are added on top of the index (nothing is pruned) unless ``prune=True``.
        """
        with self._lock:
            if self._collection is None:
                self._client = make_client(self.settings)
                self._collection = open_collection(
                    self._client, self.settings.collection, self.embed.model_name, create=True
                )
            collection = self._collection
        with self._ingest_lock:  # questions keep being answered from the old index meanwhile
            load = load_seeds(paths if paths is not None else self.settings.seeds)
            report = ingest(
                load,
                collection,
                self.embed,
                progress=progress,
                prune=(paths is None) if prune is None else prune,
                cache_dir=self.settings.home / "catalog",
            )
        with self._lock:
            self._retriever = None
            self.last_ingest = report
        return report

    # ---- reading -----------------------------------------------------------------------------
    def talks(self, *, event: str | None = None, year: int | None = None, speaker: str | None = None) -> list[Talk]:
        return self.retriever.all_talks(Filters(event, year, speaker))

    def events(self) -> list[Event]:
        return list(self.retriever.catalog.events.values())

    def search(
        self,
        query: str,
        k: int | None = None,
        *,
        event: str | None = None,
        year: int | None = None,
        speaker: str | None = None,
    ) -> list[Hit]:
        """Talks for ``query``, best first (hybrid dense + BM25, one hit per talk)."""
        text = clean_question(query, self.settings.max_question_chars)
        if not text:
            return []
        return self.retriever.search(text, k or self.settings.top_k, Filters(event, year, speaker))

    def status(self) -> dict[str, Any]:
        catalog = self.retriever.catalog
        return {
            "answerer": self.answerer_name,
            "talks": len(catalog.talks),
            "events": len(catalog.events),
            "store": self.settings.chroma_url or str(self.settings.chroma_path),
        }

    # ---- answering ---------------------------------------------------------------------------
    def ask(
        self,
        question: str,
        *,
        event: str | None = None,
        year: int | None = None,
        speaker: str | None = None,
        history: Sequence[str] = (),
        answerer: str | None = None,
    ) -> Answer:
        """Answer ``question`` with citations; never raises for a bad question."""
        stream = self.stream(question, event=event, year=year, speaker=speaker, history=history, answerer=answerer)
        for _ in stream:
            pass
        if stream.answer is None:  # pragma: no cover - every path ends with an Answer
            raise QAError("the answer stream ended without an answer; please report this")
        return stream.answer

    def stream(
        self,
        question: str,
        *,
        event: str | None = None,
        year: int | None = None,
        speaker: str | None = None,
        history: Sequence[str] = (),
        answerer: str | None = None,
    ) -> AnswerStream:
        """The answer in pieces; the final ``Answer`` is at ``.answer`` once iterated."""
        return AnswerStream(self._answer_pieces(question, Filters(event, year, speaker), history, answerer))

    def _answer_pieces(
        self, question: str, filters: Filters, history: Sequence[str], answerer: str | None
    ) -> Iterator[str | Answer]:
        notice = None
        raw = question if isinstance(question, str) else str(question)
        text = clean_question(raw, self.settings.max_question_chars)
        if len(raw) > self.settings.max_question_chars and text:
            notice = f"Your question was cut to its first {self.settings.max_question_chars} characters."
        if not text or not terms(text, keep_stopwords=True):
            ans = offline.to_answer(raw[:200], offline.polite_refusal(EMPTY_QUESTION), searched=0)
            yield from offline.pieces(ans)
            yield ans
            return
        try:
            offline_answer, hits, intent = self._offline(text, filters, history, notice)
        except QAError as exc:
            ans = offline.to_answer(
                text, offline.polite_refusal(f"Sorry, I cannot answer right now: {exc}"), searched=0
            )
            yield from offline.pieces(ans)
            yield ans
            return
        llm = self.llm if answerer != "offline" else None
        if llm is None or not hits or intent.is_event or intent.is_metadata:
            yield from offline.pieces(offline_answer)
            yield offline_answer
            return
        try:
            yield from llm.stream(text, hits, offline_answer)
        except LLMError as exc:
            logger.warning("LLM failed, answering offline: %s", exc)
            fallback = offline.to_answer(
                text,
                offline.Draft(offline_answer.text, (), offline_answer.citations),
                searched=offline_answer.searched,
                notice=f"The LLM ({llm.name}) failed ({exc}); this is the offline answer.",
            )
            yield from offline.pieces(fallback)
            yield fallback

    def _offline(
        self, text: str, filters: Filters, history: Sequence[str], notice: str | None
    ) -> tuple[Answer, list[Hit], Intent]:
        retriever = self.retriever
        catalog = retriever.catalog
        query = strip_instructions(text) or text
        intent = analyse(query, catalog.speaker_candidates(query))
        if history and _FOLLOW_UP.search(text):
            previous = history[-1]
            query = f"{previous} {text}"
            prev_intent = analyse(previous, catalog.speaker_candidates(previous))
            intent = _merge(prev_intent, intent)
        if intent.year and not filters.year:
            filters = Filters(filters.event, intent.year, filters.speaker)
        named_events = catalog.events_in(query)
        if named_events and not intent.is_event:
            if not filters.event and len(named_events) == 1:
                filters = Filters(named_events[0].id, filters.year, filters.speaker)
            query = _strip_event_names(query, named_events)
        query = catalog.correct(query)
        searched = retriever.count_talks(filters)
        # event-level questions are answered from event fields
        if intent.is_event and not intent.speakers:
            events = catalog.events_in(query) or (list(catalog.events.values()) if intent.count else [])
            if events:
                draft = offline.event_answer(intent, events, catalog)
                return offline.to_answer(text, draft, searched=searched, notice=notice), [], intent
            by_topic = offline.events_by_topic(query, list(catalog.events.values())) if intent.event_topics else []
            if by_topic:
                draft = offline.topic_event_answer(by_topic)
                return offline.to_answer(text, draft, searched=searched, notice=notice), [], intent
        if intent.is_metadata:
            talks = offline.filter_by_duration(retriever.all_talks(filters), intent)
            hits = [Hit(talk=t, score=1.0) for t in talks]
        elif intent.speakers:
            talks_by = {t.id: t for name in intent.speakers for t in catalog.talks_by_speaker(name)}
            allowed = retriever.allowed_ids(filters)
            talks = [t for t in talks_by.values() if allowed is None or t.id in allowed]
            talks.sort(key=lambda t: (t.year or 0, t.source, t.line))
            hits = [Hit(talk=t, score=1.0) for t in talks]
        else:
            found = retriever.search(query, None, filters)
            hits = select(
                found,
                wants_list=intent.wants_list,
                dense_floor=self.settings.dense_floor,
                lexical_floor=self.settings.lexical_floor,
            )
        draft = offline.compose(text, intent, hits, catalog, searched, scope=_scope(filters, catalog))
        return offline.to_answer(text, draft, searched=searched, notice=notice), hits, intent


def _merge(previous: Intent, current: Intent) -> Intent:
    from dataclasses import replace

    return replace(
        previous,
        year=current.year or previous.year,
        min_minutes=current.min_minutes if current.min_minutes is not None else previous.min_minutes,
        max_minutes=current.max_minutes if current.max_minutes is not None else previous.max_minutes,
        speakers=current.speakers or previous.speakers,
        wants_list=True,
    )


def _scope(filters: Filters, catalog: Catalog) -> str:
    """Words for the filters in force, for the answer's lead line ("" when none)."""
    parts = []
    events = catalog.resolve_event(filters.event) if filters.event else []
    if filters.event:
        parts.append(" at " + (" or ".join(e.name for e in events) if events else filters.event))
    if filters.year and not (events and all(e.year == filters.year for e in events)):
        parts.append(f" in {filters.year}")
    if filters.speaker:
        parts.append(f" by {filters.speaker}")
    return "".join(parts)


def _strip_event_names(query: str, events: Sequence[Event]) -> str:
    """Drop the words of event names from a query, so they do not count as topic words."""
    for event in events:
        for word in re.findall(r"[A-Za-z0-9&]+", event.name):
            if word.lower() != "scale":
                query = re.sub(rf"(?i)(?<![\w@]){re.escape(word)}(?!\w)", " ", query)
    return re.sub(r"\s+", " ", query.replace("@Scale", " ")).strip()
