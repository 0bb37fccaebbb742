"""An on-disk cache of document embeddings, keyed by model and content hash.

``embed_documents(embedder, texts)`` is what ``TemporalIndex.add`` (and so ``chronorank
index``, ``eval``, ``demo`` and ``serve-demo``) calls: texts already embedded by the same
model come from the cache, the rest are embedded -- with a :class:`~.progress.Progress`
from the first second -- and stored. A rerun on an unchanged corpus embeds nothing.

Where: ``$CHRONORANK_EMBED_CACHE`` if it names a directory, else
``$XDG_CACHE_HOME/chronorank/embeddings`` (``~/.cache/...``). ``CHRONORANK_EMBED_CACHE=off``
(or ``0``) turns it off. Only embedders that name their exact model through a
``cache_key`` attribute are cached (the built-in neural ones do; ``hashing`` is cheaper to
recompute than to read, and an arbitrary object's ``name`` may not pin its weights).

Layout: one directory per model (the sha256 of its cache key), holding ``.npz`` shards of
(content hashes, float32 vectors, a blake2b digest of both). Writers never touch an
existing shard: each batch is a new file written under a temporary name and renamed into
place, so concurrent writers cannot tear one another's files and a reader sees whole
shards or none. A shard that fails to load or to verify is ignored (and removed); its
texts are simply embedded again. Many shards are merged into one now and then.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chronorank._recache import env_cache_dir
from chronorank.index.embedders import embed_queries
from chronorank.index.progress import Progress

__all__ = ["CachedQueries", "EmbeddingCache", "cache_dir", "cached_queries", "default_cache", "embed_documents"]

_KEY_BYTES = 16
_MERGE_AT = 32  # shards in one model's directory before they are merged


def cache_dir() -> Path | None:
    """The cache root, or None when ``CHRONORANK_EMBED_CACHE`` turns the cache off."""
    return env_cache_dir("CHRONORANK_EMBED_CACHE", "embeddings")


_HASH_STEP = 1 << 20


def _content_key(t: str) -> bytes:
    if len(t) <= _HASH_STEP:
        return hashlib.blake2b(t.encode("utf-8", "surrogatepass"), digest_size=_KEY_BYTES).digest()
    h = hashlib.blake2b(digest_size=_KEY_BYTES)  # a megabyte at a time: a huge text is never copied whole
    for a in range(0, len(t), _HASH_STEP):
        h.update(t[a : a + _HASH_STEP].encode("utf-8", "surrogatepass"))
    return h.digest()


def content_keys(texts: Sequence[str]) -> list[bytes]:
    """A 16-byte blake2b digest of each text's UTF-8 bytes."""
    return [_content_key(t) for t in texts]


def _digest(keys: np.ndarray, vecs: np.ndarray) -> np.ndarray:
    h = hashlib.blake2b(digest_size=32)
    h.update(np.ascontiguousarray(keys).tobytes())
    h.update(np.ascontiguousarray(vecs).tobytes())
    return np.frombuffer(h.digest(), dtype=np.uint8)


