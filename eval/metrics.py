"""Grounding metrics for one question at a time (pure functions over ids and text).

Retrieval metrics follow LlamaIndex's ``RetrieverEvaluator`` (hit rate, recall, MRR); citation
recall and precision are ALCE's, at talk level; refusal metrics are PaperQA2's "precision when
answering" and "accuracy overall"; groundedness is an offline word-overlap check of each answer
sentence against the text of the talks it cites.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "FAILURE_KINDS",
    "SUPPORT_SHARE",
    "answer_sentences",
    "citation_precision",
    "citation_recall",
    "claims_text",
    "content_words",
    "facts_present",
    "failure_kinds",
    "grounded_sentences",
    "hit_at",
    "is_correct",
    "mean",
    "recall_at",
    "reciprocal_rank",
    "supported",
]

#: A sentence is supported when this share of its content words occurs in the cited talks' text.
SUPPORT_SHARE = 0.6
#: Sentences with fewer content words than this carry no claim worth checking ("Two talks match:").
MIN_CLAIM_WORDS = 3

FAILURE_KINDS = (
    "false refusal",
    "wrong talk",
    "should refuse",
    "partial recall",
    "extra citation",
    "fact missing",
    "unsupported sentence",
)

_WORD = re.compile(r"[a-z0-9][a-z0-9'’\-]*[a-z0-9]|[a-z0-9]")
_MARKER = re.compile(r"\[(\d+)\]")
# "It is fast. [1]" -> "It is fast [1]." so a sentence splitter cannot cut the marker off
_TRAILING_MARKERS = re.compile(r"([.!?…]+)((?:[ \t]*\[\d+\])+)")
# a sentence ends at . ! ? … and any citation markers right after it ("It is fast. [1] Next")
_SENTENCE_END = re.compile(r"[.!?…]+[\"”’')]*(?:[ \t]*\[\d+(?:,\s*\d+)*\])*[ \t]+(?=[A-Z0-9“\"(*])")
#: Function words plus the answer templates' own vocabulary, which no talk text needs to hold.
_STOP_WORDS = """
    a about above after again all also am an and any are as at be been being but by can could did do
    does doing for from had has have having he her here hers him his how i if in into is it its itself
    just me more most my no nor not of off on once only or other our out over own same she should so
    some such than that the their them then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    talk talks gave give given covers cover covered match matches matching question listed listing
    speaker speakers session sessions event min minutes ran longer shorter between title derived
    abstract one two three four five six seven eight nine ten more other others"""
_STOP = frozenset(_STOP_WORDS.split())


def hit_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1.0 when any gold id is among the first ``k`` ranked ids.

    >>> hit_at(["a", "b", "c"], {"c"}, 2), hit_at(["a", "b", "c"], {"c"}, 3)
    (0.0, 1.0)
    """
    wanted = set(gold)
    return 1.0 if wanted.intersection(ranked[:k]) else 0.0


