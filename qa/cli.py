"""``talkqa``: ingest | ask | search | talks | serve | eval | llm-server.

The only place that prints; library errors become one-line messages and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import QAError

__all__ = ["build_parser", "main"]

EXIT_USAGE = 2


def _settings(args: argparse.Namespace) -> Any:
    from .config import Settings

    overrides: dict[str, Any] = {}
    if getattr(args, "data_dir", None):
        overrides["home"] = Path(args.data_dir)
    if getattr(args, "chroma_url", None):
        overrides["chroma_url"] = args.chroma_url
    if getattr(args, "answerer", None):
        overrides["answerer"] = args.answerer
    if getattr(args, "seeds", None):
        overrides["seeds"] = [Path(p) for p in args.seeds]
    return Settings(**overrides)


def _qa(args: argparse.Namespace) -> Any:
    from .api import TalkQA

    # reading commands index the seeds only into an empty store; `talkqa ingest` updates it
    return TalkQA(_settings(args), auto_ingest="if-empty")


def _progress_bar(done: int, total: int) -> None:
    if not sys.stderr.isatty() and done not in (0, total):
        return
    width = 30
    filled = width * done // total if total else width
    sys.stderr.write(f"\rembedding [{'#' * filled}{'.' * (width - filled)}] {done}/{total} chunks")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def cmd_ingest(args: argparse.Namespace) -> int:
    from .api import TalkQA

    qa = TalkQA(_settings(args), auto_ingest=False)
    paths = [Path(p) for p in args.paths] or None
    report = qa.ingest(paths, progress=None if args.json else _progress_bar, prune=True if args.prune else None)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
        return 0
    print(
        f"{report.files} files, {report.events} events, {report.talks} talks: "
        f"{report.added} added, {report.updated} updated, {report.removed} removed, "
        f"{report.unchanged} unchanged ({report.embedded_chunks} chunks embedded)"
    )
    for problem in report.skipped:
        print(f"skipped: {problem}")
    return 0


def _render_answer(ans: Any) -> str:
    out = [ans.text]
    if ans.notice:
        out.append(f"\nnote: {ans.notice}")
    out.append(f"\n({ans.answerer} answer; {ans.searched} talks searched)")
    return "\n".join(out)


def cmd_ask(args: argparse.Namespace) -> int:
    qa = _qa(args)
    question = " ".join(args.question)
    if args.json:
        ans = qa.ask(question, event=args.event, speaker=args.speaker, year=args.year)
        print(json.dumps(ans.to_dict(), indent=2, ensure_ascii=False))
        return 0
    stream = qa.stream(question, event=args.event, speaker=args.speaker, year=args.year)
    shown = []
    for piece in stream:
        shown.append(piece)
        sys.stdout.write(piece)
        sys.stdout.flush()
    ans = stream.answer
    if ans is not None and ans.text != "".join(shown):
        # an LLM's draft was streamed; what verification kept is the answer
        print("\n\n--- verified answer ---\n" + ans.text, end="")
    tail = []
    if ans is not None and ans.notice:
        tail.append(f"note: {ans.notice}")
    if ans is not None:
        tail.append(f"({ans.answerer} answer; {ans.searched} talks searched)")
    print("\n\n" + "\n".join(tail))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    qa = _qa(args)
    hits = qa.search(" ".join(args.query), k=args.k, event=args.event, speaker=args.speaker, year=args.year)
    if args.json:
        print(json.dumps([h.to_dict() for h in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("no talks found")
    for rank, hit in enumerate(hits, 1):
        talk = hit.talk
        print(f"{rank:>2}. {talk.title}  [{talk.id}]")
        print(
            f"    {', '.join(talk.speakers) or '-'} · {talk.event or '-'} · score {hit.score:.4f} (cos {hit.dense:.2f})"
        )
        if hit.passage:
            print(textwrap.indent(textwrap.fill(hit.passage, 96), "    > "))
    return 0


def cmd_talks(args: argparse.Namespace) -> int:
    qa = _qa(args)
    talks = qa.talks(event=args.event, speaker=args.speaker, year=args.year)
    if args.json:
        print(json.dumps([t.to_dict() for t in talks], indent=2, ensure_ascii=False))
        return 0
    rows = [("event", "title", "speakers", "min")] + [
        (t.event or "-", t.title, ", ".join(t.speakers) or "-", str(t.duration_min or "-")) for t in talks
    ]
    widths = [min(max(len(r[i]) for r in rows), cap) for i, cap in enumerate((34, 60, 40, 4))]
    for row in rows:
        print("  ".join(cell[:w].ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    print(f"\n{len(talks)} talks")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    from ui.app import main as serve

    settings = _settings(args)
    return serve(settings, host=args.host or settings.host, port=args.port or settings.port, share=args.share)


def cmd_eval(args: argparse.Namespace) -> int:
    from eval.run import main as run_eval

    return run_eval(args)


def cmd_llm_server(args: argparse.Namespace) -> int:
    from .llm_server import main as llm_server

    return llm_server(args)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", help="index location (default: $TALKQA_HOME or ~/.local/share/talkqa)")
    p.add_argument("--chroma-url", help="use a Chroma server, e.g. http://127.0.0.1:8000")


def _filters(p: argparse.ArgumentParser) -> None:
    p.add_argument("--event", help="only talks of this event (name, part of it, or id)")
    p.add_argument("--speaker", help="only talks by this speaker (partial or misspelt names work)")
    p.add_argument("--year", type=int, help="only talks of this year")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="talkqa", description="Ask questions of a conference programme.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest", help="parse listings and update the index (incremental)")
    p.add_argument("paths", nargs="*", help="listing files or folders (default: the bundled seeds)")
    p.add_argument("--prune", action="store_true", help="with PATHs: delete talks not in them")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    _common(p)
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("ask", help="answer a question, citing talks")
    p.add_argument("question", nargs="+")
    p.add_argument("--json", action="store_true", help="print the answer as JSON")
    p.add_argument("--answerer", choices=["auto", "offline", "llm"], help="who writes the answer")
    _filters(p)
    _common(p)
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("search", help="list the best-matching talks")
    p.add_argument("query", nargs="+")
    p.add_argument("--k", type=int, default=5, help="how many talks (default 5)")
    p.add_argument("--json", action="store_true")
    _filters(p)
    _common(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("talks", help="list the indexed talks as a table")
    p.add_argument("--json", action="store_true")
    _filters(p)
    _common(p)
    p.set_defaults(func=cmd_talks)

    p = sub.add_parser("serve", help="start the chat UI (127.0.0.1:7860)")
    p.add_argument("--host", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default 7860)")
    p.add_argument("--share", action="store_true", help="ask Gradio for a public link (needs internet)")
    p.add_argument("--answerer", choices=["auto", "offline", "llm"])
    _common(p)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("eval", help="run the grounding evaluation and write a report")
    p.add_argument("--questions", default=None, help="JSONL question set (default eval/questions.jsonl)")
    p.add_argument("--out", default="eval/results", help="report folder")
    p.add_argument("--json", action="store_true", help="print metrics as JSON")
    p.add_argument("--systems", default=None, help="comma-separated systems to run")
    _common(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("llm-server", help="serve a local GGUF chat model (OpenAI-compatible) on 127.0.0.1")
    p.add_argument("--model", default=None, help="GGUF path (default: the packaged model)")
    p.add_argument("--port", type=int, default=8088)
    p.add_argument("--threads", type=int, default=1)
    p.set_defaults(func=cmd_llm_server)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    for handler in logging.getLogger().handlers:  # libraries that set their own loggers to DEBUG stay quiet
        handler.setLevel(logging.INFO if args.verbose else logging.WARNING)
    try:
        return int(args.func(args) or 0)
    except QAError as exc:
        print(f"talkqa: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("talkqa: interrupted", file=sys.stderr)
        return 130