class EmbeddingCache:
    """The vectors of one model (``model_key``, e.g. ``minilm-int8:<sha256>:max_length=128``)."""

    def __init__(self, root: str | os.PathLike[str], model_key: str, dim: int) -> None:
        self.model_key = model_key
        self.dim = int(dim)
        tag = hashlib.sha256(f"{model_key}\0{self.dim}".encode()).hexdigest()[:24]
        self.dir = Path(root) / tag

    def _shards(self) -> list[Path]:
        try:
            return sorted(p for p in self.dir.iterdir() if p.suffix == ".npz" and not p.name.startswith("."))
        except OSError:
            return []

    def _read(self, path: Path) -> tuple[np.ndarray, np.ndarray] | None:
        try:
            with np.load(path, allow_pickle=False) as z:
                keys, vecs, dig = z["keys"], z["vectors"], z["digest"]
        except FileNotFoundError:
            return None  # merged away by another process meanwhile
        except Exception:  # noqa: BLE001 - any damage (truncation, bad zip, bad header) is a miss
            self._discard(path)
            return None
        ok = (
            keys.dtype == np.uint8 and keys.ndim == 2 and keys.shape[1] == _KEY_BYTES
            and vecs.dtype == np.float32 and vecs.ndim == 2 and vecs.shape == (keys.shape[0], self.dim)
            and np.array_equal(dig, _digest(keys, vecs))
        )
        if not ok:
            self._discard(path)
            return None
        return keys, vecs

    @staticmethod
    def _discard(path: Path) -> None:
        with contextlib.suppress(OSError):
            path.unlink()

    def get(self, keys: Sequence[bytes]) -> dict[int, np.ndarray]:
        """Rows found, by position in ``keys``."""
        want: dict[bytes, list[int]] = {}
        for i, k in enumerate(keys):
            want.setdefault(k, []).append(i)
        found: dict[int, np.ndarray] = {}
        for path in self._shards():
            if not want:
                break
            got = self._read(path)
            if got is None:
                continue
            skeys, svecs = got
            for row, k in enumerate(map(bytes, skeys)):
                for i in want.pop(k, ()):
                    found[i] = svecs[row]
        return found

    def put(self, keys: Sequence[bytes], vecs: np.ndarray) -> None:
        """Store rows as one new shard (atomic rename); errors leave the cache as it was."""
        if not len(keys):
            return
        k = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), _KEY_BYTES)
        v = np.ascontiguousarray(vecs, dtype=np.float32)
        if v.shape != (len(keys), self.dim):
            return
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._write(k, v)
            shards = self._shards()
            if len(shards) >= _MERGE_AT:
                self._merge(shards)
        except OSError:
            pass  # a read-only or full disk: the cache is an optimisation only

    def _write(self, k: np.ndarray, v: np.ndarray) -> Path:
        name = os.urandom(16).hex()
        tmp = self.dir / f".{name}.tmp"
        final = self.dir / f"{name}.npz"
        try:
            with open(tmp, "wb") as f:
                np.savez(f, keys=k, vectors=v, digest=_digest(k, v))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, final)
        finally:
            if tmp.exists():
                self._discard(tmp)
        return final

    def _merge(self, shards: list[Path]) -> None:
        parts = [p for p in map(self._read, shards) if p is not None]
        if not parts:
            return
        keys = np.concatenate([p[0] for p in parts])
        vecs = np.concatenate([p[1] for p in parts])
        _, first = np.unique(keys, axis=0, return_index=True)
        first.sort()
        self._write(keys[first], vecs[first])
        for p in shards:  # the merged shard holds them all; a concurrent merge is harmless
            self._discard(p)


def model_key(embedder: Any) -> str | None:
    key = getattr(embedder, "cache_key", None)
    return key if isinstance(key, str) and key else None


def default_cache(embedder: Any) -> EmbeddingCache | None:
    """The cache for this embedder under :func:`cache_dir`, or None (off, or not cacheable)."""
    root = cache_dir()
    key = model_key(embedder)
    if root is None or key is None:
        return None
    return EmbeddingCache(root, key, int(embedder.dim))


