"""Untrusted index directories (issue 18, item 5): every crafted file is refused with
``CorruptIndex`` before anything outside the generation is read or any large array is built.

Each attack keeps the checksums consistent (``_forge`` rewrites the manifest's entry and
CURRENT's manifest checksum), as an attacker who can write the directory would: the
checksums prove integrity, not origin, so the structural checks must catch it.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import numpy as np
import pytest

from chronorank.errors import CorruptIndex
from chronorank.index import TemporalIndex


@pytest.fixture()
def saved(tmp_path):
    idx = TemporalIndex(embedder=None)
    idx.add([{"id": f"d{i}", "text": f"alpha beta gamma {i}", "date": "2024-01-01"} for i in range(20)])
    idx.save(tmp_path / "i")
    gen = json.loads((tmp_path / "i" / "CURRENT").read_text())["generation"]
    return tmp_path / "i", tmp_path / "i" / gen


def _set_manifest(root: Path, gen: Path, man_bytes: bytes) -> None:
    (gen / "manifest.json").write_bytes(man_bytes)
    cur = json.loads((root / "CURRENT").read_text())
    cur["manifest_sha256"] = hashlib.sha256(man_bytes).hexdigest()
    (root / "CURRENT").write_text(json.dumps(cur))


def _edit_manifest(root: Path, gen: Path, fn) -> None:
    man = json.loads((gen / "manifest.json").read_text())
    fn(man)
    _set_manifest(root, gen, json.dumps(man).encode())


def _forge(root: Path, gen: Path, name: str, data: bytes) -> None:
    """Replace ``name`` with ``data`` and make every checksum agree."""
    (gen / name).write_bytes(data)

    def fix(man):
        man["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}

    _edit_manifest(root, gen, fix)


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    return buf.getvalue()


def _load_fails(root: Path, *needles: str) -> str:
    with pytest.raises(CorruptIndex) as ei:
        TemporalIndex.load(root)
    msg = str(ei.value)
    for n in needles:
        assert n in msg, msg
    return msg


@pytest.mark.parametrize("name", ["../outside.txt", "/etc/hostname", "sub/../../outside.txt", "extra.npy"])
def test_manifest_names_outside_the_format_are_refused_unread(saved, name):
    root, gen = saved
    outside = root.parent / "outside.txt"
    outside.write_bytes(b"x" * 12345)
    _edit_manifest(root, gen, lambda m: m["files"].__setitem__(name, {"sha256": "0" * 64, "bytes": 1}))
    msg = _load_fails(root, "not part of the format")
    assert "12345" not in msg  # nothing about the outside file leaks into the error


def test_symlinked_data_file_is_refused(saved):
    root, gen = saved
    outside = root.parent / "docs_elsewhere.jsonl"
    outside.write_bytes((gen / "docs.jsonl").read_bytes())  # same bytes: the checksum would pass
    (gen / "docs.jsonl").unlink()
    os.symlink(outside, gen / "docs.jsonl")
    _load_fails(root, "docs.jsonl", "symbolic link")


def test_symlinked_generation_directory_is_refused(saved):
    root, gen = saved
    moved = root.parent / "gen_elsewhere"
    gen.rename(moved)
    os.symlink(moved, gen)
    _load_fails(root, "symbolic link")


def test_symlinked_current_is_refused(saved):
    root, _gen = saved
    outside = root.parent / "CURRENT.elsewhere"
    outside.write_bytes((root / "CURRENT").read_bytes())
    (root / "CURRENT").unlink()
    os.symlink(outside, root / "CURRENT")
    _load_fails(root, "CURRENT", "symbolic link")


def test_huge_term_pointer_is_refused_before_any_allocation(saved):
    root, gen = saved
    ptr = np.load(gen / "term_ptr.npy")
    ptr[-1] = 5 * 10**9  # ~20 GB of int32 term ids
    _forge(root, gen, "term_ptr.npy", _npy(ptr))
    _load_fails(root, "term_ptr.npy")


def test_decreasing_term_pointer_is_refused(saved):
    root, gen = saved
    ptr = np.load(gen / "term_ptr.npy")
    ptr[3], ptr[4] = ptr[4] + 1, ptr[3]
    _forge(root, gen, "term_ptr.npy", _npy(ptr))
    _load_fails(root, "term_ptr.npy")


def test_negative_bm25_row_index_is_refused(saved):
    root, gen = saved
    ind = np.load(gen / "bm25_indices.npy")
    ind[0] = -1  # would wrap to the last document silently
    _forge(root, gen, "bm25_indices.npy", _npy(ind))
    _load_fails(root, "bm25_indices.npy")


def test_term_id_beyond_the_vocabulary_is_refused(saved):
    root, gen = saved
    ids = np.load(gen / "term_ids.npy")
    ids[0] = 10**6
    _forge(root, gen, "term_ids.npy", _npy(ids))
    _load_fails(root, "term_ids.npy")


@pytest.mark.parametrize("arr", [
    np.zeros((4, 20), dtype=np.int64),                  # wrong dtype
    np.zeros((4, 21), dtype=np.float64),                # wrong shape
    np.zeros((20, 4), dtype=np.float64).T,              # fortran order
    np.array([{"a": 1}] * 80, dtype=object).reshape(4, 20),  # a pickle
], ids=["int64", "shape", "fortran", "object"])
def test_times_array_of_the_wrong_type_or_shape_is_refused(saved, arr):
    root, gen = saved
    _forge(root, gen, "times.npy", _npy(arr))
    _load_fails(root, "times.npy")


def test_npy_header_claiming_a_huge_shape_is_refused(saved):
    root, gen = saved
    raw = (gen / "times.npy").read_bytes()
    forged = raw.replace(b"(4, 20)", b"(4, 9999999999)".ljust(len(b"(4, 20)")), 1)
    if forged == raw:  # header layout differs: build one by hand
        pytest.skip("unexpected npy header layout")
    _forge(root, gen, "times.npy", forged)
    _load_fails(root, "times.npy")


def test_deeply_nested_manifest_is_corrupt_not_recursion_error(saved):
    root, gen = saved
    _set_manifest(root, gen, b"[" * 100_000 + b"]" * 100_000)
    _load_fails(root, "manifest.json")


@pytest.mark.parametrize("edit,needle", [
    (lambda m: m.pop("bm25"), "bm25"),
    (lambda m: m.__setitem__("n_docs", "20"), "n_docs"),
    (lambda m: m.__setitem__("n_docs", 10**12), "docs.jsonl"),
    (lambda m: m.__setitem__("dim", -3), "dim"),
    (lambda m: m.__setitem__("files", []), "file list"),
    (lambda m: m["files"].pop("times.npy"), "times.npy"),
    (lambda m: m.__setitem__("config", "kernel=nonsense("), "settings"),
    (lambda m: m.__setitem__("bad_dates", "explode"), "bad_dates"),
], ids=["no_bm25", "n_docs_str", "n_docs_huge", "dim_negative", "files_list", "missing_file", "config", "bad_dates"])
def test_malformed_manifest_fields_are_corrupt_index(saved, edit, needle):
    root, gen = saved
    _edit_manifest(root, gen, edit)
    _load_fails(root, needle)


@pytest.mark.parametrize("content", [
    b'{"id": "d0"}\n',                    # no text: a KeyError before
    b"not json\n",                        # a JSONDecodeError before
    b"[1, 2]\n",                          # not an object
    b'{"id": 5, "text": "x"}\n',          # id not a string
    b"[" * 50_000 + b"]" * 50_000 + b"\n",  # RecursionError before
], ids=["missing_text", "not_json", "list", "int_id", "deep"])
def test_malformed_documents_file_is_corrupt_index(saved, content):
    root, gen = saved
    _forge(root, gen, "docs.jsonl", content * 20)
    _read_fails(root, _READERS, "docs.jsonl")


def _read_fails(root: Path, readers, *needles: str) -> None:
    """docs.jsonl is parsed when a record is read (storage._read_records): a damaged one
    raises CorruptIndex at the load or at the first read of it, never another error."""
    for read in readers:
        with pytest.raises(CorruptIndex) as ei:
            read(TemporalIndex.load(root))
        for n in needles:
            assert n in str(ei.value), str(ei.value)


_READERS = [
    lambda idx: idx.get("d0"),
    lambda idx: idx.ids,
    lambda idx: [h.payload for h in idx.search("alpha beta", k=20, now="2024-06-01")],
]


def test_documents_file_with_another_line_count_is_refused_at_load(saved):
    root, gen = saved
    lines = (gen / "docs.jsonl").read_bytes().splitlines(keepends=True)
    for content in (b"".join(lines[:-1]), b"".join(lines) + lines[0], b"".join(lines) + b"\n"):
        _forge(root, gen, "docs.jsonl", content)
        _load_fails(root, "docs.jsonl")


def test_duplicate_ids_in_documents_file_are_corrupt_index(saved):
    root, gen = saved
    line = (gen / "docs.jsonl").read_bytes().splitlines(keepends=True)[0]
    _forge(root, gen, "docs.jsonl", line * 20)
    _read_fails(root, _READERS[:2] + [lambda idx: idx.add([{"id": "new", "text": "x"}])], "repeats")


@pytest.mark.parametrize("content", [b"{oops", b'{"a": 1}', b'["alpha", "alpha"]', b"[1, 2, 3]"],
                         ids=["not_json", "object", "duplicates", "ints"])
def test_malformed_vocabulary_is_corrupt_index(saved, content):
    root, gen = saved
    _forge(root, gen, "vocab.json", content)
    _load_fails(root, "vocab.json")


def test_a_clean_index_still_loads_and_searches(saved):
    root, _ = saved
    idx = TemporalIndex.load(root)
    assert len(idx) == 20
    # brackets inside strings are text, not nesting
    idx.add([{"id": "brackets", "text": "[" * 5000 + " alpha", "metadata": {"k": "{" * 5000}}])
    idx.save(root)
    idx = TemporalIndex.load(root)
    assert idx.get("brackets")["metadata"]["k"] == "{" * 5000
    idx.delete("brackets")
    idx.save(root)
    assert len(idx.search("alpha gamma", k=5, now="2025-01-01")) == 5
    for mmap in (True, False):
        assert len(TemporalIndex.load(root, mmap=mmap, verify=False)) == 20


# ------------------------------------------------------------------ issue 31: pipes, shapes, values


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("name", ["manifest.json", "docs.jsonl"])
def test_a_named_pipe_in_place_of_a_file_is_refused_without_blocking(saved, name):
    from reliability_support import time_limit

    root, gen = saved
    (gen / name).unlink()
    os.mkfifo(gen / name)  # opening it for reading would wait for a writer forever
    with time_limit(10):
        _load_fails(root, name, "not a regular file")


def test_npy_shape_overflowing_int64_is_corrupt_index(saved):
    root, gen = saved
    # leadver_parts.npy is (distinct, width) from the manifest: 2**40 * 2**40 wraps int64 to 0
    big = 1 << 40
    header = {"descr": "<i8", "fortran_order": False, "shape": (big, big)}
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    _forge(root, gen, "leadver_parts.npy", buf.getvalue())
    _edit_manifest(root, gen, lambda m: m["lead_versions"].update(distinct=big, width=big))
    _load_fails(root, "leadver_parts.npy")


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
def test_non_finite_vectors_are_corrupt_index_naming_the_file(tmp_path, value):
    from chronorank.index import HashingEmbedder

    idx = TemporalIndex(embedder=HashingEmbedder(32))
    idx.add([{"id": f"d{i}", "text": f"alpha beta {i}", "date": "2024-01-01"} for i in range(10)])
    idx.save(tmp_path / "v")
    root = tmp_path / "v"
    gen = root / json.loads((root / "CURRENT").read_text())["generation"]
    vecs = np.load(gen / "vectors.npy")
    vecs[7, 3] = value
    _forge(root, gen, "vectors.npy", _npy(vecs))
    msg = _load_fails(root, "vectors.npy", "row 7")
    assert "candidate" not in msg


def test_infinite_times_are_corrupt_index(saved):
    root, gen = saved
    times = np.load(gen / "times.npy")
    times[0, 2] = np.inf
    _forge(root, gen, "times.npy", _npy(times))
    _load_fails(root, "times.npy")


def test_an_index_holding_a_lone_surrogate_loads_and_saves_it_back(saved):
    root, gen = saved
    lines = (gen / "docs.jsonl").read_bytes().splitlines(keepends=True)
    rec = json.loads(lines[0])
    rec["text"] = "alpha \\ud800 beta"  # replaced below by the JSON escape of a lone surrogate
    rec["metadata"] = {"k\\udfff": "v\\ud800"}
    lines[0] = json.dumps(rec).replace("\\\\ud800", "\\ud800").replace("\\\\udfff", "\\udfff").encode() + b"\n"
    _forge(root, gen, "docs.jsonl", b"".join(lines))
    idx = TemporalIndex.load(root)
    assert idx.get("d0")["text"] == "alpha \ud800 beta"
    idx.add([{"id": "new", "text": "alpha gamma new"}])
    idx.save(root)  # raised a raw UnicodeEncodeError before
    again = TemporalIndex.load(root)
    assert again.get("d0")["text"] == "alpha \ud800 beta"
    assert again.get("d0")["metadata"] == {"k\udfff": "v\ud800"}
    assert len(again) == 21


def test_a_symlinked_lock_is_refused_and_its_target_not_created(saved):
    from chronorank.errors import StoreError

    root, _ = saved
    target = root.parent / "elsewhere" / "made-by-save"
    target.parent.mkdir()
    (root / "LOCK").unlink()
    os.symlink(target, root / "LOCK")
    idx = TemporalIndex.load(root)
    with pytest.raises(StoreError, match="LOCK"):
        idx.save(root)
    assert not target.exists()


def test_a_line_naming_two_ids_is_refused_when_read(saved):
    """Ids are read from the start of each line (records.DocLines.ids) without parsing the
    rest; a line whose JSON names another id (a repeated key: the last one wins) is refused
    when that record is read, not served under the wrong id."""
    root, gen = saved
    lines = (gen / "docs.jsonl").read_bytes().splitlines(keepends=True)
    assert lines[0].startswith(b'{"id": "d0", ')
    lines[0] = lines[0].replace(b'{"id": "d0", ', b'{"id": "d0", "id": "zz", ', 1)
    _forge(root, gen, "docs.jsonl", b"".join(lines))
    idx = TemporalIndex.load(root)
    assert idx.get("d1")["id"] == "d1"
    with pytest.raises(CorruptIndex) as ei:
        idx.get("d0")
    assert "docs.jsonl line 1" in str(ei.value)
