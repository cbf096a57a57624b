"""Parse conference listing files into ``Event`` and ``Talk`` records.

Two shapes are recognised:

* a **programme**: event name, optional date / format / series lines, ``who it's for`` and
  ``topics`` blocks, then a ``| title | author | length |`` table where each row is followed by
  its abstract line (``abstract | ||``);
* a **lone abstract**: a paragraph of prose with no title, possibly followed by the site's
  navigation menu (``- WATCH NOW``, ``- JANUARY`` …), which is dropped.

``parse_listing`` is pure (text in, records out); ``load_seeds`` reads files and never lets one
bad file stop the others.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import SeedFormatError
from .records import Event, Talk

__all__ = ["Listing", "SeedLoad", "load_seeds", "parse_listing", "seed_files", "slugify"]

logger = logging.getLogger(__name__)

LISTING_SUFFIXES = (".txt", ".md")
MAX_FILE_BYTES = 20_000_000
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_YEAR = re.compile(r"\b(19\d{2}|20\d{2})\b")
_TABLE_HEADER = re.compile(r"^\|\s*title\s*\|\s*(author|speakers?)\s*\|\s*(length|duration)\s*\|$", re.I)
_TABLE_RULE = re.compile(r"^\|[\s:|-]+\|$")
_DURATION = re.compile(r"^(?:(?P<h>\d+)\s*h\s*)?(?:(?P<m>\d+)\s*(?:m|min|mins|minutes)?)?$", re.I)
_NO_MATCH = re.compile(r"^\|?\s*(nothing matches|no results?|no events)\s*\|", re.I)
_NAV_ITEM = re.compile(r"^\s*[-*•]\s+")
_LEAD_IN = re.compile(
    r"^(in this (talk|session|presentation),?\s+)?(we|i)\s+(will\s+)?"
    r"(provide|present|give|describe|discuss|share|cover|walk through)\s+"
    r"(an?\s+)?((overview|introduction|summary|look)\s+(of|at)\s+)?",
    re.I,
)
_TITLE_STOP = {"for", "to", "that", "which", "with", "and", "in", "while", "so"}
_SPEAKER_SPLIT = re.compile(r"\s*(?:,|;|&|\band\b)\s*")
#: Control characters become spaces; zero-width characters go (they make titles that look empty).
_INVISIBLE = re.compile(r"[\x00-\x1f\x7f-\x9f]|(?P<zw>[\u200b\u2060\ufeff\u00ad])")
_SPACES = re.compile(r"\s+")
#: Longer than a day is a typo or junk, not a talk (and Chroma stores 64-bit integers only).
MAX_MINUTES = 24 * 60
#: Site navigation that a scraper may render as table rows (with no speaker and no length).
_NAV_TITLES = frozenset(
    [
        "watch now",
        "view events",
        "view all",
        "events",
        "past events",
        "upcoming events",
        "register",
        "register now",
        "home",
        "menu",
        "search",
        "nothing matches",
        "no results",
        "no events",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
)
_NO_MATCH_WORDS = ("nothing matches", "no results", "no events")


@dataclass(frozen=True, slots=True)
class Listing:
    """What one file holds: its event (if any), its talks, and row-level problems."""

    source: str
    event: Event | None
    talks: tuple[Talk, ...]
    problems: tuple[SeedFormatError, ...] = ()


@dataclass(slots=True)
class SeedLoad:
    """Everything read from a set of files: good records plus every file's problems."""

    events: list[Event] = field(default_factory=list)
    talks: list[Talk] = field(default_factory=list)
    problems: list[SeedFormatError] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def slugify(text: str) -> str:
    """Lower-case ASCII slug.

    >>> slugify("@Scale: Networking 2025")
    'scale-networking-2025'
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    ascii_text = re.sub(r"(?<=\w)'(?=\w)", "", ascii_text)  # "Instagram's" like "Meta’s"
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-") or "untitled"


def _clean(text: str) -> str:
    text = _INVISIBLE.sub(lambda m: "" if m.group("zw") else " ", text)
    return _SPACES.sub(" ", text).strip()


def _has_word(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def _split_speakers(cell: str) -> tuple[str, ...]:
    return tuple(_clean(s) for s in _SPEAKER_SPLIT.split(cell) if _has_word(s))


def _duration(cell: str) -> int | None:
    m = _DURATION.match(cell.strip())
    if not m or not (m.group("h") or m.group("m")) or len(m.group("h") or "") + len(m.group("m") or "") > 6:
        return None
    minutes = int(m.group("h") or 0) * 60 + int(m.group("m") or 0)
    return minutes if minutes <= MAX_MINUTES else None


def _format_line(line: str) -> str | None:
    """``-- online --`` → ``'online'`` (string ops: a regex here backtracked cubically on long blank runs)."""
    if len(line) < 5 or not (line.startswith("--") and line.endswith("--")):
        return None
    return line[2:-2].strip() or None


def _abstract_line(line: str) -> str | None:
    """The text of an abstract line ``text | ||`` (stripped), else ``None``; linear in the line's length."""
    if not line.endswith("||"):
        return None
    rest = line[:-2].rstrip()
    return rest[:-1].rstrip() if rest.endswith("|") else None


