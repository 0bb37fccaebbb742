"""One default configuration on every domain at once (issue 15).

    python benchmarks/cross_domain.py [--embedder NAME ...] [--quick] [--out PATH]

Domains (nDCG@10; each query's reference date pinned by the query; ``kind`` only groups
the metrics after ranking):

- ``release``: the tdw-rag release corpus (13 queries, bundled snapshot);
- ``changelogs``: ../shared/data/changelogs, per kind (latest / as_of / as_of_date /
  version), plus the reworded and Russian query sets (benchmarks/data/);
- ``news``: ../shared/data/news-dev (400 real news-quiz questions, 5,000 dated articles;
  per kind fresh_only / fresh_vs_stale); the texts stay in ../shared, only their vectors
  are cached (under ~/.cache/chronorank-bench, never in the repository);
- ``changelogs/user``: ../shared/data/changelogs-user (143 hand-written questions over the
  same changelog corpus; per kind);
- ``policies`` / ``policies_validity``: ../shared/data/policies-dev (section versions of real
  terms and privacy policies; per kind, the ``dev`` and ``train`` splits as separate query
  sets), without and with validity intervals; the texts stay in ../shared;
- ``synthetic``: the seeded synthetic suite (``chronorank.eval.synthetic``);
- gate AUC on gate-dev ``dev``: read from the gate benchmark's JSON when it exists
  (``benchmarks/results/gate_dev.json``), else computed here with the current lexical gate.

Rows: the default ``TemporalIndex()`` and ablations of it (one setting each, the same for
every domain), similarity only (``strength=0``), and tdw-rag 0.1.0's best global decay,
chosen over its own 368-setting grid on each domain separately (favourable to the peer),
reranking the top 200 documents of the index's own similarity.

A second table compares embedders: every domain's nDCG@10 with the default configuration,
and documents per second embedding the news articles (2,000-character texts) on this machine.
Writes ``benchmarks/results/cross_domain.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CACHE = Path.home() / ".cache" / "chronorank-bench"
QUERY_SETS = {
    "reworded": ROOT / "benchmarks" / "data" / "changelogs_reworded" / "queries.jsonl",
    "russian": ROOT / "benchmarks" / "data" / "changelogs_ru" / "queries.jsonl",
}
#: The columns of the README table: (domain, query set, kind or "all").
COLUMNS = (
    ("release", "release", "all"),
    ("changelogs", "original", "latest"),
    ("changelogs", "original", "as_of"),
    ("changelogs", "original", "as_of_date"),
    ("changelogs", "original", "version"),
    ("changelogs", "reworded", "all"),
    ("changelogs", "russian", "all"),
    ("news", "news", "fresh_only"),
    ("news", "news", "fresh_vs_stale"),
    ("synthetic", "synthetic", "all"),
    ("changelogs", "user", "all"),
    *(("changelogs", "user", k) for k in ("as_of", "before", "latest", "lookup", "period", "since", "timeless", "version")),
    *((dom, "dev", k) for dom in ("policies", "policies_validity")
      for k in ("all", "as_of", "before", "changed", "current", "period")),
)
#: Ablations of the default, each one setting for every domain (spec overrides).
ABLATIONS: dict[str, dict[str, Any]] = {
    "future clamped (future='clamp')": {"future": "clamp"},
    "no query-shape fade (short_query_terms=none)": {"short_query_terms": None},
    "no burst test (burst_ratio=none)": {"burst_ratio": None},
    "no lead field (lead_weight=0)": {"lead_weight": 0.0},
    "no topical margin": {"topical_margin": None},
    "versions not kept with the first hit (version_floor=none)": {"version_floor": None},
    "no relative recency": {"relative_recency": None},
    "plain BM25 idf (idf_power=0)": {"idf_power": 0.0},
}
PEER_DEPTH = 200


class CachedEmbedder:
    """An embedder whose batch results are cached on disk (keyed by its name and the texts)
    and whose single-text results (queries) are memoised for the process."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self._memo: dict[str, np.ndarray] = {}
        self._qmemo: dict[tuple[str, str], np.ndarray] = {}
        self.seconds = 0.0  # time spent embedding (cache misses only)
        self.embedded = 0

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        from chronorank.index.embedders import embed_queries

        todo = [t for t in texts if ("q", t) not in self._qmemo]
        if todo:
            for t, v in zip(todo, embed_queries(self.inner, todo)):
                self._qmemo[("q", t)] = v
        return np.stack([self._qmemo[("q", t)] for t in texts])

    def _tag(self) -> str:
        return f"{self.name}-ml{getattr(self.inner, 'max_length', getattr(self.inner, 'max_chars', 0))}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if len(texts) < 50:
            todo = [t for t in texts if t not in self._memo]
            if todo:
                t0 = time.perf_counter()
                for t, v in zip(todo, self.inner.embed(todo)):
                    self._memo[t] = v
                self.seconds += time.perf_counter() - t0
            return np.stack([self._memo[t] for t in texts]) if texts else self.inner.embed([])
        tag = self._tag()
        key = hashlib.sha256("\x00".join([tag, *texts]).encode()).hexdigest()[:24]
        path = CACHE / f"{tag}-{key}.npy"
        if path.exists():
            return np.load(path)
        t0 = time.perf_counter()
        out = np.asarray(self.inner.embed(texts), dtype=np.float32)
        self.seconds += time.perf_counter() - t0
        self.embedded += len(texts)
        CACHE.mkdir(parents=True, exist_ok=True)
        np.save(path, out)
        return out


