"""The README's commands and CLI section stay true."""

from __future__ import annotations

import re
import subprocess

from qa.cli import build_parser

from .conftest import REPO

README = (REPO / "README.md").read_text()


def test_two_commands_exist_and_ci_calls_the_test_one() -> None:
    first_block = re.search(r"```bash\n(.*?)```", README, re.S)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines() if line.strip()]
    assert commands == ["make run", "make test"]
    for target in ("run", "test"):
        dry = subprocess.run(["make", "-n", target], cwd=REPO, capture_output=True, text=True)
        assert dry.returncode == 0, dry.stderr
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_cli_section_matches_the_parser() -> None:
    documented = set(re.findall(r"^talkqa ([a-z-]+)", README, re.M))
    parser = build_parser()
    actual = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert documented == actual
    for command in actual:
        sub = parser._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
        for option in re.findall(rf"^talkqa {command} (.*)$", README, re.M)[0].split():
            flag = re.match(r"\[?(--[a-z-]+)", option)
            if flag:
                assert flag.group(1) in sub.format_help(), (command, flag.group(1))


def test_library_example_names_exist() -> None:
    import qa

    for name in re.findall(r"from qa import (\w+)", README):
        assert name in qa.__all__
