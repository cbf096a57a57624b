"""TalkQA: ask questions of a conference programme; every answer cites the talks it used.

>>> from qa import TalkQA                                  # doctest: +SKIP
>>> TalkQA().ask("which talks cover PFC tuning?").text     # doctest: +SKIP
"""

from .api import AnswerStream, TalkQA
from .config import Settings
from .errors import (
    IndexNotReadyError,
    LLMError,
    QAError,
    QuestionError,
    SeedFormatError,
    StoreUnavailableError,
)
from .index import IngestReport
from .records import Answer, Chunk, Citation, Event, Hit, Talk
from .retrieve import Filters

__all__ = [
    "Answer",
    "AnswerStream",
    "Chunk",
    "Citation",
    "Event",
    "Filters",
    "Hit",
    "IndexNotReadyError",
    "IngestReport",
    "LLMError",
    "QAError",
    "QuestionError",
    "SeedFormatError",
    "Settings",
    "StoreUnavailableError",
    "Talk",
    "TalkQA",
]
