"""Pure HTML rendering for the chat UI: answers with linked ``[n]`` markers and source cards.

Everything that reaches the page passes through :func:`escape`, which HTML-escapes text and also
turns markdown's syntax characters into entities, so a talk title such as
``<script>alert(1)</script>`` or ``[x](javascript:alert(1))`` shows as literal text. The
markup we add ourselves (``<strong>``, ``<blockquote>``, marker links) is built around escaped
pieces, and each answer is one ``<div>`` without blank lines, so a markdown renderer passes it
through untouched.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from itertools import groupby

from qa import Answer, Citation, Talk

__all__ = [
    "answer_html",
    "cards_html",
    "escape",
    "highlight",
    "question_html",
    "question_terms",
    "status_html",
    "talk_meta",
]

# Markdown (and LaTeX) syntax characters, written as entities so no renderer acts on them.
_MARKDOWN_ENTITIES = str.maketrans({c: f"&#{ord(c)};" for c in "[]()*_`$|~\\"})
_INLINE = re.compile(r"\*\*(?P<bold>.+?)\*\*|\*(?P<em>[^*\n]+?)\*|\[(?P<num>\d{1,3})\]")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9+#.-]*[A-Za-z0-9+#]|[A-Za-z0-9]")
_STOPWORD_TEXT = """
a about above after all also an and any are as at be been by can cover covers covered could did do
does for from give gave given had has have how i in is it its many me much of on or present
presented said say speak spoke talk talks that the their them there these they this those to was
were what when where which who whom why will with would you your
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def escape(text: str) -> str:
    """HTML-escape ``text`` and neutralise markdown syntax.

    >>> escape('<b>[x](javascript:1)</b>')
    '&lt;b&gt;&#91;x&#93;&#40;javascript:1&#41;&lt;/b&gt;'
    """
    return html.escape(text, quote=True).translate(_MARKDOWN_ENTITIES)


def _attr(text: str) -> str:
    return escape(text)


def question_terms(question: str) -> list[str]:
    """The words of ``question`` worth highlighting in a quote.

    >>> question_terms("Which talks cover PFC tuning?")
    ['pfc', 'tuning']
    """
    seen: list[str] = []
    for word in _WORD.findall(question.lower()):
        if len(word) > 1 and word not in _STOPWORDS and word not in seen:
            seen.append(word)
    return seen


def highlight(text: str, terms: Sequence[str]) -> str:
    """Escape ``text`` and wrap each word starting with one of ``terms`` in ``<mark>``.

    >>> highlight("PFC & ECN tuning", ["pfc", "tune"])
    '<mark>PFC</mark> &amp; ECN tuning'
    """
    if not terms:
        return escape(text)
    stems = sorted({_stem(t) for t in terms}, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w])(?:" + "|".join(re.escape(s) for s in stems) + r")\w*", re.I)
    out: list[str] = []
    last = 0
    for match in pattern.finditer(text):
        out.append(escape(text[last : match.start()]))
        out.append(f"<mark>{escape(match.group(0))}</mark>")
        last = match.end()
    out.append(escape(text[last:]))
    return "".join(out)


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def talk_meta(talk: Talk) -> str:
    """One line about a talk: speakers · event (date) · length, as plain text.

    >>> talk_meta(Talk(id="t", title="T", speakers=("A", "B"), duration_min=21, event="X 2025", year=2025))
    'A, B · X 2025 · 21 min'
    """
    parts: list[str] = []
    if talk.speakers:
        parts.append(", ".join(talk.speakers))
    when = talk.event_date or (str(talk.year) if talk.year and not _has_year(talk.event, talk.year) else "")
    if talk.event:
        parts.append(f"{talk.event} ({when})" if when else talk.event)
    elif when:
        parts.append(when)
    if talk.duration_min:
        parts.append(f"{talk.duration_min} min")
    return " · ".join(parts)


def _has_year(name: str | None, year: int) -> bool:
    return bool(name) and str(year) in (name or "")


