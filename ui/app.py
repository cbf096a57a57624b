"""The browser UI: a Gradio chat that streams cited answers next to a panel of source cards.

``build_app(qa)`` only builds the Blocks; ``main()`` is what ``talkqa serve`` runs and the only
place that launches a server.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import gradio as gr

from qa import Answer, QAError, Settings, Talk, TalkQA

from .render import answer_html, cards_html, question_html, status_html

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CONCURRENCY", "EXAMPLES", "THEME_CSS", "TalkQAApp", "build_app", "main", "talk_rows"]

logger = logging.getLogger(__name__)

CONCURRENCY = 4
MAX_QUEUE = 256
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7860
EXAMPLES = (
    "which talks cover PFC tuning?",
    "What talks did Sumit Gupta give?",
    "How many parameters does Arctic have?",
    "which talks cover quantum networking?",
)
ALL = ""
SEARCHING = '<div class="answer"><p><em>Searching the talks…</em></p></div>'
TABLE_HEADERS = ["Event", "Year", "Title", "Speakers", "Minutes"]
THEME_CSS = """
.gradio-container { max-width: 1280px !important; width: 100% !important; margin: auto; }
#talks-table, #talks-table * { font-family: var(--font) !important; }
#status .status { display: flex; gap: 1.5em; flex-wrap: wrap; font-size: 0.95em; opacity: 0.85; }
#status .notice { margin-top: 0.4em; padding: 0.4em 0.7em; border-radius: 6px;
  background: #fff7e0; color: #6b4a00; border: 1px solid #f0d48a; }
.answer p { margin: 0 0 0.6em 0; }
.answer blockquote { margin: 0 0 0.8em 0; padding: 0.2em 0.8em; border-left: 3px solid #c7d2fe;
  opacity: 0.9; font-size: 0.95em; }
