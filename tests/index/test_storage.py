"""Persistence: round trip, atomic save, checksums, foreign directories."""

from __future__ import annotations

import json
import mmap
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


def _mapped(a):
    """Whether ``a`` reads a file mapping (its ``base`` chain ends at an ``mmap.mmap``)."""
    while a is not None:
        if isinstance(a, mmap.mmap):
            return True
        a = getattr(a, "base", None)
    return False


def _results(idx):
    r = idx.search("latest caching change", k=5, now=NOW)
    return [(h.id, round(h.score, 6)) for h in r]


def test_round_trip_gives_identical_results(saved):
    idx, path = saved
    loaded = TemporalIndex.load(path)
    assert len(loaded) == len(idx) and loaded.get("proj@1.3") == idx.get("proj@1.3")
    assert _results(loaded) == _results(idx)
    assert _mapped(loaded._snap.vectors) and _mapped(loaded._snap.times)  # memory-mapped, not read into RAM
    assert type(loaded._snap.times) is np.ndarray  # a plain view: no np.memmap Python code per slice
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


# ---------------------------------------------------------------- the lead field (format 2)


def _forge_generation(path, edit_manifest, drop=(), replace=None):
    """Edit the current generation in place and make every checksum agree again."""
    import hashlib
    import io

    gdir, man = read_manifest(path)
    for name in drop:
        (gdir / name).unlink()
        man["files"].pop(name)
    for name, arr in (replace or {}).items():
        buf = io.BytesIO()
        np.save(buf, arr)
        (gdir / name).write_bytes(buf.getvalue())
        man["files"][name] = {"sha256": hashlib.sha256(buf.getvalue()).hexdigest(), "bytes": len(buf.getvalue())}
    edit_manifest(man)
    raw = json.dumps(man).encode()
    (gdir / "manifest.json").write_bytes(raw)
    pointer = json.loads((path / CURRENT).read_text())
    pointer["manifest_sha256"] = hashlib.sha256(raw).hexdigest()
    pointer["format_version"] = man["format_version"]
    (path / CURRENT).write_text(json.dumps(pointer))


LEAD_FILES = ("lead_len.npy", "lead_data.npy", "lead_indices.npy", "lead_indptr.npy")
QUERIES = ["latest caching change", "proj 1.3", "retries", "change number 7 caching"]


def _all_results(idx):
    return [[(h.id, h.score) for h in idx.search(q, k=12, now=NOW)] for q in QUERIES]


def test_the_lead_is_saved_and_a_loaded_index_analyses_nothing_at_its_first_query(saved, monkeypatch):
    import chronorank.index.core as core
    import chronorank.index.snapshot as snapshot
    from chronorank.index.core import lead_lengths
    from chronorank.index.storage import FORMAT_VERSION

    idx, path = saved
    _, man = read_manifest(path)
    assert FORMAT_VERSION == 2 and set(LEAD_FILES) <= set(man["files"]) and man["lead"] == {"tokens": 12}
    want = _all_results(idx)
    loaded = TemporalIndex.load(path)
    np.testing.assert_array_equal(loaded._snap.lead_len, lead_lengths(d["text"] for d in DOCS))

    def no_analysis(*a, **k):
        raise AssertionError("the lead was re-derived after load")

    monkeypatch.setattr(core, "lead_lengths", no_analysis)
    monkeypatch.setattr(snapshot, "lead_lengths", no_analysis)
    monkeypatch.setattr(snapshot, "build_matrix", no_analysis)
    assert _all_results(loaded) == want  # scores equal to the bit


def test_a_format_1_index_without_the_lead_still_loads_and_ranks_the_same(saved, tmp_path):
    idx, path = saved
    want = _all_results(idx)

    def as_v1(man):
        man["format_version"] = 1
        man.pop("lead")

    _forge_generation(path, as_v1, drop=LEAD_FILES)
    old = TemporalIndex.load(path)
    assert old._snap.lead_len is None and not old._snap._lead
    assert _all_results(old) == want  # derived lazily, as format 1 always did
    # saving it writes format 2 with the lead; appending keeps it incremental
    again = TemporalIndex.load(path)
    again.save(tmp_path / "v2")
    _, man = read_manifest(tmp_path / "v2")
    assert set(LEAD_FILES) <= set(man["files"])
    assert _all_results(TemporalIndex.load(tmp_path / "v2")) == want