@dataclass
class Domain:
    name: str
    corpus: list[dict[str, Any]]
    query_sets: dict[str, list[dict[str, Any]]]
    index: Any = None
    sims: dict[str, Any] = field(default_factory=dict)


def load_domains(names: Sequence[str] | None = None, *, quick: int = 0) -> dict[str, Domain]:
    """The domains whose data is present (``../shared`` ones are skipped when it is absent).

    ``quick=n`` keeps every n-th query of each set (a subsample for tests and iteration)."""
    from chronorank.eval.datasets import (
        load_benchmark,
        load_corpus,
        load_queries,
        shared_data_dir,
        tdw_release_benchmark,
    )
    from chronorank.eval.synthetic import synthetic_benchmark

    want = set(names) if names else {"release", "changelogs", "news", "synthetic", "policies", "policies_validity"}
    out: dict[str, Domain] = {}
    if "release" in want:
        c, q = tdw_release_benchmark()
        out["release"] = Domain("release", c, {"release": q})
    shared = shared_data_dir(ROOT) or shared_data_dir()
    if "changelogs" in want and shared is not None and (shared / "changelogs").is_dir():
        c, q = load_benchmark(shared / "changelogs")
        sets = {"original": q, **{k: load_queries(p) for k, p in QUERY_SETS.items()}}
        if (shared / "changelogs-user" / "queries.jsonl").is_file():
            sets["user"] = load_queries(shared / "changelogs-user" / "queries.jsonl")
        out["changelogs"] = Domain("changelogs", c, sets)
    pol = None if shared is None else shared / "policies-dev"
    for name, file in (("policies", "corpus.jsonl"), ("policies_validity", "corpus_validity.jsonl")):
        if name in want and pol is not None and (pol / file).is_file():
            q = load_queries(pol / "queries.jsonl")
            # the train split is the only one anything may be fitted on; dev is for checking
            split = {s: [x for x in q if x.get("split") == s] for s in ("dev", "train")}
            out[name] = Domain(name, load_corpus(pol / file), split)
    if "news" in want and shared is not None and (shared / "news-dev").is_dir():
        c, q = load_benchmark(shared / "news-dev")
        out["news"] = Domain("news", c, {"news": q})
    if "synthetic" in want:
        c, q = synthetic_benchmark(seed=0)
        out["synthetic"] = Domain("synthetic", c, {"synthetic": q})
    if quick > 1:
        for d in out.values():
            d.query_sets = {k: v[::quick] for k, v in d.query_sets.items()}
    return out


