"""The synthetic corpus generator (bench/synth.py) and incremental ingest at a few hundred talks."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.synth import generate, write_corpus
from qa import Settings, TalkQA
from qa.records import Event
from qa.seeds import load_seeds


def test_generator_is_deterministic_by_seed() -> None:
    first = list(generate(450, seed=3))
    assert first == list(generate(450, seed=3))
    assert first != list(generate(450, seed=4))
    assert len(first) == 23  # ~20 talks a file, the last one short


def test_synthetic_files_parse_without_problems(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path / "synth", 1000, seed=11)
    load = load_seeds([tmp_path / "synth"])
    assert load.problems == []
    assert len(load.files) == len(paths) == 50
    assert len(load.talks) == 1000
    assert len({t.id for t in load.talks}) == 1000
    assert len(load.events) == 50
    assert all(t.speakers and t.abstract and t.duration_min and t.year for t in load.talks)


def test_reingest_of_unchanged_corpus_embeds_nothing(tmp_path: Path) -> None:
    write_corpus(tmp_path / "synth", 200, seed=5)
    qa = TalkQA(Settings(home=tmp_path / "home", seeds=[tmp_path / "synth"], answerer="offline"))
    first = qa.ingest()
    assert (first.added, first.embedded_chunks > 0) == (200, True)
    again = qa.ingest()
    assert (again.unchanged, again.added, again.updated, again.removed) == (200, 0, 0, 0)
    assert again.embedded_chunks == 0
    assert len(qa.talks()) == 200


def test_catalog_speaker_lookup_agrees_with_speaker_matches() -> None:
    """The catalog's indexed speaker lookup gives what comparing every name with speaker_matches gives."""
    from qa.catalog import Catalog
    from qa.query import speaker_matches
    from qa.seeds import parse_listing

    talks = [t for name, text in generate(400, seed=9) for t in parse_listing(text, name).talks]
    talks += load_seeds([Path(__file__).resolve().parent.parent / "seeds"]).talks
    catalog = Catalog.of(talks, [])
    names = sorted({s for t in talks for s in t.speakers})
    wanted = [*names[::7], "gangidi", "Adi Gangidi", "Sumit", "Gupta", "aisha", "Chen Olsn", "li", "", "Zhenyu"]
    for want in wanted:
        brute = [t for t in catalog.talks.values() if any(speaker_matches(want, s) for s in dict.fromkeys(t.speakers))]
        assert catalog.talks_by_speaker(want) == brute, want


def test_catalog_event_lookups_agree_with_a_scan() -> None:
    """events_in / resolve_event read precomputed name terms; same answers as scanning every event."""
    from qa.catalog import Catalog
    from qa.query import terms
    from qa.seeds import parse_listing

    events = [e for name, text in generate(600, seed=4) for e in [parse_listing(text, name).event] if e]
    events += load_seeds([Path(__file__).resolve().parent.parent / "seeds"]).events
    catalog = Catalog.of([], events)
    questions = [e.name for e in events[::3]] + [
        "what was on at Networking @Scale 2025?",
        "which talks at systems @scale cover RDMA",
        "video 2019",
        "data @scale edition 12",
        "who spoke at the AI Infra summit?",
    ]

    def named(question: str) -> list[Event]:  # the per-question scan events_in replaced
        words = set(terms(question, keep_stopwords=True))
        for keep in (lambda w: True, lambda w: not w.isdigit()):
            best = []
            for e in events:
                name = {w for w in terms(e.name, keep_stopwords=True) if keep(w)} - {"scale"}
                if name and name <= words:
                    best.append((len(name), e))
            if best:
                return [e for n, e in best if n == max(n for n, _ in best)]
        return []

    for question in questions:
        assert catalog.events_in(question) == named(question), question
        want = set(terms(question, keep_stopwords=True)) - {"scale"}
        scan = [e for e in events if want and want <= set(terms(f"{e.name} {e.id}", keep_stopwords=True))]
        exact = [e for e in events if question.strip().lower() in (e.id, e.name.lower())]
        assert catalog.resolve_event(question) == (exact or scan), question


def test_speaker_candidates_keep_find_speakers_answers() -> None:
    from qa.catalog import Catalog
    from qa.query import find_speakers
    from qa.seeds import parse_listing

    talks = [t for name, text in generate(400, seed=9) for t in parse_listing(text, name).talks]
    talks += load_seeds([Path(__file__).resolve().parent.parent / "seeds"]).talks
    catalog = Catalog.of(talks, [])
    questions = [f"what did {n} present?" for n in catalog.speakers[::11]] + [
        "talks by gangidi",
        "What did Sumit Gupta say about Arctic?",
        "which talks cover PFC tuning?",
        "Yamamoto's talk on QUIC",
    ]
    for question in questions:
        fast = find_speakers(question, catalog.speaker_candidates(question))
        assert fast == find_speakers(question, catalog.speakers), question