def recall_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Share of the gold ids found among the first ``k`` ranked ids.

    >>> recall_at(["a", "b", "c"], ["a", "c", "d", "e"], 3)
    0.5
    """
    wanted = set(gold)
    if not wanted:
        raise ValueError("recall needs at least one gold id")
    return len(wanted.intersection(ranked[:k])) / len(wanted)


def reciprocal_rank(ranked: Sequence[str], gold: Iterable[str], k: int = 10) -> float:
    """1 / rank of the first gold id within the first ``k`` (0 when none).

    >>> reciprocal_rank(["a", "b", "c"], {"b", "c"})
    0.5
    """
    wanted = set(gold)
    for rank, item in enumerate(ranked[:k], 1):
        if item in wanted:
            return 1.0 / rank
    return 0.0


def citation_recall(cited: Iterable[str], gold: Iterable[str]) -> float:
    """ALCE recall at talk level: |cited ∩ gold| / |gold|.

    >>> citation_recall(["a", "x"], ["a", "b"])
    0.5
    """
    wanted = set(gold)
    if not wanted:
        raise ValueError("citation recall needs at least one gold id")
    return len(wanted.intersection(cited)) / len(wanted)


def citation_precision(cited: Iterable[str], gold: Iterable[str], also_ok: Iterable[str] = ()) -> float:
    """ALCE precision at talk level: |cited ∩ (gold ∪ also_ok)| / |cited|.

    >>> citation_precision(["a", "b", "x", "y"], ["a"], ["b"])
    0.5
    """
    got = set(cited)
    if not got:
        raise ValueError("citation precision needs at least one citation")
    return len(got & (set(gold) | set(also_ok))) / len(got)


def is_correct(cited: Iterable[str], gold: Iterable[str], answerable: bool) -> bool:
    """PaperQA2-style correctness: an unanswerable question is refused (nothing cited);
    an answerable one cites at least one of its gold talks.

    >>> is_correct([], [], False), is_correct(["x"], [], False), is_correct(["x", "g"], ["g"], True)
    (True, False, True)
    """
    got = set(cited)
    if not answerable:
        return not got
    return bool(got & set(gold))


def facts_present(text: str, facts: Iterable[str]) -> bool:
    """Every fact string occurs in the answer text (case-insensitive).

    >>> facts_present("Arctic is a 480B MoE.", ["480b", "MoE"]), facts_present("Arctic", ["480B"])
    (True, False)
    """
    lowered = text.casefold()
    return all(fact.casefold() in lowered for fact in facts)


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry a claim: lower-cased, no function or template words.

    >>> content_words("Sumit Gupta gave two talks about QLC flash storage.")
    ['sumit', 'gupta', 'qlc', 'flash', 'storage']
    """
    words = _WORD.findall(text.casefold().replace("’", "'"))
    return [w for w in words if w not in _STOP and (not w.isdigit() or len(w) > 1)]


def _norm(word: str) -> str:
    word = word.removesuffix("'s")
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def supported(sentence: str, source: str, share: float = SUPPORT_SHARE) -> bool | None:
    """Whether ``source`` backs ``sentence``: enough of its content words occur in it.

    ``None`` for sentences too short to carry a claim.

    >>> src = "Arctic is a 480B parameter MoE model trained by Snowflake."
    >>> supported("Arctic has 480B parameters and was trained by Snowflake.", src)
    True
    >>> supported("Arctic was trained on TPUs by Google in Zurich.", src)
    False
    >>> supported("Two talks match:", src) is None
    True
    """
    words = [_norm(w) for w in content_words(sentence)]
    if len(words) < MIN_CLAIM_WORDS:
        return None
    have = {_norm(w) for w in content_words(source)}
    return sum(w in have for w in words) / len(words) >= share


def _split(line: str) -> list[str]:
    """>>> _split("PFC is tuned. [1] ECN too [2]. Done")
    ['PFC is tuned. [1]', 'ECN too [2].', 'Done']
    """
    out, start = [], 0
    for match in _SENTENCE_END.finditer(line):
        out.append(line[start : match.end()].strip())
        start = match.end()
    out.append(line[start:].strip())
    return [s for s in out if s]


def _cite(sentence: str, number: int) -> str:
    """Put ``[number]`` before the sentence's closing punctuation.

    >>> _cite("We tune PFC.", 1), _cite("It is cut…", 2), _cite("No stop", 3)
    ('We tune PFC [1].', 'It is cut [2]…', 'No stop [3]')
    """
    body = sentence.rstrip()
    end = len(body.rstrip(".!?…"))
    return f"{body[:end]} [{number}]{body[end:]}"


