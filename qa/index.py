"""Ingest: talks and events → chunks → embeddings → Chroma (through LlamaIndex's ``ChromaVectorStore``).

Ingest is incremental: every talk carries a content hash; an unchanged talk is not embedded
again, a changed one is replaced, a removed one is deleted.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import pickle
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llama_index.core.schema import BaseNode, TextNode
from llama_index.vector_stores.chroma import ChromaVectorStore

from .cache import write_cache
from .chunking import CHUNKER_VERSION, chunk_talk, event_text
from .embedding import MiniLMEmbedding
from .records import Event, Talk
from .seeds import SeedLoad
from .store import event_metadata, get_pages, talk_metadata

__all__ = [
    "GENERATION_KEY",
    "IngestReport",
    "all_records",
    "content_hash",
    "generation",
    "ingest",
    "nodes_for_event",
    "nodes_for_talk",
]

logger = logging.getLogger(__name__)

WRITE_BATCH = 512
#: Collection metadata key holding a token that changes whenever an ingest changes the collection.
GENERATION_KEY = "talkqa_generation"
#: Token prefix while an ingest is changing the collection (or was killed doing so): no cache is trusted.
INGESTING = "ingesting-"
Progress = Callable[[int, int], None]


@dataclass(slots=True)
class IngestReport:
    """What one ingest did."""

    files: int = 0
    events: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    embedded_chunks: int = 0
    skipped: list[str] = field(default_factory=list)

    @property
    def talks(self) -> int:
        return self.added + self.updated + self.unchanged

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "events": self.events,
            "talks": self.talks,
            "added": self.added,
            "updated": self.updated,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "embedded_chunks": self.embedded_chunks,
            "skipped": list(self.skipped),
        }


def content_hash(record: Talk | Event, model_id: str) -> str:
    """Hash of everything that goes into a record's nodes; equal hash means nothing to re-embed."""
    payload = json.dumps([CHUNKER_VERSION, model_id, _fields_of(record)], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


def _fields_of(record: Talk | Event) -> dict[str, Any]:
    """``record.to_dict()`` for these flat records, without ``asdict``'s deep copy (a third of a re-ingest)."""
    names = _FIELD_NAMES.get(type(record))
    if names is None:
        names = _FIELD_NAMES[type(record)] = tuple(f.name for f in dataclasses.fields(record))
    return {name: getattr(record, name) for name in names}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def nodes_for_talk(talk: Talk, digest: str) -> list[TextNode]:
    meta = talk_metadata(talk)
    nodes = []
    for chunk in chunk_talk(talk):
        node = TextNode(id_=chunk.id, text=chunk.text, metadata={**meta, "chunk": chunk.index, "hash": digest})
        node.excluded_embed_metadata_keys = list(node.metadata)
        node.excluded_llm_metadata_keys = list(node.metadata)
        nodes.append(node)
    return nodes


def nodes_for_event(event: Event, digest: str) -> list[TextNode]:
    node = TextNode(
        id_=f"event:{event.id}",
        text=event_text(event),
        metadata={**event_metadata(event), "talk_id": f"event:{event.id}", "chunk": 0, "hash": digest},
    )
    node.excluded_embed_metadata_keys = list(node.metadata)
    node.excluded_llm_metadata_keys = list(node.metadata)
    return [node]


def _existing_hashes(collection: Any, cache_dir: Path | None = None) -> dict[str, str]:
    """Content hash of every record in the collection: from the list the last ingest saved for this
    generation, else from every record's metadata (~0.5 ms a record in Chroma: a minute at 100k)."""
    token = generation(collection) if cache_dir else None
    path = cache_dir / f"hashes-{token}.pkl" if cache_dir and token else None
    if path and path.exists():
        try:
            with path.open("rb") as fh:
                return dict(pickle.load(fh))
        except Exception:  # a half-written or foreign cache is rebuilt
            logger.warning("hash cache at %s unreadable; reading the index", path)
    pages = get_pages(collection, where={"chunk": 0}, include=["metadatas"])
    return {str(m["talk_id"]): str(m.get("hash", "")) for page in pages for m in page["metadatas"]}


def _save_hashes(cache_dir: Path | None, collection: Any, hashes: dict[str, str] | None) -> None:
    """Keep ``hashes`` for the collection's current generation; ``None`` forgets every saved list.

    An ingest forgets before its first write, so one killed midway leaves no list that looks current.
    """
    if not cache_dir:
        return
    token = generation(collection)
    if hashes is None or not token:
        for old in cache_dir.glob("hashes-*.pkl"):
            old.unlink(missing_ok=True)
        return
    write_cache(cache_dir / f"hashes-{token}.pkl", hashes, stale="hashes-*.pkl")


def ingest(
    load: SeedLoad,
    collection: Any,
    embed: MiniLMEmbedding,
    *,
    progress: Progress | None = None,
    prune: bool = True,
    cache_dir: Path | None = None,
) -> IngestReport:
    """Bring ``collection`` in line with ``load``; embeds only new or changed records.

    With ``prune`` (the default), talks no longer in ``load`` are deleted; pass ``prune=False``
    when ingesting extra files on top of the existing index. With ``cache_dir``, the records'
    hashes are kept there per generation, so an unchanged re-ingest reads no metadata.
    """
    report = IngestReport(files=len(load.files), events=len(load.events))
    report.skipped = [str(p) for p in load.problems]
    model_id = embed.model_name
    existing = _existing_hashes(collection, cache_dir)
    wanted: dict[str, tuple[str, Talk | Event]] = {}
    for event in load.events:
        wanted[f"event:{event.id}"] = (content_hash(event, model_id), event)
    for talk in load.talks:
        wanted[talk.id] = (content_hash(talk, model_id), talk)

    pending: list[tuple[str, Talk | Event]] = []
    replace_ids: list[str] = []
    for key, (digest, record) in wanted.items():
        old = existing.get(key)
        if old == digest:
            report.unchanged += isinstance(record, Talk)
            continue
        if old is not None:
            replace_ids.append(key)
            report.updated += isinstance(record, Talk)
        else:
            report.added += isinstance(record, Talk)
        pending.append((digest, record))
    stale = [key for key in existing if key not in wanted] if prune else []
    report.removed = sum(1 for key in stale if not key.startswith("event:"))
    if pending or replace_ids or stale:
        _save_hashes(cache_dir, collection, None)

    store = ChromaVectorStore(chroma_collection=collection)
    if pending or replace_ids or stale:
        # caches keyed by the old token would outlive a killed ingest and serve deleted talks
        _bump_generation(collection, INGESTING)
    for batch_start in range(0, len(replace_ids + stale), WRITE_BATCH):
        ids = (replace_ids + stale)[batch_start : batch_start + WRITE_BATCH]
        collection.delete(where={"talk_id": {"$in": ids}})
    total = sum(len(chunk_talk(r)) if isinstance(r, Talk) else 1 for _, r in pending) if progress else 0
    if progress:
        progress(0, total)
    for batch in _node_batches(pending, WRITE_BATCH):
        vectors = embed.embed_sorted([n.get_content() for n in batch])
        for node, vector in zip(batch, vectors, strict=True):
            node.embedding = vector.tolist()
        store.add(list[BaseNode](batch))
        report.embedded_chunks += len(batch)
        if progress:
            progress(report.embedded_chunks, total)
    if pending or replace_ids or stale or not generation(collection):
        _bump_generation(collection)
    if cache_dir:
        dropped = set(stale)
        kept = {key: digest for key, digest in existing.items() if key not in dropped}
        _save_hashes(cache_dir, collection, {**kept, **{key: digest for key, (digest, _) in wanted.items()}})
        token = generation(collection)
        if prune and token:  # the store now holds exactly ``load``: the next start need not read it back
            write_cache(cache_dir / f"records-{token}.pkl", sorted_records(load.talks, load.events), "records-*.pkl")
    logger.info("ingest: %s", report.to_dict())
    return report


def _node_batches(pending: Sequence[tuple[str, Talk | Event]], size: int) -> Iterator[list[TextNode]]:
    """Nodes of ``pending`` records, about ``size`` at a time, built as they are needed.

    A record's chunks are never split between batches, so an interrupted ingest leaves each talk
    either whole or absent.
    """
    batch: list[TextNode] = []
    for digest, record in pending:
        batch.extend(nodes_for_talk(record, digest) if isinstance(record, Talk) else nodes_for_event(record, digest))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def generation(collection: Any) -> str | None:
    """The token of the collection's last changing ingest (``None`` for an index built before it)."""
    token = (collection.metadata or {}).get(GENERATION_KEY)
    return str(token) if token and not str(token).startswith(INGESTING) else None


def _bump_generation(collection: Any, prefix: str = "") -> None:
    # Chroma refuses metadata that restates hnsw:* keys, and keeps the space without them
    kept = {k: v for k, v in (collection.metadata or {}).items() if not k.startswith("hnsw:")}
    try:
        collection.modify(metadata={**kept, GENERATION_KEY: prefix + uuid.uuid4().hex})
    except Exception as exc:  # the token only keys caches; without it they fall back to a full read
        logger.warning("could not record the ingest generation: %s", exc)


def all_records(collection: Any, cache_dir: Path | None = None) -> tuple[list[Talk], list[Event]]:
    """Every talk and event in the collection (first chunk of each).

    With ``cache_dir``, the records are kept in a pickle named by the collection's ingest
    generation, so a start after an unchanged index reads one file instead of every talk's metadata.
    """
    token = generation(collection) if cache_dir else None
    path = cache_dir / f"records-{token}.pkl" if cache_dir and token else None
    if path and path.exists():
        try:
            with path.open("rb") as fh:
                talks, events = pickle.load(fh)
            return talks, events
        except Exception:  # a half-written or foreign cache is rebuilt
            logger.warning("catalog cache at %s unreadable; reading the index", path)
    talks, events = _read_records(collection)
    if path:
        write_cache(path, (talks, events), stale="records-*.pkl")
    return talks, events


def _read_records(collection: Any) -> tuple[list[Talk], list[Event]]:
    from .store import event_from_metadata, talk_from_metadata

    talks: list[Talk] = []
    events: list[Event] = []
    for page in get_pages(collection, where={"chunk": 0}, include=["metadatas"]):  # 100k rows at once: ~2 GB
        for meta in page["metadatas"]:
            if meta.get("kind") == "event":
                events.append(event_from_metadata(meta))
            else:
                talks.append(talk_from_metadata(meta))
    return sorted_records(talks, events)


def sorted_records(talks: Sequence[Talk], events: Sequence[Event]) -> tuple[list[Talk], list[Event]]:
    """Talks and events in catalog order (by source file, then line)."""
    return sorted(talks, key=lambda t: (t.source, t.line, t.id)), sorted(events, key=lambda e: (e.source, e.id))
