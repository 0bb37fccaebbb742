"""Persistence: round trip, atomic save, checksums, foreign directories."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from chronorank.errors import CorruptIndex, InvalidInput
from chronorank.index import HashingEmbedder, TemporalIndex
from chronorank.index.storage import CURRENT, read_manifest

NOW = "2026-08-01"
DOCS = [
    {"id": f"proj@1.{i}", "text": f"proj 1.{i}. change number {i} about caching and retries", "date": f"2025-{i % 12 + 1:02d}-10",
     "valid_from": None, "valid_to": "2026-01-01" if i == 3 else None, "metadata": {"n": i}}
    for i in range(12)
]


@pytest.fixture()
def saved(tmp_path):
    idx = TemporalIndex(embedder=HashingEmbedder(32), group_key="project")
    idx.add(DOCS)
    path = idx.save(tmp_path / "idx")
    return idx, path


def _results(idx):
    r = idx.search("latest caching change", k=5, now=NOW)
    return [(h.id, round(h.score, 6)) for h in r]


def test_round_trip_gives_identical_results(saved):
    idx, path = saved
    loaded = TemporalIndex.load(path)
    assert len(loaded) == len(idx) and loaded.get("proj@1.3") == idx.get("proj@1.3")
    assert _results(loaded) == _results(idx)
    assert isinstance(loaded._snap.vectors, np.memmap)  # memory-mapped, not read into RAM
    assert loaded.config.spec() == idx.config.spec()


def test_loaded_index_accepts_upserts_and_resaves(saved, tmp_path):
    _, path = saved
    loaded = TemporalIndex.load(path)
    loaded.add([{"id": "proj@2.0", "text": "proj 2.0. caching rewrite", "date": "2026-07-01"}])
    loaded.delete(["proj@1.0"])
    loaded.save(path)  # overwrite the directory it is mapped from
    again = TemporalIndex.load(path)
    assert "proj@2.0" in again and "proj@1.0" not in again and len(again) == 12
    gens = [p.name for p in path.iterdir() if p.name.startswith("g-")]
    assert len(gens) == 1  # old generation cleaned up


def test_killed_save_leaves_previous_index_loadable(saved, monkeypatch):
    idx, path = saved
    before = _results(TemporalIndex.load(path))
    idx.add([{"id": "proj@9.9", "text": "proj 9.9. caching everywhere", "date": "2026-07-30"}])

    def boom(*a, **k):
        raise KeyboardInterrupt("killed between writing the generation and switching CURRENT")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        idx.save(path)
    monkeypatch.undo()
    assert _results(TemporalIndex.load(path)) == before
    idx.save(path)  # the next save succeeds and cleans leftovers
    assert "proj@9.9" in TemporalIndex.load(path)
    assert not [p for p in path.iterdir() if p.name.startswith(".")]


def test_bit_flip_is_detected(saved):
    _, path = saved
    gdir, _ = read_manifest(path)
    f = gdir / "vectors.npy"
    data = bytearray(f.read_bytes())
    data[-5] ^= 0x01
    f.write_bytes(bytes(data))
    with pytest.raises(CorruptIndex, match="vectors.npy.*sha256"):
        TemporalIndex.load(path)


def test_truncation_is_detected(saved):
    _, path = saved
    gdir, _ = read_manifest(path)
    f = gdir / "bm25_data.npy"
    f.write_bytes(f.read_bytes()[:-8])
    with pytest.raises(CorruptIndex, match="bm25_data.npy.*truncated"):
        TemporalIndex.load(path, verify=False)


def test_damaged_manifest_or_pointer(saved):
    _, path = saved
    gdir, _ = read_manifest(path)
    (gdir / "manifest.json").write_text((gdir / "manifest.json").read_text().replace('"n_docs": 12', '"n_docs": 13'))
    with pytest.raises(CorruptIndex, match="manifest"):
        TemporalIndex.load(path)
    (path / CURRENT).write_text("{not json")
    with pytest.raises(CorruptIndex, match="CURRENT"):
        TemporalIndex.load(path)


def test_future_format_version_is_refused(saved):
    _, path = saved
    pointer = json.loads((path / CURRENT).read_text())
    pointer["format_version"] = 99
    (path / CURRENT).write_text(json.dumps(pointer))
    with pytest.raises(CorruptIndex, match="version 99"):
        TemporalIndex.load(path)


def test_foreign_directories(tmp_path):
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "cat.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(InvalidInput, match="not a chronorank index"):
        TemporalIndex.load(tmp_path / "photos")
    with pytest.raises(InvalidInput, match="refusing to save"):
        TemporalIndex(embedder=None).save(tmp_path / "photos")
    assert (tmp_path / "photos" / "cat.jpg").exists()
    with pytest.raises(InvalidInput, match="does not exist"):
        TemporalIndex.load(tmp_path / "missing")


def test_keyword_only_index_round_trip(tmp_path):
    idx = TemporalIndex(embedder=None)
    idx.add(DOCS)
    loaded = TemporalIndex.load(idx.save(tmp_path / "kw"))
    assert loaded._snap.vectors is None
    assert _results(loaded) == _results(idx)


def test_user_vectors_need_an_embedder_or_vector_after_load(tmp_path):
    idx = TemporalIndex(embedder=None)
    idx.add([{"id": "a", "text": "alpha", "vector": [1.0, 0.0]}, {"id": "b", "text": "beta", "vector": [0.0, 1.0]}])
    loaded = TemporalIndex.load(idx.save(tmp_path / "v"))
    assert loaded.search("x", vector=[0, 1], now=NOW)[0].id == "b"
    with pytest.raises(InvalidInput, match="vector="):
        loaded.search("beta", now=NOW)


def test_an_index_saved_by_another_analyzer_is_reanalysed_on_load(saved, monkeypatch):
    import chronorank.index.storage as storage

    idx, path = saved
    assert read_manifest(path)[1]["analyzer"] == storage.ANALYZER_VERSION
    monkeypatch.setattr(storage, "ANALYZER_VERSION", storage.ANALYZER_VERSION + 1)
    loaded = TemporalIndex.load(path)
    # rebuilt from the stored texts: the same terms, so the same ranking
    assert loaded._snap.term_ids.tolist() == idx._snap.term_ids.tolist()
    assert _results(loaded) == _results(idx)
    assert loaded.search("proj 1.3", k=1, now=NOW)[0].id == "proj@1.3"
