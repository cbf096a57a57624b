"""The chat UI in a real headless Chromium (the Debian package; never `playwright install`)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qa import Settings, TalkQA
from tests.conftest import REPO, SEEDS
from tests.test_ui import EVIL_LISTING, NOTHING, PFC, PFC_TALK, serve

pytestmark = pytest.mark.browser

ARTIFACTS = REPO / "test-artifacts"
SCREENSHOT = REPO / "docs" / "screenshot.png"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT_MS = 60_000


def chromium_path() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail("no Chromium found: install the Debian package (`apt-get install chromium`; scripts/setup.sh does)")
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def url(seeded_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("browser") / "home"
    shutil.copytree(seeded_home, home)
    with serve(TalkQA(Settings(home=home, seeds=[SEEDS], answerer="offline"))) as address:
        yield address


class Session:
    """One browser tab on the app that records dialogs and off-host requests."""

    def __init__(self, browser: Any, url: str) -> None:
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.set_default_timeout(TIMEOUT_MS)
        self.dialogs: list[str] = []
        self.external: list[str] = []
        self.page.on("dialog", self._dialog)
        self.page.on("request", self._request)
        self.host = url.rstrip("/")
        self.page.goto(url)
        self.page.wait_for_selector("#question textarea")

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _request(self, request: Any) -> None:
        if not request.url.startswith((self.host, "data:", "blob:")):
            self.external.append(request.url)

    def ask(self, question: str) -> None:
        """Type ``question``, press Enter and wait until the answer has finished streaming."""
        answers = self.page.locator("#chat .answer")
        before = answers.count()
        self.page.fill("#question textarea", question)
        self.page.press("#question textarea", "Enter")
        self.page.wait_for_function(
            """([n]) => {
                const a = document.querySelectorAll('#chat .answer');
                return a.length > n && !a[a.length - 1].innerText.includes('Searching the talks')
                  && !document.querySelector('#chat .pending, .progress-text');
            }""",
            arg=[before],
        )
        self.page.wait_for_function(
            "() => document.querySelector('#sources .sources') && !document.querySelector('#sources .pending')"
        )
        self.page.wait_for_timeout(300)

    def shot(self, name: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)

    def close(self) -> None:
        self.page.close()


@pytest.fixture
def session(browser: Any, url: str) -> Iterator[Session]:
    s = Session(browser, url)
    try:
        yield s
    finally:
        s.close()


def test_pfc_question_streams_an_answer_with_linked_cards(session: Session) -> None:
    page = session.page
    session.ask(PFC)
    card = page.locator("#sources .card", has_text=PFC_TALK)
    card.wait_for()
    assert "Adi Gangadi" in card.locator(".meta").inner_text()
    assert card.locator("mark").first.inner_text() == "PFC"
    answer = page.locator("#chat .answer").last
    assert PFC_TALK in answer.inner_text()
    marker = answer.locator("a.cite").first
    target = marker.get_attribute("href")
    assert target and page.locator(f"#sources {target}").count() == 1
    assert PFC_TALK in (marker.get_attribute("title") or "")
    marker.click()
    page.wait_for_selector(f"#sources {target}.flash")
    assert "Answerer:" in page.locator("#status").inner_text()
    assert session.dialogs == []
    assert session.external == [], "the page must not fetch anything off the server (fonts, CDNs)"
    session.shot("pfc")
    SCREENSHOT.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)


def test_question_no_talk_covers_shows_no_cards(session: Session) -> None:
    session.ask(NOTHING)
    assert "No talk covers" in session.page.locator("#chat .answer").last.inner_text()
    assert session.page.locator("#sources .card").count() == 0
    assert "No sources" in session.page.locator("#sources").inner_text()
    session.shot("no-match")


def test_follow_up_and_example_buttons(session: Session) -> None:
    page = session.page
    page.get_by_role("button", name="What talks did Sumit Gupta give?").click()
    page.locator("#sources .card", has_text="Advancing Flash Storage").wait_for()
    session.ask("and which of those were in 2024?")
    page.locator("#sources .card", has_text="Training LlaMa").wait_for()
    assert page.locator("#sources .card", has_text="Advancing Flash Storage").count() == 0
    session.shot("follow-up")


def test_browse_tab_searches_the_table(session: Session) -> None:
    page = session.page
    page.get_by_role("tab", name="Browse talks").click()
    table = page.locator("#talks-table")
    table.get_by_text("Event Welcome").first.wait_for()
    page.get_by_placeholder("Search title, speaker").fill("Gangadi")
    page.wait_for_function("() => !document.querySelector('#talks-table').innerText.includes('Event Welcome')")
    assert PFC_TALK in table.inner_text()
    session.shot("browse")


def test_markup_in_a_title_renders_as_text(browser: Any, tmp_path: Path) -> None:
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "evil.txt").write_text(EVIL_LISTING, encoding="utf-8")
    with serve(TalkQA(Settings(home=tmp_path / "home", seeds=[seeds], answerer="offline"))) as address:
        session = Session(browser, address)
        try:
            session.ask("What talks did Mallory Hacker give?")
            card = session.page.locator("#sources .card").first
            card.wait_for()
            card.locator(".quote").hover()
            session.page.locator("#chat .answer blockquote").first.hover()
            session.page.wait_for_timeout(300)
            assert "<script>alert(1)</script>" in card.inner_text()
            assert "[click](javascript:alert(3))" in card.inner_text()
            assert "<img src=x onerror=alert(2)>" in card.inner_text()
            assert "<script>alert(1)</script>" in session.page.locator("#chat .answer").last.inner_text()
            for scope in ("#sources", "#chat"):
                assert session.page.locator(f"{scope} script, {scope} img[src=x], {scope} b").count() == 0
                assert session.page.locator(f'{scope} a[href^="javascript"]').count() == 0
            session.shot("xss")
            assert session.dialogs == []
        finally:
            session.close()
