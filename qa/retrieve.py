"""Hybrid retrieval: dense (MiniLM through Chroma) + BM25, fused by reciprocal rank, talks not chunks.

This is LlamaIndex's ``QueryFusionRetriever`` with one query and ``reciprocal_rerank`` written
out, because the relevance gate needs each retriever's raw score (cosine similarity and term
coverage), which the fused score throws away. Both retrievers are asked for ids and scores only
and filter without a per-row metadata scan, so a warm search costs about the same at 100k talks
as at 1k (bench/PROFILE.md).
"""

from __future__ import annotations

import hashlib
import logging
import math
import pickle
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import BaseNode, NodeWithScore, QueryBundle, TextNode

from .cache import write_cache
from .catalog import Catalog
from .passages import best_sentences, coverage
from .query import content_words, terms
from .records import Hit, Talk
from .store import get_pages

__all__ = ["Filters", "HybridRetriever"]

logger = logging.getLogger(__name__)

RRF_K = 60
#: Lexical evidence counts only with a term found in at most about a quarter of the talks (IDF ≈ 1.2).
MIN_LEXICAL_MASS = 1.2
UNKNOWN_TERM_WEIGHT = 2.0
DENSE_CANDIDATES = 40
#: An unfiltered dense query fetches this many times the chunks it keeps (events share the collection).
DENSE_OVERFETCH = 2
#: Filters that leave at most this many talks are scored exactly against those talks' stored vectors.
EXACT_MAX_TALKS = 300
#: A larger filtered set keeps the allowed chunks of one unfiltered query when that query needs at most
#: this many results; rarer sets fall back to a Chroma ``where`` (slow at size: it reads every matching row).
MAX_OVERFETCH = 4000
#: Above this many allowed talks, Chroma filters on year/event fields instead of a long ``talk_id`` list.
MAX_ID_FILTER = 500
BM25_CANDIDATES = 40
Scored = list[tuple[str, float]]


class TalkScoreRetriever(BaseRetriever):
    """A LlamaIndex retriever over one scoring source (dense or BM25); each node names its talk.

    The sources ask Chroma and bm25s for ids and scores only: ``ChromaVectorStore.query`` always
    fetches and parses every hit's document and metadata, which dominates a search at 10k+ talks.
    The nodes are therefore light (chunk id and ``talk_id``), and the catalog supplies the talks.
    """

    def __init__(self, source: Callable[[str], Scored]) -> None:
        super().__init__()
        self._source = source

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [
            NodeWithScore(node=TextNode(id_=f"{talk_id}#{rank}", text="", metadata={"talk_id": talk_id}), score=score)
            for rank, (talk_id, score) in enumerate(self._source(query_bundle.query_str))
        ]


