"""One benchmark phase in a fresh process: ``python -m bench.measure PHASE JSON_ARGS``.

Each phase prints one JSON object on its last stdout line, including the process's peak RSS
(``resource.getrusage``), so every size and phase gets its own memory figure.
"""

from __future__ import annotations

import json
import os
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench import synth

__all__ = ["latency", "main", "synthetic_queries"]

WARMUP = 3


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def latency(fn: Callable[[Any], object], items: list[Any]) -> dict[str, float]:
    """Warm ``fn`` on a few items, then time each item: p50/p95/mean in milliseconds."""
    for item in items[:WARMUP]:
        fn(item)
    times = []
    for item in items:
        start = time.perf_counter()
        fn(item)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {
        "n": len(times),
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(times[min(len(times) - 1, int(0.95 * len(times)))], 2),
        "mean_ms": round(statistics.fmean(times), 2),
    }


def synthetic_queries(n: int, seed: int = 1) -> list[str]:
    """Topic questions in the synthetic corpus's vocabulary (answerable and not)."""
    rng = random.Random(seed)
    shapes = [
        "which talks cover {tech}?",
        "how did {co} scale {tech}?",
        "{tech} with {tech2} in production",
        "what are the lessons from running {tech} at {co}?",
        "is there a talk about {adj} {tech}?",
        "who talked about quantum gardening and {tech}?",
    ]
    out = []
    for i in range(n):
        out.append(
            shapes[i % len(shapes)].format(
                tech=rng.choice(synth.TECH),
                tech2=rng.choice(synth.TECH),
                co=rng.choice(synth.COMPANIES),
                adj=rng.choice(synth.ADJ),
            )
        )
    return out


def load() -> float:
    """The 1-minute load average (2 cores: above ~2 means our process shared its core)."""
    return round(os.getloadavg()[0], 2)


def _settings(args: dict[str, Any]) -> Any:
    from qa import Settings

    extra = {"embed_batch": int(args["embed_batch"])} if args.get("embed_batch") else {}
    return Settings(
        home=Path(args["home"]),
        seeds=[Path(p) for p in args["seeds"]],
        chroma_url=args.get("chroma_url"),
        answerer="offline",
        threads=1,
        **extra,
    )


def phase_embed(args: dict[str, Any]) -> dict[str, Any]:
    """Raw embedding throughput (texts/s, one thread) on synthetic chunk texts, by batch size and order."""
    import tempfile

    from qa.chunking import chunk_talk
    from qa.embedding import MiniLMEmbedding
    from qa.seeds import load_seeds

    with tempfile.TemporaryDirectory() as tmp:
        synth.write_corpus(Path(tmp), 600, seed=3)
        texts = [c.text for t in load_seeds([Path(tmp)]).talks for c in chunk_talk(t)][: int(args.get("texts", 512))]
    random.Random(0).shuffle(texts)
    embed = MiniLMEmbedding(threads=1)
    embed._load()
    tokens = [len(embed._tokenizer.encode(t).ids) for t in texts]  # one at a time: a batch is padded
    embed.embed(texts[:16])
    rows = []
    for batch in args.get("batches", [8, 16, 32, 64]):
        embed.embed_batch_size = batch
        for order in ("by length", "as given"):
            runs = []
            for _ in range(int(args.get("repeats", 2))):
                wall, cpu = time.perf_counter(), time.process_time()
                if order == "by length":
                    embed.embed_sorted(texts)
                else:
                    for i in range(0, len(texts), batch):
                        embed.embed(texts[i : i + batch])
                runs.append((time.perf_counter() - wall, time.process_time() - cpu))
            wall_s, cpu_s = min(r[0] for r in runs), min(r[1] for r in runs)
            rows.append(
                {
                    "batch": batch,
                    "order": order,
                    "texts_per_s": round(len(texts) / wall_s, 1),
                    "texts_per_cpu_s": round(len(texts) / cpu_s, 1),
                    "load": load(),
                }
            )
    return {
        "texts": len(texts),
        "tokens_median": statistics.median(tokens),
        "tokens_mean": round(statistics.fmean(tokens), 1),
        "words_median": statistics.median(len(t.split()) for t in texts),
        "rows": rows,
        "peak_mb": round(peak_mb()),
    }


def phase_ingest(args: dict[str, Any]) -> dict[str, Any]:
    """Cold ingest then an unchanged re-ingest, through TalkQA."""
    from qa import TalkQA

    qa = TalkQA(_settings(args), auto_ingest=False)
    load_start = load()
    start, cpu = time.perf_counter(), time.process_time()
    first = qa.ingest()
    cold_s, cold_cpu = time.perf_counter() - start, time.process_time() - cpu
    load_end = load()
    start = time.perf_counter()
    again = qa.ingest()
    re_s = time.perf_counter() - start
    return {
        "load": [load_start, load_end],
        "cpu_s": round(cold_cpu, 1),
        "talks_per_cpu_s": round(first.talks / cold_cpu, 1) if cold_cpu else None,
        "talks": first.talks,
        "chunks": first.embedded_chunks,
        "cold_s": round(cold_s, 2),
        "talks_per_s": round(first.talks / cold_s, 1) if cold_s else None,
        "reingest_s": round(re_s, 2),
        "reingest_embedded": again.embedded_chunks,
        "reingest_unchanged": again.unchanged,
        "peak_mb": round(peak_mb()),
    }