a.cite { text-decoration: none; font-weight: 600; color: #4f46e5; padding: 0 1px; border-radius: 3px; }
a.cite:hover { background: #e0e7ff; }
.sources h3 { margin: 0 0 0.6em 0; font-size: 1.05em; }
.sources h3 small { font-weight: normal; opacity: 0.7; }
.sources .empty { opacity: 0.75; font-style: italic; }
.sources .card { border: 1px solid #e5e7eb; border-radius: 10px; padding: 0.7em 0.9em; margin-bottom: 0.7em;
  background: rgba(255,255,255,0.6); scroll-margin-top: 1em; transition: box-shadow .2s, border-color .2s; }
.sources .card:target, .sources .card.flash { border-color: #6366f1; box-shadow: 0 0 0 3px #c7d2fe; }
.sources .card-head { display: flex; gap: 0.5em; align-items: baseline; }
.sources .num { font-weight: 700; color: #4f46e5; }
.sources .title { margin: 0; font-size: 1em; font-weight: 650; }
.sources .meta { margin: 0.25em 0 0.4em 0; font-size: 0.88em; opacity: 0.75; }
.sources .quote { margin: 0; padding-left: 0.7em; border-left: 3px solid #e5e7eb; font-size: 0.92em; }
.sources .cut { opacity: 0.6; font-style: italic; }
.sources mark { background: #fde68a; color: inherit; padding: 0 1px; border-radius: 2px; }
#examples button { font-size: 0.85em; }
.examples-label p { margin: 0.2em 0 -0.4em 0; font-size: 0.9em; opacity: 0.8; }
"""
# Clicking a marker scrolls to and flashes its card, whatever the chat's own link handling does.
HEAD_JS = """
<script>
document.addEventListener("click", (e) => {
  const a = e.target.closest && e.target.closest("a.cite");
  if (!a) return;
  const card = document.getElementById(a.getAttribute("href").slice(1));
  e.preventDefault();
  if (!card) return;
  card.scrollIntoView({behavior: "smooth", block: "nearest"});
  card.classList.add("flash");
  setTimeout(() => card.classList.remove("flash"), 1600);
}, true);
</script>
"""


def _theme() -> gr.themes.Base:
    # System fonts only: the default theme would fetch fonts from Google.
    return gr.themes.Default(
        primary_hue="indigo",
        font=["ui-sans-serif", "system-ui", "sans-serif"],
        font_mono=["ui-monospace", "monospace"],
    )


class TalkQAApp(gr.Blocks):
    """``gr.Blocks`` whose ``launch()`` brings the app's theme, CSS and script (Gradio 6 takes them there)."""

    def launch(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("theme", _theme())
        kwargs.setdefault("css", THEME_CSS)
        kwargs.setdefault("head", HEAD_JS)
        kwargs.setdefault("footer_links", ["api"])
        return super().launch(*args, **kwargs)


def talk_rows(talks: list[Talk], query: str = "") -> pd.DataFrame:
    """Browse rows: talks whose event, title, speakers or abstract hold each word of ``query``."""
    import pandas as pd

    words = query.lower().split()
    rows = []
    for t in talks:
        hay = " ".join((t.event or "", t.title, " ".join(t.speakers), t.abstract, str(t.year or ""))).lower()
        if all(w in hay for w in words):
            rows.append([t.event or "", t.year, t.title, ", ".join(t.speakers), t.duration_min])
    return pd.DataFrame(rows, columns=TABLE_HEADERS)


def _none(value: Any) -> str | None:
    return str(value) if value not in (None, ALL) else None


def _year(value: Any) -> int | None:
    try:
        return int(value) if value not in (None, ALL) else None
    except (TypeError, ValueError):
        return None


def build_app(qa: TalkQA) -> TalkQAApp:
    """The chat + browse UI over ``qa``; queued, not launched."""
    status = qa.status()
    events = qa.events()
    talks = qa.talks()
    speakers = sorted({s for t in talks for s in t.speakers}, key=str.casefold)
    years = sorted({y for y in [e.year for e in events] + [t.year for t in talks] if y}, reverse=True)
    event_choices = [("All events", ALL)] + [(e.name, e.id) for e in sorted(events, key=lambda e: e.name)]
    year_choices = [("All years", ALL)] + [(str(y), str(y)) for y in years]
    speaker_choices = [("All speakers", ALL)] + [(s, s) for s in speakers]

    def base_status(notice: str | None = None) -> str:
        return status_html(str(status["answerer"]), int(status["talks"]), int(status["events"]), notice)

    def respond(
        question: str, chat: list[dict[str, Any]], asked: list[str], event: Any, year: Any, speaker: Any
    ) -> Iterator[tuple[Any, ...]]:
        question = (question or "").strip()
        if not question:
            raise gr.Error("Type a question first, or click one of the examples.")
        chat = [*(chat or []), {"role": "user", "content": question_html(question)}]
        chat.append({"role": "assistant", "content": SEARCHING})
        turn = len(asked or []) + 1
        yield chat, "", gr.skip(), base_status(), asked
        try:
            stream = qa.stream(
                question,
                event=_none(event),
                year=_year(year),
                speaker=_none(speaker),
                history=list(asked or []),
            )
            text = ""
            for piece in stream:
                text += piece
                chat[-1] = {"role": "assistant", "content": answer_html(text, turn)}
                yield chat, gr.skip(), gr.skip(), gr.skip(), gr.skip()
            answer = stream.answer
        except QAError as exc:
            raise gr.Error(str(exc)) from exc
        except Exception as exc:
            logger.exception("answering %r failed", question)
            raise gr.Error("Sorry, something went wrong while answering; please try again.") from exc
        if answer is None:
            raise gr.Error("Sorry, the answer was cut off; please try again.")
        chat[-1] = {"role": "assistant", "content": answer_html(answer.text, turn, answer.citations)}
        asked = [*(asked or []), question]
        yield chat, gr.skip(), cards_html(answer, turn), base_status(answer.notice), asked

    def ask(question: str, event: str = "", year: str = "", speaker: str = "") -> dict[str, Any]:
        """Answer ``question``; returns the answer (text, citations, notice…) plus the cards' HTML."""
        try:
            answer: Answer = qa.ask(question, event=_none(event), year=_year(year), speaker=_none(speaker))
        except QAError as exc:
            raise gr.Error(str(exc)) from exc
        except Exception as exc:
            logger.exception("answering %r failed", question)
            raise gr.Error("Sorry, something went wrong while answering; please try again.") from exc
        data = answer.to_dict()
        data["cards_html"] = cards_html(answer, 1)
        data["answer_html"] = answer_html(answer.text, 1, answer.citations)
        return data

    def browse(query: str) -> pd.DataFrame:
        return talk_rows(talks, query or "")

    def clear() -> tuple[Any, ...]:
        return [], "", cards_html(None), base_status(), []

    with TalkQAApp(title="TalkQA", analytics_enabled=False) as app:
        gr.Markdown("## TalkQA\nAsk about the conference talks; every answer cites the talks it used.")
        status_box = gr.HTML(base_status(), elem_id="status")
        with gr.Tab("Ask"):
            with gr.Row():
                event_dd = gr.Dropdown(event_choices, value=ALL, label="Event", elem_id="filter-event")
                year_dd = gr.Dropdown(year_choices, value=ALL, label="Year", elem_id="filter-year")
                speaker_dd = gr.Dropdown(
                    speaker_choices, value=ALL, label="Speaker", filterable=True, elem_id="filter-speaker"
                )
            with gr.Row(equal_height=False):
                with gr.Column(scale=3):
                    chatbot = gr.Chatbot(
                        label="Answers",
                        elem_id="chat",
                        height=440,
                        sanitize_html=True,
                        render_markdown=True,
                        latex_delimiters=[],
                        feedback_options=None,
                        allow_tags=False,
                        placeholder="Answers appear here, with [n] markers that point at the source cards.",
                    )
                    with gr.Row():
                        box = gr.Textbox(
                            placeholder="Ask about the talks, e.g. which talks cover PFC tuning?",
                            show_label=False,
                            scale=6,
                            elem_id="question",
                            max_lines=4,
                        )
                        send = gr.Button("Ask", variant="primary", scale=1, min_width=80)
                        reset = gr.Button("Clear", scale=1, min_width=80)
                    gr.Markdown("**Try one of these:**", elem_classes="examples-label")
                    with gr.Row(elem_id="examples"):
                        example_buttons = [gr.Button(q, size="sm") for q in EXAMPLES]
                with gr.Column(scale=2):
                    cards = gr.HTML(cards_html(None), elem_id="sources")
        with gr.Tab("Browse talks"):
            search = gr.Textbox(placeholder="Search title, speaker, event or abstract…", show_label=False)
            table = gr.Dataframe(
                talk_rows(talks),
                headers=TABLE_HEADERS,
                datatype=["str", "number", "str", "str", "number"],
                interactive=False,
                wrap=True,
                max_height=640,
                column_widths=["20%", "7%", "38%", "27%", "8%"],
                elem_id="talks-table",
            )
        asked = gr.State([])

        chat_inputs = [box, chatbot, asked, event_dd, year_dd, speaker_dd]
        chat_outputs = [chatbot, box, cards, status_box, asked]
        box.submit(respond, chat_inputs, chat_outputs, api_name="chat")
        send.click(respond, chat_inputs, chat_outputs, api_visibility="private")
        for button, question in zip(example_buttons, EXAMPLES, strict=True):
            button.click(lambda q=question: q, None, box, queue=False, api_visibility="private").then(
                respond, chat_inputs, chat_outputs, api_visibility="private"
            )
        reset.click(clear, None, chat_outputs, queue=False, api_visibility="private")
        search.change(browse, search, table, api_name="talks", queue=False)
        gr.api(ask, api_name="ask")
    app.queue(default_concurrency_limit=CONCURRENCY, max_size=MAX_QUEUE)
    return app


def main(
    settings: Settings | None = None, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, share: bool = False
) -> int:
    """Serve the UI until interrupted (``talkqa serve``)."""
    qa = TalkQA(settings)
    app = build_app(qa)
    app.queue(default_concurrency_limit=CONCURRENCY, max_size=MAX_QUEUE)
    app.launch(server_name=host, server_port=port, share=share)
    return 0
