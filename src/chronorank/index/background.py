"""Embedding in the background: an index that answers before its vectors are in.

``TemporalIndex.add(docs, embed="background")`` builds everything but the vectors at once
(keyword and lead structures, times, version groups) and returns; a daemon thread then
embeds the documents through the embedding cache (:func:`~.embed_cache.embed_documents`,
the same chunks as a synchronous ``add``, so the same vectors) and publishes each chunk's
vectors as it is done.

**Ranking while vectors are missing.** As long as any document waits for its vector the
dense lane is off for the whole index: a search ranks by keyword + lead + time, exactly as
an index without an embedder does, and says so (``explain()``: ``dense: 1,200 / 5,000
embedded; keyword + time until the rest are in``; ``Ranking.meta["dense"]``). When the
last vector is in, searches fuse the dense signal again and rank exactly as after a
synchronous build (a test compares every ranking). Not taken: fusing the vectors already
in, document by document. The embedder goes shortest first, so a half-filled dense lane
would lift short documents over long ones for no reason of relevance, and a document's
score would depend on the embedder's progress rather than on the question; keyword +
time ranks every document by one rule until the lane is whole. Measured on news-dev
(``benchmarks/partial_dense.py``, nDCG@10 over all 400 questions): keyword + time 0.729;
the per-document fallback 0.715 / 0.722 / 0.730 with 25 / 50 / 75 % embedded, below
keyword + time until three quarters are in, and 0.745 only when all are. What it is worth meanwhile
(``benchmarks/first_answer.py``, news-dev, MiniLM): nDCG@10 fresh_only / fresh_vs_stale
0.780 / 0.667 with keyword + time, 0.788 / 0.692 once every vector is in; the first answer
came 2.7 s after the process started, the last vector 877 s later on that (contended) run.

**Saving** waits for the vectors (``save(path)``; ``save(path, wait=False)`` refuses while
any is missing): a saved index is always complete, never partial.

**Concurrency.** Each document waiting for its vector carries the *ticket* of the batch
that will embed it (``_Snapshot.pending``, int32, 0 = has its vector). A batch's vectors
are written, under the index's write lock, only into rows whose id it embedded and whose
ticket is still its own: a document replaced or deleted meanwhile is skipped (a replaced
one waits for its own batch, or got its vector from a synchronous ``add``). Rows are
written in place into the vector array of the current snapshot; that is safe because no
search reads the vectors of a snapshot with a pending row, and a snapshot without one is
never written to again. Each publish swaps in a new snapshot (sharing the keyword
structures), so a search sees one consistent state.

**Failure.** An embedder error stops the job: searches keep answering with keyword +
time, :meth:`TemporalIndex.wait` and ``save`` raise :class:`EmbeddingFailed` (with the
cause), and :meth:`TemporalIndex.resume_embedding` retries what is missing. At
interpreter exit a running job stops after its current chunk (what it embedded stays in
the embedding cache), so a script that ends early does not crash inside the embedder.
"""

from __future__ import annotations

import atexit
import copy
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from chronorank.errors import ChronorankError, InvalidInput
from chronorank.index.embed_cache import embed_documents
from chronorank.index.snapshot import VectorsPending
from chronorank.index.storage import save_index

if TYPE_CHECKING:
    from chronorank.index.core import TemporalIndex
    from chronorank.index.snapshot import _Snapshot

__all__ = ["DenseProgress", "EmbeddingFailed", "VectorsPending", "dense_progress"]

EMBED_MODES = ("now", "background")


class EmbeddingFailed(ChronorankError):
    """The background embedding stopped on an error (``__cause__`` holds it)."""


@dataclass(frozen=True)
class DenseProgress:
    """How far the dense lane is: ``embedded`` of ``total`` documents have their vector."""

    embedded: int
    total: int
    running: bool = False
    error: str | None = None

    @property
    def complete(self) -> bool:
        return self.embedded >= self.total

    def describe(self) -> str:
        head = f"{self.embedded:,} / {self.total:,} embedded"
        if self.complete:
            return head
        if self.error is not None:
            return (f"{head}; embedding stopped ({self.error}): keyword + time until "
                    "index.resume_embedding() embeds the rest")
        return f"{head}; keyword + time until the rest are in"

    def __str__(self) -> str:
        return f"dense: {self.describe()}"


