"""Validity intervals and version chains, columnar.

A version chain is a set of documents that are versions of one thing (a pricing page, an
API reference). Chains come from a ``group_key`` (a metadata field or a callable) or are
inferred from near-duplicate text (MinHash with LSH banding: near-linear, no all-pairs loop).
Within a chain sorted by start time, each version's derived ``valid_to`` is the next
version's ``valid_from``, so at any time T exactly one version is current.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput


@dataclass(frozen=True)
class Chains:
    """Per-document chain structure: group code, successor index (-1: none) and derived end."""

    group: np.ndarray  # int64 codes, -1 = in no chain
    successor: np.ndarray  # int64 index of the next version, -1 if newest / no chain
    derived_end: np.ndarray  # float64 epoch seconds, NaN if open


def group_codes(keys: Sequence[Any] | np.ndarray | None) -> np.ndarray | None:
    """Integer codes for arbitrary hashable group keys; None/NaN/"" keys get -1 (no chain)."""
    if keys is None:
        return None
    arr = np.asarray(keys)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    codes = np.full(len(arr), -1, dtype=np.int64)
    table: dict[Any, int] = {}
    for i, k in enumerate(keys):  # one dict lookup per document: only run at index/ingest time
        if k is None or k == "" or (isinstance(k, float) and k != k):
            continue
        codes[i] = table.setdefault(k, len(table))
    return codes


def build_chains(starts: np.ndarray, groups: np.ndarray | None) -> Chains:
    """Order each group by start time and link every version to the next one."""
    n = starts.shape[0]
    if groups is None or n == 0:  # no chains: read-only constant views, nothing allocated
        none = np.broadcast_to(np.int64(-1), (n,))
        return Chains(none, none, np.broadcast_to(np.float64(np.nan), (n,)))
    successor = np.full(n, -1, dtype=np.int64)
    derived_end = np.full(n, np.nan)
    g = np.asarray(groups, dtype=np.int64)
    usable = (g >= 0) & ~np.isnan(starts)
    idx = np.flatnonzero(usable)
    if idx.size:
        # lexsort: last key is primary -> by group, then start, then input position
        order = idx[np.lexsort((idx, starts[idx], g[idx]))]
        same = g[order[1:]] == g[order[:-1]]
        cur, nxt = order[:-1][same], order[1:][same]
        successor[cur] = nxt
        derived_end[cur] = starts[nxt]
    return Chains(g, successor, derived_end)


def resolve_group_keys(
    payloads: Sequence[Any], group_key: str | Callable[[Any], Any] | None
) -> list[Any] | None:
    """Read a group key from each payload: a field name (dicts, metadata dicts, attributes) or a callable."""
    if group_key is None:
        return None
    if callable(group_key):
        return [group_key(p) for p in payloads]
    if not isinstance(group_key, str):
        raise InvalidInput(f"group_key must be a field name or a callable, got {group_key!r}")
    out = []
    for p in payloads:
        if isinstance(p, dict):
            v = p.get(group_key)
            if v is None and isinstance(p.get("metadata"), dict):
                v = p["metadata"].get(group_key)
        else:
            v = getattr(p, group_key, None)
        out.append(v)
    return out


# --- inferred chains -----------------------------------------------------------------

_WORD = re.compile(r"\w+", re.UNICODE)
_MERSENNE = np.uint64((1 << 61) - 1)


def _shingle_hashes(text: str, size: int) -> np.ndarray:
    words = _WORD.findall(text.lower())
    if len(words) < size:
        words = words + [""] * (size - len(words)) if words else [""]
        grams = [" ".join(words[:size])]
    else:
        grams = [" ".join(words[i : i + size]) for i in range(len(words) - size + 1)]
    return np.unique(np.fromiter((zlib.crc32(g.encode()) for g in grams), dtype=np.uint64))


def minhash_signatures(texts: Sequence[str], num_perm: int = 64, shingle: int = 3, seed: int = 7) -> np.ndarray:
    """(n, num_perm) MinHash signatures of word shingles, via universal hashing (a*x + b) mod p."""
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 1 << 31, size=num_perm, dtype=np.uint64)
    b = rng.integers(0, 1 << 31, size=num_perm, dtype=np.uint64)
    sigs = np.empty((len(texts), num_perm), dtype=np.uint64)
    for i, t in enumerate(texts):  # linear in documents; the hashing itself is vectorised
        h = _shingle_hashes(t or "", shingle)
        sigs[i] = ((np.outer(h, a) + b) % _MERSENNE).min(axis=0)
    return sigs


def _union_find(n: int, pairs: np.ndarray) -> np.ndarray:
    parent = np.arange(n)

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in pairs:
        ri, rj = find(int(i)), find(int(j))
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    return np.array([find(i) for i in range(n)], dtype=np.int64)


def infer_groups(
    texts: Sequence[str] | None = None,
    *,
    vectors: np.ndarray | None = None,
    threshold: float = 0.8,
    num_perm: int = 64,
    bands: int = 16,
) -> np.ndarray:
    """Group near-duplicates into chains; returns codes where singletons get -1.

    With ``vectors`` (L2-normalised embeddings) two documents join when their cosine is at
    least ``threshold``; candidate pairs come from sign-random-projection buckets, then are
    verified exactly. Otherwise MinHash estimates the Jaccard similarity of word 3-gram
    shingles, with LSH banding (``bands`` x ``num_perm/bands`` rows) proposing candidates.
    Cost is near-linear in the number of documents for realistic corpora.
    """
    if not 0.0 < threshold <= 1.0:
        raise InvalidInput(f"threshold must lie in (0, 1], got {threshold!r}; e.g. threshold=0.8")
    if vectors is not None:
        x = np.asarray(vectors, dtype=np.float32)
        n = x.shape[0]
        rng = np.random.default_rng(11)
        keys = []
        for _ in range(bands):  # each band: 8 random hyperplanes -> one bucket key per doc
            planes = rng.standard_normal((x.shape[1], 8)).astype(np.float32)
            bits = (x @ planes > 0).astype(np.int64)
            keys.append(bits @ (1 << np.arange(8)))
        cand = _bucket_pairs(np.stack(keys, axis=1))
        if cand.size:
            cos = np.einsum("ij,ij->i", x[cand[:, 0]], x[cand[:, 1]])
            cand = cand[cos >= threshold]
    else:
        if texts is None:
            raise InvalidInput("infer_groups needs texts or vectors")
        n = len(texts)
        sigs = minhash_signatures(texts, num_perm=num_perm)
        rows = num_perm // bands
        band_keys = np.stack(
            [
                np.frombuffer(np.ascontiguousarray(sigs[:, b * rows : (b + 1) * rows]).tobytes(),
                              dtype=np.dtype((np.void, 8 * rows))).view(np.void)
                for b in range(bands)
            ],
            axis=1,
        ) if n else np.empty((0, bands))
        cand = _bucket_pairs(band_keys)
        if cand.size:
            est = (sigs[cand[:, 0]] == sigs[cand[:, 1]]).mean(axis=1)
            cand = cand[est >= threshold]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    roots = _union_find(n, cand)
    _, codes, counts = np.unique(roots, return_inverse=True, return_counts=True)
    codes = codes.astype(np.int64)
    codes[counts[codes] == 1] = -1
    return codes


def _bucket_pairs(keys: np.ndarray) -> np.ndarray:
    """Pairs (i, j), i < j, of rows sharing a key in any column; consecutive members only."""
    n = keys.shape[0]
    pairs = []
    for b in range(keys.shape[1]):
        col = keys[:, b]
        _, inv = np.unique(col, return_inverse=True)
        order = np.argsort(inv, kind="stable")
        same = inv[order[1:]] == inv[order[:-1]]
        # linking each member to the next in its bucket is enough for union-find
        pairs.append(np.stack([order[:-1][same], order[1:][same]], axis=1))
    if not pairs or n == 0:
        return np.zeros((0, 2), dtype=np.int64)
    allp = np.concatenate(pairs)
    if allp.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    allp.sort(axis=1)
    return np.unique(allp, axis=0)
