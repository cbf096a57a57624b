"""The systems the evaluation compares, behind one small interface.

* ``naive-rag``: the LlamaIndex tutorial pipeline: one ``Document`` per talk (title, speakers,
  abstract), ``SentenceSplitter`` chunks, a ``VectorStoreIndex`` in an ephemeral Chroma, dense top-5.
  Its "answer" cites the distinct talks of its top-5 chunks, which is what a naive RAG does.
* ``bm25``: LlamaIndex's ``BM25Retriever`` over the same chunks, top-5.
* ``talkqa-offline`` / ``talkqa-llm``: the real pipeline (``TalkQA.search`` + ``TalkQA.ask``).

Both baselines use the embedding they are given (the one TalkQA uses); nothing here touches
llama-index's global ``Settings``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from qa import Answer, Citation, Talk, TalkQA

__all__ = [
    "ANSWER_K",
    "BM25Baseline",
    "NaiveRAG",
    "System",
    "TalkQASystem",
    "talk_documents",
]

logger = logging.getLogger(__name__)

#: Chunks a baseline reads to write its answer (the usual tutorial top-k).
ANSWER_K = 5
CHUNK_SIZE = 128
CHUNK_OVERLAP = 16
#: Chunks fetched to rank talks for the retrieval metrics and the "resolves" check.
POOL = 200


class System(Protocol):
    """What the runner needs of a system under evaluation."""

    name: str
    #: Whether its answer text is generated (and so worth a groundedness check).
    writes_text: bool

    def rank(self, question: str, k: int) -> list[str]:
        """Talk ids, best first, at most ``k``."""
        ...

    def answer(self, question: str) -> Answer: ...


def talk_text(talk: Talk) -> str:
    """The text a naive pipeline indexes for a talk: title, speakers, abstract."""
    parts = [talk.title]
    if talk.speakers:
        parts.append("Speakers: " + ", ".join(talk.speakers))
    parts.append(talk.abstract)
    return "\n".join(p for p in parts if p)


def talk_documents(talks: Sequence[Talk]) -> list[Any]:
    """One LlamaIndex ``Document`` per talk, with ``talk_id`` metadata kept out of the embedded text."""
    from llama_index.core import Document

    return [
        Document(
            text=talk_text(t),
            metadata={"talk_id": t.id},
            excluded_embed_metadata_keys=["talk_id"],
            excluded_llm_metadata_keys=["talk_id"],
            id_=t.id,
        )
        for t in talks
    ]


def _chunks(talks: Sequence[Talk]) -> list[Any]:
    from llama_index.core.node_parser import SentenceSplitter

    splitter = SentenceSplitter(chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP)
    return list(splitter.get_nodes_from_documents(talk_documents(talks)))


def _distinct_talks(results: Sequence[Any]) -> list[str]:
    seen: list[str] = []
    for r in results:
        talk_id = str(r.node.metadata["talk_id"])
        if talk_id not in seen:
            seen.append(talk_id)
    return seen


class _ChunkBaseline:
    """Shared answer logic: cite the distinct talks of the top chunks, quote each chunk."""

    name = "baseline"
    writes_text = False

    def __init__(self, talks: Sequence[Talk]) -> None:
        self.talks = {t.id: t for t in talks}
        self.nodes = _chunks(talks)

    def _retrieve(self, question: str, k: int) -> list[Any]:
        raise NotImplementedError

    def rank(self, question: str, k: int) -> list[str]:
        return _distinct_talks(self._retrieve(question, min(POOL, len(self.nodes))))[:k]

    def answer(self, question: str) -> Answer:
        results = self._retrieve(question, ANSWER_K)
        numbers: dict[str, int] = {}
        lines: list[str] = []
        for r in results:
            talk_id = str(r.node.metadata["talk_id"])
            number = numbers.setdefault(talk_id, len(numbers) + 1)
            lines.append(f"{r.node.get_content().strip()} [{number}]")
        citations = tuple(Citation(number=n, talk=self.talks[talk_id], quote="") for talk_id, n in numbers.items())
        return Answer(question=question, text="\n\n".join(lines), citations=citations, answerer=self.name)


class NaiveRAG(_ChunkBaseline):
    """Dense top-5 over ``SentenceSplitter`` chunks in an ephemeral Chroma, via ``ChromaVectorStore``."""

    name = "naive-rag"

    def __init__(self, talks: Sequence[Talk], embed_model: Any) -> None:
        import chromadb
        from chromadb.config import Settings as ChromaSettings
        from llama_index.core import StorageContext, VectorStoreIndex
        from llama_index.vector_stores.chroma import ChromaVectorStore

        super().__init__(talks)
        client = chromadb.EphemeralClient(settings=ChromaSettings(anonymized_telemetry=False))
        # a fresh name per instance: ephemeral clients in one process share their state
        name = f"naive-{uuid.uuid4().hex[:12]}"
        collection = client.create_collection(name, metadata={"hnsw:space": "cosine"})
        store = ChromaVectorStore(chroma_collection=collection)
        self.index = VectorStoreIndex(
            self.nodes,
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=embed_model,
        )

    def _retrieve(self, question: str, k: int) -> list[Any]:
        return list(self.index.as_retriever(similarity_top_k=k).retrieve(question))


class BM25Baseline(_ChunkBaseline):
    """LlamaIndex ``BM25Retriever`` (English stemmer) over the same chunks, top-5."""

    name = "bm25"

    def __init__(self, talks: Sequence[Talk]) -> None:
        super().__init__(talks)
        self._cache: dict[int, Any] = {}

    def _retriever(self, k: int) -> Any:
        if k not in self._cache:
            import Stemmer
            from llama_index.retrievers.bm25 import BM25Retriever

            self._cache[k] = BM25Retriever.from_defaults(
                nodes=self.nodes,
                similarity_top_k=min(k, len(self.nodes)),
                stemmer=Stemmer.Stemmer("english"),
                language="english",
            )
        return self._cache[k]

    def _retrieve(self, question: str, k: int) -> list[Any]:
        return [r for r in self._retriever(k).retrieve(question) if (r.score or 0.0) > 0.0]


class TalkQASystem:
    """The real pipeline: ``TalkQA.search`` ranks, ``TalkQA.ask`` answers."""

    writes_text = True

    def __init__(self, qa: TalkQA, answerer: str) -> None:
        self.qa = qa
        self.answerer = answerer
        self.name = f"talkqa-{answerer}"

    def rank(self, question: str, k: int) -> list[str]:
        return [h.talk.id for h in self.qa.search(question, k)]

    def answer(self, question: str) -> Answer:
        return self.qa.ask(question, answerer=self.answerer if self.answerer == "offline" else None)
