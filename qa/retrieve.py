"""Hybrid retrieval: dense (MiniLM through Chroma) + BM25, fused by reciprocal rank, talks not chunks.

This is LlamaIndex's ``QueryFusionRetriever`` with one query and ``reciprocal_rerank`` written
out, because the relevance gate needs each retriever's raw score (cosine similarity and term
coverage), which the fused score throws away.
"""

from __future__ import annotations

import hashlib
import logging
import math
import pickle
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llama_index.core import VectorStoreIndex
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores import FilterOperator, MetadataFilter, MetadataFilters
from llama_index.vector_stores.chroma import ChromaVectorStore

from .catalog import Catalog
from .passages import best_sentences, coverage
from .query import content_words, terms
from .records import Hit, Talk

__all__ = ["Filters", "HybridRetriever"]

logger = logging.getLogger(__name__)

RRF_K = 60
#: Lexical evidence counts only with a term found in at most about a quarter of the talks (IDF ≈ 1.2).
MIN_LEXICAL_MASS = 1.2
UNKNOWN_TERM_WEIGHT = 2.0
DENSE_CANDIDATES = 40
#: Above this many allowed talks, Chroma filters on year/event fields instead of a long ``talk_id`` list.
MAX_ID_FILTER = 500
BM25_CANDIDATES = 40


@dataclass(frozen=True, slots=True)
class Filters:
    """Narrow retrieval to an event (name or id), a year, or a speaker (any spelling)."""

    event: str | None = None
    year: int | None = None
    speaker: str | None = None

    def __bool__(self) -> bool:
        return bool(self.event or self.year or self.speaker)