def test_appends_keep_the_lead_incremental(saved):
    from chronorank.index.core import lead_lengths

    idx, path = saved
    loaded = TemporalIndex.load(path)
    extra = [{"id": "proj@2.0", "text": "proj 2.0. caching rewrite. more words", "date": "2026-07-01"}]
    loaded.add(extra)
    idx.add(extra)
    texts = [r["text"] for r in loaded._snap.records]
    np.testing.assert_array_equal(loaded._snap.lead_len, lead_lengths(texts))
    assert _all_results(loaded) == _all_results(idx)


@pytest.mark.parametrize("attack", ["negative_len", "short_len", "bad_indptr", "row_out_of_range", "nan", "no_tokens",
                                    "half_the_files"])
def test_damaged_lead_files_are_refused(saved, attack):
    _, path = saved
    gdir, man = read_manifest(path)
    n, n_terms = man["n_docs"], man["n_terms"]
    lptr = np.load(gdir / "lead_indptr.npy")
    nnz = int(lptr[-1])
    replace, drop = {}, ()
    edit = lambda m: None  # noqa: E731
    if attack == "negative_len":
        replace = {"lead_len.npy": np.full(n, -1, dtype=np.int64)}
    elif attack == "short_len":
        replace = {"lead_len.npy": np.zeros(n - 1, dtype=np.int64)}
    elif attack == "bad_indptr":
        bad = lptr.copy()
        bad[1] = nnz + 5
        replace = {"lead_indptr.npy": bad}
    elif attack == "row_out_of_range":
        replace = {"lead_indices.npy": np.full(nnz, n + 3, dtype=np.int32)}
    elif attack == "nan":
        replace = {"lead_data.npy": np.full(nnz, np.nan, dtype=np.float32)}
    elif attack == "no_tokens":
        edit = lambda m: m.pop("lead")  # noqa: E731
    else:
        drop = ("lead_data.npy",)
    assert lptr.shape == (n_terms + 1,)
    _forge_generation(path, edit, drop=drop, replace=replace)
    with pytest.raises(CorruptIndex, match="lead"):
        TemporalIndex.load(path)


def test_get_and_ids_after_a_load_read_the_ids_alone(saved, monkeypatch):
    """The first ``get``, ``in`` or ``ids`` after a load reads each line's id from its start
    (records.DocLines.ids) and parses only the record asked for, not every line; ids whose
    JSON holds escapes are parsed whole and come out the same."""
    from chronorank.index import records
    from chronorank.index.records import DocLines

    monkeypatch.setattr(records, "_ID_BATCH", 4)  # several batches, some with a line parsed whole
    idx = TemporalIndex(embedder=None)  # no group key: the load reads no metadata column
    odd = [{"id": 'q"uote\\back\u00e9\n', "text": "escaped id", "date": "2025-01-01"},
           {"id": "long-" + "x" * 300, "text": "an id longer than the scan's window", "date": "2025-01-01"},
           {"id": "Zürich→東京", "text": "a non-ASCII id, read by the scan", "date": "2025-01-01"}]
    idx.add(DOCS + odd)
    path = idx.save(saved[1].parent / "plain")
    parsed: list[int] = []
    real = DocLines.parse
    monkeypatch.setattr(DocLines, "parse", lambda self, i: parsed.append(i) or real(self, i))
    loaded = TemporalIndex.load(path)
    assert loaded.ids == idx.ids
    assert parsed == [len(DOCS), len(DOCS) + 1]  # the escaped and the long id's lines only
    assert loaded.get("proj@1.3") == idx.get("proj@1.3") and all(d["id"] in loaded for d in odd)
    assert parsed == [len(DOCS), len(DOCS) + 1, 3]
    lines = loaded._snap.records.lines
    assert lines._cols is None  # no whole-record parse
    # an add after the load parses no stored record either; rows read their lines on demand
    new = {"id": "fresh", "text": "proj 9.9. fresh caching change", "date": "2025-12-01"}
    loaded.add([new])
    idx.add([new])
    assert len(parsed) == 3 and lines._cols is None
    assert _results(loaded) == _results(idx)
    assert loaded.get("fresh") == idx.get("fresh") and loaded.get("proj@1.5") == idx.get("proj@1.5")
    again = TemporalIndex.load(loaded.save(path.parent / "again"))
    assert list(again._snap.records) == list(idx._snap.records) and again.ids == idx.ids
