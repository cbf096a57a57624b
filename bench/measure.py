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


def _settings(args: dict[str, Any]) -> Any:
    from qa import Settings

    return Settings(
        home=Path(args["home"]),
        seeds=[Path(p) for p in args["seeds"]],
        chroma_url=args.get("chroma_url"),
        answerer="offline",
        threads=1,
    )


def phase_ingest(args: dict[str, Any]) -> dict[str, Any]:
    """Cold ingest then an unchanged re-ingest, through TalkQA."""
    from qa import TalkQA

    qa = TalkQA(_settings(args), auto_ingest=False)
    start = time.perf_counter()
    first = qa.ingest()
    cold_s = time.perf_counter() - start
    start = time.perf_counter()
    again = qa.ingest()
    re_s = time.perf_counter() - start
    return {
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
        "start_s": round(start_s, 3),
        "first_search_s": round(first_s, 3),
        "ask": latency(qa.ask, queries),
        "search": latency(lambda q: qa.search(q, 5), queries),
        "ask_year": latency(lambda q: qa.ask(q, year=year), queries),
        "ask_event": latency(lambda q: qa.ask(q, event=event), queries),
        "search_speaker": latency(lambda q: qa.search(q, 5, speaker=speaker), queries),
        "ask_speaker_question": latency(qa.ask, [f"what did {s} present?" for s in _speakers(talks, n)]),
    }
    out["peak_mb"] = round(peak_mb())
    return out


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


PHASES = {
    "ingest": phase_ingest,
    "query": phase_query,
    "baseline": phase_baseline,
    "profile": phase_profile,
}


def main() -> None:
    import logging

    logging.basicConfig(level=logging.WARNING)
    phase, raw = sys.argv[1], sys.argv[2]
    result = PHASES[phase](json.loads(raw))
    sys.stdout.write("\n" + json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
