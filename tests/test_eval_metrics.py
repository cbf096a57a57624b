"""The evaluation's metric functions: each test would fail if the metric looked at the wrong thing."""

from __future__ import annotations

import pytest

from eval import metrics as m

GOLD = ["g1", "g2"]


def test_retrieval_metrics_depend_on_rank_and_cutoff() -> None:
    ranked = ["x", "g2", "y", "z", "w", "g1"]
    assert m.hit_at(ranked, GOLD, 1) == 0.0
    assert m.hit_at(ranked, GOLD, 2) == 1.0
    assert m.recall_at(ranked, GOLD, 5) == 0.5
    assert m.recall_at(ranked, GOLD, 6) == 1.0
    assert m.reciprocal_rank(ranked, GOLD) == 0.5
    assert m.reciprocal_rank(["g1", *ranked], GOLD) == 1.0
    assert m.reciprocal_rank(ranked, ["nowhere"]) == 0.0
    assert m.reciprocal_rank(ranked, ["g1"], k=5) == 0.0  # rank 6 is past the cutoff


def test_recall_needs_gold() -> None:
    with pytest.raises(ValueError):
        m.recall_at(["a"], [], 5)
    with pytest.raises(ValueError):
        m.citation_recall(["a"], [])
    with pytest.raises(ValueError):
        m.citation_precision([], ["a"])


def test_citation_recall_and_precision_are_alce_style() -> None:
    assert m.citation_recall(["g1", "bad"], GOLD) == 0.5
    assert m.citation_recall(["g1", "g2", "bad"], GOLD) == 1.0
    # also_ok talks count for precision, not for recall
    assert m.citation_precision(["g1", "ok", "bad", "worse"], GOLD, ["ok"]) == 0.5
    assert m.citation_recall(["ok"], GOLD) == 0.0
    # a talk cited twice counts once
    assert m.citation_precision(["g1", "g1", "bad"], GOLD) == 0.5


def test_correctness_refusal_and_answerable() -> None:
    assert m.is_correct([], [], answerable=False)
    assert not m.is_correct(["any"], [], answerable=False)
    assert not m.is_correct([], GOLD, answerable=True)
    assert not m.is_correct(["other"], GOLD, answerable=True)
    assert m.is_correct(["other", "g2"], GOLD, answerable=True)


def test_facts_are_all_required_and_case_insensitive() -> None:
    text = "Arctic is a 480B-parameter MoE trained on 1,000 GPUs."
    assert m.facts_present(text, ["480b", "moe"])
    assert not m.facts_present(text, ["480B", "17B"])
    assert m.facts_present(text, [])


def test_supported_sentence_needs_the_cited_words() -> None:
    source = "Pinterest built KVStore, a key-value store for ML feature serving on RocksDB."
    assert m.supported("Pinterest built a key-value store for ML features [1].", source)
    assert not m.supported("Netflix built a graph database on Cassandra [1].", source)
    assert m.supported("Two talks match:", source) is None  # template, no claim


def test_grounded_sentences_check_each_sentence_against_its_own_citation() -> None:
    sources = {
        1: "PFC tuning for RoCE: pause frames and buffer thresholds on lossless links.",
        2: "Arctic: a 480B mixture-of-experts model trained by Snowflake.",
    }
    good = "Pause frames and buffer thresholds keep RoCE links lossless [1]. Arctic is a 480B model [2]."
    assert [ok for _, ok in m.grounded_sentences(good, sources)] == [True, True]
    swapped = "Pause frames and buffer thresholds keep RoCE links lossless [2]. Arctic is a 480B model [1]."
    assert [ok for _, ok in m.grounded_sentences(swapped, sources)] == [False, False]


def test_claims_text_turns_offline_entries_into_cited_quotes() -> None:
    text = (
        "Two talks cover PFC:\n\n"
        "[1] **PFC Tuning** — Adi Gangadi · @Scale: Networking 2025 (2025-08-13) · 13 min\n"
        "> We tune PFC thresholds.\n\n"
        "[2] **Arctic** — A. Person\n"
        "> Arctic is a MoE."
    )
    claims = m.claims_text(text)
    assert "**" not in claims and "2025-08-13" not in claims
    assert "We tune PFC thresholds [1]." in claims
    assert "Arctic is a MoE [2]." in claims
    sentences = dict(m.answer_sentences(claims))
    assert sentences["Arctic is a MoE [2]."] == (2,)


def test_failure_kinds_name_each_problem() -> None:
    base = {"also_ok": [], "facts": [], "text": "x"}
    assert m.failure_kinds(cited=[], gold=GOLD, answerable=True, **base) == ["false refusal"]
    assert m.failure_kinds(cited=["g1"], gold=GOLD, answerable=True, **base) == ["partial recall"]
    assert m.failure_kinds(cited=["g1", "g2"], gold=GOLD, answerable=True, **base) == []
    assert m.failure_kinds(cited=["z"], gold=[], answerable=False, **base) == ["should refuse"]
    assert m.failure_kinds(
        cited=["g1", "g2"], gold=GOLD, answerable=True, also_ok=[], facts=["42"], text="no", grounded=0.5
    ) == ["fact missing", "unsupported sentence"]
    assert set(m.FAILURE_KINDS) >= {"wrong talk", "extra citation"}


def test_mean_ignores_missing_values() -> None:
    assert m.mean([1.0, 0.0, None, 0.5]) == 0.5
    assert m.mean([]) is None


def test_marker_after_full_stop_stays_with_its_sentence() -> None:
    claims = m.claims_text("Arctic has 480B parameters. [2] Pinterest built KVStore. [1]")
    assert dict(m.answer_sentences(claims)) == {
        "Arctic has 480B parameters [2].": (2,),
        "Pinterest built KVStore [1].": (1,),
    }
