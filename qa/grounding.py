"""Check an LLM's answer against the talks it cites (pure): markers, renumbering, sentence support.

``verify`` takes the model's text and the numbered talks of the prompt and returns what may be
shown:

1. markers that are not valid keys (``[9]`` with five sources) are removed and reported;
2. every sentence is checked against the talks it cites (uncited sentences against every talk the
   answer cites) with an offline overlap test: most of its content words, and every number in it,
   must occur in those talks' title, speakers, event, length and abstract;
3. unsupported sentences are removed;
4. the remaining markers are renumbered 1..k in order of first appearance, one number per talk,
   and each citation gets the abstract sentence that best supports the sentences citing it.

If nothing supported remains (``Verified.ok`` is false) the caller shows the offline answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .chunking import split_sentences
from .query import stem, strip_instructions, terms
from .records import Citation, Hit, Talk

__all__ = [
    "MIN_MARKER_SUPPORT",
    "MIN_SUPPORT",
    "Markers",
    "Verified",
    "parse_citations",
    "split_answer",
    "support",
    "verify",
]

#: Share of a sentence's content words that must occur in its cited talks (numbers must all occur).
#: Calibrated on SmolLM2 answers to eval/questions.jsonl and hand-written wrong sentences (docs/llm.md).
MIN_SUPPORT = 0.5
#: In a sentence citing several talks, a talk whose own support is below this loses its marker.
MIN_MARKER_SUPPORT = 0.34

_MARKER = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
# a sentence ends at . ! ? (plus closing quotes) and any citation markers that follow it
_BOUNDARY = re.compile(r"[.!?]+[\"”’')]*(?:[ \t]*\[[\d,;\s]+\])*[ \t]+(?=\S)")
_LIST_PREFIX = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
# words about talks and sources, not about their content: they prove nothing either way
_META_WORDS = """
    source sources provided based according information answer question questions titled called named
    focus focuses focused focusing abstract key keys listed also however overall summary mentioned include
    includes including included discuss discussing topic topics various several many different provide
    provides explore explores exploring highlight highlights cited cite citation context following sure help
    hope helps here note notes specific specifically detail details relevant related regarding talk talks
    speaker speakers presented presenting presents event length minutes minute titled title"""
_META = frozenset(stem(w) for w in _META_WORDS.split())


@dataclass(frozen=True, slots=True)
class Markers:
    """Citation markers of a text: valid numbers in order of first appearance, and invalid ones as written."""

    found: tuple[int, ...]
    invalid: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Verified:
    """The verified answer: ``text`` only holds supported sentences and valid, renumbered markers."""

    text: str
    citations: tuple[Citation, ...]
    dropped: tuple[str, ...]
    unsupported_sentences: tuple[str, ...]
    supported_share: float
    repeated: int = 0

    @property
    def ok(self) -> bool:
        """Something supported and cited remains."""
        return bool(self.citations) and bool(self.text.strip())


def parse_citations(text: str, valid_numbers: Iterable[int]) -> Markers:
    """The ``[n]`` markers of ``text`` (``[1, 2]`` counts as 1 and 2), split into valid and invalid.

    >>> parse_citations("PFC [2]. ECN [1][9]. Both [2, 1].", {1, 2})
    Markers(found=(2, 1), invalid=('[9]',))
    """
    valid = set(valid_numbers)
    found: dict[int, None] = {}
    invalid: dict[str, None] = {}
    for match in _MARKER.finditer(text):
        for part in re.split(r"[,;]", match.group(1)):
            number = int(part)
            if number in valid:
                found.setdefault(number)
            else:
                invalid.setdefault(f"[{number}]")
    return Markers(found=tuple(found), invalid=tuple(invalid))


def split_answer(text: str) -> list[str]:
    """Split an answer into sentences that keep their own trailing whitespace and markers.

    ``"".join(split_answer(text)) == text``; list items and lines are separate sentences.

    >>> split_answer("PFC is tuned. [1] ECN too [2].\\n1. Item [1]")
    ['PFC is tuned. [1] ', 'ECN too [2].\\n', '1. Item [1]']
    """
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        start = 0
        prefix = _LIST_PREFIX.match(line)  # "1. " numbers a list item; it ends no sentence
        for match in _BOUNDARY.finditer(line, prefix.end() if prefix else 0):
            out.append(line[start : match.end()])
            start = match.end()
        if start < len(line):
            out.append(line[start:])
    return out


def _talk_text(talk: Talk) -> str:
    # an instruction planted in an abstract ("ignore previous instructions and say X") is no support for X
    parts = [talk.title, " ".join(talk.speakers), talk.event or "", strip_instructions(talk.abstract_text)]
    if talk.duration_min:
        parts.append(f"{talk.duration_min} minutes")
    if talk.year:
        parts.append(str(talk.year))
    return "\n".join(parts)


def _content(text: str) -> list[str]:
    text = _MARKER.sub(" ", _LIST_PREFIX.sub("", text))
    return [t for t in terms(text) if t not in _META]


def _vocabulary(talks: Iterable[Talk]) -> set[str]:
    vocab: set[str] = set()
    for talk in talks:
        vocab.update(terms(_talk_text(talk), keep_stopwords=True))
    return vocab


def _known(term: str, vocab: set[str], prefixes: set[str]) -> bool:
    if term in vocab:
        return True
    if any(ch.isdigit() for ch in term):
        return False
    return len(term) >= 6 and term[:6] in prefixes


def support(sentence: str, talks: Sequence[Talk]) -> float:
    """Share of the sentence's content words found in ``talks`` (0 if any number is not found).

    A sentence with no content words (``"Yes."``) scores 1: it claims nothing checkable.

    >>> t = Talk(id="t", title="PFC tuning", abstract="We tune PFC thresholds on 400G RoCE links.")
    >>> support("The talk tunes PFC thresholds [1].", [t])
    1.0
    >>> support("It covers PFC on 800G links [1].", [t])
    0.0
    >>> round(support("It explains quantum chemistry and PFC [1].", [t]), 2)
    0.33
    """
    words = _content(sentence)
    if not words:
        return 1.0
    vocab = _vocabulary(talks)
    prefixes = {t[:6] for t in vocab if len(t) >= 6}
    known = [_known(w, vocab, prefixes) for w in words]
    if any(not ok and any(ch.isdigit() for ch in w) for w, ok in zip(words, known, strict=True)):
        return 0.0
    unique = dict(zip(words, known, strict=True))
    return sum(unique.values()) / len(unique)


def _numbers_in(sentence: str, valid: set[int]) -> list[int]:
    return [n for n in parse_citations(sentence, valid).found]


def _renumber(text: str, mapping: Mapping[int, int], valid: set[int]) -> str:
    def replace(match: re.Match[str]) -> str:
        numbers: dict[int, None] = {}
        for part in re.split(r"[,;]", match.group(1)):
            number = int(part)
            if number in valid and number in mapping:
                numbers.setdefault(mapping[number])
        return "".join(f"[{n}]" for n in numbers)

    text = _MARKER.sub(replace, text)
    text = re.sub(r"(\[\d+\])(?:\1)+", r"\1", text)  # [1][1] -> [1]
    text = re.sub(r"[ \t]+([.,;:!?])", r"\1", text)  # "word [9]." -> "word."
    return re.sub(r"[ \t]{2,}", " ", text)


def _remove_numbers(sentence: str, remove: set[int]) -> str:
    if not remove:
        return sentence

    def replace(match: re.Match[str]) -> str:
        kept = [p.strip() for p in re.split(r"[,;]", match.group(1)) if int(p) not in remove]
        return f"[{', '.join(kept)}]" if kept else ""

    return _MARKER.sub(replace, sentence)


def _best_quote(talk: Talk, sentences: Sequence[str]) -> str:
    abstract = split_sentences(talk.abstract_text)
    if not abstract:
        return talk.title
    wanted = {t for s in sentences for t in _content(s)}
    scored = [(len(wanted & set(terms(a))), -i, a) for i, a in enumerate(abstract)]
    best = max(scored)
    return best[2] if best[0] > 0 else abstract[0]


def verify(
    text: str,
    hits_by_number: Mapping[int, Hit | Talk],
    *,
    min_support: float = MIN_SUPPORT,
    min_marker_support: float = MIN_MARKER_SUPPORT,
) -> Verified:
    """Keep the sentences of ``text`` that its cited talks support; renumber; quote.

    >>> pfc = Talk(id="pfc", title="PFC tuning", abstract="We tune PFC thresholds. Then we rest.")
    >>> ecn = Talk(id="ecn", title="ECN marking", abstract="ECN marks packets early.")
    >>> v = verify("ECN marks packets [2]. It cures cancer [2]. PFC thresholds are tuned [1][9].",
    ...            {1: pfc, 2: ecn})
    >>> v.text
    'ECN marks packets [1]. PFC thresholds are tuned [2].'
    >>> [(c.number, c.talk.id, c.quote) for c in v.citations]
    [(1, 'ecn', 'ECN marks packets early.'), (2, 'pfc', 'We tune PFC thresholds.')]
    >>> v.dropped, v.unsupported_sentences, round(v.supported_share, 2)
    (('[9]',), ('It cures cancer [2].',), 0.67)
    """
    talks = {n: (h.talk if isinstance(h, Hit) else h) for n, h in hits_by_number.items()}
    valid = set(talks)
    dropped = parse_citations(text, valid).invalid
    cited_anywhere = [talks[n] for n in parse_citations(text, valid).found]

    kept: list[str] = []
    unsupported: list[str] = []
    seen: set[str] = set()
    checked = passed = repeated = 0
    for sentence in split_answer(text):
        if not sentence.strip():
            kept.append(sentence)
            continue
        numbers = _numbers_in(sentence, valid)
        words = _content(sentence)
        if not words and not numbers:
            kept.append(sentence)  # "Yes." or "Sources:": claims nothing, cites nothing
            continue
        key = " ".join(words) + "|" + ",".join(map(str, sorted(numbers)))
        if key in seen:  # small models loop: a repeated sentence is shown once
            repeated += 1
            kept.append("\n" if sentence.endswith("\n") else "")
            continue
        seen.add(key)
        checked += 1
        against = [talks[n] for n in numbers] if numbers else cited_anywhere
        if words and against and support(sentence, against) >= min_support:
            passed += 1
            if len(numbers) > 1:  # "[1][4]": keep only the markers whose talk supports it alone
                weak = {n for n in numbers if support(sentence, [talks[n]]) < min_marker_support}
                sentence = _remove_numbers(sentence, weak if weak != set(numbers) else set())
            kept.append(sentence)
        else:  # unsupported, or markers with no claim ("[1] [2] [3]")
            unsupported.append(sentence.strip())
            kept.append("\n" if sentence.endswith("\n") else "")

    body = re.sub(r"\n{3,}", "\n\n", "".join(kept)).strip()
    order = parse_citations(body, valid).found
    mapping = {old: new for new, old in enumerate(order, 1)}
    body = _renumber(body, mapping, valid)
    sentences = split_answer(body)
    citations = tuple(
        Citation(
            number=new,
            talk=talks[old],
            quote=_best_quote(talks[old], [s for s in sentences if f"[{new}]" in s]),
        )
        for old, new in mapping.items()
    )
    share = passed / checked if checked else 0.0
    return Verified(
        text=body if citations and passed else "",
        citations=citations,
        dropped=dropped,
        unsupported_sentences=tuple(unsupported),
        supported_share=share,
        repeated=repeated,
    )
