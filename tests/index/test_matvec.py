"""The query's mat-vec over a large matrix (``core._MatVec``): row chunks shared by the calling
thread and one worker, equal to the bit to numpy's per-row dot products whoever computes them;
and ``core._fuse``'s sparse additions against the blend written out over every document."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from chronorank.index.config import IndexConfig
from chronorank.index.core import SMALL_MATVEC, _cosines, _fuse, _MatVec

DIM = 64


def _matrix(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, DIM), dtype=np.float32), rng.standard_normal(DIM, dtype=np.float32)


def test_large_matrix_is_the_per_row_dot_to_the_bit() -> None:
    n = SMALL_MATVEC // DIM + 13  # above the threshold, not a multiple of the chunk count
    v, q = _matrix(n, 1)
    out = _cosines(v, q)
    assert out.dtype == np.float32 and out.shape == (n,)
    assert np.array_equal(out, np.vecdot(v, q))
    np.testing.assert_allclose(out, v @ q, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("weight", [0.3, 1.0, 2.0 / 3.0])
def test_the_dense_term_made_in_the_chunks_is_the_fused_one_to_the_bit(weight: float) -> None:
    """``_MatVec.start(weight=w)``: each chunk's cosines clipped and weighted in float64 as they
    are computed -- what ``_fuse`` does over the whole array, element by element."""
    v, q = _matrix(5003, 3)
    begun = _MatVec().start(v, q, weight)
    assert begun.part() is None  # not before the cosines are done
    begun = _MatVec().start(v, q, weight)
    out = begun()
    part = begun.part()
    assert part is not None and part[0] == weight
    assert np.array_equal(part[1], np.multiply(np.clip(np.vecdot(v, q), 0.0, 1.0), weight, dtype=np.float64))
    assert begun.part() is None  # handed out once: _fuse adds the keywords to it in place
    cfg = IndexConfig(dense_weight=weight)
    kw = np.where(np.arange(5003) % 7 == 0, np.arange(5003, dtype=np.float32) / 5003, np.float32(0))
    signals = {"dense": out, "bm25": kw}
    again = _MatVec().start(v, q, weight)
    again()
    assert np.array_equal(_fuse(signals, cfg, again.part()), _fuse(signals, cfg))


def test_a_worker_that_never_runs_leaves_every_chunk_to_the_caller() -> None:
    v, q = _matrix(1000, 2)
    never = _MatVec()
    never._submit = lambda fn: None  # type: ignore[method-assign]  # busy, or lost across a fork
    assert np.array_equal(never(v, q), np.vecdot(v, q))


def test_a_late_worker_takes_nothing_and_writes_nothing() -> None:
    v, q = _matrix(1000, 3)
    late: list = []
    mv = _MatVec()
    mv._submit = late.append  # type: ignore[method-assign]  # run after the call has returned
    out = mv(v, q)
    before = out.copy()
    late[0]()
    assert np.array_equal(out, before) and np.array_equal(out, np.vecdot(v, q))


def test_a_begun_mat_vec_is_finished_after_other_work_to_the_bit() -> None:
    """``_MatVec.start``: the worker takes chunks while the caller does something else (the
    keyword signals); the call it returns finishes the rest and gives the per-row dots."""
    v, q = _matrix(5000, 4)
    mv = _MatVec()
    finish = mv.start(v, q)
    other = np.sort(np.random.default_rng(4).random(20_000))  # the caller's own work meanwhile
    out = finish()
    assert other.shape == (20_000,) and np.array_equal(out, np.vecdot(v, q))
    idle = _MatVec()
    idle._submit = lambda fn: None  # type: ignore[method-assign]  # no worker: the finish does every chunk
    assert np.array_equal(idle.start(v, q)(), np.vecdot(v, q))


def test_concurrent_searches_share_the_worker() -> None:
    mats = [_matrix(3000 + 17 * i, 10 + i) for i in range(6)]
    mv = _MatVec()
    got: dict[int, list[np.ndarray]] = {i: [] for i in range(len(mats))}

    def run(i: int) -> None:
        v, q = mats[i]
        for _ in range(20):
            got[i].append(mv(v, q))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(mats))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, (v, q) in enumerate(mats):
        want = np.vecdot(v, q)
        assert len(got[i]) == 20 and all(np.array_equal(o, want) for o in got[i])



def _fuse_plain(signals: dict[str, np.ndarray], cfg: IndexConfig) -> np.ndarray:
    """The blend written out over every document (what ``core._fuse`` computes)."""
    dense, kw, lead = signals.get("dense"), signals.get("bm25"), signals.get("lead")
    sim: np.ndarray | None = None
    total = 0.0
    if dense is not None:
        d = np.clip(dense.astype(np.float64), 0.0, 1.0)
        if cfg.dense_scale == "max" and d.max() > 0:
            d = d / d.max()
        sim, total = d * cfg.dense_weight, cfg.dense_weight
    present = (cfg.dense_weight if dense is not None else 0.0) + (cfg.keyword_weight if kw is not None else 0.0)
    lead_w = cfg.lead_weight * present / (cfg.dense_weight + cfg.keyword_weight)
    for values, weight in ((kw, cfg.keyword_weight), (lead, lead_w)):
        if values is None or weight == 0:
            continue
        top = float(values.max())
        if top <= 0 and sim is not None:
            continue
        total += weight
        part = np.divide(values, top, dtype=np.float64) * weight if top > 0 else np.zeros(values.shape[0])
        sim = part if sim is None else sim + part
    assert sim is not None
    return sim / total


def test_fuse_adds_sparse_signals_where_they_are_not_zero_to_the_bit() -> None:
    rng = np.random.default_rng(8)
    for trial in range(60):
        n = int(rng.integers(50, 3000))
        signals: dict[str, np.ndarray] = {}
        if trial % 5:
            signals["dense"] = rng.uniform(-0.3, 1.0, n).astype(np.float32)
        for name in ("bm25", "lead"):
            share = [0.0, 0.01, 0.1, 0.12, 0.5, 1.0][int(rng.integers(0, 6))]
            signals[name] = np.where(rng.random(n) < share, rng.exponential(3.0, n), 0.0).astype(np.float32)
        cfg = IndexConfig(dense_weight=float(rng.uniform(0.1, 1)), keyword_weight=float(rng.uniform(0.1, 1)),
                          lead_weight=float(rng.choice([0.0, 0.5, 1.0])), dense_scale=str(rng.choice(["raw", "max"])))
        if "dense" not in signals and not signals["bm25"].any():
            continue  # no signal to fuse: an error, tested elsewhere
        assert np.array_equal(_fuse(signals, cfg), _fuse_plain(signals, cfg), equal_nan=True), trial


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_starts_its_own_worker() -> None:
    v, q = _matrix(SMALL_MATVEC // DIM + 1, 9)
    want = np.vecdot(v, q)
    mv = _MatVec()
    assert np.array_equal(mv(v, q), want)  # the parent's worker exists
    pid = os.fork()
    if pid == 0:  # the child: a fresh executor, whose worker computes chunks again
        ok = mv._pool is None and np.array_equal(mv(v, q), want) and mv._pool is not None
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_narrow_filter_scores_its_rows_as_the_whole_mat_vec_would(monkeypatch: pytest.MonkeyPatch) -> None:
    """A filter (or candidates) matching few documents takes the cosines of its rows only
    (``core.FEW_ROWS``): the same ranking, to the bit, as cutting the whole corpus's."""
    from chronorank.index import TemporalIndex, core

    rng = np.random.default_rng(7)
    n = 400
    vecs = rng.standard_normal((n, DIM), dtype=np.float32)
    docs = [{"id": f"d{i}", "text": f"alpha w{i % 13} release {i % 7}", "date": 1.7e9 - 86400.0 * i,
             "metadata": {"project": f"p{i % 10}"}} for i in range(n)]
    idx = TemporalIndex(embedder=None)
    idx.add(docs, vectors=vecs)
    q = rng.standard_normal(DIM, dtype=np.float32)
    asks = [dict(filter={"project": "p3"}), dict(candidates=[f"d{i}" for i in range(0, n, 9)])]
    few = [idx.search("latest alpha release", k=10, now=1.7e9, vector=q, **a) for a in asks]
    monkeypatch.setattr(core, "FEW_ROWS", 10 * n)  # never few: every row's cosine, then cut
    whole = [idx.search("latest alpha release", k=10, now=1.7e9, vector=q, **a) for a in asks]
    for a, b in zip(few, whole):
        assert a.ids == b.ids and len(a.ids) == 10
        assert np.array_equal(a.signals["dense"], b.signals["dense"]) and np.array_equal(a.score, b.score)