def _talk_scores(results: list[NodeWithScore]) -> Scored:
    return [(str(r.node.metadata["talk_id"]), float(r.score or 0.0)) for r in results]


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
        self._rows: dict[str, list[int]] | None = None
        self._count: int | None = None
        self._lock = threading.Lock()
        self._load_terms()

    # ---- filters -------------------------------------------------------------------------
    def allowed_ids(self, filters: Filters | None) -> set[str] | None:
        """Talk ids that pass ``filters``; ``None`` means no restriction."""
        if not filters:
            return None
        catalog = self.catalog
        found: list[set[str]] = []
        if filters.event:
            events = catalog.resolve_event(filters.event)
            found.append({t for e in events for t in catalog.talk_ids_by_event.get(e.id, ())})
        if filters.year:
            found.append(set(catalog.talk_ids_by_year.get(filters.year, ())))
        if filters.speaker:
            found.append({t.id for t in catalog.talks_by_speaker(filters.speaker)})
        return set.intersection(*found)

    # ---- the two retrievers ------------------------------------------------------------
    def _dense(self, query: str, allowed: set[str] | None, filters: Filters | None = None) -> Scored:
        """(talk id, cosine) of the best chunks, best first."""
        vector = self.embed.get_query_embedding(query)
        if allowed is not None and len(allowed) <= EXACT_MAX_TALKS:
            return self._dense_exact(vector, allowed)
        share = 1.0 if allowed is None else len(allowed) / max(len(self.catalog.talks), 1)
        wanted = min(math.ceil(DENSE_CANDIDATES * DENSE_OVERFETCH / share), self._size())
        if wanted <= MAX_OVERFETCH:
            got = self.collection.query(query_embeddings=[vector], n_results=wanted, include=["distances"])
            pairs = zip(got["ids"][0], got["distances"][0], strict=True)
            kept = [
                (_talk_of(c), 1.0 - d)
                for c, d in pairs
                if _talk_of(c) in (self.catalog.talks if allowed is None else allowed)
            ]
            return kept[:DENSE_CANDIDATES]
        got = self.collection.query(
            query_embeddings=[vector],
            n_results=DENSE_CANDIDATES,
            where=self._where(allowed, filters),
            include=["distances"],
        )
        return [(_talk_of(c), 1.0 - d) for c, d in zip(got["ids"][0], got["distances"][0], strict=True)]

    def _dense_exact(self, vector: list[float], allowed: set[str]) -> Scored:
        ids = [c for t in sorted(allowed) if t in self.catalog.talks for c in self.catalog.chunk_ids(t)]
        got = self.collection.get(ids=ids, include=["embeddings"]) if ids else {"ids": []}
        if not len(got["ids"]):
            return []
        matrix = np.asarray(got["embeddings"], dtype=np.float32)
        query = np.asarray(vector, dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1) * max(float(np.linalg.norm(query)), 1e-12)
        sims = (matrix @ query) / np.clip(norms, 1e-12, None)
        order = np.argsort(-sims, kind="stable")[:DENSE_CANDIDATES]
        return [(_talk_of(got["ids"][i]), float(sims[i])) for i in order]

    def _where(self, allowed: set[str] | None, filters: Filters | None) -> dict[str, Any]:
        if allowed is not None and len(allowed) > MAX_ID_FILTER and filters and not filters.speaker:
            # the same talks as ``allowed``, said in two conditions rather than thousands of ids
            parts: list[dict[str, Any]] = [{"kind": "talk"}]
            if filters.year:
                parts.append({"year": filters.year})
            if filters.event:
                parts.append({"event_id": {"$in": sorted(e.id for e in self.catalog.resolve_event(filters.event))}})
            return {"$and": parts}
        return {"talk_id": {"$in": sorted(allowed or ())}}

    def _size(self) -> int:
        if self._count is None:
            self._count = max(int(self.collection.count()), 1)
        return self._count

    def _bm25_retriever(self) -> Any:
        with self._lock:
            if self._bm25 is None:
                self._bm25 = self._build_bm25()
            return self._bm25

    def _build_bm25(self) -> Any:
        import Stemmer
        from llama_index.retrievers.bm25 import BM25Retriever

        fingerprint = self.fingerprint()
        path = self._bm25_dir / fingerprint if self._bm25_dir else None
        if path and (path / "retriever.json").exists():
            try:
                return BM25Retriever.from_persist_dir(str(path), show_progress=False)
            except Exception:  # a half-written or foreign cache is rebuilt
                logger.warning("BM25 cache at %s unreadable; rebuilding", path)
        nodes: list[BaseNode] = []
        # a page at a time, keeping only what BM25 hits need: 100k rows of full metadata are ~2 GB
        for page in get_pages(self.collection, where={"kind": "talk"}, include=["documents", "metadatas"]):
            for chunk_id, doc, meta in zip(page["ids"], page["documents"], page["metadatas"], strict=True):
                nodes.append(TextNode(id_=chunk_id, text=doc or "", metadata={"talk_id": meta["talk_id"]}))
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
        write_cache(path, cached, stale="terms-*.pkl")

    def _lexical(self, query: str, allowed: set[str] | None) -> Scored:
        """(talk id, BM25 score) of the best chunks among ``allowed``, best first."""
        bm25 = self._bm25_retriever()
        words = content_words(query)
        if bm25 is None or not words:
            return []
        if allowed is None:
            results = bm25.retrieve(QueryBundle(" ".join(words)))
            return [(str(r.node.metadata.get("talk_id")), float(r.score)) for r in results if r.score and r.score > 0]
        # score only the allowed talks' chunks, so a filter never leaves BM25 empty-handed
        import bm25s

        rows = [i for t in allowed for i in self._bm25_rows().get(t, ())]
        if not rows:
            return []
        mask = np.zeros(len(bm25.corpus), dtype=np.float32)
        mask[rows] = 1.0
        tokens = bm25s.tokenize(
            " ".join(words),
            stemmer=None if bm25.skip_stemming else bm25.stemmer,
            token_pattern=bm25.token_pattern,
            show_progress=False,
        )
        indexes, scores = bm25.bm25.retrieve(
            tokens, k=min(BM25_CANDIDATES, len(bm25.corpus)), show_progress=False, weight_mask=mask
        )
        out = []
        for i, score in zip(indexes[0], scores[0], strict=True):
            entry = i if isinstance(i, dict) else bm25.corpus[int(i)]  # bm25s returns rows or their documents
            if score > 0:
                out.append((str(entry["talk_id"]), float(score)))
        return out

    def _bm25_rows(self) -> dict[str, list[int]]:
        """BM25 corpus rows of each talk."""
        if self._rows is None:
            rows: dict[str, list[int]] = {}
            for i, entry in enumerate(self._bm25_retriever().corpus):
                rows.setdefault(str(entry["talk_id"]), []).append(i)
            self._rows = rows
        return self._rows

    # ---- fusion --------------------------------------------------------------------------
    def search(self, query: str, k: int | None = None, filters: Filters | None = None) -> list[Hit]:
        """Talks ranked by reciprocal-rank fusion of dense and BM25 results, best first."""
        allowed = self.allowed_ids(filters)
        if allowed is not None and not allowed:
            return []
        bundle = QueryBundle(query)
        dense = _talk_scores(TalkScoreRetriever(lambda q: self._dense(q, allowed, filters)).retrieve(bundle))
        lexical = _talk_scores(TalkScoreRetriever(lambda q: self._lexical(q, allowed)).retrieve(bundle))
        fused: dict[str, float] = {}
        cosine: dict[str, float] = {}
        for rank, (talk_id, score) in enumerate(_collapse(dense)):
            fused[talk_id] = fused.get(talk_id, 0.0) + 1.0 / (RRF_K + rank + 1)
            cosine[talk_id] = score  # Chroma's cosine distance is 1 - cos
        for rank, (talk_id, _) in enumerate(_collapse(lexical)):
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
        """Talks that pass ``filters``, in catalog order."""
        allowed = self.allowed_ids(filters)
        if allowed is None:
            return list(self.catalog.talks.values())
        position = self.catalog.position
        return [self.catalog.talks[t] for t in sorted(allowed, key=position.__getitem__)]

    def count_talks(self, filters: Filters | None = None) -> int:
        """How many talks pass ``filters`` (without listing them)."""
        allowed = self.allowed_ids(filters)
        return len(self.catalog.talks) if allowed is None else len(allowed)


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


def _collapse(results: Scored) -> Scored:
    """Keep each talk's best chunk, in rank order."""
    seen: set[str] = set()
    out = []
    for talk_id, score in sorted(results, key=lambda r: -r[1]):
        if talk_id not in seen:
            seen.add(talk_id)
            out.append((talk_id, score))
    return out


def _talk_of(chunk_id: str) -> str:
    """The talk of a chunk id (``<talk id>#<n>``; an event node's id has no ``#``)."""
    return chunk_id.rsplit("#", 1)[0] if "#" in chunk_id else chunk_id
