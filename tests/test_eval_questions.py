"""Checks on the gold evaluation set ``eval/questions.jsonl`` against the seed listings."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from qa.seeds import load_seeds

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "seeds"
QUESTIONS = ROOT / "eval" / "questions.jsonl"

TYPES = frozenset(
    {
        "topic",
        "speaker",
        "fact",
        "metadata",
        "event",
        "paraphrase",
        "typo",
        "non_english",
        "unanswerable",
        "injection",
    }
)
FIELDS: dict[str, type] = {
    "id": str,
    "question": str,
    "type": str,
    "gold": list,
    "also_ok": list,
    "facts": list,
    "answerable": bool,
}
MIN_QUESTIONS = 80
MIN_UNANSWERABLE = 10
MIN_INJECTION = 6
MIN_NON_ENGLISH = 2

#: Questions the issue pins down exactly, with the gold they must carry.
KNOWN: dict[str, set[str]] = {
    "which talks cover PFC tuning?": {"scale-networking-2025/live-q-a-session-2-adi-gangadi"},
    "What talks did Sumit Gupta give?": {
        "systems-scale-2024/training-llama-a-storage-perspective",
        "scale-systems-reliability-2025/advancing-flash-storage",
    },
    "Which talk uses eBPF to spread traffic across NICs?": {
        "scale-networking-2025/transparent-multinic-routing-for-large-ai-models"
    },
    "How many parameters does Arctic have?": {"systems-scale-2024/training-arctic"},
    "Which talks were longer than 25 minutes?": {
        "scale-systems-reliability-2025/live-keynote",
        "scale-networking-2025/live-technology-panel",
    },
}


@pytest.fixture(scope="module")
def questions() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(QUESTIONS.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        assert isinstance(row, dict), f"line {number} is not a JSON object"
        rows.append(row)
    return rows


@pytest.fixture(scope="module")
def talks() -> dict[str, Any]:
    load = load_seeds([SEEDS])
    return {talk.id: talk for talk in load.talks}


@pytest.fixture(scope="module")
def seed_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted(SEEDS.iterdir()) if path.is_file())


def test_rows_have_required_fields_and_types(questions: list[dict[str, Any]]) -> None:
    for row in questions:
        for name, kind in FIELDS.items():
            assert name in row, f"{row.get('id')}: missing {name}"
            assert isinstance(row[name], kind), f"{row.get('id')}: {name} is not {kind.__name__}"
        assert row["type"] in TYPES, f"{row['id']}: unknown type {row['type']!r}"
        assert row["question"].strip(), f"{row['id']}: empty question"
        for name in ("gold", "also_ok", "facts"):
            assert all(isinstance(item, str) and item for item in row[name]), f"{row['id']}: bad {name}"
            assert len(set(row[name])) == len(row[name]), f"{row['id']}: duplicate in {name}"
        assert not set(row["gold"]) & set(row["also_ok"]), f"{row['id']}: id in both gold and also_ok"


def test_ids_unique_and_well_formed(questions: list[dict[str, Any]]) -> None:
    ids = [row["id"] for row in questions]
    duplicates = [qid for qid, count in Counter(ids).items() if count > 1]
    assert not duplicates, duplicates
    assert all(qid.startswith("q") and qid[1:].isdigit() for qid in ids)


def test_questions_are_unique(questions: list[dict[str, Any]]) -> None:
    texts = Counter(row["question"].strip().lower() for row in questions)
    assert not [text for text, count in texts.items() if count > 1]


def test_enough_questions(questions: list[dict[str, Any]]) -> None:
    assert len(questions) >= MIN_QUESTIONS


def test_cited_ids_exist(questions: list[dict[str, Any]], talks: dict[str, Any]) -> None:
    for row in questions:
        unknown = [tid for tid in row["gold"] + row["also_ok"] if tid not in talks]
        assert not unknown, f"{row['id']}: unknown talk ids {unknown}"


def test_every_talk_is_gold_somewhere(questions: list[dict[str, Any]], talks: dict[str, Any]) -> None:
    covered = {tid for row in questions for tid in row["gold"]}
    missing = sorted(set(talks) - covered)
    assert not missing, f"talks never gold: {missing}"


def test_seeds_have_expected_shape(talks: dict[str, Any]) -> None:
    assert len(talks) == 48
    assert "002-899f6d1e26461244/metas-rdma-deployment-based-on-rocev2-transport" in talks


def test_every_type_appears(questions: list[dict[str, Any]]) -> None:
    seen = {row["type"] for row in questions}
    assert seen == TYPES, f"missing types: {sorted(TYPES - seen)}"


def test_unanswerable_questions(questions: list[dict[str, Any]]) -> None:
    rows = [row for row in questions if row["type"] == "unanswerable"]
    assert len(rows) >= MIN_UNANSWERABLE
    for row in rows:
        assert row["gold"] == [], row["id"]
        assert row["answerable"] is False, row["id"]
    for row in questions:
        if not row["answerable"]:
            assert row["gold"] == [], f"{row['id']}: unanswerable but has gold"


def test_type_minimums(questions: list[dict[str, Any]]) -> None:
    counts = Counter(row["type"] for row in questions)
    assert counts["injection"] >= MIN_INJECTION
    assert counts["non_english"] >= MIN_NON_ENGLISH


def test_fact_questions_have_facts(questions: list[dict[str, Any]]) -> None:
    for row in questions:
        if row["type"] == "fact":
            assert row["facts"], f"{row['id']}: fact question without facts"
            assert row["gold"], f"{row['id']}: fact question without gold"


def test_facts_only_where_allowed(questions: list[dict[str, Any]]) -> None:
    for row in questions:
        if row["facts"]:
            assert row["type"] in {"fact", "metadata", "event"}, row["id"]


def test_facts_appear_in_seed_text(questions: list[dict[str, Any]], seed_text: str) -> None:
    haystack = seed_text.lower()
    for row in questions:
        for fact in row["facts"]:
            assert fact.lower() in haystack, f"{row['id']}: fact {fact!r} not in the seeds"


def test_known_answer_questions(questions: list[dict[str, Any]]) -> None:
    by_text = {row["question"]: row for row in questions}
    for text, gold in KNOWN.items():
        assert text in by_text, f"missing known question {text!r}"
        assert set(by_text[text]["gold"]) == gold, text
    assert "480B" in by_text["How many parameters does Arctic have?"]["facts"]


def test_longer_than_25_minutes_matches_seeds(questions: list[dict[str, Any]], talks: dict[str, Any]) -> None:
    expected = {tid for tid, talk in talks.items() if (talk.duration_min or 0) > 25}
    row = next(row for row in questions if row["question"] == "Which talks were longer than 25 minutes?")
    assert set(row["gold"]) == expected


def test_speaker_gold_matches_seeds(questions: list[dict[str, Any]], talks: dict[str, Any]) -> None:
    """Questions naming one speaker must have exactly that speaker's talks as gold."""
    aliases = {"Adi Gangidi": {"Adi Gangidi", "Adi Gangadi"}, "Adi Gangadi": {"Adi Gangidi", "Adi Gangadi"}}
    for name in ("Sumit Gupta", "Surupa Biswas", "Francois Richard", "Adi Gangidi", "Adi Gangadi"):
        names = aliases.get(name, {name})
        expected = {tid for tid, talk in talks.items() if names & set(talk.speakers)}
        assert len(expected) == 2, name
        rows = [row for row in questions if row["type"] == "speaker" and name in row["question"]]
        assert rows, f"no speaker question for {name}"
        for row in rows:
            assert set(row["gold"]) == expected, f"{row['id']}: {name}"


def test_injections_mix_pure_and_wrapped(questions: list[dict[str, Any]]) -> None:
    rows = [row for row in questions if row["type"] == "injection"]
    assert any(row["gold"] for row in rows), "no injection wrapped around a legitimate question"
    assert any(not row["gold"] for row in rows), "no pure injection"