def check_mode(embed: Any) -> str:
    if embed not in EMBED_MODES:
        raise InvalidInput(
            f"embed={embed!r}; use 'now' (add() returns once every vector is in) or 'background' "
            "(add() returns once the keyword structures are built; vectors follow)."
        )
    return str(embed)


def dense_progress(index: TemporalIndex, snap: _Snapshot | None = None) -> DenseProgress | None:
    """The dense lane's state in ``snap`` (default: the index's current one); None when the
    index has no dense lane (no embedder and no vectors)."""
    snap = index._snap if snap is None else snap
    if snap.vectors is None and index.embedder is None:
        return None
    n = len(snap)
    pend = getattr(snap, "pending", None)
    waiting = 0 if pend is None else int(np.count_nonzero(pend))
    job: BackgroundEmbedding | None = getattr(index, "_bg", None)
    running, error = (False, None) if job is None else job.status()
    if snap.vectors is None and n and not waiting:
        return None  # a keyword-only index whose documents came without vectors
    return DenseProgress(n - waiting, n, running=running and waiting > 0,
                         error=None if not waiting else error)


def join_pending(base: np.ndarray | None, n_base: int, new: np.ndarray | None, n_new: int) -> np.ndarray | None:
    """The pending tickets of ``base`` rows followed by ``new`` rows (None = none pending)."""
    if base is None and new is None:
        return None
    parts = [np.zeros(n_base, np.int32) if base is None else base,
             np.zeros(n_new, np.int32) if new is None else new]
    out = np.concatenate(parts).astype(np.int32, copy=False)
    return out if out.any() else None


def keep_pending(pend: np.ndarray | None, keep: np.ndarray) -> np.ndarray | None:
    if pend is None:
        return None
    out = pend[keep]
    return out if out.any() else None


