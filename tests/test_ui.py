"""The Gradio app on a real server on 127.0.0.1, driven through gradio_client; plus the pure renderers."""

from __future__ import annotations

import re
import shutil
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from qa import Answer, Citation, Settings, Talk, TalkQA
from tests.conftest import SEEDS
from ui.app import build_app, talk_rows
from ui.render import answer_html, cards_html, escape, highlight, question_terms, status_html

PFC = "which talks cover PFC tuning?"
PFC_TALK = "Live Q&A Session #2 – Adi Gangadi"
NOTHING = "which talks cover quantum networking?"
EVIL_TITLE = "<script>alert(1)</script> Quantum Widgets [click](javascript:alert(3))"
EVIL_LISTING = f"""Evil Summit 2024
| title | author | length |
|---|---|---|
| {EVIL_TITLE} | Mallory Hacker | 20m |
Quantum widgets explained, with <img src=x onerror=alert(2)> and <b onmouseover=alert(4)>bold</b> markup… | ||
| Gardening at Scale | Alice Green | 15m |
Growing tomatoes in data centers with heat reuse… | ||
"""
# (question, a title every answer must cite, or None when it must cite nothing)
KNOWN = [
    (PFC, PFC_TALK),
    ("What talks did Sumit Gupta give?", "Advancing Flash Storage"),
    ("How many parameters does Arctic have?", "Training Arctic"),
    (NOTHING, None),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(qa: TalkQA) -> Iterator[str]:
    app = build_app(qa)
    _, url, _ = app.launch(server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        yield url
    finally:
        app.close()


@pytest.fixture(scope="module")
def server(seeded_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, TalkQA]]:
    home = tmp_path_factory.mktemp("ui") / "home"
    shutil.copytree(seeded_home, home)
    qa = TalkQA(Settings(home=home, seeds=[SEEDS], answerer="offline"))
    with serve(qa) as url:
        yield url, qa


@pytest.fixture(scope="module")
def client(server: tuple[str, TalkQA]) -> Any:
    from gradio_client import Client

    return Client(server[0], verbose=False)


def titles(result: dict[str, Any]) -> list[str]:
    return [c["talk"]["title"] for c in result["citations"]]


def markers(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"\[(\d+)\]", text)}


# ---- through the server ----------------------------------------------------------------------
def test_ask_endpoint_returns_text_and_cards(client: Any) -> None:
    result = client.predict(PFC, api_name="/ask")
    assert result["text"].strip()
    assert PFC_TALK in titles(result)
    assert markers(result["text"]) == {c["number"] for c in result["citations"]}
    card = 'id="cite-1-1"'
    assert card in result["cards_html"]
    assert escape(PFC_TALK) in result["cards_html"]
    assert "<mark>PFC</mark>" in result["cards_html"]
    assert 'href="#cite-1-1"' in result["answer_html"]


def test_question_no_talk_covers_has_no_cards(client: Any) -> None:
    result = client.predict(NOTHING, api_name="/ask")
    assert result["citations"] == []
    assert "No talk covers" in result["text"]
    assert 'class="card"' not in result["cards_html"]


def test_chat_streams_and_fills_the_cards(client: Any) -> None:
    job = client.submit(PFC, [], "", "", "", api_name="/chat")
    chat, _box, cards, status = job.result()
    assert len(job.outputs()) >= 3  # "searching", at least one piece, the final answer
    answer = chat[-1]["content"][0]["text"] if isinstance(chat[-1]["content"], list) else chat[-1]["content"]
    assert 'href="#cite-1-1"' in answer
    assert 'id="cite-1-1"' in cards
    assert escape(PFC_TALK) in cards
    assert "Answerer: <b>offline</b>" in status


def test_chat_follow_up_uses_history(client: Any) -> None:
    from gradio_client import Client

    fresh = Client(client.src, verbose=False)  # its own session, so its own history
    chat, _, cards, _ = fresh.predict("What talks did Sumit Gupta give?", [], "", "", "", api_name="/chat")
    assert "Advancing Flash Storage" in cards and "Training LlaMa" in cards
    chat, _, cards, _ = fresh.predict("and which of those were in 2024?", chat, "", "", "", api_name="/chat")
    assert "Training LlaMa" in cards
    assert "Advancing Flash Storage" not in cards


def test_notice_and_empty_question(client: Any) -> None:
    from gradio_client.exceptions import AppError

    long_question = "which talks cover PFC tuning? " + "please " * 400
    _, _, _, status = client.predict(long_question, [], "", "", "", api_name="/chat")
    assert 'class="notice"' in status and "cut" in status
    with pytest.raises(AppError, match="Type a question"):
        client.predict("   ", [], "", "", "", api_name="/chat")


def test_filters_narrow_retrieval(client: Any, server: tuple[str, TalkQA]) -> None:
    qa = server[1]
    networking = next(e for e in qa.events() if "Networking" in e.name)
    other = next(e for e in qa.events() if e.id != networking.id)
    inside = client.predict(PFC, networking.id, "", "", api_name="/ask")
    assert PFC_TALK in titles(inside)
    outside = client.predict(PFC, other.id, "", "", api_name="/ask")
    assert PFC_TALK not in titles(outside)
    by_speaker = client.predict("storage", "", "", "Sumit Gupta", api_name="/ask")
    assert by_speaker["citations"]
    assert all("Sumit Gupta" in c["talk"]["speakers"] for c in by_speaker["citations"])