class HybridRetriever:
    """Search talks by meaning and by exact terms; every hit is one talk."""

    def __init__(self, collection: Any, embed: Any, catalog: Catalog, bm25_dir: Path | None = None) -> None:
        self.collection = collection
        self.embed = embed
        self.catalog = catalog
        self._bm25_dir = bm25_dir
        self._bm25: Any = None
        self._lock = threading.Lock()
        store = ChromaVectorStore(chroma_collection=collection)
        self._index = VectorStoreIndex.from_vector_store(store, embed_model=embed)
        self._load_terms()

    # ---- filters -------------------------------------------------------------------------
    def allowed_ids(self, filters: Filters | None) -> set[str] | None:
        """Talk ids that pass ``filters``; ``None`` means no restriction."""
        if not filters:
            return None
        talks = list(self.catalog.talks.values())
        if filters.event:
            events = {e.id for e in self.catalog.resolve_event(filters.event)}
            talks = [t for t in talks if t.event_id in events]
        if filters.year:
            talks = [t for t in talks if t.year == filters.year]
        if filters.speaker:
            wanted = filters.speaker
            matching = {t.id for t in self.catalog.talks_by_speaker(wanted)}
            talks = [t for t in talks if t.id in matching]
        return {t.id for t in talks}

    # ---- the two retrievers ------------------------------------------------------------
    def _dense(self, query: str, allowed: set[str] | None, filters: Filters | None = None) -> list[NodeWithScore]:
        conditions = [MetadataFilter(key="kind", value="talk")]
        if allowed is not None and len(allowed) > MAX_ID_FILTER and filters and not filters.speaker:
            # the same talks as ``allowed``, said in two conditions rather than thousands of ids
            if filters.year:
                conditions.append(MetadataFilter(key="year", value=filters.year))
            if filters.event:
                events = sorted(e.id for e in self.catalog.resolve_event(filters.event))
                conditions.append(MetadataFilter(key="event_id", value=events, operator=FilterOperator.IN))
        elif allowed is not None:
            conditions.append(MetadataFilter(key="talk_id", value=sorted(allowed), operator=FilterOperator.IN))
        retriever = self._index.as_retriever(
            similarity_top_k=DENSE_CANDIDATES, filters=MetadataFilters(filters=conditions)
        )
        return list(retriever.retrieve(QueryBundle(query)))

    def _bm25_retriever(self) -> Any:
        with self._lock:
            if self._bm25 is None:
                self._bm25 = self._build_bm25()
            return self._bm25

    def _build_bm25(self) -> Any:
        import Stemmer
        from llama_index.core.vector_stores.utils import metadata_dict_to_node
        from llama_index.retrievers.bm25 import BM25Retriever

        fingerprint = self.fingerprint()
        path = self._bm25_dir / fingerprint if self._bm25_dir else None
        if path and (path / "retriever.json").exists():
            try:
                return BM25Retriever.from_persist_dir(str(path), show_progress=False)
            except Exception:  # a half-written or foreign cache is rebuilt
                logger.warning("BM25 cache at %s unreadable; rebuilding", path)
        got = self.collection.get(where={"kind": "talk"}, include=["documents", "metadatas"])
        nodes = []
        for doc, meta in zip(got["documents"] or [], got["metadatas"] or [], strict=True):
            node = metadata_dict_to_node(meta, text=doc)
            node.metadata = {"talk_id": meta["talk_id"]}  # all BM25 hits need; keeps its cache small
            nodes.append(node)
        if not nodes:
            return None
        retriever = BM25Retriever.from_defaults(
            nodes=nodes,
            similarity_top_k=min(BM25_CANDIDATES, len(nodes)),
            stemmer=Stemmer.Stemmer("english"),
            language="english",
        )
        if path:
            _persist_atomically(retriever, path)
        return retriever

    def fingerprint(self) -> str:
        """Changes whenever the indexed talks change; keys the BM25 cache.

        Cheap when the collection records its ingest generation; else a hash of every talk.
        """
        from .index import generation

        token = generation(self.collection)
        if token:
            return hashlib.sha256(f"{token}:{len(self.catalog.talks)}".encode()).hexdigest()[:16]
        digest = hashlib.sha256()
        for talk_id in sorted(self.catalog.talks):
            digest.update(talk_id.encode())
            digest.update(repr(self.catalog.talks[talk_id]).encode())
        return digest.hexdigest()[:16]

    def _load_terms(self) -> None:
        """Per-talk term sets and vocabulary from the cache of this fingerprint, else computed and saved."""
        if not self._bm25_dir:
            return
        path = self._bm25_dir / f"terms-{self.fingerprint()}.pkl"
        if path.exists():
            try:
                with path.open("rb") as fh:
                    self.catalog.__dict__.update(pickle.load(fh))  # the catalog's cached_property slots
                return
            except Exception:
                logger.warning("term cache at %s unreadable; recomputing", path)
        if not self.catalog.talks:
            return
        cached = {name: getattr(self.catalog, name) for name in ("talk_terms", "vocabulary")}
        try:
            import tempfile

            path.parent.mkdir(parents=True, exist_ok=True)
            for old in path.parent.glob("terms-*.pkl"):
                old.unlink(missing_ok=True)
            with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, suffix=".tmp") as tmp:
                pickle.dump(cached, tmp, protocol=pickle.HIGHEST_PROTOCOL)
            Path(tmp.name).replace(path)
        except OSError as exc:  # the cache is optional
            logger.warning("could not write the term cache %s: %s", path, exc)

    def _lexical(self, query: str, allowed: set[str] | None) -> list[NodeWithScore]:
        bm25 = self._bm25_retriever()
        words = content_words(query)
        if bm25 is None or not words:
            return []
        results = bm25.retrieve(QueryBundle(" ".join(words)))
        out = []
        for r in results:
            talk_id = str(r.node.metadata.get("talk_id"))
            if r.score and r.score > 0 and (allowed is None or talk_id in allowed):
                out.append(r)
        return out

    # ---- fusion --------------------------------------------------------------------------
    def search(self, query: str, k: int | None = None, filters: Filters | None = None) -> list[Hit]:
        """Talks ranked by reciprocal-rank fusion of dense and BM25 results, best first."""
        allowed = self.allowed_ids(filters)
        if allowed is not None and not allowed:
            return []
        dense = self._dense(query, allowed, filters)
        lexical = self._lexical(query, allowed)
        fused: dict[str, float] = {}
        cosine: dict[str, float] = {}
        for rank, r in enumerate(_collapse(dense)):
            talk_id = str(r.node.metadata["talk_id"])
            fused[talk_id] = fused.get(talk_id, 0.0) + 1.0 / (RRF_K + rank + 1)
            # ChromaVectorStore reports exp(-distance); cosine distance = 1 - cos
            cosine[talk_id] = 1.0 + math.log(max(r.score or 1e-9, 1e-9))
        for rank, r in enumerate(_collapse(lexical)):
            talk_id = str(r.node.metadata["talk_id"])
            fused[talk_id] = fused.get(talk_id, 0.0) + 1.0 / (RRF_K + rank + 1)
        query_terms = terms(query)
        # a term no talk uses weighs like a mid-frequency one: it may be off-topic, or just phrasing
        weights = {t: self.catalog.idf.get(t, UNKNOWN_TERM_WEIGHT) for t in query_terms}
        known_terms = [t for t in query_terms if t in self.catalog.idf]
        # in a small corpus even a term found in one talk has a low IDF: cap the bar at that
        n_talks = len(self.catalog.talks)
        min_mass = min(MIN_LEXICAL_MASS, math.log(1 + (n_talks - 0.5) / 1.5) - 1e-9)
        hits = []
        for talk_id, score in fused.items():
            talk = self.catalog.talks.get(talk_id)
            if talk is None:
                continue
            talk_terms = self.catalog.talk_terms.get(talk_id, set())
            mass = sum(weights[t] for t in set(known_terms) & talk_terms)
            lexical_share = coverage(query_terms, talk_terms, weights) if mass >= min_mass else 0.0
            passage = " ".join(best_sentences(talk, query_terms, weights, limit=2))
            hits.append(
                Hit(
                    talk=talk,
                    score=score,
                    passage=passage,
                    dense=cosine.get(talk_id, 0.0),
                    lexical=lexical_share,
                )
            )
        hits.sort(key=lambda h: (-h.score, -h.dense, h.talk.id))
        return hits[:k] if k else hits

    def all_talks(self, filters: Filters | None = None) -> list[Talk]:
        allowed = self.allowed_ids(filters)
        talks = list(self.catalog.talks.values())
        return [t for t in talks if allowed is None or t.id in allowed]


def _persist_atomically(retriever: Any, path: Path) -> None:
    """Write the BM25 cache to a temporary dir, then rename it into place (readers never see half)."""
    import shutil
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=path.name + ".", dir=path.parent))
    try:
        retriever.persist(str(tmp), show_progress=False)
        tmp.rename(path)
    except OSError:  # another process won the race, or the disk is read-only: the cache is optional
        shutil.rmtree(tmp, ignore_errors=True)


def _collapse(results: list[NodeWithScore]) -> list[NodeWithScore]:
    """Keep each talk's best chunk, in rank order."""
    seen: set[str] = set()
    out = []
    for r in sorted(results, key=lambda r: -(r.score or 0.0)):
        talk_id = str(r.node.metadata.get("talk_id"))
        if talk_id not in seen:
            seen.add(talk_id)
            out.append(r)
    return out