def test_the_mat_vec_begun_before_the_question_is_read_ranks_as_the_one_after(monkeypatch: pytest.MonkeyPatch) -> None:
    """A vector given with the index's own configuration over every row: the cosines are begun
    before the question is parsed (``TemporalIndex._early_dense``), the fused similarity's
    dense term made in their chunks (``_MatVec.start(weight=...)``); the same search with a
    per-call configuration (the same values) computes both at the usual point. Same ranking,
    the same fused similarity to the bit."""
    from chronorank.index import TemporalIndex, core

    monkeypatch.setattr(core, "SMALL_MATVEC", 1)  # every matrix is "large": the two-thread path
    begun: list[int] = []
    real = core._cosines_start
    monkeypatch.setattr(core, "_cosines_start", lambda v, q, *w: begun.append(v.shape[0]) or real(v, q, *w))
    rng = np.random.default_rng(11)
    n = 300
    docs = [{"id": f"d{i}", "text": f"beta w{i % 11} release {i % 5}", "date": 1.7e9 - 86400.0 * i,
             "metadata": {"project": f"p{i % 4}"}} for i in range(n)]
    idx = TemporalIndex(embedder=None)
    idx.add(docs, vectors=rng.standard_normal((n, DIM), dtype=np.float32))
    q = rng.standard_normal(DIM, dtype=np.float32)
    early = idx.search("latest beta release", k=10, now=1.7e9, vector=q)
    assert begun == [n]
    usual = idx.search("latest beta release", k=10, now=1.7e9, vector=q, config=idx.config)
    assert begun == [n, n]
    assert early.ids == usual.ids and len(early.ids) == 10
    assert np.array_equal(early.signals["dense"], usual.signals["dense"]) and np.array_equal(early.score, usual.score)
    assert np.array_equal(early.meta["raw_similarity"], usual.meta["raw_similarity"])
    with pytest.raises(Exception, match="vector"):
        idx.search("latest beta release", k=10, now=1.7e9, vector=np.zeros(DIM, dtype=np.float32))
