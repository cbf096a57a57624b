"""SIGKILL ``talkqa ingest`` at random points; the index must stay servable and a re-run must complete it.

A synthetic corpus (``bench/synth.py``, 300 talks) is indexed (v1) and read once (so the catalog
and BM25 caches exist), then a second version (v2: a third of the files unchanged, a third with
edited abstracts, a third replaced by other talks) is ingested and killed at seeded random times,
several times in a row. After each kill a fresh process checks the store and asks questions:

* every stored chunk belongs to a talk whose chunk 0 (its metadata, written last) is stored;
* every talk with chunk 0 has all its chunks, all of one version (old or new), nothing else;
* answers cite only talks that are in the store.

Then ``talkqa ask`` runs (exit 0, no traceback), and a final ``talkqa ingest`` leaves exactly v2.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bench.synth import generate, write_corpus
from qa.chunking import chunk_talk
from qa.embedding import MODEL_ID
from qa.index import content_hash
from qa.seeds import load_seeds

TALKS = 300
KILLS = 3
REPO = Path(__file__).resolve().parent.parent
# ``talkqa ingest`` itself, with a small write batch so that kills also land between batches
INGEST = "import sys, qa.index as i; i.WRITE_BATCH = int(sys.argv.pop(1)); from qa.cli import main; sys.exit(main())"
CHECK = """
import json, sys
from pathlib import Path
from qa import Settings, TalkQA
from qa.embedding import MODEL_ID
from qa.store import make_client, open_collection
settings = Settings(home=Path(sys.argv[1]))
collection = open_collection(make_client(settings), settings.collection, MODEL_ID, create=False)
got = collection.get(include=["metadatas"])
chunks = {}
for meta in got["metadatas"]:
    chunks.setdefault(meta["talk_id"], []).append([meta["chunk"], meta.get("hash", "")])
qa = TalkQA(settings, auto_ingest=False)
cited = []
for q in sys.argv[2:]:
    cited += [c.talk.id for c in qa.ask(q).citations]
    cited += [h.talk.id for h in qa.search(q, k=10)]
print(json.dumps({"chunks": chunks, "cited": cited}))
"""
QUESTIONS = ["which talks cover RDMA at hyperscale?", "Kafka stream processing", "what did Aisha Agarwal present?"]


def v2_corpus(v1: Path, out: Path) -> None:
    """v1 with a third of the files kept, a third edited (same titles), a third replaced."""
    out.mkdir()
    other = dict(generate(TALKS, seed=8))
    for i, path in enumerate(sorted(v1.glob("*.txt"))):
        text = path.read_text(encoding="utf-8")
        if i % 3 == 1:
            text = text.replace(" | ||", " Revised for the second edition. | ||")
        elif i % 3 == 2:
            text = other[path.name]
        (out / path.name).write_text(text, encoding="utf-8")


def expected_chunks(folder: Path, model: str) -> dict[str, tuple[str, int]]:
    """talk (or ``event:``) id → (content hash, number of chunks) for the listings in ``folder``."""
    load = load_seeds([folder])
    out = {t.id: (content_hash(t, model), len(chunk_talk(t))) for t in load.talks}
    return out | {f"event:{e.id}": (content_hash(e, model), 1) for e in load.events}


def run(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, env=env, cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False)


def check_store(home: Path, env: dict[str, str], versions: list[dict[str, tuple[str, int]]]) -> dict[str, Any]:
    """Run the checker in a fresh process and assert the store's invariants; returns what it saw."""
    done = run(sys.executable, "-c", CHECK, str(home), *QUESTIONS, env=env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    state: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    complete = {talk for talk, chunks in state["chunks"].items() if 0 in {c for c, _ in chunks}}
    orphans = set(state["chunks"]) - complete
    assert not orphans, f"{len(orphans)} talks have chunks but no chunk 0, e.g. {sorted(orphans)[:3]}"
    assert set(state["cited"]) <= complete, "an answer cited a talk that is not (completely) in the store"
    for talk, chunks in state["chunks"].items():
        hashes = {h for _, h in chunks}
        assert len(hashes) == 1, f"{talk} mixes chunks of two versions"
        matching = [v[talk] for v in versions if talk in v and v[talk][0] in hashes]
        assert matching, f"{talk} is neither the old nor the new version"
        assert sorted(c for c, _ in chunks) == list(range(matching[0][1])), f"{talk} has chunks {chunks}"
    return state


@pytest.mark.timeout(600)
def test_sigkill_during_ingest_never_leaves_a_half_written_index(tmp_path: Path) -> None:
    v1, v2, seeds, home = tmp_path / "v1", tmp_path / "v2", tmp_path / "seeds", tmp_path / "home"
    write_corpus(v1, TALKS, seed=7)
    v2_corpus(v1, v2)
    shutil.copytree(v1, seeds)
    env = {**os.environ, "TALKQA_SEEDS": json.dumps([str(seeds)]), "TALKQA_HOME": str(home), "OMP_NUM_THREADS": "1"}
    talkqa = [sys.executable, "-m", "qa"]

    start = time.perf_counter()
    first = run(*talkqa, "ingest", "--json", env=env)
    full_run = time.perf_counter() - start
    assert first.returncode == 0, first.stderr[-3000:]
    assert json.loads(first.stdout)["added"] == TALKS
    old = expected_chunks(v1, MODEL_ID)
    new = expected_chunks(v2, MODEL_ID)
    check_store(home, env, [old])  # its ask also writes the catalog and BM25 caches, as a user's first ask would

    rng = random.Random(20240501)
    for kill in range(KILLS):
        # alternate v2, v1, v2 so that every killed ingest has a third of the corpus to replace
        shutil.rmtree(seeds)
        shutil.copytree(v2 if kill % 2 == 0 else v1, seeds)
        batch = rng.choice(["7", "64", "512"])
        proc = subprocess.Popen(
            [sys.executable, "-c", INGEST, batch, "ingest", "--data-dir", str(home)],
            env=env,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.35, 0.7) * full_run)  # killed runs embed 2/3 of what the first did
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        state = check_store(home, env, [old, new])
        print(f"kill {kill}: batch {batch}, exit {proc.returncode}, {len(state['chunks'])} talks stored")

    shutil.rmtree(seeds)
    shutil.copytree(v2, seeds)
    asked = run(*talkqa, "ask", "which talks cover Kafka stream processing?", "--data-dir", str(home), env=env)
    assert asked.returncode == 0 and "Traceback" not in asked.stderr, asked.stderr[-3000:]
    assert asked.stdout.strip()
    final = run(*talkqa, "ingest", "--json", "--data-dir", str(home), env=env)
    assert final.returncode == 0, final.stderr[-3000:]
    report = json.loads(final.stdout)
    assert report["talks"] == TALKS, report  # the re-run completes the index
    again = run(*talkqa, "ingest", "--json", "--data-dir", str(home), env=env)
    report = json.loads(again.stdout)
    assert report["unchanged"] == TALKS and report["embedded_chunks"] == 0, report
    state = check_store(home, env, [new])
    assert set(state["chunks"]) == set(new)
