"""Pick the sentences of an abstract that best support a question (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .chunking import split_sentences
from .query import terms
from .records import Talk

__all__ = ["best_sentences", "coverage"]


def coverage(query_terms: Sequence[str], text_terms: set[str], idf: Mapping[str, float]) -> float:
    """IDF-weighted share of the query's terms found in a text, 0..1.

    >>> coverage(["pfc", "tun"], {"pfc", "ecn"}, {"pfc": 3.0, "tun": 1.0})
    0.75
    """
    unique = list(dict.fromkeys(query_terms))
    total = sum(idf.get(t, 1.0) for t in unique)
    if not total:
        return 0.0
    return sum(idf.get(t, 1.0) for t in unique if t in text_terms) / total


def best_sentences(talk: Talk, query_terms: Sequence[str], idf: Mapping[str, float], limit: int = 1) -> list[str]:
    """The abstract's sentences that share the most (IDF-weighted) terms with the question.

    Falls back to the first sentence. Order follows the abstract.

    >>> t = Talk(id="x", title="T", abstract="Intro here. Arctic is a 480B MoE. Other words.")
    >>> best_sentences(t, ["480b"], {})
    ['Arctic is a 480B MoE.']
    """
    sentences = split_sentences(talk.abstract)
    if not sentences:
        return []
    wanted = set(query_terms)
    scored = []
    for i, sentence in enumerate(sentences):
        have = set(terms(sentence))
        score = sum(idf.get(t, 1.0) for t in wanted & have)
        scored.append((score, -i, sentence))
    top = [item for item in sorted(scored, reverse=True)[:limit] if item[0] > 0]
    if not top:
        return sentences[:1]
    return [sentence for _score, _pos, sentence in sorted(top, key=lambda item: -item[1])]