def build(domains: Mapping[str, Domain], embedder: Any) -> dict[str, float]:
    """Index every domain once with ``embedder`` (cached vectors); returns build seconds."""
    from chronorank.eval.index_eval import index_for_benchmark

    took = {}
    for d in domains.values():
        t0 = time.perf_counter()
        d.index = index_for_benchmark(d.corpus, embedder=embedder)
        d.sims = {}
        took[d.name] = round(time.perf_counter() - t0, 2)
    return took


def score_row(domains: Mapping[str, Domain], config: Any = None, **overrides: Any) -> dict[str, dict[str, Any]]:
    """nDCG@10 per domain / query set / kind for one index configuration."""
    from chronorank.eval.index_eval import evaluate_index

    out: dict[str, dict[str, Any]] = {}
    for d in domains.values():
        cfg = d.index.config if config is None else config
        if overrides:
            from chronorank.index.config import IndexConfig

            cfg = IndexConfig.from_spec(cfg).replace(**overrides)
        for set_name, queries in d.query_sets.items():
            res = evaluate_index(d.index, queries, config=cfg, depth=10, metrics=("ndcg@10",))
            cell = {k: round(v["ndcg@10"], 4) for k, v in res["by_kind"].items()}
            cell["all"] = round(res["overall"]["ndcg@10"], 4)
            out[f"{d.name}/{set_name}"] = cell
    return out


def columns(row: Mapping[str, Mapping[str, Any]]) -> dict[str, float | None]:
    """The README columns of one row."""
    out: dict[str, float | None] = {}
    for dom, qset, kind in COLUMNS:
        cell = row.get(f"{dom}/{qset}")
        out[f"{dom}/{qset}/{kind}"] = None if cell is None else cell.get(kind)
    return out


_TFIDF_TOKEN = re.compile(r"(?u)\b\w\w+\b")  # scikit-learn's default token pattern


def tfidf_row(domains: Mapping[str, Domain]) -> dict[str, dict[str, Any]]:
    """TF-IDF similarity alone (no time, no index): sublinear tf, smoothed idf, l2-normalised
    rows, cosine over the whole corpus -- the "similarity alone" reference of the issues'
    acceptance bars (scikit-learn's ``TfidfVectorizer(sublinear_tf=True)`` in numpy, without
    its English stop list)."""
    from chronorank.eval.metrics import evaluate, group_means

    out: dict[str, dict[str, Any]] = {}
    for d in domains.values():
        vocab: dict[str, int] = {}
        rows, cols, vals = [], [], []
        for i, doc in enumerate(d.corpus):
            toks = _TFIDF_TOKEN.findall(str(doc.get("text", "")).lower())
            uniq, counts = np.unique(np.array([vocab.setdefault(t, len(vocab)) for t in toks], dtype=np.int64),
                                     return_counts=True)
            rows += [i] * uniq.size
            cols += uniq.tolist()
            vals += (1.0 + np.log(counts)).tolist()
        n, v = len(d.corpus), len(vocab)
        r, c, x = np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), np.array(vals)
        df = np.bincount(c, minlength=v)
        idf = np.log((1 + n) / (1 + df)) + 1.0
        x = x * idf[c]
        norm = np.sqrt(np.bincount(r, weights=x * x, minlength=n))
        x = x / np.maximum(norm[r], 1e-12)
        ids = [str(doc["id"]) for doc in d.corpus]
        for set_name, queries in d.query_sets.items():
            run = {}
            for q in queries:
                qt = [vocab[t] for t in _TFIDF_TOKEN.findall(q["query"].lower()) if t in vocab]
                qc = np.bincount(np.array(qt, dtype=np.int64), minlength=v).astype(np.float64) if qt else np.zeros(v)
                qv = np.where(qc > 0, (1.0 + np.log(np.maximum(qc, 1.0))) * idf, 0.0)
                score = np.bincount(r, weights=x * qv[c], minlength=n)
                run[q["qid"]] = [ids[j] for j in np.argsort(-score, kind="stable")[:10]]
            res = evaluate(run, {q["qid"]: q["relevance"] for q in queries}, ["ndcg@10"])
            kinds = {q["qid"]: q.get("kind") for q in queries}
            cell = {k: round(m["ndcg@10"], 4) for k, m in group_means(res["per_query"], kinds).items()}
            cell["all"] = round(res["mean"]["ndcg@10"], 4)
            out[f"{d.name}/{set_name}"] = cell
    return out