def phase_query(args: dict[str, Any]) -> dict[str, Any]:
    """Start a TalkQA on a built index (timed), then warm ask/search latencies with and without filters."""
    from qa import TalkQA

    n = int(args.get("n", 30))
    start = time.perf_counter()
    qa = TalkQA(_settings(args), auto_ingest=False)
    talks = qa.talks()
    start_s = time.perf_counter() - start
    start = time.perf_counter()
    qa.search("warm up the lexical index", 5)
    first_s = time.perf_counter() - start
    queries = synthetic_queries(n) if args.get("synthetic", True) else args["queries"]
    sample = talks[len(talks) // 3]
    speaker = sample.speakers[0] if sample.speakers else None
    year = sample.year
    event = sample.event
    out: dict[str, Any] = {
        "talks": len(talks),
        "load_start": load(),
        "start_s": round(start_s, 3),
        "first_search_s": round(first_s, 3),
        "ask": latency(qa.ask, queries),
        "search": latency(lambda q: qa.search(q, 5), queries),
        "ask_year": latency(lambda q: qa.ask(q, year=year), queries),
        "ask_event": latency(lambda q: qa.ask(q, event=event), queries),
        "search_speaker": latency(lambda q: qa.search(q, 5, speaker=speaker), queries),
        "ask_speaker_question": latency(qa.ask, [f"what did {s} present?" for s in _speakers(talks, n)]),
        "naive_dense": latency(_naive_dense(qa), queries),
    }
    out["load_end"] = load()
    out["peak_mb"] = round(peak_mb())
    return out


def _naive_dense(qa: Any) -> Callable[[str], object]:
    """The baseline's query path (LlamaIndex dense top-5, no filter) on this same index."""
    from llama_index.core import VectorStoreIndex
    from llama_index.vector_stores.chroma import ChromaVectorStore

    index = VectorStoreIndex.from_vector_store(
        ChromaVectorStore(chroma_collection=qa.retriever.collection), embed_model=qa.embed
    )
    retriever = index.as_retriever(similarity_top_k=5)
    return lambda q: retriever.retrieve(q)


def phase_reingest(args: dict[str, Any]) -> dict[str, Any]:
    """One ingest of an unchanged corpus over a built index: nothing should be embedded."""
    from qa import TalkQA

    qa = TalkQA(_settings(args), auto_ingest=False)
    qa.embed  # noqa: B018 - build the embedding outside the timing, as a long-running app has it
    load_start = load()
    start = time.perf_counter()
    report = qa.ingest()
    took = time.perf_counter() - start
    start = time.perf_counter()
    again = qa.ingest()
    return {
        "talks": report.talks,
        "reingest_s": round(took, 2),
        "reingest_again_s": round(time.perf_counter() - start, 2),
        "embedded": report.embedded_chunks + again.embedded_chunks,
        "load": [load_start, load()],
        "peak_mb": round(peak_mb()),
    }


def _speakers(talks: list[Any], n: int) -> list[str]:
    rng = random.Random(5)
    names = sorted({s for t in talks for s in t.speakers})
    return [rng.choice(names) for _ in range(n)] if names else []


def phase_baseline(args: dict[str, Any]) -> dict[str, Any]:
    """The naive LlamaIndex pipeline: ingest (timed) and dense top-5 retrieval latency."""
    from bench.baseline import Baseline

    n = int(args.get("n", 30))
    base = Baseline(Path(args["home"]), [Path(p) for p in args["seeds"]])
    start = time.perf_counter()
    built = base.build()
    build_s = time.perf_counter() - start
    start = time.perf_counter()
    base.open()
    start_s = time.perf_counter() - start
    queries = synthetic_queries(n)
    return {
        "talks": built["talks"],
        "chunks": built["chunks"],
        "build_s": round(build_s, 2),
        "talks_per_s": round(built["talks"] / build_s, 1) if built["chunks"] else None,
        "start_s": round(start_s, 3),
        "retrieve": latency(lambda q: base.retrieve(q, 5), queries),
        "peak_mb": round(peak_mb()),
    }


def phase_profile(args: dict[str, Any]) -> dict[str, Any]:
    """cProfile of one warm ask and of one ingest batch; top entries as text."""
    import cProfile
    import io
    import pstats

    from qa import TalkQA
    from qa.embedding import MiniLMEmbedding
    from qa.index import WRITE_BATCH, nodes_for_talk
    from qa.seeds import load_seeds
    from qa.store import make_client, open_collection

    def top(prof: cProfile.Profile, limit: int = 25) -> str:
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).strip_dirs().sort_stats("cumulative").print_stats(limit)
        return buf.getvalue()

    qa = TalkQA(_settings(args), auto_ingest=False)
    question = args.get("question", "which talks cover RDMA with Kubernetes?")
    qa.ask(question)
    qa.ask(question)
    prof = cProfile.Profile()
    prof.enable()
    qa.ask(question)
    prof.disable()
    ask_text = top(prof)

    load = load_seeds([Path(p) for p in args["batch_seeds"]])
    embed = MiniLMEmbedding(threads=1)
    client = make_client(_settings({**args, "home": args["scratch"], "chroma_url": None}))
    collection = open_collection(client, "profile", embed.model_name, create=True)
    from llama_index.vector_stores.chroma import ChromaVectorStore

    store = ChromaVectorStore(chroma_collection=collection)
    embed.embed(["warm"])
    prof = cProfile.Profile()
    prof.enable()
    nodes = [n for t in load.talks for n in nodes_for_talk(t, "x")][:WRITE_BATCH]
    vectors = embed.embed_sorted([n.get_content() for n in nodes])
    for node, vector in zip(nodes, vectors, strict=True):
        node.embedding = vector.tolist()
    store.add(nodes)
    prof.disable()
    return {"ask": ask_text, "ingest_batch": top(prof), "batch_nodes": len(nodes)}


