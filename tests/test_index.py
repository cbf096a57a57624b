"""Ingest into a real Chroma under tmp_path, with the real packaged embedding."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from qa import Settings, TalkQA
from qa.embedding import MiniLMEmbedding

from .conftest import DATA, SEEDS


def test_embedding_is_real_and_content_sensitive() -> None:
    embed = MiniLMEmbedding(threads=1)
    v = embed.embed(["training large language models on GPUs", "LLM training across 10,000 GPUs", "baking bread"])
    assert v.shape == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.1


def test_ingest_is_incremental(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds"
    shutil.copytree(SEEDS, seeds)
    qa = TalkQA(Settings(home=tmp_path / "home", seeds=[seeds]), auto_ingest=False)
    first = qa.ingest()
    assert (first.added, first.updated, first.removed, first.files, first.events) == (48, 0, 0, 4, 3)
    assert first.embedded_chunks >= 48

    again = qa.ingest()
    assert (again.added, again.updated, again.removed, again.unchanged, again.embedded_chunks) == (
        0,
        0,
        0,
        48,
        0,
    )

    listing = seeds / "004_3bf2ab7da770e100.txt"
    listing.write_text(listing.read_text().replace("Arctic is a 480B", "Arctic is a 481B"))
    changed = qa.ingest()
    assert (changed.added, changed.updated, changed.unchanged, changed.embedded_chunks) == (0, 1, 47, 1)
    assert "481B" in next(t for t in qa.talks() if t.title == "Training Arctic").abstract

    shutil.copy(DATA / "good_extra.txt", seeds / "005_extra.txt")
    added = qa.ingest()
    assert (added.added, added.files, added.events) == (1, 5, 4)
    (seeds / "005_extra.txt").unlink()
    removed = qa.ingest()
    assert removed.removed == 1 and len(qa.talks()) == 48


def test_bad_files_are_reported_and_good_ones_indexed(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for name in ("empty.txt", "binary.txt", "half_table.txt", "missing_column.txt", "good_extra.txt"):
        shutil.copy(DATA / name, seeds / name)
    qa = TalkQA(Settings(home=tmp_path / "home", seeds=[seeds]), auto_ingest=False)
    report = qa.ingest()
    assert report.added == 3
    assert any(s.startswith("empty.txt:1:") for s in report.skipped)
    assert any(s.startswith("binary.txt:1:") for s in report.skipped)
    assert any(s.startswith("half_table.txt:10:") for s in report.skipped)
    assert any(s.startswith("missing_column.txt:6:") for s in report.skipped)
    assert {t.title for t in qa.talks()} == {
        "A Complete Talk",
        "Good Talk About Queues",
        "Erasure Coding at Exabyte Scale",
    }


def test_extra_paths_are_added_without_pruning(seeded_qa) -> None:  # type: ignore[no-untyped-def]
    report = seeded_qa.ingest([DATA / "good_extra.txt"])
    assert report.added == 1 and report.removed == 0
    assert len(seeded_qa.talks()) == 49
    assert seeded_qa.ask("which talks cover erasure coding?").citations[0].talk.title == (
        "Erasure Coding at Exabyte Scale"
    )


def test_index_built_by_another_model_is_refused(tmp_path: Path) -> None:
    from qa.errors import IndexNotReadyError
    from qa.store import make_client, open_collection

    settings = Settings(home=tmp_path)
    client = make_client(settings)
    client.create_collection("talks", metadata={"hnsw:space": "cosine", "embed_model": "other-model"})
    with pytest.raises(IndexNotReadyError, match=r"ingest --rebuild|another --data-dir"):
        open_collection(client, "talks", "all-MiniLM-L6-v2-onnx-int8", create=True)


def test_a_pruning_ingest_leaves_the_catalog_cache_equal_to_the_store(tmp_path: Path) -> None:
    from qa.index import _read_records, all_records

    qa = TalkQA(Settings(home=tmp_path / "home", seeds=[SEEDS]), auto_ingest=False)
    qa.ingest()
    cache = tmp_path / "home" / "catalog"
    assert list(cache.glob("records-*.pkl")), "the ingest should have written the catalog cache"
    collection = qa._open()
    assert all_records(collection, cache_dir=cache) == _read_records(collection)
