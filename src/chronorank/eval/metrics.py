"""Ranking metrics with graded gains, plus two temporal ones (stale@k, mean age@k).

A metric is named by a string, ``name`` or ``name@k``:

=================  =====================================================================
``ndcg@k``         ``DCG@k / IDCG@k``; ``DCG@k = sum_{i<=k} grade_i / log2(i + 1)`` (linear
                   gain), ``IDCG@k`` the DCG of the judged grades sorted descending. 0 when
                   the query has no positive judgement.
``recall@k``       relevant (grade >= 1) documents in the top k / all relevant documents.
``precision@k``    relevant documents in the top k / k.
``mrr`` (``@k``)   1 / rank of the first relevant document (0 when none, or none in top k).
``hit_rate@k``     1 when any relevant document is in the top k, else 0.
``stale@k``        share of the returned top k (divided by ``min(k, returned)``) that is
                   *stale*: a document is stale when it is **superseded** -- another document
                   of the same version group (``groups``) is dated after it and no later than
                   the query's reference time -- or when it is **old and irrelevant** -- its
                   grade is 0 and it is dated before the newest relevant document of the
                   query. Undated documents are never counted stale. Needs ``times``.
``age@k``          mean age in days, ``(reference_time - t) / 86400``, of the dated documents
                   in the top k (``mean_age@k`` is an alias). NaN when none is dated; the
                   mean over queries skips NaN. Needs ``times`` and ``reference_times``.
=================  =====================================================================

``evaluate`` is the public verb; rankings are lists of ids (best first) or
``{id: score}`` maps (sorted by score descending, ties by id ascending).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.eval.datasets import to_epoch

__all__ = ["METRICS", "Metric", "parse_metric", "evaluate", "ranked_ids", "group_means"]

Run = Mapping[str, Sequence[str] | Mapping[str, float]]
Qrels = Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class Metric:
    """A parsed metric name: ``name`` plus an optional cutoff ``k``."""

    name: str
    k: int | None = None

    def __repr__(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"

    __str__ = __repr__


_ALIASES = {
    "ndcg": "ndcg",
    "recall": "recall",
    "precision": "precision",
    "p": "precision",
    "mrr": "mrr",
    "rr": "mrr",
    "hit_rate": "hit_rate",
    "hitrate": "hit_rate",
    "hits": "hit_rate",
    "stale": "stale",
    "age": "age",
    "mean_age": "age",
}
METRICS: tuple[str, ...] = ("ndcg", "recall", "precision", "mrr", "hit_rate", "stale", "age")
_NEEDS_K = {"ndcg", "recall", "precision", "hit_rate", "stale", "age"}
_PATTERN = re.compile(r"^\s*([a-z_]+)\s*(?:@\s*(\d+))?\s*$")


def parse_metric(text: str | Metric) -> Metric:
    """``"ndcg@10"`` -> ``Metric("ndcg", 10)``; unknown names list the known ones."""
    if isinstance(text, Metric):
        return text
    m = _PATTERN.match(str(text).lower())
    if not m or m.group(1) not in _ALIASES:
        raise InvalidInput(
            f"metric={text!r} is not known; use one of {', '.join(METRICS)} with an optional "
            "cutoff, e.g. 'ndcg@10', 'stale@5', 'mrr'."
        )
    name = _ALIASES[m.group(1)]
    k = int(m.group(2)) if m.group(2) else None
    if k is None and name in _NEEDS_K:
        raise InvalidInput(f"metric={text!r} needs a cutoff; write it as '{name}@10'.")
    if k is not None and k < 1:
        raise InvalidInput(f"metric={text!r}: the cutoff must be >= 1.")
    return Metric(name, k)


def ranked_ids(ranking: Sequence[str] | Mapping[str, float]) -> list[str]:
    """A ranking as a list of ids, best first (score maps: score desc, then id asc)."""
    if isinstance(ranking, Mapping):
        return [d for d, _ in sorted(ranking.items(), key=lambda kv: (-float(kv[1]), kv[0]))]
    return [str(d) for d in ranking]


def _lookup(source: Mapping[str, Any] | Callable[[str], Any] | None, key: str) -> Any:
    if source is None:
        return None
    if callable(source) and not isinstance(source, Mapping):
        return source(key)
    return source.get(key)


def _num(value: Any) -> float:
    if value is None:
        return math.nan
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)

    return to_epoch(value)


def _query_values(
    qid: str,
    ids: list[str],
    rel: Mapping[str, float],
    metrics: Sequence[Metric],
    times: Mapping[str, Any] | Callable[[str], Any] | None,
    ref: float,
    groups: Mapping[str, Any] | Callable[[str], Any] | None,
) -> dict[str, float]:
    grades = np.array([float(rel.get(d, 0.0)) for d in ids], dtype=np.float64)
    judged = np.array(sorted((float(g) for g in rel.values() if g > 0), reverse=True), dtype=np.float64)
    n_rel = judged.size
    relevant = grades >= 1.0
    out: dict[str, float] = {}
    doc_times: np.ndarray | None = None
    for m in metrics:
        k = m.k if m.k is not None else len(ids)
        top = slice(0, k)
        if m.name == "ndcg":
            disc = 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))
            dcg = float(np.sum(grades[top] * disc[: min(k, grades.size)]))
            idcg = float(np.sum(judged[:k] * disc[: min(k, n_rel)]))
            out[str(m)] = dcg / idcg if idcg > 0 else 0.0
        elif m.name == "recall":
            out[str(m)] = float(relevant[top].sum()) / n_rel if n_rel else 0.0
        elif m.name == "precision":
            out[str(m)] = float(relevant[top].sum()) / k
        elif m.name == "hit_rate":
            out[str(m)] = 1.0 if relevant[top].any() else 0.0
        elif m.name == "mrr":
            hits = np.flatnonzero(relevant[top])
            out[str(m)] = 1.0 / (hits[0] + 1) if hits.size else 0.0
        elif m.name in ("stale", "age"):
            if times is None:
                raise InvalidInput(
                    f"metric {m} needs document times; pass times={{doc_id: date}} to evaluate()."
                )
            if doc_times is None:  # the times of the deepest cut any time metric reads
                depth = max(len(ids) if x.k is None else x.k for x in metrics if x.name in ("stale", "age"))
                doc_times = np.array([_num(_lookup(times, d)) for d in ids[:depth]], dtype=np.float64)
            t = doc_times[top]
            if m.name == "age":
                if math.isnan(ref):
                    raise InvalidInput(
                        f"metric {m} needs the query's reference time; pass reference_times="
                        f"{{qid: date}} to evaluate() (missing for qid={qid!r})."
                    )
                dated = t[~np.isnan(t)]
                out[str(m)] = float(np.mean((ref - dated) / 86400.0)) if dated.size else math.nan
            else:
                out[str(m)] = _stale_share(ids[:k], t, grades[top], rel, times, ref, groups)
        else:  # pragma: no cover - parse_metric rejects unknown names
            raise InvalidInput(f"metric {m} is not implemented")
    return out


def _stale_share(
    top_ids: list[str],
    t: np.ndarray,
    grades: np.ndarray,
    rel: Mapping[str, float],
    times: Mapping[str, Any] | Callable[[str], Any],
    ref: float,
    groups: Mapping[str, Any] | Callable[[str], Any] | None,
) -> float:
    if not top_ids:
        return 0.0
    rel_times = [_num(_lookup(times, d)) for d, g in rel.items() if g >= 1]
    rel_times = [x for x in rel_times if not math.isnan(x)]
    newest_rel = max(rel_times) if rel_times else math.nan
    old_irrelevant = (grades <= 0) & (t < newest_rel)  # NaN compares False
    superseded = np.zeros(len(top_ids), dtype=bool)
    if groups is not None:
        newest_in_group = _newest_by_group(groups, times, ref)
        keys = [_lookup(groups, d) for d in top_ids]
        for i, key in enumerate(keys):
            if key is not None and not math.isnan(t[i]):
                superseded[i] = newest_in_group.get(key, -math.inf) > t[i]
    return float(np.mean(old_irrelevant | superseded))


_GROUP_CACHE: dict[tuple[int, int, float], dict[Any, float]] = {}


def _newest_by_group(
    groups: Mapping[str, Any] | Callable[[str], Any],
    times: Mapping[str, Any] | Callable[[str], Any],
    ref: float,
) -> dict[Any, float]:
    """Newest document time per group, counting only documents dated <= ``ref``."""
    if not isinstance(groups, Mapping):
        raise InvalidInput(
            "groups must be a mapping {doc_id: group key} for stale@k (a callable cannot list "
            "the other versions of a group)."
        )
    key = (id(groups), id(times), ref)
    cached = _GROUP_CACHE.get(key)
    if cached is not None:
        return cached
    newest: dict[Any, float] = {}
    for doc_id, g in groups.items():
        if g is None:
            continue
        tt = _num(_lookup(times, doc_id))
        if math.isnan(tt) or (not math.isnan(ref) and tt > ref):
            continue
        if tt > newest.get(g, -math.inf):
            newest[g] = tt
    if len(_GROUP_CACHE) > 64:
        _GROUP_CACHE.clear()
    _GROUP_CACHE[key] = newest
    return newest


def evaluate(
    run: Run,
    qrels: Qrels,
    metrics: Sequence[str | Metric] = ("ndcg@10", "recall@10", "mrr"),
    times: Mapping[str, Any] | Callable[[str], Any] | None = None,
    reference_times: Mapping[str, Any] | None = None,
    groups: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Score ``run`` against ``qrels``.

    Returns ``{"per_query": {qid: {metric: value}}, "mean": {metric: value}}``. Every
    query of ``qrels`` is scored; a query missing from ``run`` counts as an empty
    ranking. ``times`` maps document ids to dates (epoch seconds or anything the
    date parser reads), ``reference_times`` maps qids to "now", ``groups`` maps
    document ids to a version-group key (for the superseded half of stale@k).
    """
    parsed = [parse_metric(m) for m in metrics]
    if not parsed:
        raise InvalidInput("metrics=[] is empty; ask for at least one metric, e.g. ['ndcg@10'].")
    per_query: dict[str, dict[str, float]] = {}
    for qid, rel in qrels.items():
        ranking = run.get(qid, [])
        ref = _num(reference_times.get(qid)) if reference_times is not None else math.nan
        per_query[qid] = _query_values(qid, ranked_ids(ranking), rel, parsed, times, ref, groups)
    mean: dict[str, float] = {}
    for m in parsed:
        vals = np.array([pq[str(m)] for pq in per_query.values()], dtype=np.float64)
        ok = vals[~np.isnan(vals)]
        mean[str(m)] = float(ok.mean()) if ok.size else math.nan
    return {"per_query": per_query, "mean": mean}


def group_means(
    per_query: Mapping[str, Mapping[str, float]], key: Mapping[str, Any]
) -> dict[str, dict[str, float]]:
    """Mean of each metric per group (e.g. per query ``kind``); adds ``queries`` counts.

    ``key`` maps qid -> group name; qids missing from it (or mapped to None) fall under "all".
    """
    buckets: dict[str, list[Mapping[str, float]]] = {}
    for qid, vals in per_query.items():
        buckets.setdefault(str(key.get(qid) or "all"), []).append(vals)
    out: dict[str, dict[str, float]] = {}
    for name in sorted(buckets):
        rows = buckets[name]
        agg: dict[str, float] = {}
        for metric in rows[0]:
            v = np.array([r[metric] for r in rows], dtype=np.float64)
            v = v[~np.isnan(v)]
            agg[metric] = float(v.mean()) if v.size else math.nan
        agg["queries"] = len(rows)
        out[name] = agg
    return out