def phase_replicate(args: dict[str, Any]) -> dict[str, Any]:
    """Build a big index without embedding it: real talks, vectors borrowed from a smaller real index.

    Every record of ``seeds`` is written as ingest writes it (same nodes, ids, metadata and content
    hashes), but its vector is that of record ``i mod n`` of ``source_home``'s index plus a little
    noise (renormalised). Latency and memory at size are real; retrieval *quality* on such an index
    means nothing. A later ``talkqa ingest`` finds every hash unchanged and embeds nothing.
    """
    import numpy as np
    from llama_index.vector_stores.chroma import ChromaVectorStore

    from qa.embedding import MODEL_ID
    from qa.index import GENERATION_KEY, content_hash, nodes_for_event, nodes_for_talk
    from qa.records import Talk
    from qa.seeds import load_seeds
    from qa.store import make_client, open_collection

    source = open_collection(
        make_client(_settings({**args, "home": args["source_home"]})), "talks", MODEL_ID, create=False
    )
    got = source.get(include=["embeddings"])
    talk_vecs = [v for i, v in zip(got["ids"], got["embeddings"], strict=True) if not i.startswith("event:")]
    event_vecs = [v for i, v in zip(got["ids"], got["embeddings"], strict=True) if i.startswith("event:")]
    load = load_seeds([Path(p) for p in args["seeds"]])
    collection = open_collection(make_client(_settings(args)), "talks", MODEL_ID, create=True)
    store = ChromaVectorStore(chroma_collection=collection)
    rng = np.random.default_rng(0)
    records = [*load.events, *load.talks]
    start = time.perf_counter()
    written = 0
    for begin in range(0, len(records), 500):
        nodes = []
        for n, record in enumerate(records[begin : begin + 500], begin):
            digest = content_hash(record, MODEL_ID)
            if isinstance(record, Talk):
                made, pool = nodes_for_talk(record, digest), talk_vecs
            else:
                made, pool = nodes_for_event(record, digest), event_vecs
            for node in made:
                vec = np.asarray(pool[n % len(pool)], dtype=np.float32) + rng.normal(0, 0.02, 384).astype(np.float32)
                node.embedding = (vec / np.linalg.norm(vec)).tolist()
            nodes.extend(made)
        store.add(nodes)
        written += len(nodes)
    kept = {k: v for k, v in (collection.metadata or {}).items() if not k.startswith("hnsw:")}
    collection.modify(metadata={**kept, GENERATION_KEY: "replicated"})
    return {
        "talks": len(load.talks),
        "chunks": written,
        "write_s": round(time.perf_counter() - start, 1),
        "source_vectors": len(talk_vecs),
        "peak_mb": round(peak_mb()),
    }


PHASES = {
    "ingest": phase_ingest,
    "query": phase_query,
    "baseline": phase_baseline,
    "profile": phase_profile,
    "replicate": phase_replicate,
    "embed": phase_embed,
    "reingest": phase_reingest,
}


def main() -> None:
    import logging

    logging.basicConfig(level=logging.WARNING)
    phase, raw = sys.argv[1], sys.argv[2]
    result = PHASES[phase](json.loads(raw))
    sys.stdout.write("\n" + json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