class BackgroundEmbedding:
    """The batches waiting to be embedded for one index, and the thread embedding them."""

    def __init__(self, index: TemporalIndex) -> None:
        self._index = weakref.ref(index)
        self._cv = threading.Condition()
        self._batches: deque[tuple[int, list[str], list[str]]] = deque()
        self._thread: threading.Thread | None = None
        self._tickets = 0
        self._stop = False
        self.error: BaseException | None = None
        _JOBS.add(self)

    def next_ticket(self) -> int:
        with self._cv:
            self._tickets += 1
            return self._tickets

    def status(self) -> tuple[bool, str | None]:
        with self._cv:
            err = self.error
            return self._thread is not None, None if err is None else f"{type(err).__name__}: {err}"

    def submit(self, ticket: int, ids: list[str], texts: list[str]) -> None:
        with self._cv:
            self._batches.append((ticket, ids, texts))
            self._start_locked()

    def resume(self) -> None:
        with self._cv:
            self._start_locked()

    def _start_locked(self) -> None:
        if self._thread is None and self._batches and not self._stop:
            self.error = None
            self._thread = threading.Thread(target=self._run, name="chronorank-embed", daemon=True)
            self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no batch is left (True), or ``timeout`` seconds passed (False);
        raises :class:`EmbeddingFailed` if the job stopped on an error."""
        with self._cv:
            if not self._cv.wait_for(lambda: self._thread is None, timeout):
                return False
            err = self.error
            left = sum(len(b[1]) for b in self._batches)
        if err is not None:
            raise EmbeddingFailed(
                f"the background embedding stopped with {left:,} documents left to embed: "
                f"{type(err).__name__}: {err}. Searches answer with keyword + time meanwhile; fix the "
                "cause and call index.resume_embedding(), or re-add the documents with embed='now'."
            ) from err
        return True

    def stop(self, timeout: float = 60.0) -> None:
        """End the job after its current chunk (interpreter exit)."""
        with self._cv:
            self._stop = True
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cv:
                if not self._batches or self._stop:
                    self._thread = None
                    self._cv.notify_all()
                    return
                batch = self._batches[0]
            try:
                self._embed(*batch)
            except _Stopped:
                with self._cv:
                    self._thread = None
                    self._cv.notify_all()
                return
            except BaseException as exc:  # noqa: BLE001 - kept for wait(); searches go on
                with self._cv:
                    self.error = exc
                    self._thread = None
                    self._cv.notify_all()
                return
            with self._cv:
                self._batches.popleft()
                self._cv.notify_all()

    def _embed(self, ticket: int, ids: list[str], texts: list[str]) -> None:
        index = self._index()
        if index is None:
            return
        # only what still waits for this batch (a retry skips what is in already)
        snap = index._snap
        pend = snap.pending
        if pend is None:
            return
        rows = np.fromiter((snap.row_of.get(d, -1) for d in ids), dtype=np.int64, count=len(ids))
        live = np.flatnonzero((rows >= 0) & (pend[np.maximum(rows, 0)] == ticket))
        if live.shape[0] < len(ids):
            ids = [ids[int(i)] for i in live]
            texts = [texts[int(i)] for i in live]
        if not ids:
            return
        embedder, dim = index.embedder, index.dim
        if embedder is None or dim is None:
            raise InvalidInput("the index lost its embedder; nothing can embed the waiting documents.")

        def publish(pos: list[int], vecs: np.ndarray) -> None:
            if vecs.shape != (len(pos), dim):
                raise InvalidInput(f"embedder {embedder.name!r} returned shape {vecs.shape}, expected {(len(pos), dim)}.")
            _publish(index, ticket, [ids[i] for i in pos], vecs)
            if self._stop:
                raise _Stopped


        emb = embed_documents(embedder, texts, on_chunk=publish)
        if emb.shape != (len(texts), dim):
            raise InvalidInput(f"embedder {embedder.name!r} returned shape {emb.shape}, expected {(len(texts), dim)}.")


class _Stopped(Exception):
    pass


def _publish(index: TemporalIndex, ticket: int, ids: list[str], vecs: np.ndarray) -> None:
    """Write a chunk's vectors into the rows still waiting for them; swap in the new state."""
    if not ids:
        return
    with index._write_lock:
        snap = index._snap
        pend = snap.pending
        if pend is None or snap.vectors is None:
            return
        rows = np.fromiter((snap.row_of.get(d, -1) for d in ids), dtype=np.int64, count=len(ids))
        ok = np.flatnonzero((rows >= 0) & (pend[np.maximum(rows, 0)] == ticket))
        if not ok.shape[0]:
            return
        snap.vectors[rows[ok]] = vecs[ok]
        left = pend.copy()
        left[rows[ok]] = 0
        new = copy.copy(snap)  # shares the records, keyword structures and their caches
        new.pending = left if left.any() else None
        index._snap = new


def start(index: TemporalIndex) -> BackgroundEmbedding:
    """The index's job (created on first use; call under the index's write lock)."""
    job: BackgroundEmbedding | None = getattr(index, "_bg", None)
    if job is None:
        job = BackgroundEmbedding(index)
        index._bg = job
    return job


def wait(index: TemporalIndex, timeout: float | None = None) -> bool:
    """Block until every document has its vector (True) or ``timeout`` seconds passed (False)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        job: BackgroundEmbedding | None = getattr(index, "_bg", None)
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if job is not None and not job.wait(left):
            return False
        # under the write lock: an add swaps its snapshot in and submits its batch in one step
        with index._write_lock:
            if index._snap.pending is None:
                return True
            running = job is not None and job.status()[0]
        if not running:  # rows waiting with no job left: only after a job stopped at exit
            raise EmbeddingFailed("documents still wait for their vectors and no embedding is running; "
                                  "call index.resume_embedding().")


def save_complete(index: TemporalIndex, path: str | Path, wait_for_vectors: bool) -> Path:
    """``save_index`` once every vector is in (a save is never partial)."""
    while True:
        if index._snap.pending is not None:
            if not wait_for_vectors:
                prog = dense_progress(index)
                raise VectorsPending(
                    f"cannot save while documents wait for their vectors ({prog.describe() if prog else ''}); "
                    "call save(path) without wait=False to wait for them, or index.wait() first."
                )
            wait(index)
        try:
            return save_index(index, path)
        except VectorsPending:
            continue  # a background add came in between: wait for it too


_JOBS: weakref.WeakSet[BackgroundEmbedding] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for job in list(_JOBS):
        job.stop()