def embed_documents(
    embedder: Any, texts: Sequence[str], *, cache: EmbeddingCache | None | bool = True,
    chunk: int = 64, desc: str = "embedding",
    on_chunk: Callable[[list[int], np.ndarray], None] | None = None,
) -> np.ndarray:
    """``embedder.embed(texts)`` through the cache, with progress: float32 ``(n, dim)``.

    ``cache=True`` uses :func:`default_cache`, ``False``/``None`` none. The misses are
    embedded shortest first in chunks of ``chunk`` (so the bar moves and the ETA holds) and
    stored chunk by chunk (an interrupted job keeps what it finished). ``on_chunk(positions,
    vectors)`` is called with the cache hits, then with every embedded chunk as it is done
    (the background embedding of :mod:`chronorank.index.background` publishes through it);
    the chunks are the same with or without it, so are the vectors.
    """
    n = len(texts)
    store = default_cache(embedder) if cache is True else (cache or None)
    keys = content_keys(texts) if store is not None else []
    out: np.ndarray | None = None
    found = store.get(keys) if store is not None else {}
    todo = [i for i in range(n) if i not in found]
    if found:
        out = np.empty((n, store.dim if store is not None else 0), dtype=np.float32)
        for i, v in found.items():
            out[i] = v
        if on_chunk is not None:
            hit = sorted(found)
            on_chunk(hit, out[hit])
    if todo:
        todo.sort(key=lambda i: len(texts[i]))
        with Progress(len(todo), desc) as bar:
            for lo in range(0, len(todo), chunk):
                part = todo[lo : lo + chunk]
                emb = np.asarray(embedder.embed([texts[i] for i in part]), dtype=np.float32)
                if emb.ndim != 2 or emb.shape[0] != len(part) or (out is not None and emb.shape[1] != out.shape[1]):
                    return emb  # the caller reports the shape it got
                if out is None:
                    out = np.empty((n, emb.shape[1]), dtype=np.float32)
                out[part] = emb
                if store is not None:
                    store.put([keys[i] for i in part], emb)
                bar.update(len(part))
                if on_chunk is not None:
                    on_chunk(part, emb)
    if out is None:
        out = np.zeros((0, int(getattr(embedder, "dim", 0))), dtype=np.float32)
    return out


class CachedQueries:
    """An embedder whose *query* vectors come from the cache: for batch commands (``eval``,
    ``demo``) that ask the same questions again, so a rerun needs no embedder session.

    Documents go to the wrapped embedder unchanged (and through the document cache, under
    the same ``cache_key``). Queries are keyed like documents -- model and content hash --
    in a cache of their own (a query's vector, embedded alone, need not be bit-equal to the same
    text's vector embedded in a batch of documents, so the two are never mixed): a hit is
    the vector the first run computed with ``embed_queries``, so reruns rank exactly as the
    first run. The query cache is read once, at the first query; new vectors are written
    as one shard by :meth:`flush`.
    """

    def __init__(self, embedder: Any, cache: EmbeddingCache) -> None:
        self.inner = embedder
        self.name = embedder.name
        self.cache = cache
        self._memo: dict[bytes, np.ndarray] | None = None
        self._new: dict[bytes, np.ndarray] = {}

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    @property
    def cache_key(self) -> str | None:
        return model_key(self.inner)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed(texts)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        if self._memo is None:
            self._memo = {}
            for path in self.cache._shards():
                got = self.cache._read(path)
                if got is not None:
                    self._memo.update(zip(map(bytes, got[0]), got[1]))
        keys = content_keys(texts)
        miss = [i for i, k in enumerate(keys) if k not in self._memo]
        if miss:
            vecs = np.asarray(embed_queries(self.inner, [texts[i] for i in miss]), dtype=np.float32)
            for i, v in zip(miss, vecs):
                self._memo[keys[i]] = self._new[keys[i]] = v
        return np.stack([self._memo[k] for k in keys]) if keys else np.zeros((0, self.dim), np.float32)

    def flush(self) -> None:
        if self._new:
            keys = list(self._new)
            self.cache.put(keys, np.stack([self._new[k] for k in keys]))
            self._new = {}


@contextlib.contextmanager
def cached_queries(index: Any) -> Iterator[Any]:
    """``with cached_queries(idx): ...``: ``idx``'s query vectors through the query cache
    (:class:`CachedQueries`) for the block, written out at its end; a no-op when the cache
    is off or the embedder is not cacheable."""
    emb: Any = getattr(index, "embedder", None)
    root = cache_dir()
    key = model_key(emb) if emb is not None else None
    if root is None or key is None:
        yield index
        return
    wrapper = CachedQueries(emb, EmbeddingCache(root, key + ":queries", int(emb.dim)))
    index.embedder = wrapper
    try:
        yield index
    finally:
        index.embedder = emb
        wrapper.flush()
