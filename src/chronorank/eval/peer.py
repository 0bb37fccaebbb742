"""Side-by-side rows for the peer library tdw-rag (``pip install "chronorank[bench]"``).

The peer runs on exactly our candidates and similarity column. Its ages are measured
from our pinned reference date: its ``TemporalReranker`` takes ``reference_date`` (a
naive UTC datetime), and candidate dates are handed over as epoch seconds, which its
date parser reads as UTC. Its own ``fit`` has no reference date (it measures from the
wall clock), so its "best single global decay" is chosen here over its own 368-setting
grid (``tdw_rag.fitting._DEFAULT_GRID`` x 4 strengths x 2 strategies, gate off, as its
``fit`` does), computed with its own kernel and combine functions on pinned ages, and
scored with our nDCG@10. The chosen setting then runs through the peer's reranker.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import numpy as np

from chronorank.eval.metrics import evaluate

__all__ = ["peer_available", "peer_rows", "peer_grid"]

DAY = 86400.0


def peer_available() -> bool:
    try:
        import tdw_rag  # noqa: F401
    except ImportError:
        return False
    return True


def _naive_utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).replace(tzinfo=None)


def peer_grid() -> list[tuple[str, dict[str, float], str, float]]:
    """The peer's own default grid: (kernel, params, strategy, strength), 368 entries."""
    from tdw_rag import fitting

    out = []
    for name, axes in fitting._DEFAULT_GRID.items():
        keys = list(axes)
        for values in itertools.product(*(axes[k] for k in keys)):
            for strategy in ("multiply", "gated_multiply"):
                for s in (0.25, 0.5, 0.75, 1.0):
                    out.append((name, dict(zip(keys, values)), strategy, s))
    return out


def _reranker_rank(rr: Any) -> Callable[[Any, int], list[str]]:
    def rank(p: Any, i: int) -> list[str]:
        rr.reference_date = _naive_utc(p.now[i])
        cands = [
            {"id": d, "score": float(s), "date": (None if np.isnan(t) else float(t))}
            for d, s, t in zip(p.ids[i], p.sims[i], p.times[i])
        ]
        return [str(r.id) for r in rr.rerank(p.suite.queries[i]["query"], cands)]

    return rank


def _best_setting(p: Any) -> tuple[tuple[str, dict[str, float], str, float], float]:
    from tdw_rag.decay import get_kernel
    from tdw_rag.scoring import combine


    grid = peer_grid()
    qrels = {q["qid"]: q["relevance"] for q in p.suite.queries}
    ages = [np.maximum((p.now[i] - p.times[i]) / DAY, 0.0) for i in range(len(p.ids))]
    best: tuple[Any, float] = (grid[0], -1.0)
    for setting in grid:
        name, params, strategy, s = setting
        kernel = get_kernel(name, **params)
        run = {}
        for i, q in enumerate(p.suite.queries):
            a = ages[i]
            known = ~np.isnan(a)
            w = np.empty_like(a)
            w[known] = kernel(a[known])
            w[~known] = float(np.median(w[known])) if known.any() else 1.0  # its "neutral"
            final = combine(p.sims[i], w, strategy, s)
            run[q["qid"]] = [p.ids[i][j] for j in np.argsort(-final, kind="stable")[:10]]
        score = evaluate(run, qrels, ["ndcg@10"])["mean"]["ndcg@10"]
        if score > best[1]:
            best = (setting, score)
    return best


def peer_rows(p: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(rows, info): the peer's default reranker and its best global decay on these candidates."""
    if not peer_available():
        return {}, {"available": False, "why": 'tdw-rag is not installed (pip install "chronorank[bench]")'}
    import tdw_rag
    from tdw_rag.core import TemporalReranker as PeerReranker

    rows: dict[str, Any] = {"tdw-rag default": _reranker_rank(PeerReranker())}
    (name, params, strategy, s), score = _best_setting(p)
    label_params = ", ".join(f"{k}={v:g}" for k, v in params.items())
    label = f"tdw-rag best global decay: {name}({label_params}) {strategy} s={s:g}"
    rows[label] = _reranker_rank(PeerReranker(name, combine_strategy=strategy, strength=s, gate=False, **params))
    info = {
        "available": True,
        "version": getattr(tdw_rag, "__version__", "?"),
        "grid_size": len(peer_grid()),
        "best": {"kernel": name, "params": params, "combine": strategy, "strength": s, "ndcg@10": round(score, 6)},
        "ages_from": "the query's pinned reference date",
    }
    return rows, info
