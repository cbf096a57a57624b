"""A long fuzz campaign over the seed parser: ``python -m bench.fuzz_seeds [--cases 20000] [--seed 1]``.

Each case is one of: random unicode text, random bytes, table-shaped junk, or a real seed file
mutated 1-8 times (lines deleted, duplicated, swapped, repeated; pipes removed; truncation at any
byte; random bytes and BOM / zero-width / CR / pipe fragments inserted). Every case goes through
``read_listing`` on a real file and must satisfy the invariants of ``tests/test_hardening_seeds.py``:
only ``SeedFormatError`` (naming the file and a line inside it), no junk talk, linear time.
Prints cases tried, crashes (any other exception or a broken invariant), the slowest case,
and writes each failing input under ``--out`` for a regression test.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

from tests.test_hardening_seeds import SEED_BYTES, mutate, parse_bytes

KINDS = ("text", "bytes", "table", "mutant")
ALPHABETS = [
    "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?…-–—'\"",
    "|-: \t\n\r",
    "\u200b\u200d\ufeff\u00a0\u2028\u202e\x00\x07\x1b\x0b\x0c",
    "éüßøñçå漢字한국어😀🙂",
]
LINES = [
    "| title | author | length |",
    "|---|---|---|",
    "| nothing matches | ||",
    "- WATCH NOW",
    "- JANUARY",
    "who it's for",
    "topics",
    "-- online --",
    "2024-05-01",
    "",
]


def random_text(rng: random.Random, size: int) -> str:
    alphabet = "".join(rng.sample(ALPHABETS, rng.randint(1, len(ALPHABETS))))
    return "".join(rng.choice(alphabet) for _ in range(size))


def table_junk(rng: random.Random) -> str:
    lines = ["Junk Event 2024", "| title | author | length |"]
    for _ in range(rng.randint(0, 30)):
        shape = rng.randrange(4)
        if shape == 0:
            lines.append(rng.choice(LINES))
        elif shape == 1:
            cells = [random_text(rng, rng.randint(0, 20)) for _ in range(rng.choice((2, 3, 3, 3, 4)))]
            lines.append("| " + " | ".join(cells) + " |")
        elif shape == 2:
            lines.append(random_text(rng, rng.randint(0, 60)) + " | ||")
        else:
            lines.append(random_text(rng, rng.randint(0, 60)))
    return "\n".join(lines)


def make_case(rng: random.Random, kind: str) -> bytes:
    if kind == "text":
        return random_text(rng, rng.randint(0, 2000)).encode("utf-8", "surrogatepass")
    if kind == "bytes":
        return rng.randbytes(rng.randint(0, 2000))
    if kind == "table":
        return table_junk(rng).encode("utf-8", "surrogatepass")
    return mutate(rng.choice(SEED_BYTES), rng, rng.randint(1, 8))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("bench/fuzz-failures"))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    tried: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    crashes: list[tuple[str, str]] = []
    slowest = (0.0, "", 0)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="talkqa-fuzz-") as tmp:
        folder = Path(tmp)
        for number in range(args.cases):
            kind = KINDS[number % len(KINDS)]
            data = make_case(rng, kind)
            tried[kind] += 1
            t0 = time.perf_counter()
            try:
                result = parse_bytes(data, f"case-{number}.txt", folder)
                outcomes["talks" if hasattr(result, "talks") else "SeedFormatError"] += 1
            except Exception:  # a crash, or a broken invariant (AssertionError): record the input
                crashes.append((f"case-{number}.txt", traceback.format_exc(limit=3)))
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / f"case-{number}.txt").write_bytes(data)
            elapsed = time.perf_counter() - t0
            if elapsed > slowest[0]:
                slowest = (elapsed, kind, len(data))
    total = time.perf_counter() - start
    print(f"cases tried: {sum(tried.values())} ({', '.join(f'{k} {n}' for k, n in tried.items())}) in {total:.0f}s")
    print(f"outcomes: {dict(outcomes)}")
    print(f"slowest case: {slowest[0] * 1000:.0f} ms ({slowest[1]}, {slowest[2]} bytes)")
    print(f"crashes found: {len(crashes)}")
    for name, trace in crashes[:10]:
        print(f"--- {name}\n{trace}")


if __name__ == "__main__":
    main()
