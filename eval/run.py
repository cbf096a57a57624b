"""``talkqa eval``: run every system over the gold questions and write the grounding report.

>>> from eval.run import main          # doctest: +SKIP
>>> main(argparse.Namespace(questions=None, out="eval/results", json=False, systems=None,
...                         data_dir=None, chroma_url=None))   # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qa import Answer, Settings, Talk, TalkQA

from . import metrics as m
from .baselines import BM25Baseline, NaiveRAG, System, TalkQASystem

__all__ = [
    "DEFAULT_QUESTIONS",
    "SYSTEMS",
    "Question",
    "evaluate",
    "load_questions",
    "main",
    "score_answer",
    "summarize",
]

logger = logging.getLogger(__name__)

DEFAULT_QUESTIONS = Path(__file__).resolve().parent / "questions.jsonl"
SYSTEMS = ("naive-rag", "bm25", "talkqa-offline", "talkqa-llm")
RANK_K = 10
#: "Every citation resolves to a retrieved talk": citations ⊆ the system's top-50 talks.
RESOLVE_K = 50


@dataclass(frozen=True, slots=True)
class Question:
    """One line of ``eval/questions.jsonl``."""

    id: str
    question: str
    type: str
    gold: tuple[str, ...]
    also_ok: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    answerable: bool = True

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> Question:
        return cls(
            id=str(row["id"]),
            question=str(row["question"]),
            type=str(row["type"]),
            gold=tuple(row.get("gold", ())),
            also_ok=tuple(row.get("also_ok", ())),
            facts=tuple(row.get("facts", ())),
            answerable=bool(row.get("answerable", True)),
        )


@dataclass(slots=True)
class Run:
    """One system's per-question records and how long it took."""

    system: str
    records: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


def load_questions(path: Path | None = None) -> list[Question]:
    """Read the gold set (JSON lines; blank lines skipped)."""
    source = Path(path) if path else DEFAULT_QUESTIONS
    with source.open(encoding="utf-8") as fh:
        return [Question.from_dict(json.loads(line)) for line in fh if line.strip()]


# ---- grounding ---------------------------------------------------------------------------------
def source_text(talk: Talk) -> str:
    """Everything a talk's listing says about it: what a citation may be grounded in."""
    bits = [talk.title, ", ".join(talk.speakers), talk.event or "", talk.event_date or "", talk.abstract]
    if talk.duration_min is not None:
        bits.append(f"{talk.duration_min} min")
    return "\n".join(b for b in bits if b)


def _library_verify() -> Callable[..., Any] | None:
    try:
        from qa.grounding import verify
    except ImportError:  # the library's checker is optional; the eval has its own
        return None
    return verify


@dataclass(frozen=True, slots=True)
class Grounding:
    """How well an answer's sentences are supported by the talks they cite (shares in 0..1)."""

    share: float | None
    overlap_share: float | None
    unsupported: tuple[str, ...] = ()


def grounding(answer: Answer, verify: Callable[..., Any] | None) -> Grounding | None:
    """Check the answer's sentences against its cited talks, with ``qa.grounding.verify`` when the
    library has it and always with the eval's own overlap check (``metrics.grounded_sentences``).

    Reference lines are rendered from the talk's own fields, so only the prose and quotes are
    checked (``metrics.claims_text``). ``None`` for an answer with no citations.
    """
    if not answer.citations:
        return None
    text = m.claims_text(answer.text)
    verdicts = m.grounded_sentences(text, {c.number: source_text(c.talk) for c in answer.citations})
    overlap = sum(ok for _, ok in verdicts) / len(verdicts) if verdicts else None
    unsupported = tuple(s for s, ok in verdicts if not ok)
    if verify is None:
        return Grounding(overlap, overlap, unsupported)
    try:
        checked = verify(text, {c.number: c.talk for c in answer.citations})
    except Exception as exc:  # another module's seam: fall back rather than lose the run
        logger.warning("qa.grounding.verify failed (%s); using the eval overlap check", exc)
        return Grounding(overlap, overlap, unsupported)
    flagged = tuple(checked.unsupported_sentences)
    share = float(checked.supported_share)
    return Grounding(None if share == 0.0 and not flagged else share, overlap, flagged)


