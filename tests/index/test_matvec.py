"""The query's mat-vec over a large matrix (``core._MatVec``): row chunks shared by the calling
thread and one worker, equal to the bit to numpy's per-row dot products whoever computes them."""

from __future__ import annotations

import threading

import numpy as np

from chronorank.index.core import SMALL_MATVEC, _cosines, _MatVec

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