def peer_row(domains: Mapping[str, Domain]) -> dict[str, dict[str, Any]]:
    """tdw-rag's best global decay per domain over the index's similarity (top PEER_DEPTH)."""
    from chronorank.eval import peer as peer_mod
    from chronorank.eval.benchmark import Prepared, Suite
    from chronorank.eval.datasets import to_epoch
    from chronorank.eval.metrics import evaluate, group_means

    if not peer_mod.peer_available():
        return {}
    from tdw_rag.decay import get_kernel
    from tdw_rag.scoring import combine

    out: dict[str, dict[str, Any]] = {}
    for d in domains.values():
        snap = d.index._snap
        times = snap.times[0]
        for set_name, queries in d.query_sets.items():
            ids, sims, ts, nows = [], [], [], []
            for q in queries:
                hits = d.index.search(q["query"], k=PEER_DEPTH, now=q["reference_date"], strength=0.0)
                rows = np.array([snap.row_of[h.id] for h in hits], dtype=np.int64)
                ids.append([snap.ids[int(i)] for i in rows])
                sims.append(np.asarray(hits.similarity, dtype=np.float64))
                ts.append(times[rows])
                nows.append(to_epoch(q["reference_date"]))
            p = Prepared(Suite(d.name, d.corpus, queries), ids, sims, ts, nows)
            (name, params, strategy, s), _ = peer_mod._best_setting(p)
            kernel = get_kernel(name, **params)
            run = {}
            for i, q in enumerate(queries):
                a = np.maximum((nows[i] - ts[i]) / 86400.0, 0.0)
                final = combine(sims[i], kernel(a), strategy, s)
                run[q["qid"]] = [ids[i][j] for j in np.argsort(-final, kind="stable")[:10]]
            res = evaluate(run, {q["qid"]: q["relevance"] for q in queries}, ["ndcg@10"])
            cell = {k: round(v["ndcg@10"], 4) for k, v in group_means(res["per_query"], {q["qid"]: q.get("kind") for q in queries}).items()}
            cell["all"] = round(res["mean"]["ndcg@10"], 4)
            cell["setting"] = f"{name}({', '.join(f'{k}={v:g}' for k, v in params.items())}) {strategy} s={s:g}"
            out[f"{d.name}/{set_name}"] = cell
    return out


def gate_auc() -> dict[str, Any]:
    """Gate AUC on gate-dev's dev split: the gate benchmark's figure when it has written one."""
    written = RESULTS / "gate_dev.json"
    if written.is_file():
        data = json.loads(written.read_text(encoding="utf-8"))
        auc = _find_auc(data)
        if auc is not None:
            return {"auc": auc, "source": "benchmarks/results/gate_dev.json"}
    from chronorank.eval.datasets import shared_data_dir

    shared = shared_data_dir(ROOT) or shared_data_dir()
    path = None if shared is None else shared / "gate-dev" / "queries.jsonl"
    if path is None or not path.is_file():
        return {"auc": None, "source": "gate-dev absent"}
    from chronorank.intent import parse

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    dev = [r for r in rows if r.get("split") == "dev"]
    scores = [parse(r["query"]).time_sensitivity for r in dev]
    labels = [int(bool(r["time_dependent"])) for r in dev]
    return {"auc": round(_roc_auc(scores, labels), 4), "source": "lexical gate (chronorank.intent.parse)", "n": len(dev)}