def _is_navigation_row(cells: Sequence[str]) -> bool:
    title, speakers, length = cells
    if _has_word(speakers) or _has_word(length):
        return False
    words = " ".join(re.sub(r"[^a-z]+", " ", title.lower()).split())
    return words in _NAV_TITLES or words.startswith(_NO_MATCH_WORDS)


def _year(*texts: str | None) -> int | None:
    for text in texts:
        if text and (m := _YEAR.search(text)):
            return int(m.group(1))
    return None


def derive_title(abstract: str, max_words: int = 9) -> str:
    """A readable title from an untitled abstract's first sentence.

    >>> derive_title("In this talk we provide an overview of Meta's RDMA deployment for training.")
    "Meta's RDMA deployment"
    """
    first = re.split(r"(?<=[.!?])\s+", abstract.strip(), maxsplit=1)[0].rstrip(".!?… ")
    first = _LEAD_IN.sub("", first)
    words: list[str] = []
    for word in first.split():
        if len(words) >= 3 and word.lower() in _TITLE_STOP:
            break
        words.append(word)
        if len(words) >= max_words:
            break
    title = " ".join(words) or "Untitled talk"
    return title[0].upper() + title[1:]


def _table_cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [c.strip() for c in inner.split("|")]


def _check_text(text: str, source: str) -> None:
    if not text.strip():
        raise SeedFormatError(source, 1, "the file is empty")
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise SeedFormatError(source, line, "the file is binary (NUL byte), not a text listing")
    bad = sum(1 for ch in text if unicodedata.category(ch) == "Cc" and ch not in "\n\r\t")
    if bad > max(8, len(text) // 100):
        raise SeedFormatError(source, 1, f"the file has {bad} control characters; it is not a text listing")


def parse_listing(text: str, source: str) -> Listing:
    """Parse one listing file's text.

    >>> doc = "Ev 2024\\n| title | author | length |\\n|---|---|---|\\n| T | A, B | 20m |\\nAbs… | ||"
    >>> [(t.title, t.speakers, t.duration_min, t.truncated) for t in parse_listing(doc, "x.txt").talks]
    [('T', ('A', 'B'), 20, True)]

    Raises ``SeedFormatError`` when the file as a whole is not a listing; a bad row is reported
    in ``Listing.problems`` and skipped, so the good rows survive.
    """
    _check_text(text, source)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if any(_TABLE_HEADER.match(line.strip()) for line in lines):
        return _parse_programme(lines, source)
    return _parse_lone_abstract(lines, source)


def _parse_lone_abstract(lines: Sequence[str], source: str) -> Listing:
    body: list[str] = []
    start = 0
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            if body:
                break
            continue
        if _NAV_ITEM.match(raw) or line.startswith("|"):
            break
        if not body:
            start = number
        body.append(line)
    abstract = _clean(" ".join(body))
    words = abstract.split()
    sentences = re.findall(r"[.!?…](\s|$)", abstract)
    if len(words) < 12 or not sentences:
        raise SeedFormatError(
            source,
            start or 1,
            "not a recognised listing: expected an event header with a '| title | author | length |' "
            "table, or an abstract paragraph of prose",
        )
    title = derive_title(abstract)
    stem = slugify(Path(source).stem)
    talk = Talk(
        id=f"{stem}/{slugify(title)}",
        title=title,
        abstract=abstract,
        truncated=abstract.endswith(("…", "...")),
        year=None,
        source=source,
        line=start,
        title_derived=True,
    )
    return Listing(source=source, event=None, talks=(talk,))


def _parse_header(lines: Sequence[str], table_at: int, source: str) -> Event | None:
    name: str | None = None
    name_line = 0
    date = fmt = None
    series: tuple[str, ...] = ()
    blocks: dict[str, str] = {}
    pending: str | None = None
    for number, raw in enumerate(lines[:table_at], 1):
        line = raw.strip()
        if not line:
            continue
        low = line.lower().rstrip(":")
        if low in ("who it's for", "who it’s for", "audience", "topics"):
            pending = "topics" if low == "topics" else "audience"
            continue
        if pending:
            blocks[pending] = line
            pending = None
        elif name is None:
            name, name_line = _clean(line), number
        elif _DATE.match(line):
            date = line
        elif found := _format_line(line):
            fmt = found
        elif line.startswith("[") and line.endswith("]"):
            series = tuple(_clean(s) for s in line[1:-1].split(",") if _clean(s))
    if name is None:
        return None
    if len(name) > 120 or name.startswith("|"):
        raise SeedFormatError(source, name_line, "the first line should be the event name")

    def split(key: str, sep: str) -> tuple[str, ...]:
        return tuple(_clean(s) for s in blocks.get(key, "").split(sep) if _clean(s))

    return Event(
        id=slugify(name),
        name=name,
        date=date,
        format=fmt,
        year=_year(date, name),
        audience=split("audience", ","),
        topics=split("topics", ";"),
        series=series,
        source=source,
        line=name_line,
    )


def _parse_programme(lines: Sequence[str], source: str) -> Listing:
    table_at = next(i for i, line in enumerate(lines) if _TABLE_HEADER.match(line.strip()))
    event = _parse_header(lines, table_at, source)
    talks: list[Talk] = []
    problems: list[SeedFormatError] = []
    row: tuple[int, list[str]] | None = None

    def flush(abstract: str) -> None:
        nonlocal row
        if row is None:
            return
        number, cells = row
        row = None
        title, speakers_cell, length = cells
        if not _has_word(_clean(title)):
            problems.append(SeedFormatError(source, number, "the row has no title"))
            return
        duration = _duration(length)
        if length and duration is None:
            problems.append(SeedFormatError(source, number, f"length {length!r} is not like '21m'"))
            return
        abstract = _clean(abstract)
        talks.append(
            Talk(
                id="",
                title=_clean(title),
                speakers=_split_speakers(speakers_cell),
                duration_min=duration,
                abstract=abstract,
                truncated=abstract.endswith(("…", "...")),
                event=event.name if event else None,
                event_id=event.id if event else None,
                event_date=event.date if event else None,
                year=event.year if event else None,
                source=source,
                line=number,
            )
        )

    for number, raw in enumerate(lines[table_at + 1 :], table_at + 2):
        line = raw.strip()
        if not line or _TABLE_RULE.match(line):
            continue
        if _NO_MATCH.match(line):
            flush("")
            continue
        if line.startswith("|"):
            flush("")
            cells = _table_cells(line)
            if len(cells) != 3:
                problems.append(
                    SeedFormatError(
                        source,
                        number,
                        f"the row has {len(cells)} columns, expected 3 (title | author | length)",
                    )
                )
                continue
            if _is_navigation_row(cells):
                continue
            row = (number, cells)
            continue
        if (text := _abstract_line(line)) is not None:
            if row is None:
                problems.append(SeedFormatError(source, number, "an abstract line with no talk row above it"))
                continue
            flush(text)
            continue
        if row is not None:
            problems.append(SeedFormatError(source, number, "the abstract line does not end with '| ||' (cut short?)"))
            flush(line)
            continue
        if _NAV_ITEM.match(raw):
            break
        problems.append(SeedFormatError(source, number, "text outside the table"))
    flush("")
    if not talks:
        where = problems[0].line if problems else table_at + 1
        raise SeedFormatError(source, where, "the table holds no readable talk row")
    return Listing(source=source, event=event, talks=_assign_ids(talks, event, source), problems=tuple(problems))


def _assign_ids(talks: Iterable[Talk], event: Event | None, source: str) -> tuple[Talk, ...]:
    prefix = event.id if event else slugify(Path(source).stem)
    seen: dict[str, int] = {}
    out = []
    for talk in talks:
        base = f"{prefix}/{slugify(talk.title)}"
        seen[base] = seen.get(base, 0) + 1
        out.append(replace(talk, id=base if seen[base] == 1 else f"{base}-{seen[base]}"))
    return tuple(out)


def seed_files(paths: Iterable[Path]) -> list[Path]:
    """Listing files under ``paths`` (files as given, folders searched), sorted, no duplicates."""
    found: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if child.is_file() and child.suffix.lower() in LISTING_SUFFIXES and not child.name.startswith("."):
                    found[child.resolve()] = None
        else:
            found[path.resolve()] = None
    return list(found)


def read_listing(path: Path) -> Listing:
    """Read and parse one file; unreadable files raise ``SeedFormatError``."""
    source = path.name
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise SeedFormatError(source, 1, f"the file is {size} bytes; listings over {MAX_FILE_BYTES} are refused")
        data = path.read_bytes()
    except OSError as exc:
        raise SeedFormatError(source, 1, f"cannot read the file ({exc.strerror or exc})") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SeedFormatError(source, line, "the file is not UTF-8 text") from exc
    return parse_listing(text, source)


def load_seeds(paths: Iterable[Path]) -> SeedLoad:
    """Parse every listing under ``paths``; a bad file is reported, the rest still load.

    Talk ids are made unique across files (a second file with the same event and title gets
    a ``-2`` suffix), so ids stay stable as long as file names sort the same.
    """
    load = SeedLoad()
    seen_talks: set[str] = set()
    seen_events: set[str] = set()
    for path in seed_files(paths):
        load.files.append(path.name)
        try:
            listing = read_listing(path)
        except SeedFormatError as exc:
            logger.warning("skipping %s", exc)
            load.problems.append(exc)
            continue
        load.problems.extend(listing.problems)
        if listing.event and listing.event.id not in seen_events:
            seen_events.add(listing.event.id)
            load.events.append(listing.event)
        for talk in listing.talks:
            talk_id, n = talk.id, 1
            while talk_id in seen_talks:
                n += 1
                talk_id = f"{talk.id}-{n}"
            seen_talks.add(talk_id)
            load.talks.append(talk if talk_id == talk.id else replace(talk, id=talk_id))
    return load
