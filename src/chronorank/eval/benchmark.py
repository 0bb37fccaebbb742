"""Quality benchmark runner: every configuration on the same candidates and similarity.

A suite is a docs/format.md (corpus, queries) pair. For each query the candidate pool is the
whole corpus (or the query's ``candidates``), and one similarity array is computed once
and shared by every row, so rows differ only in their temporal treatment:

- ``similarity only`` -- the baseline;
- ``recency only`` -- newest first (undated last);
- one row per kernel (its default parameters, chronorank's default pipeline otherwise);
- ``chronorank default`` -- ``TemporalReranker()``;
- the peer's configurations (when ``tdw_rag`` is installed, see :mod:`.peer`).

Similarity: ``chronorank.index.TemporalIndex``'s keyword scorer when it is importable
is *not* used here on purpose -- the index ranks by its own fused score; rows here need
a plain similarity column. It is BM25 (bm25s, stemmed) over the query's topical part
(the temporal words removed by :func:`chronorank.intent.parse` when available).

Everything is pinned: reference dates come from the queries, ties break by corpus
order, so two runs give identical JSON.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput, require
from chronorank.eval import datasets
from chronorank.eval import peer as peer_mod
from chronorank.eval.datasets import epoch_seconds, to_epoch
from chronorank.eval.metrics import evaluate, group_means
from chronorank.eval.synthetic import synthetic_benchmark

__all__ = ["Suite", "load_suite", "SUITES", "Bm25Similarity", "run_benchmark", "markdown_tables", "DEFAULT_METRICS"]

DAY = 86400.0
DEFAULT_METRICS = ("ndcg@10", "recall@10", "mrr", "hit_rate@1", "stale@5", "age@10")
KERNEL_ROWS = ("exponential", "weibull", "power_law", "cliff", "gaussian", "linear", "delayed_peak")


@dataclass
class Suite:
    name: str
    corpus: list[dict[str, Any]]
    queries: list[dict[str, Any]]
    notes: str = ""
    groups: dict[str, Any] | None = None


def _group_of(doc: Mapping[str, Any]) -> Any:
    md = doc.get("metadata") or {}
    return md.get("project") or md.get("doc_key") or md.get("repo")


def load_suite(name: str, *, seed: int = 0) -> Suite:
    """``synthetic`` | ``tdw-release`` | ``changelogs`` | a directory holding a docs/format.md pair."""
    if name == "synthetic":
        corpus, queries = synthetic_benchmark(seed=seed)
        return Suite(name, corpus, queries, f"seeded generator, seed={seed}",
                     {d["id"]: d["metadata"]["topic"] for d in corpus})
    if name == "tdw-release":
        corpus, queries = datasets.tdw_release_benchmark()
        return Suite(name, corpus, queries, "tdw-rag 0.1.0 release notes, reference date = fetched_at",
                     {d["id"]: _group_of(d) for d in corpus})
    if name == "changelogs":
        shared = datasets.shared_data_dir()
        if shared is None or not (shared / "changelogs").is_dir():
            raise InvalidInput("suite 'changelogs' needs ../shared/data/changelogs beside the repository; pass its path instead.")
        path = shared / "changelogs"
    else:
        path = Path(name)
    corpus, queries = datasets.load_benchmark(path)
    return Suite(path.name if name not in ("changelogs",) else name, corpus, queries, str(path),
                 {d["id"]: _group_of(d) for d in corpus})


SUITES = ("synthetic", "tdw-release", "changelogs")


# --------------------------------------------------------------------------- similarity


def topical_query(query: str) -> str:
    """The query without its temporal words, via the intent parser when it is present."""
    try:
        from chronorank.intent import parse
    except ImportError:
        return query
    try:
        topical = parse(query).topical_query
    except Exception:  # noqa: BLE001 - a parser bug must not stop a benchmark
        return query
    return topical or query


class Bm25Similarity:
    """BM25 (bm25s) over a fixed corpus.

    Terms come from the index's analyzer (:func:`chronorank.index.text.analyze`: version
    strings such as ``2.31.0`` stay one term, English stemming) when it is importable, so
    the benchmark's similarity matches the index's keyword signal; otherwise from
    bm25s's own tokenizer with PyStemmer when installed.
    """

    def __init__(self, texts: Sequence[str]) -> None:
        bm25s = require("bm25s", extra="index")
        self._analyze: Any = None
        try:
            from chronorank.index.text import analyze, analyze_many

            docs = analyze_many(list(texts))
            self._analyze = analyze
        except ImportError:
            docs = None
        self._retriever = bm25s.BM25()
        if docs is not None:
            self._vocab = {t for d in docs for t in d}
            self._retriever.index(docs, show_progress=False)
            self._stemmer = None
        else:
            try:
                import Stemmer

                self._stemmer = Stemmer.Stemmer("english")
            except ImportError:
                self._stemmer = None
            tokens = bm25s.tokenize(list(texts), stopwords="en", stemmer=self._stemmer, show_progress=False)
            self._retriever.index(tokens, show_progress=False)
            self._vocab = set(tokens.vocab)
        self._n = len(texts)

    def __call__(self, query: str) -> np.ndarray:
        if self._analyze is not None:
            words = self._analyze(query)
        else:
            words = re.findall(r"(?u)\b\w\w+\b", query.lower())
            if self._stemmer is not None:
                words = self._stemmer.stemWords(words)
        known = [w for w in words if w in self._vocab]
        if not known:
            return np.zeros(self._n, dtype=np.float64)
        return np.asarray(self._retriever.get_scores(known), dtype=np.float64)


# --------------------------------------------------------------------------- rows


@dataclass
class Prepared:
    suite: Suite
    ids: list[list[str]]
    sims: list[np.ndarray]
    times: list[np.ndarray]
    now: list[float]
    all_times: dict[str, float] = field(default_factory=dict)


def prepare(suite: Suite, similarity: Callable[[str], np.ndarray] | None = None) -> Prepared:
    corpus = suite.corpus
    sim_fn = similarity or Bm25Similarity([d["text"] for d in corpus])
    times = epoch_seconds(corpus, "date")
    vf = epoch_seconds(corpus, "valid_from")
    times = np.where(np.isnan(vf), times, vf)  # valid_from drives decay when present
    pos = {d["id"]: i for i, d in enumerate(corpus)}
    all_ids = [d["id"] for d in corpus]
    ids, sims, ts, nows = [], [], [], []
    for q in suite.queries:
        s_all = np.asarray(sim_fn(topical_query(q["query"])), dtype=np.float64)
        if q.get("candidates"):
            idx = np.array([pos[c] for c in q["candidates"]], dtype=np.int64)
        else:
            idx = np.arange(len(corpus))
        ids.append([all_ids[i] for i in idx])
        sims.append(s_all[idx])
        ts.append(times[idx])
        nows.append(to_epoch(q.get("reference_date"), field="reference_date"))
    return Prepared(suite, ids, sims, ts, nows, dict(zip(all_ids, times.tolist())))


def _stable_order(score: np.ndarray) -> np.ndarray:
    return np.argsort(-score, kind="stable")


def rank_similarity(p: Prepared, i: int) -> list[str]:
    return [p.ids[i][j] for j in _stable_order(p.sims[i])]


def rank_recency(p: Prepared, i: int) -> list[str]:
    t = np.where(np.isnan(p.times[i]), -np.inf, p.times[i])
    return [p.ids[i][j] for j in _stable_order(t)]


def reranker_ranker(reranker: Any) -> Callable[[Prepared, int], list[str]]:
    def rank(p: Prepared, i: int) -> list[str]:
        q = p.suite.queries[i]["query"]
        r = reranker.rerank_columns(q, p.sims[i], p.times[i], ids=p.ids[i], now=p.now[i])
        return [str(x) for x in r.ranked_ids]

    return rank


def our_rows(kernels: Sequence[str] = KERNEL_ROWS) -> dict[str, Callable[[Prepared, int], list[str]] | str]:
    """The rows chronorank contributes; a string value is the reason a row is unavailable."""
    rows: dict[str, Callable[[Prepared, int], list[str]] | str] = {
        "similarity only": rank_similarity,
        "recency only": rank_recency,
    }
    try:
        from chronorank.rerank import TemporalReranker
    except ImportError as exc:
        for k in kernels:
            rows[f"kernel {k}"] = f"unavailable: {exc}"
        rows["chronorank default"] = f"unavailable: {exc}"
        return rows
    for k in kernels:
        try:
            rr = TemporalReranker(kernel=k)
            rows[f"kernel {rr.kernel!r}"] = reranker_ranker(rr)
        except Exception as exc:  # noqa: BLE001
            rows[f"kernel {k}"] = f"unavailable: {exc}"
    rows["chronorank default"] = reranker_ranker(TemporalReranker())
    return rows


def index_row(suite: Suite, embedder: Any = "default", k: int = 20) -> Callable[[Prepared, int], list[str]] | str:
    """The embedded index with its default configuration: its own retrieval (dense + BM25
    over the whole corpus), not the shared BM25 column the reranker rows use."""
    try:
        from chronorank.index import TemporalIndex

        idx = TemporalIndex(embedder=embedder)
        idx.add([{k2: v for k2, v in d.items() if k2 != "vector"} for d in suite.corpus])
    except Exception as exc:  # noqa: BLE001 - an unavailable extra leaves a note, not a crash
        return f"unavailable: {type(exc).__name__}: {exc}"

    def rank(p: Prepared, i: int) -> list[str]:
        q = p.suite.queries[i]
        return [h.id for h in idx.search(q["query"], k=k, now=p.now[i])]

    return rank


# --------------------------------------------------------------------------- running


def _evaluate_rows(
    p: Prepared, rows: Mapping[str, Any], metrics: Sequence[str]
) -> dict[str, Any]:
    suite = p.suite
    qrels = {q["qid"]: q["relevance"] for q in suite.queries}
    refs = {q["qid"]: p.now[i] for i, q in enumerate(suite.queries)}
    kinds = {q["qid"]: q.get("kind") for q in suite.queries}
    out: dict[str, Any] = {}
    for label, ranker in rows.items():
        if isinstance(ranker, str):
            out[label] = {"error": ranker}
            continue
        t0 = time.perf_counter()
        try:
            run = {q["qid"]: ranker(p, i) for i, q in enumerate(suite.queries)}
        except Exception as exc:  # noqa: BLE001 - one broken row must not hide the others
            out[label] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        res = evaluate(run, qrels, metrics, times=p.all_times, reference_times=refs, groups=suite.groups)
        out[label] = {
            "mean": _round(res["mean"]),
            "by_kind": {k: _round(v) for k, v in group_means(res["per_query"], kinds).items()},
            "seconds": round(time.perf_counter() - t0, 3),
        }
    return out


def _round(d: Mapping[str, float]) -> dict[str, float | None]:
    return {k: (None if isinstance(v, float) and math.isnan(v) else round(float(v), 6)) for k, v in d.items()}


def run_benchmark(
    suites: Sequence[str | Suite] = SUITES,
    *,
    metrics: Sequence[str] = DEFAULT_METRICS,
    peer: bool = True,
    seed: int = 0,
    similarity: Callable[[Sequence[str]], Callable[[str], np.ndarray]] | None = None,
    loaded: dict[str, Suite] | None = None,
    index: bool = False,
) -> dict[str, Any]:
    """Run every row on every suite; returns a JSON-ready dict (no wall-clock values).

    ``loaded``, when given, receives the Suite objects by name (for plots). ``index`` adds
    the embedded index's own row (MiniLM + BM25 retrieval with the index's defaults).
    """
    result: dict[str, Any] = {"metrics": list(metrics), "suites": {}}
    for s in suites:
        suite = s if isinstance(s, Suite) else load_suite(s, seed=seed)
        if loaded is not None:
            loaded[suite.name] = suite
        sim = similarity([d["text"] for d in suite.corpus]) if similarity else None
        p = prepare(suite, sim)
        rows: dict[str, Any] = dict(our_rows())
        if index:
            rows["chronorank index (default)"] = index_row(suite)
        peer_info: dict[str, Any] = {}
        if peer:
            peer_rows, peer_info = peer_mod.peer_rows(p)
            rows.update(peer_rows)
        table = _evaluate_rows(p, rows, metrics)
        for v in table.values():
            v.pop("seconds", None)  # keep the JSON reproducible to the last digit
        result["suites"][suite.name] = {
            "notes": suite.notes,
            "documents": len(suite.corpus),
            "queries": len(suite.queries),
            "similarity": "BM25 (bm25s; chronorank.index.text analyzer) over the topical query; shared by every row",
            "rows": table,
            "peer": peer_info,
        }
    return result


def markdown_tables(result: Mapping[str, Any], metric: str = "ndcg@10") -> str:
    """One table of all metrics per suite, plus a per-kind table of ``metric``."""
    metrics = result["metrics"]
    parts = []
    for name, s in result["suites"].items():
        parts.append(f"### {name} ({s['documents']} documents, {s['queries']} queries)\n")
        parts.append("| configuration | " + " | ".join(metrics) + " |")
        parts.append("|---|" + "---:|" * len(metrics))
        kinds: list[str] = []
        for label, row in s["rows"].items():
            if "error" in row:
                parts.append(f"| {label} | " + " | ".join("n/a" for _ in metrics) + " |")
                continue
            cells = [("n/a" if row["mean"].get(m) is None else f"{row['mean'][m]:.4f}") for m in metrics]
            parts.append(f"| {label} | " + " | ".join(cells) + " |")
            for k in row["by_kind"]:
                if k not in kinds:
                    kinds.append(k)
        if len(kinds) > 1:
            parts.append(f"\n{metric} by query kind:\n")
            parts.append("| configuration | " + " | ".join(f"{k} (n={_n(s, k)})" for k in kinds) + " |")
            parts.append("|---|" + "---:|" * len(kinds))
            for label, row in s["rows"].items():
                if "error" in row:
                    continue
                cells = [f"{row['by_kind'].get(k, {}).get(metric, float('nan')):.4f}" for k in kinds]
                parts.append(f"| {label} | " + " | ".join(cells) + " |")
        errors = {label: row["error"] for label, row in s["rows"].items() if "error" in row}
        for label, err in errors.items():
            parts.append(f"\n- `{label}`: {err}")
        parts.append("")
    return "\n".join(parts)


def _n(s: Mapping[str, Any], kind: str) -> int:
    for row in s["rows"].values():
        if "by_kind" in row and kind in row["by_kind"]:
            return int(row["by_kind"][kind]["queries"])
    return 0


def write_json(result: Mapping[str, Any], path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(result, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return p
