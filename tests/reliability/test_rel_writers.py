"""Two writers on one index directory, and loads while a save runs (issue 18, items 1-2).

Every document is read back by id after the writers return (``count_lost``); "lost" is not
derived from any other figure.
"""

from __future__ import annotations

import json
import os

import pytest
from reliability_support import (
    concurrent_append_trials,
    concurrent_save_trials,
    load_during_save,
    writer_docs,
)

from chronorank.index import TemporalIndex

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forked writers need os.fork")


@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_two_writers_lose_no_document(tmp_path, mode):
    stats = concurrent_save_trials(tmp_path, 50, mode=mode)
    assert stats["errors"] == []
    assert stats["trials"] == 50
    assert stats["documents_lost"] == 0, stats
    # both writers' saves returned; the last one wins, and each trial ends with one generation
    for t in range(50):
        gens = [p for p in (tmp_path / f"{mode}-{t}").iterdir() if p.name.startswith("g-")]
        assert len(gens) == 1


def test_loads_during_saves_never_report_a_healthy_index_damaged(tmp_path):
    stats = load_during_save(tmp_path, 500)
    assert stats["loads"] == 500
    assert stats["saves_during_loads"] > 2  # the writer really was saving meanwhile
    assert stats["false_corrupt"] == 0 and stats["other_errors"] == 0, stats["errors"]
    assert stats["wrong_state"] == 0


def test_cleanup_removes_only_generations_older_than_current(tmp_path):
    path = tmp_path / "i"
    idx = TemporalIndex(embedder=None)
    idx.add(writer_docs("A"))
    idx.save(path)
    first = json.loads((path / "CURRENT").read_text())["generation"]
    # a generation from a clock that stepped back: the next save must still sort after it
    future = path / ("g-50000000000000000000-" + "0" * 8)
    future.mkdir()
    idx.save(path)
    gen = json.loads((path / "CURRENT").read_text())["generation"]
    assert gen > future.name > first
    names = {p.name for p in path.iterdir()}
    assert names == {"CURRENT", "LOCK", gen}
    assert len(TemporalIndex.load(path)) == len(writer_docs("A"))


def test_cleanup_keeps_the_generation_current_names(tmp_path, monkeypatch):
    """Cleanup is driven by CURRENT: a generation newer than the one it names is kept."""
    from chronorank.index import storage

    path = tmp_path / "i"
    idx = TemporalIndex(embedder=None)
    idx.add(writer_docs("A"))
    idx.save(path)
    gen = json.loads((path / "CURRENT").read_text())["generation"]
    newer = path / (gen[:-8] + "f" * 8)
    older = path / ("g-00000000000000000001-" + "0" * 8)
    newer.mkdir()
    older.mkdir()
    storage._cleanup(path, gen)
    names = {p.name for p in path.iterdir()}
    assert gen in names and newer.name in names and older.name not in names


def test_reader_retries_when_its_generation_vanished(tmp_path, monkeypatch):
    from chronorank.index import storage

    path = tmp_path / "i"
    a = TemporalIndex(embedder=None)
    a.add(writer_docs("A"))
    a.save(path)
    b = TemporalIndex(embedder=None)
    b.add(writer_docs("B"))
    real = storage.read_manifest
    calls = []

    def switch_then_read(p):
        calls.append(p)
        gdir, man = real(p)
        if len(calls) == 1:  # a writer switches CURRENT and removes this generation right now
            b.save(path)
        return gdir, man

    monkeypatch.setattr(storage, "read_manifest", switch_then_read)
    got = TemporalIndex.load(path)
    assert len(calls) == 2
    assert sorted(got.ids) == sorted(d["id"] for d in writer_docs("B"))


def test_appending_processes_holding_the_writer_lock_keep_both_batches(tmp_path):
    stats = concurrent_append_trials(tmp_path, 20)
    assert stats["errors"] == [] and stats["trials"] == 20
    assert stats["documents_lost"] == 0


def test_writer_lock_is_reentrant_and_excludes_other_threads(tmp_path):
    import threading

    from chronorank.index.storage import writer_lock

    path = tmp_path / "i"
    idx = TemporalIndex(embedder=None)
    idx.add(writer_docs("A"))
    order: list[str] = []
    with writer_lock(path):
        idx.save(path)  # save takes the lock again in this thread: no deadlock
        t = threading.Thread(target=lambda: (idx.save(path), order.append("other saved")))
        t.start()
        t.join(0.5)
        order.append("holder done")  # the other thread is still waiting for the lock
    t.join()
    assert order == ["holder done", "other saved"]
