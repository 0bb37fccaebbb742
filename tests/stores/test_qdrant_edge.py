"""``QdrantStore(edge_path=...)``: Qdrant's Rust engine in process (qdrant-edge-py).

The conformance, filter and lead suites run on this backend too (``qdrant_edge`` in
``STORES``); this file covers what only it has: shards on disk, reopening, one shard shared by
the stores of a process, and its argument checks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from store_cases import NOW, docs_fixture

from chronorank.errors import InvalidInput, MissingDependency

pytest.importorskip("qdrant_client")
CFG = "index(missing_date='keep', relative_recency=none, topical_margin=none)"


def _edge() -> None:
    pytest.importorskip("qdrant_edge", reason="qdrant-edge-py is not installed (pip install 'chronorank[qdrant-edge]')")


def test_reopen_reads_the_shard_and_its_metadata(tmp_path: Path, embedder: Any) -> None:
    _edge()
    from chronorank.stores import QdrantStore

    s = QdrantStore("docs", edge_path=tmp_path, embedder=embedder, config=CFG)
    s.add(docs_fixture())
    q = "latest polars release join speed"
    before = s.search(q, k=5, now=NOW)
    s.close()
    assert (tmp_path / "docs" / "chronorank.json").is_file() and (tmp_path / "docs" / "segments").is_dir()
    again = QdrantStore("docs", edge_path=tmp_path, embedder=embedder, config=CFG)
    assert len(again) == len(docs_fixture()) and again.dim == embedder.dim and again.has_lead
    assert again.avgdl == pytest.approx(s.avgdl)
    after = again.search(q, k=5, now=NOW)
    np.testing.assert_allclose([h.score for h in after], [h.score for h in before], atol=1e-6)
    assert after.ids[:2] == before.ids[:2] and "polars@11" in after.ids[:2]  # and the undated one (keep)
    again.close()


def test_two_stores_in_one_process_share_the_shard(tmp_path: Path, embedder: Any) -> None:
    """A second EdgeShard.load of an open directory fails on the WAL lock; the stores share one."""
    _edge()
    from chronorank.stores import QdrantStore

    a = QdrantStore("docs", edge_path=tmp_path, embedder=embedder, config=CFG)
    a.add(docs_fixture())
    b = QdrantStore("docs", edge_path=tmp_path, embedder=embedder, config=CFG)
    b.add([{"id": "new", "text": "polars 12.0 release fixes join speed again", "date": "2024-12-20"}])
    assert len(a) == len(b) == len(docs_fixture()) + 1
    a.close()  # b still holds the shard
    assert b.search("polars 12.0 release join speed again", k=3, now=NOW).ids[0] == "new"
    assert b.delete(["new"]) == 1
    b.close()


def test_edge_and_local_mode_rank_alike(tmp_path: Path, embedder: Any) -> None:
    """The same requests on two engines: Qdrant's Rust engine and qdrant-client's emulation."""
    _edge()
    from chronorank.stores import QdrantStore

    edge = QdrantStore("docs", edge_path=tmp_path, embedder=embedder, config=CFG)
    local = QdrantStore("docs", embedder=embedder, config=CFG)
    for s in (edge, local):
        s.add(docs_fixture())
    for q in ("latest polars release join speed", "httpx proxy support as of 2023", "polars 3.0 release"):
        e, lo = edge.search(q, k=8, now=NOW), local.search(q, k=8, now=NOW)
        np.testing.assert_allclose([h.score for h in e], [h.score for h in lo], atol=1e-5)
        assert e.ids[0] == lo.ids[0], q
    edge.close()


def test_bad_edge_arguments(tmp_path: Path, embedder: Any) -> None:
    _edge()
    from chronorank.stores import QdrantStore

    with pytest.raises(InvalidInput, match="without url/path/location/client"):
        QdrantStore("docs", edge_path=tmp_path, url="http://localhost:6333", embedder=embedder)
    with pytest.raises(InvalidInput, match="directory"):
        QdrantStore("docs", edge_path=":memory:", embedder=embedder)
    (tmp_path / "afile").write_text("x")
    with pytest.raises(InvalidInput, match="is a file"):
        QdrantStore("docs", edge_path=tmp_path / "afile", embedder=embedder)


def test_missing_package_names_the_extra(tmp_path: Path, embedder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from chronorank.stores import QdrantStore

    monkeypatch.setitem(sys.modules, "qdrant_edge", None)  # import qdrant_edge -> ImportError
    with pytest.raises(MissingDependency, match=r'pip install "chronorank\[qdrant-edge\]"'):
        QdrantStore("docs", edge_path=tmp_path, embedder=embedder)
