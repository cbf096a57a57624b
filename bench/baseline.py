"""The naive LlamaIndex pipeline TalkQA is compared with.

Talks become ``Document``s (title, speakers, event, abstract), ``SentenceSplitter`` chunks them,
``VectorStoreIndex`` embeds them with the same ``MiniLMEmbedding`` into Chroma, and retrieval is
dense top-k. No BM25, no filters, no incremental ingest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qa.chunking import talk_header
from qa.embedding import MiniLMEmbedding
from qa.seeds import load_seeds

__all__ = ["Baseline"]

COLLECTION = "baseline"


class Baseline:
    def __init__(self, home: Path, seeds: list[Path]) -> None:
        self.home = home
        self.seeds = seeds
        self.embed = MiniLMEmbedding(threads=1)
        self._index: Any = None

    def _store(self) -> Any:
        import chromadb
        from chromadb.config import Settings as ChromaSettings
        from llama_index.vector_stores.chroma import ChromaVectorStore

        client = chromadb.PersistentClient(
            path=str(self.home / "baseline-chroma"), settings=ChromaSettings(anonymized_telemetry=False)
        )
        collection = client.get_or_create_collection(COLLECTION, metadata={"hnsw:space": "cosine"})
        return ChromaVectorStore(chroma_collection=collection), collection

    def build(self) -> dict[str, int]:
        """Embed every talk (always from scratch: the naive pipeline has no incremental ingest)."""
        from llama_index.core import Document, StorageContext, VectorStoreIndex
        from llama_index.core.node_parser import SentenceSplitter

        store, collection = self._store()
        if collection.count():
            collection.delete(ids=collection.get(include=[])["ids"])
        load = load_seeds(self.seeds)
        docs = []
        for talk in load.talks:
            doc = Document(text=f"{talk_header(talk)}\n\n{talk.abstract}", metadata={"talk_id": talk.id})
            doc.excluded_embed_metadata_keys = ["talk_id"]
            doc.excluded_llm_metadata_keys = ["talk_id"]
            docs.append(doc)
        nodes = SentenceSplitter().get_nodes_from_documents(docs)
        self._index = VectorStoreIndex(
            nodes,
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=self.embed,
            insert_batch_size=512,
        )
        return {"talks": len(load.talks), "chunks": len(nodes)}

    def open(self) -> None:
        from llama_index.core import VectorStoreIndex

        store, _ = self._store()
        self._index = VectorStoreIndex.from_vector_store(store, embed_model=self.embed)

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        """Talk ids of the top-``k`` chunks (a talk may repeat if it has several chunks)."""
        if self._index is None:
            self.open()
        hits = self._index.as_retriever(similarity_top_k=k).retrieve(query)
        return [str(h.node.metadata["talk_id"]) for h in hits]