def _roc_auc(scores: Sequence[float], labels: Sequence[int]) -> float:
    """Mann-Whitney AUC, ties counted half."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=bool)
    order = np.argsort(s, kind="stable")
    ranks = np.empty(len(s))
    ranks[order] = np.arange(1, len(s) + 1)
    for v in np.unique(s):  # average ranks over ties
        tie = s == v
        ranks[tie] = ranks[tie].mean()
    pos, neg = int(y.sum()), int((~y).sum())
    return float((ranks[y].sum() - pos * (pos + 1) / 2) / (pos * neg))


def _find_auc(data: Any) -> float | None:
    """The dev-split AUC of the default gate in a gate benchmark JSON (tolerant of its shape)."""
    if isinstance(data, Mapping):
        for key in ("dev_auc", "auc_dev"):
            if isinstance(data.get(key), (int, float)):
                return float(data[key])
        dev = data.get("dev")
        if isinstance(dev, Mapping) and isinstance(dev.get("auc"), (int, float)):
            return float(dev["auc"])
        for v in data.values():
            found = _find_auc(v)
            if found is not None:
                return found
    return None


def embedder_from(name: str) -> Any:
    """``get_embedder`` names, plus ``minilm-<n>``: MiniLM with ``max_length=n`` tokens."""
    from chronorank.index import get_embedder
    from chronorank.index.embedders import MiniLMOnnxEmbedder

    if name.startswith("minilm-") and name[7:].isdigit():
        return MiniLMOnnxEmbedder(max_length=int(name[7:]))
    return get_embedder(name)


def embed_speed(embedder: Any, texts: Sequence[str], n: int = 60) -> float:
    """Documents per second embedding ``n`` of ``texts`` (no cache), after a warm-up call."""
    sample = list(texts[:n])
    embedder.embed(sample[:4])
    t0 = time.perf_counter()
    embedder.embed(sample)
    return round(len(sample) / (time.perf_counter() - t0), 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedder", nargs="*", default=None, help="embedders to compare (the default first)")
    ap.add_argument("--domains", nargs="*", default=None)
    ap.add_argument("--quick", type=int, default=0, help="keep every n-th query")
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--out", default=str(RESULTS / "cross_domain.json"))
    args = ap.parse_args(argv)

    from chronorank.index import TemporalIndex

    default = TemporalIndex().embedder
    names = args.embedder or ["default"]
    domains = load_domains(args.domains, quick=args.quick)
    report: dict[str, Any] = {
        "command": "python benchmarks/cross_domain.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "threads": os.cpu_count(),
        "config": TemporalIndex(embedder=None).config.spec(),
        "queries": {f"{d.name}/{k}": len(v) for d in domains.values() for k, v in d.query_sets.items()},
        "rows": {},
        "embedders": {},
    }
    for e_i, spec in enumerate(names):  # "name" or "name@domain,domain" (a subset of domains)
        name, _, only = spec.partition("@")
        inner = embedder_from(name)
        emb = CachedEmbedder(inner)
        doms = {k: v for k, v in domains.items() if not only or k in only.split(",")}
        build(doms, emb)
        row = score_row(doms)
        label = f"{inner.name} (max_length={inner.max_length})" if hasattr(inner, "max_length") else inner.name
        report["embedders"][label] = {"spec": spec, "ndcg": row, "columns": columns(row)}
        print(f"{emb.name}: " + " ".join(f"{k}={v}" for k, v in columns(row).items()), file=sys.stderr)
        if e_i == 0:
            report["embedder"] = emb.name
            report["rows"]["default index"] = {"ndcg": row, "columns": columns(row)}
            for label, over in ABLATIONS.items():
                r = score_row(domains, **over)
                report["rows"][label] = {"ndcg": r, "columns": columns(r), "overrides": over}
                print(f"{label}: " + " ".join(f"{k}={v}" for k, v in columns(r).items()), file=sys.stderr)
            sim = score_row(domains, strength=0.0)
            report["rows"]["similarity only (strength=0)"] = {"ndcg": sim, "columns": columns(sim)}
            tfidf = tfidf_row(domains)
            report["rows"]["TF-IDF similarity alone"] = {"ndcg": tfidf, "columns": columns(tfidf)}
            if not args.no_peer:
                peer = peer_row(domains)
                if peer:
                    report["rows"]["tdw-rag best global decay"] = {
                        "ndcg": peer, "columns": columns(peer),
                        "settings": {k: v.pop("setting") for k, v in peer.items()},
                    }
    news = domains.get("news")
    if news is not None:
        texts = [d["text"] for d in news.corpus]
        for e in report["embedders"].values():
            e["docs_per_s"] = embed_speed(embedder_from(e["spec"].partition("@")[0]), texts)
    report["default_embedder"] = None if default is None else default.name
    report["gate"] = gate_auc()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
