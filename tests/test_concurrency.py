"""Questions asked from several threads while an ingest changes the index, in this process or another.

Every answer must be well-formed (text, citations numbered 1..n, each cited talk a talk of the old
or the new corpus) and no thread may see an exception.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from qa import Answer, Settings, TalkQA
from qa.seeds import load_seeds
from tests.conftest import DATA, REPO, SEEDS

THREADS = 4
QUESTIONS = [
    "which talks cover PFC tuning?",
    "What talks did Sumit Gupta give?",
    "How many parameters does Arctic have?",
    "which talks cover quantum networking?",
    "which talks were longer than 25 minutes?",
    "<script>alert(1)</script> RDMA",
    "",
    "what was said about flash storage and ZNS SSDs?",
]


def edited_corpus(src: Path, out: Path, marker: str) -> set[str]:
    """A copy of the seeds with one listing's abstracts edited and an extra listing; returns every talk id."""
    shutil.copytree(src, out)
    listing = sorted(out.glob("*.txt"))[0]
    listing.write_text(listing.read_text(encoding="utf-8").replace(" | ||", f" {marker} | ||"), encoding="utf-8")
    shutil.copy(DATA / "good_extra.txt", out / "005_extra.txt")
    return {t.id for t in load_seeds([out]).talks}


def check(ans: Answer, known: set[str]) -> None:
    assert isinstance(ans, Answer) and ans.text.strip()
    assert [c.number for c in ans.citations] == list(range(1, len(ans.citations) + 1))
    assert {c.talk.id for c in ans.citations} <= known
    ans.to_dict()


def ask_while(busy: Callable[[], bool], qa: TalkQA, known: set[str]) -> tuple[int, list[BaseException]]:
    """THREADS threads ask in a loop until ``busy()`` turns false (and at least a few times each)."""
    errors: list[BaseException] = []
    done = [0]
    lock = threading.Lock()

    def worker(offset: int) -> None:
        n = 0
        while (busy() or n < 3) and n < 500:
            try:
                check(qa.ask(QUESTIONS[(offset + n) % len(QUESTIONS)]), known)
                list(qa.search(QUESTIONS[(offset + n + 1) % len(QUESTIONS)], k=5))
            except BaseException as exc:  # collected and re-raised by the test
                errors.append(exc)
                return
            n += 1
            with lock:
                done[0] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    return done[0], errors


@pytest.fixture
def home_and_seeds(seeded_home: Path, tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    shutil.copytree(seeded_home, home)
    seeds = tmp_path / "seeds"
    shutil.copytree(SEEDS, seeds)
    return home, seeds


def test_threads_ask_while_the_same_talkqa_ingests(home_and_seeds: tuple[Path, Path], tmp_path: Path) -> None:
    home, seeds = home_and_seeds
    qa = TalkQA(Settings(home=home, seeds=[seeds], answerer="offline"))
    old = {t.id for t in qa.talks()}
    new = edited_corpus(SEEDS, tmp_path / "v2", "(edited while answering)")
    shutil.rmtree(seeds)
    shutil.copytree(tmp_path / "v2", seeds)

    report: list[object] = []
    ingesting = threading.Event()
    ingesting.set()

    def ingest() -> None:
        try:
            time.sleep(0.2)  # let the askers start first
            report.append(qa.ingest())
        except BaseException as exc:
            report.append(exc)
        finally:
            ingesting.clear()

    writer = threading.Thread(target=ingest)
    writer.start()
    asked, errors = ask_while(ingesting.is_set, qa, old | new)
    writer.join(timeout=300)
    assert not errors, errors[:3]
    assert report and not isinstance(report[0], BaseException), report
    assert asked >= THREADS * 3
    assert {t.id for t in qa.talks()} == new
    assert any("(edited while answering)" in t.abstract for t in qa.talks())


def test_threads_ask_while_another_process_ingests(home_and_seeds: tuple[Path, Path], tmp_path: Path) -> None:
    home, seeds = home_and_seeds
    qa = TalkQA(Settings(home=home, seeds=[seeds], answerer="offline"))
    old = {t.id for t in qa.talks()}
    v2 = tmp_path / "v2"
    new = edited_corpus(SEEDS, v2, "(edited by another process)")
    env = {**os.environ, "TALKQA_SEEDS": json.dumps([str(v2)])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "qa", "ingest", "--json", "--data-dir", str(home)],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    asked, errors = ask_while(lambda: proc.poll() is None, qa, old | new)
    out, err = proc.communicate(timeout=300)
    assert not errors, errors[:3]
    assert proc.returncode == 0 and "Traceback" not in err, err[-3000:]
    assert json.loads(out)["talks"] == len(new)
    assert asked >= THREADS * 3
    # a fresh reader sees the other process's ingest
    fresh = TalkQA(Settings(home=home, seeds=[v2], answerer="offline"), auto_ingest=False)
    assert {t.id for t in fresh.talks()} == new
    check(fresh.ask("which talks cover PFC tuning?"), new)
