"""Benchmarks: ``python -m bench.run [--sizes 1000,10000,100000] [--quick] [--work DIR]``.

Every measurement runs in a fresh child process (``bench.measure``) pinned to one thread, so each
size and phase has its own peak RSS. A phase whose result is already in ``WORK/<size>/<phase>.json``
is reused (``--fresh`` re-runs everything), so a long 100k ingest can be run once, in the
background, and reported later. Writes ``bench/results.json``, ``bench/RESULTS.md`` and
``bench/PROFILE.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.chroma_server import ChromaServer
from bench.synth import write_corpus

__all__ = ["main"]

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
SEEDS = REPO / "seeds"
QUESTIONS = REPO / "eval" / "questions.jsonl"
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "ANONYMIZED_TELEMETRY": "False", "HF_HUB_OFFLINE": "1"}


def child(phase: str, args: dict[str, Any], cache: Path | None = None, fresh: bool = False) -> dict[str, Any]:
    """Run one phase in a fresh process; reuse ``cache`` when it holds a result."""
    if cache and cache.exists() and not fresh:
        try:
            return dict(json.loads(cache.read_text()))
        except ValueError:
            pass
    print(f"  {phase} {args.get('label', '')} ...", flush=True)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "bench.measure", phase, json.dumps(args)],
        cwd=REPO,
        env=ENV,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{phase} failed:\n{proc.stderr[-3000:]}")
    result = dict(json.loads(proc.stdout.strip().splitlines()[-1]))
    result["wall_s"] = round(time.perf_counter() - start, 1)
    if cache:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(result))
    return result


def run_size(
    size: int,
    work: Path,
    n: int,
    fresh: bool,
    server: bool,
    replicate_from: int | None = None,
    embed_batch: int = 0,
    baseline: bool = True,
) -> dict[str, Any]:
    root = work / str(size)
    corpus, home = root / "corpus", root / "home"
    if fresh or not corpus.exists():
        write_corpus(corpus, size)
    base = {"home": str(home), "seeds": [str(corpus)], "n": n, "label": f"{size} talks"}
    out: dict[str, Any] = {"size": size}
    if replicate_from:
        # real talks, vectors borrowed from the smaller index: latency and memory at size, not quality
        source = {"source_home": str(work / str(replicate_from) / "home")}
        out["replicate"] = child("replicate", {**base, **source}, root / "replicate.json", fresh)
    else:
        out["ingest"] = child("ingest", {**base, "embed_batch": embed_batch}, root / "ingest.json", fresh)
    out["reingest"] = child("reingest", base, root / "reingest.json", fresh)
    out["query_embedded"] = child("query", base, root / "query_embedded.json", fresh)
    if server and not replicate_from:
        # the server serves a copy of the embedded store: the same data, no second embedding run
        served = root / "server-store"
        if fresh or not served.exists():
            shutil.rmtree(served, ignore_errors=True)
            shutil.copytree(home / "chroma", served)
        with ChromaServer(served, log=root / "chroma.log") as chroma:
            args = {**base, "home": str(root / "server-home"), "chroma_url": chroma.url, "label": "server"}
            out["query_server"] = child("query", args, root / "query_server.json", fresh)
    if baseline:
        out["baseline"] = child(
            "baseline", {**base, "home": str(root / "baseline"), "label": "baseline"}, root / "baseline.json", fresh
        )
    return out


def seeds_phase(work: Path, fresh: bool) -> dict[str, Any]:
    """Cold ingest + re-ingest of the real seeds, server ingest, cold CLI ask, retrieval quality."""
    root = work / "seeds"
    if fresh:
        shutil.rmtree(root, ignore_errors=True)
    home = root / "home"
    out: dict[str, Any] = {}
    out["ingest"] = child("ingest", {"home": str(home), "seeds": [str(SEEDS)], "label": "seeds"}, root / "ingest.json")
    with ChromaServer(root / "server-store", log=root / "chroma.log") as chroma:
        out["ingest_server"] = child(
            "ingest",
            {
                "home": str(root / "server-home"),
                "seeds": [str(SEEDS)],
                "chroma_url": chroma.url,
                "label": "seeds via server",
            },
            root / "ingest_server.json",
        )
    times = []
    talkqa = Path(sys.executable).parent / "talkqa"
    env = {**ENV, "TALKQA_HOME": str(home), "TALKQA_ANSWERER": "offline"}
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([str(talkqa), "ask", "which talks cover PFC tuning?"], env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    out["cli_ask_cold_s"] = {"runs": [round(t, 2) for t in times], "median": round(statistics.median(times), 2)}
    out["quality"] = quality(home, root / "baseline")
    return out


def quality(home: Path, baseline_home: Path) -> dict[str, Any]:
    """hit@5 and MRR over answerable questions with gold talks: TalkQA.search vs the baseline."""
    from bench.baseline import Baseline
    from qa import Settings, TalkQA

    if not QUESTIONS.exists():
        return {"skipped": f"{QUESTIONS} not found"}
    rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("answerable") and r.get("gold")]
    qa = TalkQA(Settings(home=home, seeds=[SEEDS], answerer="offline", threads=1), auto_ingest=False)
    base = Baseline(baseline_home, [SEEDS])
    if not (baseline_home / "baseline-chroma").exists():
        base.build()
    systems = {
        "talkqa": lambda q: [h.talk.id for h in qa.search(q, 5)],
        "baseline": lambda q: list(dict.fromkeys(base.retrieve(q, 5))),
    }
    out: dict[str, Any] = {"questions": len(rows)}
    for name, fn in systems.items():
        hits, rr = 0, 0.0
        for row in rows:
            ranked = fn(row["question"])[:5]
            gold = set(row["gold"])
            first = next((i for i, t in enumerate(ranked) if t in gold), None)
            hits += first is not None
            rr += 1.0 / (first + 1) if first is not None else 0.0
        out[name] = {"hit@5": round(hits / len(rows), 3), "mrr": round(rr / len(rows), 3)}
    return out


def profile(work: Path, size: int) -> dict[str, Any]:
    root = work / str(size)
    return child(
        "profile",
        {
            "home": str(root / "home"),
            "seeds": [str(root / "corpus")],
            "batch_seeds": [str(root / "corpus")],
            "scratch": str(work / "profile-scratch"),
            "label": f"{size} talks",
        },
        root / "profile.json",
    )


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.1f}×" if a and b else "–"


def _load(value: Any) -> str:
    if isinstance(value, list):
        return "–".join(str(v) for v in value)
    return str(value) if value is not None else "–"


CALLS = ("ask", "search", "ask_year", "ask_event", "search_speaker", "ask_speaker_question")


def render(results: dict[str, Any]) -> str:
    lines = [
        "# TalkQA benchmarks",
        "",
        f"Machine: {results['machine']}, shared with other engineers' test runs: every figure carries the "
        "1-minute load average when it was taken (above ~2, our single thread shared its core, so wall "
        "times are pessimistic; CPU-time rates are given where they matter). One thread everywhere "
        "(OMP_NUM_THREADS=1, Settings(threads=1)). Latencies are warm (3 warm-up calls), offline answerer, "
        "synthetic questions (`bench.measure.synthetic_queries`), p50 and p95 over n calls.",
        "",
    ]
    emb = results.get("embed")
    if emb:
        lines += [
            "## Embedding throughput (MiniLM int8 ONNX, one thread)",
            "",
            f"{emb['texts']} synthetic chunk texts (median {emb['words_median']} words, "
            f"{emb['tokens_median']} tokens), best of 2 runs.",
            "",
            "| batch | order | texts/s (wall) | texts/s (CPU time) | load |",
            "|---|---|---|---|---|",
        ]
        for row in emb["rows"]:
            lines.append(
                f"| {row['batch']} | {row['order']} | {row['texts_per_s']} | {row['texts_per_cpu_s']} | {row['load']} |"
            )
        lines.append("")
    lines += [
        "## Ingest",
        "",
        "| corpus | talks | cold ingest s | talks/s (wall) | talks/s (CPU time) | unchanged re-ingest s "
        "(first / again) | re-embedded | peak MB | load |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    seeds = results.get("seeds", {})
    old = " (earlier run, old code, load 6-7)"
    for label, ing in (("seeds", seeds.get("ingest")), ("seeds via server", seeds.get("ingest_server"))):
        if ing:
            label += "" if ing.get("load") else old
            lines.append(
                f"| {label} | {ing['talks']} | {ing['cold_s']} | {ing['talks_per_s']} | "
                f"{ing.get('talks_per_cpu_s', '–')} | {ing['reingest_s']} | {ing['reingest_embedded']} | "
                f"{ing['peak_mb']} | {_load(ing.get('load'))} |"
            )
    for size in results["sizes"]:
        ing, re = size.get("ingest"), size.get("reingest", {})
        again = f"{re.get('reingest_s')} / {re.get('reingest_again_s')}" if re else "–"
        if ing:
            tag = "" if ing.get("load") else old
            lines.append(
                f"| synthetic {size['size']}{tag} | {ing.get('talks')} | {ing.get('cold_s')} | "
                f"{ing.get('talks_per_s')} | {ing.get('talks_per_cpu_s', '–')} | {again} | "
                f"{re.get('embedded', ing.get('reingest_embedded'))} | {ing.get('peak_mb')} | "
                f"{_load(ing.get('load'))} |"
            )
        rep = size.get("replicate")
        if rep:
            lines.append(
                f"| synthetic {size['size']} (vectors borrowed, not embedded) | {rep['talks']} | – | – | – | "
                f"{again} | {re.get('embedded')} | {re.get('peak_mb')} (re-ingest) | {_load(re.get('load'))} |"
            )
    bl = next((s["baseline"] for s in results["sizes"] if s.get("baseline")), None)
    if bl:
        lines += [
            "",
            f"Naive LlamaIndex baseline ({bl['talks']} talks): {bl['talks_per_s']} talks/s, peak {bl['peak_mb']} MB, "
            f"dense top-5 p50 {bl['retrieve']['p50_ms']} ms / p95 {bl['retrieve']['p95_ms']} ms "
            f"(SentenceSplitter chunks, same MiniLM, Chroma, no BM25, no filters, no incremental ingest).",
        ]
    lines += [
        "",
        "## Query latency (ms, warm)",
        "",
        "`naive dense` is the baseline's query path (LlamaIndex `VectorStoreIndex` retriever, dense top-5, "
        "no filter) run on the same index in the same process; the ratio column is p50 / that p50.",
        "",
        "| talks | mode | start s | call | p50 | p95 | ratio p50 vs naive dense | peak MB | load |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for size in results["sizes"]:
        for mode in ("embedded", "server"):
            q = size.get(f"query_{mode}")
            if not q:
                continue
            naive = q.get("naive_dense", {})
            label = f"{size['size']}" + (" (borrowed vectors)" if size.get("replicate") else "")
            for call in (*CALLS, "naive_dense"):
                m = q.get(call)
                if not m:
                    continue
                lines.append(
                    f"| {label} | {mode} | {q['start_s']} | {call.replace('_', ' ')} | {m['p50_ms']} | "
                    f"{m['p95_ms']} | {_ratio(m['p50_ms'], naive.get('p50_ms'))} | {q['peak_mb']} | "
                    f"{_load([q.get('load_start'), q.get('load_end')])} |"
                )
    if seeds.get("cli_ask_cold_s"):
        lines += [
            "",
            f"Cold `talkqa ask` (subprocess, index built, real seeds): median "
            f"{seeds['cli_ask_cold_s']['median']} s (runs {seeds['cli_ask_cold_s']['runs']}).",
        ]
    qual = seeds.get("quality")
    if qual and "talkqa" in qual:
        lines += [
            "",
            f"## Retrieval quality on the real seeds ({qual['questions']} answerable questions with gold)",
            "",
            "| system | hit@5 | MRR |",
            "|---|---|---|",
        ]
        for name in ("talkqa", "baseline"):
            lines.append(f"| {name} | {qual[name]['hit@5']} | {qual[name]['mrr']} |")
    if results.get("notes"):
        lines += ["", "## Notes", ""] + [f"- {n}" for n in results["notes"]]
    return "\n".join(lines) + "\n"


PROFILE_MARK = "<!-- below: written by bench/run.py -->"


def main() -> None:
    parser = argparse.ArgumentParser(description="TalkQA benchmarks")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--quick", action="store_true", help="fewer queries, no server mode above 10k")
    parser.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "talkqa-bench")
    parser.add_argument("--fresh", action="store_true", help="ignore cached phase results")
    parser.add_argument("--no-seeds", action="store_true", help="skip the real-seed phases")
    parser.add_argument(
        "--replicate",
        default="",
        help="sizes to build by borrowing the vectors of the largest smaller size (no embedding; latency only)",
    )
    parser.add_argument("--notes", type=Path, help="a file of notes (one a line) for RESULTS.md")
    parser.add_argument("--embed-batch", type=int, default=0, help="Settings.embed_batch for ingests (0: default)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    n = 15 if args.quick else 40
    replicated = {int(s) for s in args.replicate.split(",") if s}
    results: dict[str, Any] = {"machine": f"{os.cpu_count()} cores, {sys.platform}", "sizes": [], "notes": []}
    if args.notes and args.notes.exists():
        results["notes"] += [line.strip() for line in args.notes.read_text().splitlines() if line.strip()]
    results["embed"] = child("embed", {"label": "batch sizes"}, args.work / "embed.json", args.fresh)
    if not args.no_seeds:
        print("real seeds", flush=True)
        results["seeds"] = seeds_phase(args.work, args.fresh)
    for size in sizes:
        print(f"{size} talks", flush=True)
        try:
            source = max((s for s in sizes if s < size), default=None) if size in replicated else None
            results["sizes"].append(
                run_size(
                    size,
                    args.work,
                    n,
                    args.fresh,
                    server=not args.quick or size <= 10_000,
                    replicate_from=source,
                    embed_batch=args.embed_batch,
                    baseline=size == sizes[0],  # the naive pipeline embeds from scratch: smallest size only
                )
            )
        except RuntimeError as exc:
            results["notes"].append(f"{size}: {exc}")
    if sizes:
        results["profile"] = profile(args.work, sizes[0])
        previous = (BENCH / "PROFILE.md").read_text() if (BENCH / "PROFILE.md").exists() else ""
        kept = previous.split(PROFILE_MARK)[0] if PROFILE_MARK in previous else "# Profiles\n\n"
        (BENCH / "PROFILE.md").write_text(
            kept + PROFILE_MARK + "\n\n## One warm ask\n\n```\n" + results["profile"]["ask"] + "```\n\n"
            f"## One ingest batch ({results['profile']['batch_nodes']} chunks)\n\n```\n"
            + results["profile"]["ingest_batch"]
            + "```\n"
        )
    (BENCH / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (BENCH / "RESULTS.md").write_text(render(results))
    print(f"wrote {BENCH / 'RESULTS.md'}")


if __name__ == "__main__":
    main()