def _marker(num: str, turn: int, titles: dict[int, str]) -> str:
    title = titles.get(int(num))
    tip = f' title="{_attr(f"[{num}] {title}")}"' if title else ""
    return f'<a class="cite" href="#cite-{turn}-{num}"{tip}>[{num}]</a>'


def _inline(line: str, turn: int, titles: dict[int, str]) -> str:
    out: list[str] = []
    last = 0
    for match in _INLINE.finditer(line):
        out.append(escape(line[last : match.start()]))
        if match.group("bold") is not None:
            out.append(f"<strong>{escape(match.group('bold'))}</strong>")
        elif match.group("em") is not None:
            out.append(f"<em>{escape(match.group('em'))}</em>")
        else:
            out.append(_marker(match.group("num"), turn, titles))
        last = match.end()
    out.append(escape(line[last:]))
    return "".join(out)


def answer_html(text: str, turn: int, citations: Iterable[Citation] = ()) -> str:
    """Render the library's small markdown answer (paragraphs, ``>`` quotes, bold, ``[n]``) as HTML.

    Markers link to the card ``#cite-<turn>-<n>`` and carry the cited title as a tooltip.

    >>> answer_html("See **A** [1]\\n> q", 2)  # doctest: +ELLIPSIS
    '<div class="answer"><p>See <strong>A</strong> <a class="cite" href="#cite-2-1">[1]</a></p>...'
    """
    titles = {c.number: c.talk.title for c in citations}
    blocks: list[str] = []
    for para in re.split(r"\n\s*\n", text.strip()):
        lines = [line.strip() for line in para.split("\n") if line.strip()]
        for is_quote, group in groupby(lines, key=lambda line: line.startswith(">")):
            body = "<br>".join(_inline(x[1:].strip() if is_quote else x, turn, titles) for x in group)
            blocks.append(f"<blockquote>{body}</blockquote>" if is_quote else f"<p>{body}</p>")
    return '<div class="answer">' + "".join(blocks) + "</div>"


def question_html(question: str) -> str:
    """A user's question as inert HTML."""
    return '<div class="question">' + escape(question).replace("\n", "<br>") + "</div>"


def cards_html(answer: Answer | None, turn: int = 0) -> str:
    """One card per citation (title, speakers, event and date, length, quote with terms marked)."""
    if answer is None:
        return (
            '<div class="sources"><h3>Sources</h3>'
            '<p class="empty">Ask a question: every talk the answer cites appears here as a card.</p></div>'
        )
    if not answer.citations:
        return (
            '<div class="sources"><h3>Sources</h3>'
            '<p class="empty">No sources: no talk in the index was cited for this question.</p></div>'
        )
    terms = question_terms(answer.question)
    cards: list[str] = []
    for c in answer.citations:
        talk = c.talk
        quote = highlight(c.quote, terms)
        note = ' <span class="cut">(the listing cuts this abstract short)</span>' if talk.truncated else ""
        cards.append(
            f'<article class="card" id="cite-{turn}-{c.number}" data-talk-id="{_attr(talk.id)}">'
            f'<div class="card-head"><span class="num">[{c.number}]</span>'
            f'<h4 class="title">{escape(talk.title)}</h4></div>'
            f'<p class="meta">{escape(talk_meta(talk))}</p>'
            f'<blockquote class="quote">{quote}{note}</blockquote></article>'
        )
    count = len(answer.citations)
    head = f"<h3>Sources <small>({count} talk{'s' if count != 1 else ''})</small></h3>"
    return '<div class="sources">' + head + "".join(cards) + "</div>"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def status_html(answerer: str, talks: int, events: int, notice: str | None = None) -> str:
    """The status line: answerer, index size and the latest answer's notice, if any."""
    line = (
        f'<div class="status"><span>Answerer: <b>{escape(answerer)}</b></span>'
        f"<span>{_count(talks, 'talk')} from {_count(events, 'event')} indexed</span></div>"
    )
    if notice:
        line += f'<div class="notice" role="status">⚠ {escape(notice)}</div>'
    return line