def test_browse_table_searches(client: Any) -> None:
    table = client.predict("Adi Gangadi", api_name="/talks")
    rows = table["data"]
    assert [r[2] for r in rows] == [PFC_TALK]
    assert table["headers"] == ["Event", "Year", "Title", "Speakers", "Minutes"]


@pytest.mark.slow
def test_twenty_concurrent_requests_are_queued_and_correct(client: Any) -> None:
    cases = [KNOWN[i % len(KNOWN)] for i in range(20)]

    def run(case: tuple[str, str | None]) -> tuple[str | None, list[str]]:
        return case[1], titles(client.predict(case[0], api_name="/ask"))

    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(run, cases, timeout=180))
    assert len(results) == 20
    for expected, got in results:
        if expected is None:
            assert got == []
        else:
            assert expected in got


def test_errors_reach_users_as_messages_not_tracebacks(client: Any, server: tuple[str, TalkQA]) -> None:
    from gradio_client.exceptions import AppError

    qa = server[1]

    def broken(*args: Any, **kwargs: Any) -> Answer:
        raise RuntimeError("secret internal detail")

    qa.ask = broken  # type: ignore[method-assign]
    try:
        with pytest.raises(AppError) as info:
            client.predict(PFC, api_name="/ask")
    finally:
        del qa.ask
    assert "something went wrong" in str(info.value)
    assert "secret internal detail" not in str(info.value)
    assert "Traceback" not in str(info.value)


@pytest.mark.slow
def test_markup_in_titles_is_escaped(tmp_path: Path) -> None:
    from gradio_client import Client

    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "evil.txt").write_text(EVIL_LISTING, encoding="utf-8")
    qa = TalkQA(Settings(home=tmp_path / "home", seeds=[seeds], answerer="offline"))
    with serve(qa) as url:
        result = Client(url, verbose=False).predict("What talks did Mallory Hacker give?", api_name="/ask")
        assert titles(result) == [EVIL_TITLE]
        for html_out in (result["cards_html"], result["answer_html"]):
            assert "<script" not in html_out
            assert "<img" not in html_out
            assert "onerror" not in html_out.replace("onerror=alert", "")  # only as escaped text
            assert "&lt;script&gt;alert&#40;1&#41;&lt;/script&gt;" in html_out
            assert 'href="javascript' not in html_out
            assert "&#91;click&#93;&#40;javascript:alert&#40;3&#41;&#41;" in html_out


# ---- pure rendering ----------------------------------------------------------------------------
TALK = Talk(
    id="e/t",
    title="PFC **tuning** <b>now</b>",
    speakers=("Ann", "Bo"),
    duration_min=21,
    abstract="We tune PFC and ECN…",
    truncated=True,
    event="Net 2025",
    year=2025,
)


def test_answer_markers_link_to_cards() -> None:
    text = "Yes [1].\n\n[1] **T**\n> quote"
    answer = Answer(question="PFC tuning?", text=text, citations=(Citation(1, TALK, "PFC"),))
    body = answer_html(answer.text, 3, answer.citations)
    cards = cards_html(answer, 3)
    tip = "&#91;1&#93; PFC &#42;&#42;tuning&#42;&#42; &lt;b&gt;now&lt;/b&gt;"
    assert f'<a class="cite" href="#cite-3-1" title="{tip}">[1]</a>' in body
    assert '<article class="card" id="cite-3-1"' in cards
    assert "<blockquote>quote</blockquote>" in body
    assert "Ann, Bo · Net 2025 · 21 min" in cards
    assert "&lt;b&gt;now&lt;/b&gt;" in cards and "<b>now" not in cards


def test_no_citations_renders_an_empty_panel() -> None:
    cards = cards_html(Answer(question="x", text="No talk covers that."))
    assert "No sources" in cards and "card" not in cards.replace("cards", "")


def test_highlight_marks_question_terms_and_escapes() -> None:
    assert question_terms("Which talks cover PFC tuning?") == ["pfc", "tuning"]
    marked = highlight("tuned <PFC> buffers", ["pfc", "tuning"])
    assert marked == "<mark>tuned</mark> &lt;<mark>PFC</mark>&gt; buffers"
    assert highlight("a [b](javascript:x)", []) == "a &#91;b&#93;&#40;javascript:x&#41;"


def test_streamed_partial_markdown_stays_inert() -> None:
    body = answer_html("**<img src=x onerror=alert(1)> [2", 1)
    assert "<img" not in body and "&lt;img" in body


def test_status_line_shows_notice_escaped() -> None:
    line = status_html("offline", 48, 3, "LLM <failed>")
    assert "48 talks" in line and "&lt;failed&gt;" in line and "notice" in line


def test_talk_rows_filter_on_every_word() -> None:
    other = Talk(id="o", title="Storage", speakers=("Cy",), event="Sys 2024", year=2024)
    assert list(talk_rows([TALK, other], "ecn ann")["Title"]) == [TALK.title]
    assert len(talk_rows([TALK, other])) == 2
