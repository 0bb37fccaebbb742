"""Run a docs/format.md benchmark through a :class:`TemporalIndex` (the engine of ``chronorank eval``).

(It lived in ``chronorank.index.evaluation`` before; an index module importing
``eval.metrics`` pointed a layer up.)

Only each document's ``id``, ``text``, dates and validity fields are indexed (metadata is
dropped, so nothing like a project name can leak into ranking), and only each query's
text and reference date are used. ``kind`` is read *after* ranking, to group metrics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chronorank.errors import InvalidInput
from chronorank.eval.metrics import evaluate, group_means
from chronorank.index.core import TemporalIndex
from chronorank.timeparse import resolve_now, to_epoch

__all__ = ["evaluate_index", "index_for_benchmark", "OUTPUT_METRICS"]

OUTPUT_METRICS = ("ndcg@10", "recall@10", "mrr", "stale@5")
_DOC_FIELDS = ("id", "text", "date", "updated", "valid_from", "valid_to")


def index_for_benchmark(
    corpus: Sequence[Mapping[str, Any]], *, embedder: Any = "default", config: Any = None
) -> Any:
    """A fresh index over ``corpus`` holding only the fields a benchmark may use."""
    idx = TemporalIndex(embedder=embedder, config=config)
    idx.add(_benchmark_docs(corpus))
    return idx


def _benchmark_docs(corpus: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{k: d.get(k) for k in _DOC_FIELDS if k in d} for d in corpus]


def evaluate_index(
    index: Any,
    queries: Sequence[Mapping[str, Any]],
    *,
    config: Any = None,
    depth: int = 100,
    metrics: Sequence[str] = OUTPUT_METRICS,
) -> dict[str, Any]:
    """docs/format.md evaluation output: ``{"overall", "by_kind", "config"}`` (+ ``per_query``)."""
    if not queries:
        raise InvalidInput("the query file holds no queries; add at least one docs/format.md query line.")
    run: dict[str, list[str]] = {}
    qrels: dict[str, dict[str, int]] = {}
    refs: dict[str, float] = {}
    kinds: dict[str, Any] = {}
    resolved: dict[str, float] = {}  # a benchmark's queries mostly share a few reference dates
    for q in queries:
        qid = str(q["qid"])
        ref = q.get("reference_date", q.get("reference_time"))
        now = ref
        if isinstance(ref, str):
            now = resolved.get(ref)
            if now is None:
                now = resolved[ref] = float(resolve_now(ref))
        ranking = index.search(
            q["query"], k=depth, now=now, config=config, candidates=q.get("candidates")
        )
        run[qid] = ranking.ranked_ids
        qrels[qid] = dict(q.get("relevance") or {})
        refs[qid] = float(ranking.meta.get("now", to_epoch(ref) if ref is not None else float("nan")))
        kinds[qid] = q.get("kind")
    snap = index._snap
    times = dict(zip(snap.ids, snap.times[0].tolist()))
    res = evaluate(run, qrels, list(metrics), times=times, reference_times=refs)
    overall = dict(res["mean"])
    overall["queries"] = len(qrels)
    by_kind = group_means(res["per_query"], kinds)
    cfg = index.config if config is None else config
    spec = cfg if isinstance(cfg, str) else cfg.spec()
    return {
        "overall": _clean(overall),
        "by_kind": {k: _clean(v) for k, v in by_kind.items()},
        "config": spec,
        "per_query": {qid: _clean(v) for qid, v in res["per_query"].items()},
        "runs": run,
    }


def _clean(d: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, float):
            out[k] = None if v != v else round(v, 6)
        else:
            out[k] = v
    return out
