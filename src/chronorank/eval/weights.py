"""The design record's rule as a procedure: may a fusion-weight change replace the defaults?

Signals, fused by weighted RRF (k = 60) with :func:`chronorank.fusion.weighted_rrf`:
``vector`` (cosine of the index's default embedder, or a hashing embedder when that is
not installed -- the report says which), ``keyword`` (BM25) and ``recency`` (newer is
better). Defaults: vector 1.0, keyword 1.0, recency 0.5.

Every setting is scored by hit rate@k at the same budget k in each query domain; a
setting *beats the defaults* only when its hit rate exceeds the defaults' by more than
5 % (relative) in **every** domain, which is the rule the design record sets for
changing a default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.eval.benchmark import Bm25Similarity, load_suite, topical_query
from chronorank.eval.datasets import epoch_seconds, to_epoch
from chronorank.fusion import weighted_rrf
from chronorank.index.embedders import HashingEmbedder, embed_queries

__all__ = ["DEFAULTS", "CANDIDATE_SETTINGS", "compare_weights", "weights_markdown", "domains_from_suites"]

DEFAULTS: dict[str, float] = {"vector": 1.0, "keyword": 1.0, "recency": 0.5}
CANDIDATE_SETTINGS: list[dict[str, float]] = [
    {"vector": 1.0, "keyword": 1.0, "recency": 0.0},
    {"vector": 1.0, "keyword": 1.0, "recency": 0.25},
    {"vector": 1.0, "keyword": 1.0, "recency": 1.0},
    {"vector": 1.0, "keyword": 0.5, "recency": 0.5},
    {"vector": 0.5, "keyword": 1.0, "recency": 0.5},
    {"vector": 0.0, "keyword": 1.0, "recency": 0.5},
    {"vector": 0.0, "keyword": 0.0, "recency": 1.0},
]
MARGIN = 0.05


def _embedder() -> tuple[Any, str]:
    try:
        from chronorank.index.embedders import get_embedder

        emb = get_embedder("default")
        if emb is not None:
            emb.embed(["probe"])
            return emb, repr(emb)
    except Exception:  # noqa: BLE001 - fall back to the hashing embedder below
        pass

    emb = HashingEmbedder()
    return emb, repr(emb) + " (fallback: default embedder unavailable)"


def domains_from_suites(suites: Sequence[str], *, split_kinds: bool = True) -> list[tuple[str, Any, list[int]]]:
    """(domain name, Suite, query indices): one domain per suite, or per query kind."""
    out: list[tuple[str, Any, list[int]]] = []
    for name in suites:
        s = load_suite(name)
        kinds: dict[str, list[int]] = {}
        for i, q in enumerate(s.queries):
            key = f"{s.name}:{q.get('kind')}" if split_kinds and q.get("kind") else s.name
            kinds.setdefault(key, []).append(i)
        out.extend((k, s, idx) for k, idx in kinds.items())
    return out


def compare_weights(
    suites: Sequence[str] = ("synthetic", "tdw-release", "changelogs"),
    settings: Sequence[Mapping[str, float]] | None = None,
    *,
    k: int = 5,
    split_kinds: bool = True,
) -> dict[str, Any]:
    """Hit rate@k of each weight setting per domain, and the verdict against the defaults."""
    if k < 1:
        raise InvalidInput(f"k={k}; the budget must be at least 1 document.")
    settings = [dict(DEFAULTS)] + [dict(s) for s in (settings if settings is not None else CANDIDATE_SETTINGS)]
    domains = domains_from_suites(suites, split_kinds=split_kinds)
    if len({d[0] for d in domains}) < 3:
        raise InvalidInput(f"only {len(domains)} query domain(s) from suites={list(suites)}; the rule needs at least 3.")
    emb, emb_name = _embedder()
    cache: dict[int, tuple[Any, np.ndarray, np.ndarray]] = {}
    hits: dict[str, list[float]] = {}
    for dname, suite, idx in domains:
        if id(suite) not in cache:
            texts = [d["text"] for d in suite.corpus]
            vecs = np.asarray(emb.embed(texts), dtype=np.float32)
            cache[id(suite)] = (Bm25Similarity(texts), vecs, epoch_seconds(suite.corpus))
        bm25, vecs, times = cache[id(suite)]
        ids = [d["id"] for d in suite.corpus]
        per_setting = np.zeros((len(settings), len(idx)))
        for j, qi in enumerate(idx):
            q = suite.queries[qi]
            topical = topical_query(q["query"])
            qv = np.asarray(embed_queries(emb, [topical]), dtype=np.float32)[0]
            signals = {
                "vector": vecs @ qv,
                "keyword": bm25(topical),
                "recency": np.where(np.isnan(times), np.nan, times),
            }
            now = to_epoch(q.get("reference_date"))
            if not np.isnan(now):
                signals["recency"] = np.where(times > now, np.nan, signals["recency"])
            rel = {d for d, g in q["relevance"].items() if g >= 1}
            for si, w in enumerate(settings):
                fused = weighted_rrf(signals, w)
                top = np.argsort(-fused, kind="stable")[:k]
                per_setting[si, j] = float(any(ids[t] in rel for t in top))
        hits[dname] = per_setting.mean(axis=1).tolist()
    rows = []
    for si, w in enumerate(settings):
        per_domain = {d: hits[d][si] for d in hits}
        rel_change = {
            d: (None if hits[d][0] == 0 else (hits[d][si] - hits[d][0]) / hits[d][0]) for d in hits
        }
        beats = si > 0 and all(
            (c is not None and c > MARGIN) or (c is None and hits[d][si] > 0) for d, c in rel_change.items()
        )
        rows.append({"weights": w, "hit_rate": per_domain, "relative_change": rel_change, "beats_defaults": beats})
    return {
        "metric": f"hit_rate@{k}",
        "budget": k,
        "rule": f"a setting replaces the defaults only if it beats them by > {MARGIN:.0%} in every domain",
        "embedder": emb_name,
        "domains": {d: len(idx) for d, _, idx in domains},
        "settings": rows,
        "verdict": next((r["weights"] for r in rows if r["beats_defaults"]), None),
    }


def weights_markdown(result: Mapping[str, Any]) -> str:
    domains = list(result["domains"])
    lines = [
        f"{result['metric']} at equal budget; defaults first. Rule: {result['rule']}.",
        "",
        "| vector / keyword / recency | " + " | ".join(f"{d} (n={result['domains'][d]})" for d in domains) + " | beats defaults |",
        "|---|" + "---:|" * len(domains) + "---|",
    ]
    for r in result["settings"]:
        w = r["weights"]
        cells = []
        for d in domains:
            c = r["relative_change"][d]
            cell = f"{r['hit_rate'][d]:.3f}"
            if c is not None and r is not result["settings"][0]:
                cell += f" ({c:+.0%})"
            cells.append(cell)
        label = f"{w.get('vector', 0):g} / {w.get('keyword', 0):g} / {w.get('recency', 0):g}"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {'yes' if r['beats_defaults'] else 'no'} |")
    v = result["verdict"]
    lines.append("")
    lines.append(
        "Verdict: keep the defaults (no setting clears the margin in every domain)." if v is None
        else f"Verdict: {v} beats the defaults in every domain."
    )
    lines.append(f"Vector signal: {result['embedder']}.")
    return "\n".join(lines)
