"""The LLM answerer against a real OpenAI-compatible server (llama.cpp + SmolLM2-135M on loopback).

Model text is not asserted; structure and verification are: what reaches the user is exactly what
``qa.grounding.verify`` keeps of the model's reply, every citation resolves to a retrieved talk,
and every failure becomes the offline answer with a notice that never holds the API key.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from qa import Answer, Settings, TalkQA
from qa.grounding import verify
from qa.llm import OpenAIAnswerer, make_llm_answerer
from qa.prompts import numbered_talks
from qa.retrieve import Filters

from .llm_support import FAKE_KEY, FaultProxy, free_port

pytestmark = pytest.mark.llm

QUESTION = "Which talks deal with hardware failures and faults that interrupt large training jobs?"
_MARKERS = re.compile(r"\[(\d+)\]")


@pytest.fixture(scope="module")
def llm_server() -> Iterator[Any]:
    pytest.importorskip("xllamacpp", reason="xllamacpp is not installed (scripts/setup.sh installs it)")
    from qa.errors import LLMError
    from qa.llm_server import start_server

    try:
        handle = start_server(port=0, threads=1)
    except LLMError as exc:
        pytest.skip(str(exc))
    yield handle
    handle.stop()


def llm_qa(qa: Any, base_url: str, model: str = "smollm2", **overrides: Any) -> TalkQA:
    """The seeded TalkQA, answering with the LLM at ``base_url`` (settings, not env vars)."""
    updates: dict[str, Any] = {
        "answerer": "llm",
        "openai_base_url": base_url,
        "openai_api_key": SecretStr(FAKE_KEY),
        "llm_model": model,
        "llm_max_tokens": 80,
        "llm_timeout": 60.0,
        "llm_retries": 0,
        **overrides,
    }
    return TalkQA(qa.settings.model_copy(update=updates))


def retrieved(qa: TalkQA, question: str) -> tuple[Answer, list[Any]]:
    offline_answer, hits, _intent = qa._offline(question, Filters(), (), None)
    assert hits, "the test question must retrieve talks"
    return offline_answer, hits


def assert_consistent(ans: Answer, hit_ids: set[str]) -> None:
    """Markers in the text are exactly 1..k, each citation resolves to a retrieved talk, once."""
    numbers = [int(n) for n in _MARKERS.findall(ans.text)]
    assert sorted(set(numbers)) == [c.number for c in ans.citations] == list(range(1, len(ans.citations) + 1))
    assert all(c.talk.id in hit_ids for c in ans.citations)
    assert len({c.talk.id for c in ans.citations}) == len(ans.citations)
    assert all(c.quote for c in ans.citations)


def assert_no_key(ans: Answer, caplog: pytest.LogCaptureFixture) -> None:
    assert FAKE_KEY not in str(ans.to_dict())
    assert FAKE_KEY not in (ans.notice or "")
    assert FAKE_KEY not in caplog.text


def test_server_serves_the_packaged_model_with_checked_hash(llm_server: Any) -> None:
    from qa.llm_server import PACKAGED_MODEL, sha256_of

    assert llm_server.url.startswith("http://127.0.0.1:")
    assert sha256_of(llm_server.model_path) == PACKAGED_MODEL.sha256


def test_plain_answer_is_what_verification_keeps_of_the_reply(llm_server: Any, seeded_qa: Any) -> None:
    with FaultProxy(llm_server.url) as proxy:
        qa = llm_qa(seeded_qa, proxy.url)
        fallback, hits = retrieved(qa, QUESTION)
        llm = qa.llm
        assert llm is not None and llm.name == "llm:smollm2"
        ans = llm.answer(QUESTION, hits, fallback)
    assert len(proxy.requests) == 1 and proxy.auth_headers == [f"Bearer {FAKE_KEY}"]
    assert "[1]" in proxy.requests[0]["messages"][-1]["content"]  # numbered talks went to the model
    expected = verify(proxy.replies[0], numbered_talks(hits))
    if expected.ok:
        assert ans.answerer == "llm:smollm2"
        assert ans.text == expected.text
        assert ans.dropped == expected.dropped
        assert_consistent(ans, {h.talk.id for h in hits})
    else:  # nothing the talks support: the offline answer, saying why
        assert ans.answerer == "offline" and ans.text == fallback.text and ans.notice


def test_streamed_answer_ends_with_the_verified_answer(llm_server: Any, seeded_qa: Any) -> None:
    with FaultProxy(llm_server.url, "inject") as proxy:
        qa = llm_qa(seeded_qa, proxy.url)
        stream = qa.stream(QUESTION)
        pieces = list(stream)
    ans = stream.answer
    assert ans is not None and len(pieces) > 1
    assert proxy.requests[0]["stream"] is True
    raw = proxy.replies[0]
    assert "".join(pieces) == raw  # the raw stream went out piece by piece...
    _fallback, hits = retrieved(qa, QUESTION)
    expected = verify(raw, numbered_talks(hits))
    assert ans.answerer == "llm:smollm2" and ans.text == expected.text  # ...and was replaced by the verified text
    assert "[9]" in ans.dropped and ans.dropped == expected.dropped and "[9]" not in ans.text
    assert ans.notice and "[9]" in ans.notice
    assert_consistent(ans, {h.talk.id for h in hits})


def test_invalid_marker_is_dropped_and_reported(llm_server: Any, seeded_qa: Any) -> None:
    with FaultProxy(llm_server.url, "inject") as proxy:
        qa = llm_qa(seeded_qa, proxy.url)
        ans = qa.ask(QUESTION)
    assert "[9]" in proxy.replies[0]
    assert ans.answerer == "llm:smollm2"
    assert "[9]" in ans.dropped  # (the model may invent more keys of its own)
    assert "[9]" not in ans.text
    first = numbered_talks(retrieved(qa, QUESTION)[1])[1]
    assert first.title in ans.text  # the injected sentence is supported by source [1] and stays
    assert any(c.talk.id == first.id for c in ans.citations)
    assert_consistent(ans, {h.talk.id for h in retrieved(qa, QUESTION)[1]})


def _offline_text(seeded_qa: Any) -> str:
    return TalkQA(seeded_qa.settings).ask(QUESTION).text


@pytest.mark.parametrize("streamed", [False, True], ids=["ask", "stream"])
def test_server_down_falls_back_offline(seeded_qa: Any, caplog: pytest.LogCaptureFixture, streamed: bool) -> None:
    caplog.set_level(logging.DEBUG)
    qa = llm_qa(seeded_qa, f"http://127.0.0.1:{free_port()}/v1")
    if streamed:
        stream = qa.stream(QUESTION)
        text = "".join(stream)
        ans = stream.answer
        assert ans is not None and text == ans.text  # no LLM text was streamed before the failure
    else:
        ans = qa.ask(QUESTION)
    assert ans.answerer == "offline"
    assert ans.text == _offline_text(seeded_qa)
    assert ans.notice and "cannot connect" in ans.notice
    assert_no_key(ans, caplog)


def test_timeout_falls_back_offline(llm_server: Any, seeded_qa: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with FaultProxy(llm_server.url, "sleep", sleep_s=3.0) as proxy:
        qa = llm_qa(seeded_qa, proxy.url, llm_timeout=1.0)
        ans = qa.ask(QUESTION)
    assert ans.answerer == "offline" and ans.text == _offline_text(seeded_qa)
    assert ans.notice and "within 1s" in ans.notice
    assert_no_key(ans, caplog)


@pytest.mark.parametrize("status", [500, 429, 401])
def test_http_errors_fall_back_offline(
    llm_server: Any, seeded_qa: Any, caplog: pytest.LogCaptureFixture, status: int
) -> None:
    caplog.set_level(logging.DEBUG)
    with FaultProxy(llm_server.url, "status", status=status) as proxy:
        qa = llm_qa(seeded_qa, proxy.url)
        stream = qa.stream(QUESTION)
        text = "".join(stream)
        ans = stream.answer
    assert ans is not None and text == ans.text
    assert ans.answerer == "offline" and ans.text == _offline_text(seeded_qa)
    assert ans.notice
    assert {500: "HTTP 500", 429: "rate limited", 401: "OPENAI_API_KEY"}[status] in ans.notice
    assert_no_key(ans, caplog)  # the error body echoed the key; it must not leak


@pytest.mark.parametrize("mode", ["cut", "stall"])
def test_stream_broken_midway_ends_with_offline_answer(
    llm_server: Any, seeded_qa: Any, caplog: pytest.LogCaptureFixture, mode: str
) -> None:
    caplog.set_level(logging.DEBUG)
    with FaultProxy(llm_server.url, mode, sleep_s=3.0) as proxy:
        qa = llm_qa(seeded_qa, proxy.url, llm_timeout=1.0)
        stream = qa.stream(QUESTION)
        pieces = list(stream)
    ans = stream.answer
    assert pieces and "".join(pieces) == proxy.replies[0]  # text had been shown: no raise, a final answer
    assert ans is not None and ans.text == _offline_text(seeded_qa)
    assert ans.answerer == "offline" and ans.notice and "stopped halfway" in ans.notice
    assert_no_key(ans, caplog)


def test_missing_key_and_url_is_an_llm_error_not_a_crash(seeded_qa: Any) -> None:
    qa = TalkQA(seeded_qa.settings.model_copy(update={"answerer": "llm"}))
    ans = qa.ask(QUESTION)
    assert ans.answerer == "offline" and ans.notice and "OPENAI_API_KEY" in ans.notice


def test_make_llm_answerer_names_the_model() -> None:
    llm = make_llm_answerer(Settings(answerer="llm", llm_model="gpt-4o-mini", home=Path("/nonexistent")))
    assert isinstance(llm, OpenAIAnswerer) and llm.name == "llm:gpt-4o-mini"
