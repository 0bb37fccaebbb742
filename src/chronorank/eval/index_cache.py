"""Built benchmark indexes kept on disk between runs of ``chronorank eval``.

A rerun of ``eval`` on an unchanged corpus embeds nothing (the embedding cache), but still
paid for building the index: term extraction, BM25 and the lead field, most of what the
rerun cost (benchmarks/embed_cache.py). :func:`cached_benchmark_index` saves the index that
:func:`~chronorank.eval.index_eval.index_for_benchmark` builds and loads it on the next run
with the same inputs; a loaded index ranks exactly as the one built (``TemporalIndex.save``
keeps everything derived at build time; a test compares the evaluations).

The key is the sha256 of everything the build reads: the documents as indexed, the index
configuration, the embedder's model key (``cache_key``; embedders without one are not
cached) and this chronorank's version and source files (size and mtime of every module, so
an edited checkout never loads an index an older build wrote). An entry that fails to load
is built again and rewritten; the ``_KEEP`` most recently used entries are kept.

``chronorank eval`` keys by the corpus *file* instead (:func:`file_source`: the sha256 of
its bytes and of how they are read, which with the code decide the documents), so a rerun
finds its index without reading the corpus: parsing and checking 2,062 documents and
hashing their JSON was ~40 ms of a ~0.7 s rerun, hashing the file's 1.7 MB is ~1 ms. The
file is hashed every time, never trusted by its size or mtime.

Where: ``$CHRONORANK_INDEX_CACHE`` if it names a directory, else
``$XDG_CACHE_HOME/chronorank/indexes``. Off with ``CHRONORANK_INDEX_CACHE=off``, and with
``CHRONORANK_EMBED_CACHE=off`` too: a saved index holds the vectors.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chronorank._recache import code_stamp, env_cache_dir
from chronorank.errors import ChronorankError
from chronorank.eval.index_eval import _benchmark_docs, index_for_benchmark
from chronorank.index.config import IndexConfig
from chronorank.index.core import TemporalIndex
from chronorank.index.embed_cache import cache_dir, model_key

__all__ = ["cached_benchmark_index", "file_source", "index_cache_dir", "load_cached_index"]

_KEEP = 8  # entries kept (most recently used first)
_FORMAT = 2  # bump when the key's contents change meaning


def index_cache_dir() -> Path | None:
    """The cache root, or None when either switch turns it off."""

    if cache_dir() is None:
        return None
    return env_cache_dir("CHRONORANK_INDEX_CACHE", "indexes")


def _cache_key(docs: Sequence[Mapping[str, Any]] | None, config: Any, embedder_key: str, source: str | None = None) -> str:
    """The entry's name: over the documents, or over their ``source`` (:func:`file_source`)."""
    material: dict[str, Any] = {
        "format": _FORMAT, "code": code_stamp(),
        "embedder": embedder_key, "config": repr(config),
    }
    if source is not None:
        material["source"] = source
    else:
        material["docs"] = docs
    blob = json.dumps(material, sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def file_source(data: bytes, **reading: Any) -> str | None:
    """What keys a corpus file's index in place of its documents: the sha256 of the file's
    bytes ``data`` -- the very bytes the documents are then read from, so that a file
    changing meanwhile cannot file one corpus's index under another's key -- and of
    ``reading`` (every option of the reader that changes the documents, e.g. ``dayfirst``).
    None when the cache is off."""
    if index_cache_dir() is None:
        return None
    digest = hashlib.sha256(data)
    digest.update(json.dumps(reading, sort_keys=True, default=repr).encode())
    return digest.hexdigest()


def _entry(embedder: Any, config: Any, docs: Sequence[Mapping[str, Any]] | None, source: str | None) -> Path | None:
    """The entry's directory, or None where nothing is cached (the cache is off, or the
    embedder has no model key)."""
    root = index_cache_dir()
    emb_key = "none" if embedder is None else model_key(embedder)
    if root is None or emb_key is None:
        return None
    return root / _cache_key(docs, config, emb_key, source)


def _load(path: Path, embedder: Any, config: Any) -> Any:
    """The saved index at ``path``, or None (absent, or damaged: then removed)."""
    if not (path / "CURRENT").is_file():
        return None
    try:
        idx = TemporalIndex.load(path, embedder=embedder)
    except (ChronorankError, OSError, ValueError):
        shutil.rmtree(path, ignore_errors=True)  # damaged: the caller builds and writes it again
        return None
    idx.config = IndexConfig.from_spec(config)  # the build's settings (they are in the key)
    with contextlib.suppress(OSError):
        os.utime(path)  # most recently used
    return idx


def load_cached_index(source: str | None, *, embedder: Any, config: Any = None) -> Any:
    """The index :func:`cached_benchmark_index` saved for ``source`` (:func:`file_source`)
    with this embedder and config, or None: a rerun loads it without reading the corpus."""
    path = None if source is None else _entry(embedder, config, None, source)
    return None if path is None else _load(path, embedder, config)


def _prune(root: Path, keep: int) -> None:
    try:
        entries = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    except OSError:
        return
    entries.sort(key=lambda p: p.stat().st_mtime if p.exists() else 0.0, reverse=True)
    for old in entries[keep:]:  # a reader of a removed entry builds it again
        shutil.rmtree(old, ignore_errors=True)


def cached_benchmark_index(
    corpus: Sequence[Mapping[str, Any]], *, embedder: Any, config: Any = None, source: str | None = None
) -> Any:
    """``index_for_benchmark(corpus, embedder=..., config=...)``, loaded from the cache when
    the same inputs were built before (and saved there otherwise).

    ``embedder`` is a resolved embedder object or None (keywords only): one without a
    ``cache_key`` is built every time, as are all indexes when the cache is off.
    ``source`` (:func:`file_source` of the file ``corpus`` was read from) keys the entry
    in place of the documents, for :func:`load_cached_index`.
    """
    docs = _benchmark_docs(corpus)
    path = _entry(embedder, config, docs, source)
    if path is None:
        return index_for_benchmark(docs, embedder=embedder, config=config)
    idx = _load(path, embedder, config)
    if idx is not None:
        return idx
    idx = index_for_benchmark(docs, embedder=embedder, config=config)
    try:
        idx.save(path)
    except (ChronorankError, OSError):
        shutil.rmtree(path, ignore_errors=True)  # a full or read-only disk: the cache is optional
    else:
        _prune(path.parent, _KEEP)
    return idx
