"""Write the evaluation results: ``report.md``, ``results.json`` and PNG charts; format the terminal table."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["CHARTS", "metrics_json", "render_markdown", "terminal_table", "write_report"]

RETRIEVAL = ("hit@1", "hit@5", "recall@10", "mrr")
ANSWERS = (
    "citation_recall",
    "citation_precision",
    "refusal_accuracy",
    "answer_precision",
    "answer_accuracy",
    "fact_accuracy",
    "groundedness",
    "groundedness_overlap",
    "citations_resolve",
)
LABELS = {
    "hit@1": "hit@1",
    "hit@5": "hit@5",
    "recall@10": "recall@10",
    "mrr": "MRR",
    "citation_recall": "cit. recall",
    "citation_precision": "cit. precision",
    "refusal_accuracy": "refusal acc.",
    "false_refusal_rate": "false refusals",
    "answer_precision": "precision (answering)",
    "answer_accuracy": "accuracy (overall)",
    "fact_accuracy": "fact acc.",
    "groundedness": "groundedness",
    "groundedness_overlap": "grounded (overlap)",
    "citations_resolve": "citations resolve",
}
SHORT = {
    "hit@1": "hit@1",
    "hit@5": "hit@5",
    "recall@10": "recall@10",
    "mrr": "MRR",
    "citation_recall": "cit.rec",
    "citation_precision": "cit.prec",
    "refusal_accuracy": "refusal",
    "false_refusal_rate": "false-ref",
    "answer_precision": "ans.prec",
    "answer_accuracy": "ans.acc",
    "fact_accuracy": "facts",
    "groundedness": "grounded",
    "groundedness_overlap": "overlap",
    "citations_resolve": "resolve",
}
TYPE_COLUMNS = ("hit@5", "citation_recall", "citation_precision", "answer_accuracy", "fact_accuracy")
CHARTS = ("retrieval.png", "answers.png", "by_type.png")
FAILURES_SHOWN = 80


def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.2f}"


def metrics_json(results: dict[str, Any]) -> dict[str, Any]:
    """The metrics without per-question records (what ``--json`` prints)."""
    return {
        "questions": results["questions"],
        "grounding_checker": results["grounding_checker"],
        "notes": results["notes"],
        "systems": {name: {k: v for k, v in run.items() if k != "records"} for name, run in results["systems"].items()},
    }


def terminal_table(results: dict[str, Any], columns: Sequence[str] = RETRIEVAL + ANSWERS) -> str:
    """A fixed-width systems × metrics table."""
    names = list(results["systems"])
    width = max([len("system"), *(len(n) for n in names)])
    heads = [SHORT[c] for c in columns]
    lines = ["  ".join(["system".ljust(width), *(h.rjust(9) for h in heads)])]
    for name in names:
        metrics = results["systems"][name]["metrics"]
        lines.append("  ".join([name.ljust(width), *(_fmt(metrics[c]).rjust(9) for c in columns)]))
    return "\n".join(lines)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def render_markdown(results: dict[str, Any]) -> str:
    """The report: headline table, per-type table per TalkQA system, failure lists."""
    systems = results["systems"]
    lines = [
        "# TalkQA grounding evaluation",
        "",
        f"{results['questions']} questions from `eval/questions.jsonl`; regenerate with `talkqa eval` "
        "(see `eval/README.md` for what each metric means).",
        f"Groundedness checker: {results['grounding_checker']}.",
        "",
    ]
    lines += [f"- {note}" for note in results["notes"]]
    lines += ["", "## Headline", ""]
    header = ["system", *(LABELS[c] for c in RETRIEVAL + ANSWERS), "seconds"]
    rows = [
        [name, *(_fmt(run["metrics"][c]) for c in RETRIEVAL + ANSWERS), f"{run['seconds']:.0f}"]
        for name, run in systems.items()
    ]
    lines += _table(header, rows)
    if systems:
        counts = next(iter(systems.values()))["metrics"]["counts"]
        lines += [
            "",
            f"Retrieval metrics over {counts['retrieval']} answerable questions with gold talks; "
            f"refusal accuracy over {counts['unanswerable']} unanswerable ones; precision (answering) "
            "and accuracy (overall) over those two groups together (an answer that cites nothing "
            "is a refusal); fact accuracy over questions with facts. Groundedness and citations-resolve "
            "are computed for systems that write text / cite talks; baselines quote their chunks verbatim.",
            "",
            "![retrieval](retrieval.png)",
            "",
            "![answers](answers.png)",
            "",
            "![by type](by_type.png)",
        ]
    for name, run in systems.items():
        if not name.startswith("talkqa"):
            continue
        lines += ["", f"## {name} by question type", ""]
        rows = [
            [t, str(s["n"]), *(_fmt(s[c]) for c in TYPE_COLUMNS), _fmt(s["refusal_accuracy"])]
            for t, s in run["by_type"].items()
        ]
        lines += _table(["type", "n", *(LABELS[c] for c in TYPE_COLUMNS), "refusal acc."], rows)
    for name, run in systems.items():
        failed = [r for r in run["records"] if r["failures"]]
        lines += ["", f"## Failures: {name} ({len(failed)} questions)", ""]
        kinds = ", ".join(f"{k}: {n}" for k, n in run["failure_counts"].items()) or "none"
        lines += [f"By kind: {kinds}.", ""]
        if not name.startswith("talkqa"):
            continue
        for r in failed[:FAILURES_SHOWN]:
            gold = ", ".join(f"`{g}`" for g in r["gold"]) or "(none: should refuse)"
            cited = ", ".join(f"`{c}`" for c in r["cited"]) or "(nothing)"
            lines.append(
                f"- **{r['id']}** ({r['type']}; {', '.join(r['failures'])}) {r['question']}  \n"
                f"  gold: {gold}  \n  cited: {cited}"
            )
            if "unsupported sentence" in r["failures"]:
                flagged = " / ".join(f"“{u}”" for u in r["unsupported"][:3])
                lines[-1] += f"  \n  unsupported: {flagged}"
        if len(failed) > FAILURES_SHOWN:
            lines.append(f"- … and {len(failed) - FAILURES_SHOWN} more in `results.json`.")
    return "\n".join(lines) + "\n"


def _bars(ax: Any, groups: Sequence[str], series: dict[str, list[float | None]], title: str) -> None:
    """Grouped bars; a metric that does not apply to a system is drawn as an "n/a" label, not a 0."""
    import numpy as np

    x = np.arange(len(groups))
    width = 0.8 / max(1, len(series))
    for i, (label, values) in enumerate(series.items()):
        heights = [v or 0.0 for v in values]
        bars = ax.bar(x + (i - (len(series) - 1) / 2) * width, heights, width, label=label)
        texts = ["n/a" if v is None else f"{v:.2f}" for v in values]
        ax.bar_label(bars, labels=texts, fontsize=7, padding=1, rotation=90)
    ax.set_xticks(x, groups, rotation=20, ha="right")
    ax.set_ylim(0, 1.18)
    ax.set_ylabel("score (0–1)")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", ncols=max(1, len(series)))


def write_charts(results: dict[str, Any], out: Path) -> list[Path]:
    """Per-metric bars per system (retrieval, answers) and a per-type breakdown."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = results["systems"]
    written = []
    for filename, columns, title in (
        ("retrieval.png", RETRIEVAL, "Retrieval (answerable questions with gold talks)"),
        ("answers.png", ANSWERS, "Answers: citations, refusals, facts, grounding"),
    ):
        fig, ax = plt.subplots(figsize=(11, 5), dpi=110)
        series = {name: [run["metrics"][c] for c in columns] for name, run in systems.items()}
        _bars(ax, [LABELS[c] for c in columns], series, title)
        fig.tight_layout()
        fig.savefig(out / filename)
        plt.close(fig)
        written.append(out / filename)
    types = sorted({t for run in systems.values() for t in run["by_type"]})
    fig, ax = plt.subplots(figsize=(11, 5), dpi=110)
    series = {
        name: [(run["by_type"].get(t) or {}).get("answer_accuracy") for t in types] for name, run in systems.items()
    }
    _bars(ax, types, series, "Accuracy (cites a gold talk / refuses when it should) by question type")
    fig.tight_layout()
    fig.savefig(out / "by_type.png")
    plt.close(fig)
    written.append(out / "by_type.png")
    return written


def write_report(results: dict[str, Any], out: Path) -> list[Path]:
    """Write ``report.md``, ``results.json`` (records without answer text) and the charts."""
    out.mkdir(parents=True, exist_ok=True)
    slim = metrics_json(results)
    for name, run in results["systems"].items():
        slim["systems"][name]["records"] = [{k: v for k, v in r.items() if k != "text"} for r in run["records"]]
    (out / "results.json").write_text(json.dumps(slim, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "report.md").write_text(render_markdown(results), encoding="utf-8")
    return [out / "results.json", out / "report.md", *write_charts(results, out)]