# ---- scoring -----------------------------------------------------------------------------------
def score_answer(q: Question, ranked: Sequence[str], answer: Answer, grounded: Grounding | None) -> dict[str, Any]:
    """One question's record: what was retrieved and cited, and every per-question metric."""
    cited = list(dict.fromkeys(c.talk.id for c in answer.citations))
    top = list(ranked[:RANK_K])
    with_gold = q.answerable and bool(q.gold)
    return {
        "id": q.id,
        "question": q.question,
        "type": q.type,
        "answerable": q.answerable,
        "gold": list(q.gold),
        "ranked": top,
        "cited": cited,
        "refused": not cited,
        "hit@1": m.hit_at(top, q.gold, 1) if with_gold else None,
        "hit@5": m.hit_at(top, q.gold, 5) if with_gold else None,
        "recall@10": m.recall_at(top, q.gold, 10) if with_gold else None,
        "mrr": m.reciprocal_rank(top, q.gold, RANK_K) if with_gold else None,
        "citation_recall": m.citation_recall(cited, q.gold) if with_gold else None,
        "citation_precision": m.citation_precision(cited, q.gold, q.also_ok) if cited else None,
        # refusal metrics are defined where the right behaviour is clear: cite gold, or refuse
        "correct": m.is_correct(cited, q.gold, q.answerable) if with_gold or not q.answerable else None,
        "facts_ok": m.facts_present(answer.text, q.facts) if q.facts else None,
        "grounded": grounded.share if grounded else None,
        "grounded_overlap": grounded.overlap_share if grounded else None,
        "unsupported": list(grounded.unsupported) if grounded else [],
        "resolves": set(cited) <= set(ranked[:RESOLVE_K]) if cited else None,
        "failures": m.failure_kinds(
            cited=cited,
            gold=q.gold,
            also_ok=q.also_ok,
            answerable=q.answerable,
            facts=q.facts,
            text=answer.text,
            grounded=grounded.share if grounded else None,
        ),
    }


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def summarize(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate per-question records into the headline metrics (``None`` where undefined)."""
    judged = [r for r in records if r["correct"] is not None]
    unanswerable = [r for r in judged if not r["answerable"]]
    answered = [r for r in judged if not r["refused"]]
    with_gold = [r for r in judged if r["answerable"]]
    resolves = [r["resolves"] for r in records if r["resolves"] is not None]
    return {
        "n": len(records),
        "hit@1": m.mean(r["hit@1"] for r in records),
        "hit@5": m.mean(r["hit@5"] for r in records),
        "recall@10": m.mean(r["recall@10"] for r in records),
        "mrr": m.mean(r["mrr"] for r in records),
        "citation_recall": m.mean(r["citation_recall"] for r in records),
        "citation_precision": m.mean(r["citation_precision"] for r in records),
        "refusal_accuracy": _share([r["refused"] for r in unanswerable]),
        "false_refusal_rate": _share([r["refused"] for r in with_gold]),
        "answer_precision": _share([r["correct"] for r in answered]),
        "answer_accuracy": _share([r["correct"] for r in judged]),
        "fact_accuracy": m.mean(float(r["facts_ok"]) for r in records if r["facts_ok"] is not None),
        "groundedness": m.mean(r["grounded"] for r in records),
        "groundedness_overlap": m.mean(r["grounded_overlap"] for r in records),
        "citations_resolve": _share(resolves),
        "counts": {
            "retrieval": sum(r["hit@1"] is not None for r in records),
            "with_citations": sum(not r["refused"] for r in records),
            "unanswerable": len(unanswerable),
            "answered": len(answered),
            "judged": len(judged),
            "with_facts": sum(r["facts_ok"] is not None for r in records),
            "grounding_checked": sum(r["grounded"] is not None for r in records),
            "resolving": f"{sum(resolves)}/{len(resolves)}",
        },
    }


def run_system(system: System, questions: Sequence[Question], verify: Callable[..., Any] | None) -> Run:
    run = Run(system.name)
    start = time.perf_counter()
    for q in questions:
        ranked = system.rank(q.question, RESOLVE_K)
        answer = system.answer(q.question)
        grounded = grounding(answer, verify) if system.writes_text else None
        record = score_answer(q, ranked, answer, grounded)
        record["answerer"] = answer.answerer
        record["text"] = answer.text
        run.records.append(record)
    run.seconds = time.perf_counter() - start
    return run


def evaluate(
    questions: Sequence[Question],
    qa: TalkQA,
    systems: Sequence[str] = SYSTEMS,
    *,
    baseline_questions: Sequence[Question] | None = None,
) -> dict[str, Any]:
    """Run ``systems`` over ``questions`` and return the results document (see ``eval/README.md``).

    ``talkqa-llm`` runs only when the settings want an LLM; baselines may use a subset.
    """
    unknown = set(systems) - set(SYSTEMS)
    if unknown:
        raise ValueError(f"unknown system(s) {sorted(unknown)}; choose from {', '.join(SYSTEMS)}")
    verify = _library_verify()
    notes: list[str] = []
    built: list[tuple[System, Sequence[Question]]] = []
    talks = qa.talks() if {"naive-rag", "bm25"} & set(systems) else []
    for name in systems:
        if name == "naive-rag":
            built.append((NaiveRAG(talks, qa.embed), baseline_questions or questions))
        elif name == "bm25":
            built.append((BM25Baseline(talks), baseline_questions or questions))
        elif name == "talkqa-offline":
            built.append((TalkQASystem(qa, "offline"), questions))
        elif name == "talkqa-llm":
            if not qa.settings.wants_llm():
                notes.append("talkqa-llm skipped: no LLM configured (set OPENAI_API_KEY or OPENAI_BASE_URL).")
                continue
            try:
                llm = qa.llm
            except Exception as exc:  # the LLM seam may be missing or misconfigured
                notes.append(f"talkqa-llm skipped: {exc}")
                continue
            if llm is None:
                notes.append("talkqa-llm skipped: no LLM answerer available.")
                continue
            built.append((TalkQASystem(qa, "llm"), questions))
    runs = []
    for system, qs in built:
        logger.info("evaluating %s on %d questions", system.name, len(qs))
        runs.append(run_system(system, qs, verify if system.writes_text else None))
    checker = "qa.grounding.verify" if verify is not None else "eval.metrics word overlap"
    return {
        "questions": len(questions),
        "grounding_checker": checker,
        "notes": notes,
        "systems": {
            run.system: {
                "seconds": round(run.seconds, 1),
                "metrics": summarize(run.records),
                "by_type": {
                    t: summarize([r for r in run.records if r["type"] == t])
                    for t in sorted({r["type"] for r in run.records})
                },
                "failure_counts": dict(Counter(k for r in run.records for k in r["failures"]).most_common()),
                "records": run.records,
            }
            for run in runs
        },
    }


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    if getattr(args, "data_dir", None):
        overrides["home"] = Path(args.data_dir)
    if getattr(args, "chroma_url", None):
        overrides["chroma_url"] = args.chroma_url
    return Settings(**overrides)


def main(args: argparse.Namespace) -> int:
    """The ``talkqa eval`` command: evaluate, write the report folder, print a table (or JSON)."""
    from .report import metrics_json, terminal_table, write_report

    questions = load_questions(Path(args.questions) if args.questions else None)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()] if args.systems else list(SYSTEMS)
    unknown = sorted(set(systems) - set(SYSTEMS))
    if unknown:
        print(f"talkqa eval: unknown system(s) {', '.join(unknown)}; choose from {', '.join(SYSTEMS)}")
        return 2
    results = evaluate(questions, TalkQA(_settings(args)), systems)
    out = Path(args.out)
    write_report(results, out)
    if args.json:
        print(json.dumps(metrics_json(results), indent=2))
    else:
        print(terminal_table(results))
        for note in results["notes"]:
            print(note)
        print(f"Report: {out / 'report.md'}")
    return 0