def test_content_hash_reads_the_fields_to_dict_gives() -> None:
    """content_hash skips asdict's deep copy; the hashes of existing indexes must not change."""
    import hashlib
    import json

    from qa.chunking import CHUNKER_VERSION
    from qa.index import content_hash

    load = load_seeds([Path(__file__).resolve().parent.parent / "seeds"])
    for record in [*load.talks, *load.events]:
        payload = json.dumps([CHUNKER_VERSION, "m", record.to_dict()], sort_keys=True, ensure_ascii=False)
        assert content_hash(record, "m") == hashlib.sha256(payload.encode()).hexdigest()[:24]


def test_reingest_reads_saved_hashes_and_a_killed_ingest_leaves_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unchanged re-ingest reads the hash list the last ingest saved, not every record's metadata;
    an ingest that dies midway forgets that list, so the next one compares against the index itself."""
    from qa.embedding import MiniLMEmbedding

    write_corpus(tmp_path / "synth", 60, seed=2)
    qa = TalkQA(Settings(home=tmp_path / "home", seeds=[tmp_path / "synth"], answerer="offline"))
    assert qa.ingest().added == 60
    assert len(list((tmp_path / "home" / "catalog").glob("hashes-*.pkl"))) == 1
    collection = qa._open()
    reads = []
    real_get = collection.get

    def counting_get(*args: object, **kwargs: object) -> object:
        reads.append(kwargs)
        return real_get(*args, **kwargs)

    collection.get = counting_get
    assert qa.ingest().unchanged == 60
    assert not [r for r in reads if r.get("where") == {"chunk": 0}]

    first = sorted((tmp_path / "synth").glob("*.txt"))[0]
    first.write_text(first.read_text().replace("| ||", "Changed. | ||", 1))

    def dying(self: object, texts: list[str]) -> object:
        raise RuntimeError("killed")

    with monkeypatch.context() as patch:
        patch.setattr(MiniLMEmbedding, "embed_sorted", dying)
        with pytest.raises(RuntimeError):
            qa.ingest()
    assert not list((tmp_path / "home" / "catalog").glob("hashes-*.pkl"))
    again = qa.ingest()
    assert (again.added + again.updated, again.unchanged, again.embedded_chunks) == (1, 59, 1)
    assert len(qa.talks()) == 60


def test_spelling_correction_compares_only_same_start_and_near_length() -> None:
    from qa.catalog import Catalog, edit_distance
    from qa.seeds import parse_listing

    talks = [t for name, text in generate(300, seed=6) for t in parse_listing(text, name).talks]
    catalog = Catalog.of(talks, [])
    vocab = catalog.vocabulary
    for word in ["kubernets", "compresion", "latancy", "obervability", "schedulr", "qantum", "garden"]:
        limit = 1 if len(word) < 8 else 2
        best = [v for v in vocab if v[0] == word[0] and edit_distance(word, v, limit) <= limit]
        want = min(best, key=lambda v: (edit_distance(word, v, limit), v)) if best else word
        assert catalog.correct(word) == want, word


def test_reads_of_every_record_are_paged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At ~100k rows one Chroma get fails ("too many SQL variables"); reads go a page at a time."""
    import qa.store

    monkeypatch.setattr(qa.store, "GET_PAGE", 7)
    write_corpus(tmp_path / "synth", 50, seed=8)
    qa = TalkQA(Settings(home=tmp_path / "home", seeds=[tmp_path / "synth"], answerer="offline"))
    assert qa.ingest().added == 50
    (tmp_path / "home" / "catalog").rename(tmp_path / "no-cache")  # make the next ingest read the index
    assert (qa.ingest().unchanged, len(qa.talks()), len(qa.events())) == (50, 50, 3)
    assert qa.search("kubernetes scheduling", 3)


def test_topics_covering_matches_the_scan_in_no_answer() -> None:
    from qa.catalog import Catalog
    from qa.query import terms
    from qa.seeds import parse_listing

    events = [e for name, text in generate(400, seed=4) for e in [parse_listing(text, name).event] if e]
    events += load_seeds([Path(__file__).resolve().parent.parent / "seeds"]).events
    catalog = Catalog.of([], events)
    for question in ["which talks cover quic?", "pfc tuning talk", "KV cache", "talk", "quantum gardening", ""]:
        query_terms = set(terms(question))
        scan = [
            (e, topic)
            for e in events
            for topic in e.topics
            if query_terms and query_terms <= set(terms(topic)) | {"talk"}
        ]
        assert catalog.topics_covering(query_terms) == scan, question
