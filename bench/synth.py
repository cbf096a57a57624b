"""A synthetic conference corpus in the seed listing format, deterministic by seed.

``python -m bench.synth OUT_DIR --talks 10000 [--seed 7]`` writes ``OUT_DIR/NNNNN_synth.txt`` files
of about 20 talks each: an event header (name, date, format, audience, topics) and a
``| title | author | length |`` table whose rows are followed by their abstract lines, exactly as
``qa.seeds.parse_listing`` reads the real seeds. Titles, speakers and abstracts are assembled from
a vocabulary, so BM25 and the dense index see realistic, varied text.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Iterator
from pathlib import Path

__all__ = ["TALKS_PER_EVENT", "generate", "listing_text", "write_corpus"]

TALKS_PER_EVENT = 20

AREAS = [
    "Networking",
    "Systems",
    "Data",
    "Storage",
    "Video",
    "Mobile",
    "AI Infra",
    "Privacy",
    "Security",
    "Reliability",
    "Observability",
    "Compilers",
    "RTC",
    "Product",
    "Developer Tools",
    "Databases",
]
SEASONS = ["Spring", "Summer", "Fall", "Winter", "Live", "Online", "Summit", "Workshop"]
FIRST = [
    "Aisha",
    "Ben",
    "Carlos",
    "Dana",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Ines",
    "Jamal",
    "Kavya",
    "Liam",
    "Mei",
    "Nikolai",
    "Olu",
    "Priya",
    "Quentin",
    "Rosa",
    "Sven",
    "Tariq",
    "Uma",
    "Viktor",
    "Wen",
    "Ximena",
    "Yusuf",
    "Zoe",
    "Arjun",
    "Bianca",
    "Chen",
    "Dmitri",
    "Esther",
    "Felix",
    "Gita",
    "Hamza",
    "Ingrid",
    "Jonas",
    "Keiko",
    "Lars",
    "Maya",
    "Nadia",
    "Omar",
    "Pavel",
    "Rhea",
    "Sami",
    "Tomas",
    "Valeria",
]
LAST = [
    "Agarwal",
    "Brennan",
    "Castillo",
    "Dubois",
    "Eriksen",
    "Fujita",
    "Gonzalez",
    "Hassan",
    "Iyer",
    "Jensen",
    "Kowalski",
    "Lindqvist",
    "Moreau",
    "Nakamura",
    "Okafor",
    "Petrov",
    "Quinn",
    "Rossi",
    "Schmidt",
    "Takahashi",
    "Umarov",
    "Varga",
    "Weber",
    "Xu",
    "Yamamoto",
    "Zhang",
    "Abbasi",
    "Bauer",
    "Chowdhury",
    "Delgado",
    "Eze",
    "Fischer",
    "Gupta",
    "Horvath",
    "Ibrahim",
    "Kim",
    "Lopez",
    "Mensah",
    "Novak",
    "Olsen",
    "Park",
    "Reyes",
    "Singh",
    "Tanaka",
    "Vasquez",
    "Wang",
]
TECH = [
    "RDMA",
    "RoCE",
    "InfiniBand",
    "NVMe",
    "GPU clusters",
    "KV caches",
    "Kubernetes",
    "eBPF",
    "gRPC",
    "Raft consensus",
    "vector search",
    "MoE training",
    "checkpointing",
    "QUIC",
    "HTTP/3",
    "WebRTC",
    "flash storage",
    "erasure coding",
    "service mesh",
    "feature stores",
    "stream processing",
    "Kafka",
    "columnar storage",
    "query planning",
    "JIT compilation",
    "garbage collection",
    "TLS termination",
    "rate limiting",
    "load balancing",
    "cache invalidation",
    "sharding",
    "schema migrations",
    "model serving",
    "speculative decoding",
    "quantization",
    "tensor parallelism",
    "pipeline parallelism",
    "congestion control",
    "PFC and ECN tuning",
    "optical interconnects",
    "liquid cooling",
    "power capping",
    "silent data corruption",
    "fault injection",
    "chaos testing",
    "tracing",
    "anomaly detection",
    "autoscaling",
    "capacity planning",
    "container scheduling",
    "SmartNICs",
    "video transcoding",
    "adaptive bitrate",
    "differential privacy",
    "secure enclaves",
    "key rotation",
    "static analysis",
    "fuzzing",
    "build caching",
    "monorepo tooling",
    "code review bots",
]
ADJ = [
    "scalable",
    "low-latency",
    "fault-tolerant",
    "energy-efficient",
    "multi-tenant",
    "global",
    "incremental",
    "zero-downtime",
    "cost-aware",
    "self-healing",
    "high-throughput",
    "privacy-preserving",
]
VERB_TITLE = [
    "Scaling",
    "Rethinking",
    "Operating",
    "Debugging",
    "Building",
    "Taming",
    "Accelerating",
    "Hardening",
    "Migrating",
    "Observing",
    "Automating",
    "Simplifying",
]
SUFFIX = [
    "at Hyperscale",
    "in Production",
    "Across Regions",
    "for Large Language Models",
    "Without Downtime",
    "on a Budget",
    "at 100K GPUs",
    "for Real-Time Video",
    "in the Data Center",
    "for Mobile Apps",
    "Lessons Learned",
    "A Retrospective",
    "From Zero to Exabytes",
]
COMPANIES = [
    "Meta",
    "Google",
    "Microsoft",
    "Oracle",
    "Netflix",
    "Uber",
    "Stripe",
    "Shopify",
    "ByteDance",
    "Pinterest",
    "LinkedIn",
    "Databricks",
    "Snowflake",
    "Cloudflare",
    "AMD",
    "NVIDIA",
]
SENTENCES = [
    "{co} describes how it runs {tech} for {adj} services serving billions of requests a day.",
    "The team replaced a legacy stack with {tech}, cutting p99 latency by {pct}% and cost by {pct2}%.",
    "We walk through the design of a {adj} system built on {tech} and {tech2}.",
    "Key lessons cover rollout safety, {tech2} regressions and how {co} caught them before users did.",
    "The speakers share benchmarks on {n} machines and explain why {tech} alone was not enough.",
    "A new scheduler co-designs {tech} with {tech2} and reaches {pct}% utilisation across the fleet.",
    "Failures in {tech} were traced with {tech2}, reducing incident time to mitigation by {pct}%.",
    "The talk closes with open problems in {tech} and where {adj} designs still fall short.",
    "{co} migrated {n} services to {tech} without downtime using shadow traffic and staged rollouts.",
    "Measurements show {tech2} adds {pct}% overhead unless it is tuned together with {tech}.",
]
AUDIENCE = [
    "network engineers",
    "site reliability engineers",
    "platform engineers",
    "storage engineers",
    "machine learning infrastructure engineers",
    "data engineers",
    "performance engineers",
    "security engineers",
    "engineering managers",
    "mobile developers",
]


def _speaker(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _title(rng: random.Random) -> str:
    shape = rng.randrange(4)
    tech = rng.choice(TECH)
    if shape == 0:
        return f"{rng.choice(VERB_TITLE)} {tech} {rng.choice(SUFFIX)}"
    if shape == 1:
        return f"{rng.choice(ADJ).capitalize()} {tech} at {rng.choice(COMPANIES)}"
    if shape == 2:
        return f"{tech[0].upper()}{tech[1:]}: {rng.choice(SUFFIX)}"
    return f"{rng.choice(VERB_TITLE)} {tech} with {rng.choice(TECH)}"


def _abstract(rng: random.Random) -> str:
    parts = []
    for template in rng.sample(SENTENCES, rng.randint(2, 5)):
        parts.append(
            template.format(
                co=rng.choice(COMPANIES),
                tech=rng.choice(TECH),
                tech2=rng.choice(TECH),
                adj=rng.choice(ADJ),
                pct=rng.randint(5, 90),
                pct2=rng.randint(5, 60),
                n=rng.choice(["1,000", "10,000", "50,000", "200,000"]),
            )
        )
    text = " ".join(parts)
    return text[0].upper() + text[1:]


def listing_text(rng: random.Random, number: int, talks: int) -> str:
    """One event's listing with ``talks`` rows; ``number`` keeps event names unique."""
    year = 2018 + number % 8
    area = AREAS[number % len(AREAS)]
    name = f"{area} @Scale {rng.choice(SEASONS)} {year} Edition {number}"
    lines = [
        name,
        f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        f"-- {rng.choice(['online', 'in person', 'hybrid'])} --",
        "who it's for",
        ", ".join(rng.sample(AUDIENCE, 4)),
        "topics",
        "; ".join(rng.sample(TECH, 8)),
        "| title | author | length |",
        "|---|---|---|",
    ]
    for _ in range(talks):
        speakers = ", ".join(_speaker(rng) for _ in range(rng.choice((1, 1, 1, 2, 2, 3))))
        lines.append(f"| {_title(rng)} | {speakers} | {rng.randint(5, 45)}m |")
        lines.append(f"{_abstract(rng)} | ||")
    return "\n".join(lines) + "\n"


def generate(talks: int, seed: int = 7) -> Iterator[tuple[str, str]]:
    """``(file name, listing text)`` pairs holding ``talks`` talks in all, ~20 per file."""
    rng = random.Random(seed)
    for number, start in enumerate(range(0, talks, TALKS_PER_EVENT)):
        count = min(TALKS_PER_EVENT, talks - start)
        yield f"{number:05d}_synth.txt", listing_text(rng, number, count)


def write_corpus(out: Path, talks: int, seed: int = 7) -> list[Path]:
    """Write the corpus under ``out`` (created; existing synth files of other sizes are removed)."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*_synth.txt"):
        old.unlink()
    paths = []
    for name, text in generate(talks, seed):
        path = out / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--talks", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    paths = write_corpus(args.out, args.talks, args.seed)
    print(f"wrote {args.talks} talks in {len(paths)} files under {args.out}")


if __name__ == "__main__":
    main()
