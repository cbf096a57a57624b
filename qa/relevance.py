"""Decide which retrieved talks actually answer a question (pure; thresholds calibrated on the seeds)."""

from __future__ import annotations

from collections.abc import Sequence

from .records import Hit

__all__ = ["FACT_MAX_CITATIONS", "is_relevant", "select"]

#: A talk whose best chunk is this close to the question in meaning is relevant on its own.
STRONG_DENSE = 0.5
#: With this much of the question's rare vocabulary, a talk needs only a weak semantic match.
WEAK_DENSE = 0.22
FACT_MAX_CITATIONS = 3


def is_relevant(hit: Hit, dense_floor: float, lexical_floor: float) -> bool:
    """A talk is relevant when it shares the question's rare terms, or is very close in meaning.

    >>> from qa.records import Talk
    >>> t = Talk(id="x", title="T")
    >>> is_relevant(Hit(talk=t, score=0.03, dense=0.32, lexical=0.43), 0.42, 0.4)
    True
    >>> is_relevant(Hit(talk=t, score=0.03, dense=0.37, lexical=0.16), 0.42, 0.4)
    False
    """
    if hit.lexical >= lexical_floor and hit.dense >= WEAK_DENSE:
        return True
    return hit.dense >= max(dense_floor, STRONG_DENSE) or (
        hit.dense >= dense_floor and hit.lexical >= lexical_floor / 2
    )


def select(hits: Sequence[Hit], *, wants_list: bool, dense_floor: float, lexical_floor: float) -> list[Hit]:
    """The hits to cite: every relevant talk for a list question; the clear winners for a fact."""
    relevant = [h for h in hits if is_relevant(h, dense_floor, lexical_floor)]
    if wants_list or not relevant:
        return relevant
    top = relevant[0]
    close = [h for h in relevant[1:] if h.lexical >= max(top.lexical, lexical_floor) and h.dense >= top.dense - 0.05]
    return [top, *close][:FACT_MAX_CITATIONS]
