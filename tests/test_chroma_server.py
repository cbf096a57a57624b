"""TalkQA against a real ``chroma run`` server: same answers as embedded, survives a server restart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.chroma_server import ChromaServer
from qa import Answer, QAError, Settings, TalkQA

from .conftest import SEEDS

pytestmark = pytest.mark.chroma_server

QUESTIONS = [
    "which talks cover PFC tuning?",
    "Which talk uses eBPF to spread traffic across NICs?",
    "Which talks discuss checkpointing?",
    "what did Sumit Gupta present?",
    "how is silent data corruption detected?",
]


def _fingerprint(answer: Answer) -> tuple[str, list[tuple[int, str, str]]]:
    return answer.text, [(c.number, c.talk.id, c.quote) for c in answer.citations]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ChromaServer]:
    chroma = ChromaServer(tmp_path / "chroma-server")
    try:
        yield chroma.start()
    finally:
        chroma.stop()


def test_server_answers_match_embedded(server: ChromaServer, seeded_qa: TalkQA, tmp_path: Path) -> None:
    remote = TalkQA(Settings(home=tmp_path / "remote", seeds=[SEEDS], chroma_url=server.url, answerer="offline"))
    report = remote.ingest()
    assert report.talks == len(seeded_qa.talks()) > 0
    for question in QUESTIONS:
        assert _fingerprint(remote.ask(question)) == _fingerprint(seeded_qa.ask(question)), question
        assert [h.talk.id for h in remote.search(question, 5)] == [h.talk.id for h in seeded_qa.search(question, 5)]
    assert remote.ask(QUESTIONS[0], year=2025).citations == seeded_qa.ask(QUESTIONS[0], year=2025).citations
    assert remote.status()["store"] == server.url


def test_server_restart_mid_session(server: ChromaServer, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "remote", seeds=[SEEDS], chroma_url=server.url, answerer="offline")
    qa = TalkQA(settings)
    talks = qa.ingest().talks
    before = _fingerprint(qa.ask(QUESTIONS[1]))
    assert before[1], "the eBPF question has a citation"

    server.restart()  # same path, same port, new process
    try:
        after = qa.ask(QUESTIONS[1])
    except QAError as exc:  # acceptable: a clear TalkQA error, not a raw httpx one
        assert server.url in str(exc) or "Chroma" in str(exc)
        after = qa.ask(QUESTIONS[1])
    assert _fingerprint(after) == before
    assert len(qa.search("RDMA", 5)) == 5

    fresh = TalkQA(settings, auto_ingest=False)
    assert fresh.status()["talks"] == talks
    assert fresh.ingest().embedded_chunks == 0  # nothing was lost, nothing to re-embed


def test_server_down_is_a_clear_error(server: ChromaServer, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "remote", seeds=[SEEDS], chroma_url=server.url, answerer="offline")
    qa = TalkQA(settings)
    qa.ingest()
    server.stop()
    answer = qa.ask(QUESTIONS[0])  # ask never raises; it says it cannot answer right now
    assert "cannot answer right now" in answer.text
    assert not answer.citations
    with pytest.raises(QAError, match="Chroma"):
        TalkQA(settings).ingest()