def answer_sentences(text: str) -> list[tuple[str, tuple[int, ...]]]:
    """Sentences of a markdown answer, each with the citation numbers it carries.

    A reference line ``[2] **Title** — …`` and the quote below it belong to citation 2.

    >>> answer_sentences("Arctic is big. It is fast [1].\\n\\n[2] **T** — A\\n> Quote here.")
    [('Arctic is big.', ()), ('It is fast [1].', (1,)), ('[2] **T** — A', (2,)), ('Quote here.', (2,))]
    """
    out: list[tuple[str, tuple[int, ...]]] = []
    current_ref: tuple[int, ...] = ()
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            current_ref = ()
            continue
        ref = re.match(r"^\[(\d+)\]\s", line)
        if ref:
            current_ref = (int(ref.group(1)),)
            out.append((line, current_ref))
            continue
        quoted = line.startswith(">")
        line = line.lstrip("> ").strip()
        for sentence in _split(line):
            if not sentence:
                continue
            numbers = tuple(int(n) for n in _MARKER.findall(sentence))
            out.append((sentence, numbers or (current_ref if quoted else ())))
    return out


def claims_text(text: str) -> str:
    """The answer's claims as cited prose: reference lines (``[n] **Title** — speakers · event``,
    rendered by code from the talk's own fields) are dropped, and the quote under one becomes a
    sentence citing ``[n]``. Markers after a sentence's full stop move before it.

    >>> claims_text("PFC is tuned. [1]\\n\\n[1] **PFC** — Adi · 2025\\n> We tune PFC.\\n\\n[2] **ECN**")
    'PFC is tuned [1].\\n\\nWe tune PFC [1].'
    """
    out: list[str] = []
    ref: int | None = None
    for raw in text.splitlines():
        line = raw.strip()
        match = re.match(r"^\[(\d+)\]\s+\*\*", line)
        if match:
            ref = int(match.group(1))
            continue
        if line.startswith(">") and ref is not None:
            out.append(" ".join(_cite(s, ref) for s in _split(line.lstrip("> "))))
            continue
        if not line:
            ref = None
        out.append(_TRAILING_MARKERS.sub(r"\2\1", line))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def grounded_sentences(text: str, sources: Mapping[int, str]) -> list[tuple[str, bool]]:
    """Each checkable sentence of an answer with its verdict, given each citation number's talk text.

    A sentence is checked against the talks it cites, or all cited talks when it cites none.

    >>> grounded_sentences("Arctic has 480B parameters [1]. Pinterest built a key-value store [1].",
    ...                    {1: "Arctic: a 480B parameter MoE"})
    [('Arctic has 480B parameters [1].', True), ('Pinterest built a key-value store [1].', False)]
    """
    everything = "\n".join(sources.values())
    verdicts = []
    for sentence, numbers in answer_sentences(text):
        source = "\n".join(sources.get(n, "") for n in numbers) if numbers else everything
        verdict = supported(_MARKER.sub(" ", sentence), source)
        if verdict is not None:
            verdicts.append((sentence, verdict))
    return verdicts


def failure_kinds(
    *,
    cited: Sequence[str],
    gold: Sequence[str],
    also_ok: Sequence[str],
    answerable: bool,
    facts: Sequence[str],
    text: str,
    grounded: float | None = None,
) -> list[str]:
    """Everything wrong with one answer, as labels from ``FAILURE_KINDS``.

    >>> failure_kinds(cited=["x"], gold=["g"], also_ok=[], answerable=True, facts=["42"], text="no")
    ['wrong talk', 'extra citation', 'fact missing']
    >>> failure_kinds(cited=[], gold=[], also_ok=[], answerable=False, facts=[], text="No talk.")
    []
    """
    kinds = []
    got = set(cited)
    if not answerable and got:
        kinds.append("should refuse")
    if answerable and gold:
        if not got:
            kinds.append("false refusal")
        elif not got & set(gold):
            kinds.append("wrong talk")
        elif citation_recall(got, gold) < 1.0:
            kinds.append("partial recall")
    if got and (answerable or set(also_ok)) and citation_precision(got, gold, also_ok) < 1.0:
        kinds.append("extra citation")
    if facts and not facts_present(text, facts):
        kinds.append("fact missing")
    if grounded is not None and grounded < 1.0:
        kinds.append("unsupported sentence")
    return kinds


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the values that are not ``None``; ``None`` when there are none.

    >>> mean([1.0, None, 0.0]), mean([None])
    (0.5, None)
    """
    got = [v for v in values if v is not None]
    return sum(got) / len(got) if got else None
