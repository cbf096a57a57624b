"""Shared fixtures: keep every test off the network and off the user's home."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SEEDS = REPO / "seeds"
DATA = Path(__file__).resolve().parent / "data"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No API keys, no user data dir: every test gets its own TALKQA_HOME under tmp_path."""
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TALKQA_CHROMA_URL", "TALKQA_ANSWERER", "TALKQA_SEEDS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TALKQA_HOME", str(tmp_path / "talkqa-home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def seeded_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of the real seeds, built once per session with the real packaged embedding."""
    from qa import Settings, TalkQA

    home = tmp_path_factory.mktemp("seeded")
    TalkQA(Settings(home=home, seeds=[SEEDS], answerer="offline")).ingest()
    return home


@pytest.fixture
def seeded_qa(seeded_home: Path, tmp_path: Path) -> Iterator[object]:
    """A TalkQA on a private copy of the seeded index (tests may change it)."""
    from qa import Settings, TalkQA

    home = tmp_path / "home"
    shutil.copytree(seeded_home, home)
    yield TalkQA(Settings(home=home, seeds=[SEEDS], answerer="offline"))
