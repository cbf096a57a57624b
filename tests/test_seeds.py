"""Parsing the real seed listings and broken ones."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from qa.errors import SeedFormatError
from qa.seeds import load_seeds, parse_listing, read_listing

from .conftest import DATA, SEEDS

NAV_WORDS = ("WATCH NOW", "VIEW EVENTS", "JANUARY", "no events", "EXPLORE TOPICS", "Community Forum")


@pytest.fixture(scope="module")
def seeds():  # type: ignore[no-untyped-def]
    return load_seeds([SEEDS])


def test_counts_per_event(seeds) -> None:  # type: ignore[no-untyped-def]
    assert len(seeds.talks) == 48
    assert not seeds.problems
    assert Counter(t.event for t in seeds.talks) == {
        "@Scale: Networking 2025": 19,
        "@Scale: Systems & Reliability 2025": 18,
        "Systems @Scale 2024": 10,
        None: 1,
    }
    assert len({t.id for t in seeds.talks}) == 48


def test_two_keynotes_differ(seeds) -> None:  # type: ignore[no-untyped-def]
    keynotes = [t for t in seeds.talks if t.title == "Keynote"]
    assert len(keynotes) == 2
    assert {t.speakers for t in keynotes} == {("Pradeep Sindhu",), ("Surupa Biswas",)}
    assert keynotes[0].id != keynotes[1].id


def test_untitled_abstract_gets_a_derived_title_and_no_navigation(seeds) -> None:  # type: ignore[no-untyped-def]
    (lone,) = [t for t in seeds.talks if t.title_derived]
    assert lone.source == "002_899f6d1e26461244.txt" and lone.line == 1
    assert "RDMA" in lone.title and "RoCEV2" in lone.title
    assert lone.abstract.startswith("In this talk we provide an overview of Meta’s RDMA deployment")
    assert lone.abstract.endswith("over the next few years.")
    for talk in seeds.talks:
        for word in NAV_WORDS:
            assert word not in talk.abstract and word not in talk.title
    for event in seeds.events:
        assert not any(word in " ".join(event.topics + event.audience) for word in NAV_WORDS)


def test_tricky_records(seeds) -> None:  # type: ignore[no-untyped-def]
    by_title = {t.title: t for t in seeds.talks}
    adi = by_title["Live Q&A Session #2 – Adi Gangadi"]
    assert adi.speakers == ("Adi Gangadi",) and adi.duration_min == 21 and "PFC" in adi.abstract
    assert by_title["DC Networks for Generative AI"].speakers == ("Rohit Puri", "Hany Morsy")
    four = by_title["Experience Operating Large GPU Clusters at Organizational Scale"]
    assert four.speakers == ("Vipin Sirohi", "Mohamed Fawzy", "Bugra Gedik", "Vikas Mehta")
    assert by_title["Event Welcome"].duration_min == 4
    arctic = by_title["Training Arctic"]
    assert arctic.truncated and arctic.abstract.endswith("…") and arctic.abstract_text.endswith("3.5 trillion")
    assert arctic.event_date == "2024-06-12" and arctic.year == 2024
    assert not any(t.title.lower() == "nothing matches" for t in seeds.talks)


def test_events(seeds) -> None:  # type: ignore[no-untyped-def]
    events = {e.name: e for e in seeds.events}
    assert set(events) == {
        "@Scale: Networking 2025",
        "@Scale: Systems & Reliability 2025",
        "Systems @Scale 2024",
    }
    sys24 = events["Systems @Scale 2024"]
    assert (sys24.date, sys24.format, sys24.year) == ("2024-06-12", "online", 2024)
    assert "storage engineers" in sys24.audience
    assert "PFC, ECN and DCQCN tuning" in events["@Scale: Networking 2025"].topics


@pytest.mark.parametrize(
    ("name", "line", "reason"),
    [
        ("empty.txt", 1, "empty"),
        ("binary.txt", 1, "binary"),
        ("prose_only.txt", 1, "not a recognised listing"),
    ],
)
def test_unreadable_files_name_file_and_line(name: str, line: int, reason: str) -> None:
    with pytest.raises(SeedFormatError) as err:
        read_listing(DATA / name)
    assert err.value.source == name and err.value.line == line and reason in str(err.value)
    assert f"{name}:{line}:" in str(err.value)


def test_bad_rows_are_reported_and_good_rows_kept() -> None:
    half = read_listing(DATA / "half_table.txt")
    assert [t.title for t in half.talks] == ["A Complete Talk"]
    assert [(p.line, "columns" in p.reason) for p in half.problems] == [(10, True)]
    missing = read_listing(DATA / "missing_column.txt")
    assert [t.title for t in missing.talks] == ["Good Talk About Queues"]
    assert missing.problems and missing.problems[0].line == 6


def test_one_bad_file_does_not_stop_the_others(tmp_path: Path) -> None:
    for name in ("empty.txt", "binary.txt", "good_extra.txt"):
        (tmp_path / name).write_bytes((DATA / name).read_bytes())
    (tmp_path / "latin1.txt").write_bytes("Caf\xe9 Conf 2020\n".encode("latin-1"))
    load = load_seeds([tmp_path])
    assert [t.title for t in load.talks] == ["Erasure Coding at Exabyte Scale"]
    assert sorted(p.source for p in load.problems) == ["binary.txt", "empty.txt", "latin1.txt"]
    extra = load.talks[0]
    assert extra.speakers == ("Zoe Quill", "Yan Park") and extra.duration_min == 31
    assert load.events[0].format == "in person"


def test_duplicate_files_get_unique_ids(tmp_path: Path) -> None:
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text((DATA / "good_extra.txt").read_text())
    ids = [t.id for t in load_seeds([tmp_path]).talks]
    assert ids == [
        "extra-conf-2026/erasure-coding-at-exabyte-scale",
        "extra-conf-2026/erasure-coding-at-exabyte-scale-2",
    ]


def test_table_without_any_good_row_is_an_error() -> None:
    text = "Conf 2020\n| title | author | length |\n|---|---|---|\n| only two | cells |\n"
    with pytest.raises(SeedFormatError) as err:
        parse_listing(text, "x.txt")
    assert err.value.line == 4
