"""Index durability: checksums catch damaged files; kill -9 during save/upsert loses nothing."""

from __future__ import annotations

import json
import random

import pytest
from reliability_support import run_kill_campaign

from chronorank.errors import CorruptIndex
from chronorank.index import TemporalIndex


@pytest.fixture()
def saved(tmp_path):
    idx = TemporalIndex(embedder=None)
    idx.add([{"id": f"d{i}", "text": f"alpha beta {i}", "date": "2024-01-01"} for i in range(30)])
    idx.save(tmp_path / "i")
    gen = next(p for p in (tmp_path / "i").iterdir() if p.name.startswith("g-"))
    return tmp_path / "i", gen


def _files(root, gen):
    return sorted(gen.iterdir()) + [root / "CURRENT"]


def test_truncated_files_raise_corrupt_index(saved):
    root, gen = saved
    for f in _files(root, gen):
        raw = f.read_bytes()
        for cut in (0, len(raw) // 2, len(raw) - 1):
            f.write_bytes(raw[:cut])
            with pytest.raises(CorruptIndex, match="damaged|version") as ei:
                TemporalIndex.load(root)
            assert str(root) in str(ei.value)
            f.write_bytes(raw)
    assert len(TemporalIndex.load(root)) == 30


def test_bit_flips_in_data_files_raise_corrupt_index_naming_the_file(saved):
    root, gen = saved
    rng = random.Random(3)
    for f in sorted(gen.iterdir()):
        raw = f.read_bytes()
        for _ in range(8):
            bit = rng.randrange(len(raw) * 8)
            b = bytearray(raw)
            b[bit // 8] ^= 1 << (bit % 8)
            f.write_bytes(bytes(b))
            with pytest.raises(CorruptIndex) as ei:
                TemporalIndex.load(root)
            msg = str(ei.value)
            assert f.name in msg, msg  # the damaged file itself, manifest.json included
            assert "Restore it from a backup or rebuild it" in msg
            f.write_bytes(raw)


def test_bit_flips_in_current_checksum_and_generation_raise_corrupt_index(saved):
    root, _ = saved
    cur = root / "CURRENT"
    pointer = json.loads(cur.read_text())
    for key in ("manifest_sha256", "generation"):
        bad = dict(pointer)
        v = bad[key]
        bad[key] = v[:-1] + ("0" if v[-1] != "0" else "1")
        cur.write_text(json.dumps(bad))
        with pytest.raises(CorruptIndex):
            TemporalIndex.load(root)
    cur.write_text("{not json")
    with pytest.raises(CorruptIndex, match="CURRENT is not valid JSON"):
        TemporalIndex.load(root)


def test_leftovers_of_killed_saves_do_not_break_load_or_next_save(saved):
    root, _ = saved
    (root / ".tmp-g-00000000000000000001-dead").mkdir()
    (root / ".tmp-g-00000000000000000001-dead" / "docs.jsonl").write_text("partial")
    (root / ".CURRENT.g-00000000000000000001-dead.tmp").write_text("{")
    idx = TemporalIndex.load(root)
    assert len(idx) == 30
    idx.add([{"id": "new", "text": "alpha"}])
    idx.save(root)
    assert len(TemporalIndex.load(root)) == 31
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith("g-")) == ["CURRENT", "LOCK"]
    assert len([p for p in root.iterdir() if p.name.startswith("g-")]) == 1


@pytest.mark.slow
def test_kill_minus_nine_during_save_and_upsert_subsample(tmp_path):
    stats = run_kill_campaign(5, tmp_path, seed=11, max_delay_s=0.6)
    assert stats["failures"] == []
    assert stats["kills"] == 5 and stats["survived"] == 5
    assert stats["documents_lost"] == 0 and stats["mixed_states"] == 0 and stats["load_failures"] == 0
