"""The ``talkqa`` command line, in-process and as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from qa.cli import build_parser, main

from .conftest import DATA, SEEDS


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ingest_ask_search_talks(capsys: pytest.CaptureFixture[str], seeded_home: Path) -> None:
    home = str(seeded_home)
    code, out, _ = run(capsys, "ingest", "--data-dir", home, "--json")
    report = json.loads(out)
    assert code == 0 and report["unchanged"] == 48 and report["embedded_chunks"] == 0

    code, out, _ = run(capsys, "ask", "which talks cover PFC tuning?", "--data-dir", home)
    assert code == 0 and "Live Q&A Session #2 – Adi Gangadi" in out and "[1]" in out
    assert "(offline answer; 48 talks searched)" in out

    code, out, _ = run(capsys, "ask", "What talks did Sumit Gupta give?", "--json", "--data-dir", home)
    data = json.loads(out)
    assert sorted(c["talk"]["title"] for c in data["citations"]) == [
        "Advancing Flash Storage",
        "Training LlaMa - A Storage Perspective",
    ]

    code, out, _ = run(capsys, "search", "QLC flash", "--k", "2", "--json", "--data-dir", home)
    hits = json.loads(out)
    assert len(hits) == 2 and hits[0]["talk"]["title"] == "Advancing Flash Storage"

    code, out, _ = run(capsys, "talks", "--speaker", "gangidi", "--data-dir", home)
    assert code == 0 and "2 talks" in out and "Adi Gangadi" in out and "Adi Gangidi" in out


def test_ingest_reports_bad_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(
        capsys, "ingest", str(DATA / "empty.txt"), str(DATA / "good_extra.txt"), "--data-dir", str(tmp_path)
    )
    assert code == 0
    assert "1 added" in out and "skipped: empty.txt:1: the file is empty" in out


def test_clear_error_for_unreachable_chroma(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "ask", "PFC?", "--chroma-url", "http://127.0.0.1:9", "--data-dir", str(tmp_path))
    assert code == 0 and "Traceback" not in out + err
    assert "cannot reach the Chroma server at http://127.0.0.1:9" in out and "chroma run --host 127.0.0.1" in out
    code, _, err = run(capsys, "talks", "--chroma-url", "http://127.0.0.1:9", "--data-dir", str(tmp_path))
    assert code == 2 and err.startswith("talkqa: cannot reach the Chroma server")


def test_help_lists_every_command() -> None:
    parser = build_parser()
    commands = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert {"ingest", "ask", "search", "talks", "serve", "eval"} <= commands


def test_console_script_runs(seeded_home: Path) -> None:
    exe = Path(sys.executable).with_name("talkqa")
    result = subprocess.run(
        [str(exe), "ask", "How many parameters does Arctic have?", "--data-dir", str(seeded_home)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(seeded_home), "TALKQA_SEEDS": json.dumps([str(SEEDS)])},
    )
    assert result.returncode == 0, result.stderr
    assert "480B" in result.stdout and "Training Arctic" in result.stdout
