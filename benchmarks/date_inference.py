"""Dates found in the text (issue 33): undated documents dated by what they state.

    nice python benchmarks/date_inference.py [--skip-news] [--only PART ...] [--out PATH]

Three corpora whose dates are known, the dates removed, then inferred
(:func:`chronorank.timeparse.textdates.infer_dates`, the function ``TemporalIndex.add`` runs):

- ``debian``: Debian changelog entries built from this machine's
  ``/usr/share/doc/*/changelog.Debian.gz`` (:func:`debian_entries`, the data builder). An
  entry's date is its trailer line (`` -- Name <mail>  Thu, 03 Mar 2022 12:00:00 +0100``);
  the text inferred from is the whole entry: the header line
  (``pkg (1.2-3) unstable; urgency=medium``), the body and the trailer, which is where the
  entry states its date (only the date field is removed). The share dated, the median and
  95th-percentile error in days against the trailer, over every entry. Then a ranking test on
  a seeded sample (400 packages, their newest 6 entries): one "latest" and one "as of" question
  per package, nDCG@10 of the index with the trailer dates, with the dates removed and
  inferred, and with the dates removed and inference off.
- ``news``: ../shared/data/news-dev (5,000 articles, 400 questions). Among the articles whose
  text states a full date (a day, a month and a year), the share dated within 7 days of the
  article's own date, and the ceiling of that share (the articles that state any full date
  within 7 days of their own: most full dates in news are other events'); the same share
  among those articles (``stating_their_own_date``); nDCG@10 with the dates, with every date
  removed and inferred, undated, and with true dates for exactly the documents inference
  dates (the effect of dating a few documents among many undated ones, apart from any
  error). (The texts stay in ../shared; the index's embedding cache keeps their vectors.)
- ``policies``: ../shared/data/policies-dev (policy snapshots) with the dates removed: the
  share dated and the error against the snapshot date (documents that state their date);
- ``changelogs``: ../shared/data/changelogs with the dates removed: how many dates are
  inferred, how many lie within 7 days of the true one, and every other one with its snippet
  (the precision test: a version number, a quantity or a price must never become a date).

Throughput: ``infer_dates`` over every Debian entry and every news article at once, and one
document at a time (the same function called per document), interleaved, best of 3.
Writes ``benchmarks/results/date_inference.json``. The reference dates are the questions'
own (pinned), never the wall clock.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import random
import re
import sys
import time
from collections import defaultdict
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from chronorank.eval.datasets import load_benchmark  # noqa: E402
from chronorank.eval.index_eval import evaluate_index  # noqa: E402
from chronorank.index import TemporalIndex  # noqa: E402
from chronorank.timeparse import textdates, to_epoch  # noqa: E402
from chronorank.timeparse.textdates import infer_dates  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
if not SHARED.is_dir():
    SHARED = Path("/work/shared/data")
OUT = ROOT / "benchmarks" / "results" / "date_inference.json"
DAY = 86400.0
SEED = 33
_HEAD = re.compile(r"^(?P<pkg>[a-z0-9][a-z0-9+.\-]*) \((?P<version>[^)\s]+)\) [^;]*;.*$")
_TRAILER = re.compile(r"^ -- .*?\S  ?(?P<date>(?:[A-Z][a-z]{2}, )?\d{1,2} [A-Z][a-z]{2} \d{4} [\d:]+ [+-]\d{4}).*$")


def debian_entries(pattern: str = "/usr/share/doc/*/changelog.Debian.gz") -> list[dict[str, Any]]:
    """Every changelog entry with a readable trailer: ``{"id", "pkg", "text", "time"}``; the
    text is the header line, the body and the trailer line (whose date is the truth)."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in sorted(glob.glob(pattern)):
        try:
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except (OSError, EOFError):
            continue
        cur: list[str] | None = None
        head: re.Match[str] | None = None
        for line in lines:
            m = _HEAD.match(line)
            if m:
                cur, head = [line], m
                continue
            if cur is None or head is None:
                continue
            t = _TRAILER.match(line)
            if t is None:
                if line.startswith(" -- "):
                    cur = None  # a trailer we cannot read: the entry is left out
                else:
                    cur.append(line)
                continue
            try:
                when = parsedate_to_datetime(t.group("date")).timestamp()
            except (TypeError, ValueError):
                cur = None
                continue
            doc_id = f"{head.group('pkg')}@{head.group('version')}"
            if doc_id not in seen:
                seen.add(doc_id)
                out.append({"id": doc_id, "pkg": head.group("pkg"), "text": "\n".join([*cur, line]).strip("\n"),
                            "time": when})
            cur = None
    return out


def errors_days(found: np.ndarray, truth: np.ndarray) -> dict[str, Any]:
    ok = ~np.isnan(found)
    err = np.abs(found[ok] - truth[ok]) / DAY
    return {
        "documents": int(found.shape[0]),
        "dated": int(ok.sum()),
        "share_dated": round(float(ok.mean()), 4) if found.shape[0] else 0.0,
        "median_error_days": round(float(np.median(err)), 2) if err.size else None,
        "p95_error_days": round(float(np.percentile(err, 95)), 2) if err.size else None,
        "within_7_days": int((err <= 7).sum()),
        "share_of_dated_within_7_days": round(float((err <= 7).mean()), 4) if err.size else None,
    }


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(t))


def debian_benchmark(entries: list[dict[str, Any]], embedder: str) -> dict[str, Any]:
    found = infer_dates([e["text"] for e in entries])
    truth = np.array([e["time"] for e in entries])
    by_kind: dict[str, int] = defaultdict(int)
    for k in found.kind:
        if k:
            by_kind[k] += 1
    stats = errors_days(found.time, truth)
    stats["by_kind"] = dict(sorted(by_kind.items()))
    stats["packages"] = len({e["pkg"] for e in entries})
    worst = np.argsort(-np.nan_to_num(np.abs(found.time - truth), nan=-1))[:10]
    stats["largest_errors"] = [
        {"id": entries[i]["id"], "snippet": found.snippet[i], "inferred": _iso(found.time[i]),
         "trailer": _iso(truth[i])} for i in worst.tolist() if not np.isnan(found.time[i])
    ]
    corpus, queries = debian_questions(entries)
    stats["ranking"] = _three_indexes(corpus, queries, embedder)
    return stats


def debian_questions(entries: list[dict[str, Any]], packages: int = 400, per_package: int = 6) -> tuple[
        list[dict[str, Any]], list[dict[str, Any]]]:
    """A seeded sample: ``packages`` packages with at least 4 entries, their newest
    ``per_package`` entries; per package a "latest" question (the newest entry is graded 3) and
    an "as of" question at a day between two entries (the entry in force then is graded 3). The
    reference date is a day after the package's newest entry."""
    by_pkg: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in entries:
        by_pkg[e["pkg"]].append(e)
    names = sorted(p for p, es in by_pkg.items() if len({e["time"] for e in es}) >= 4)
    rng = random.Random(SEED)
    chosen = sorted(rng.sample(names, min(packages, len(names))))
    corpus: list[dict[str, Any]] = []
    queries: list[dict[str, Any]] = []
    for pkg in chosen:
        es = sorted(by_pkg[pkg], key=lambda e: -e["time"])[:per_package]
        for e in es:
            corpus.append({"id": e["id"], "text": e["text"], "date": _iso_time(e["time"])})
        ref = _iso_time(es[0]["time"] + DAY)
        queries.append({"qid": f"latest:{pkg}", "kind": "latest", "query": f"latest changes in {pkg}",
                        "reference_date": ref, "relevance": {es[0]["id"]: 3}})
        k = rng.randrange(1, len(es) - 1)
        gap = es[k - 1]["time"] - es[k]["time"]
        if gap < 2 * DAY:
            continue
        at = es[k]["time"] + gap / 2
        queries.append({"qid": f"as_of:{pkg}", "kind": "as_of",
                        "query": f"{pkg} changes as of {time.strftime('%B %d, %Y', time.gmtime(at))}",
                        "reference_date": ref, "relevance": {es[k]["id"]: 3}})
    return corpus, queries


def _iso_time(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _three_indexes(corpus: list[dict[str, Any]], queries: list[dict[str, Any]], embedder: str,
                   found: np.ndarray | None = None) -> dict[str, Any]:
    """nDCG@10 overall and by kind: with the dates, dates removed and inferred, undated; given
    ``found`` (the inferred times), also ``true_dates_where_inferred``: the documents inference
    dates get their true dates, the others none (what the inferred run would score were every
    inferred date exact: the effect of the dates' coverage apart from their errors) and
    ``true_dates_random``: as many documents, drawn at random (seeded), with their true dates."""
    undated = [{k: v for k, v in d.items() if k != "date"} for d in corpus]
    out: dict[str, Any] = {"documents": len(corpus), "queries": len(queries)}
    runs = [("dated", corpus, False), ("inferred", undated, True), ("undated", undated, False)]
    if found is not None:
        same = [d if not np.isnan(t) else u for d, u, t in zip(corpus, undated, found.tolist())]
        runs.append(("true_dates_where_inferred", same, False))
        pick = set(random.Random(SEED).sample(range(len(corpus)), int((~np.isnan(found)).sum())))
        runs.append(("true_dates_random", [d if i in pick else u for i, (d, u) in enumerate(zip(corpus, undated))],
                     False))
    for name, docs, infer in runs:
        idx = TemporalIndex(embedder=embedder, infer_dates=infer)
        t0 = time.perf_counter()
        idx.add(docs)
        built = time.perf_counter() - t0
        res = evaluate_index(idx, queries, metrics=("ndcg@10",))
        out[name] = {
            "ndcg@10": round(float(res["overall"]["ndcg@10"]), 4),
            "by_kind": {k: round(float(v["ndcg@10"]), 4) for k, v in sorted(res["by_kind"].items())},
            "dates_inferred": idx.last_inferred,
            "add_seconds": round(built, 1),
        }
    out["inferred_minus_dated"] = round(out["inferred"]["ndcg@10"] - out["dated"]["ndcg@10"], 4)
    out["inferred_minus_undated"] = round(out["inferred"]["ndcg@10"] - out["undated"]["ndcg@10"], 4)
    if found is not None:
        for name in ("true_dates_where_inferred", "true_dates_random"):
            out[f"{name}_minus_undated"] = round(out[name]["ndcg@10"] - out["undated"]["ndcg@10"], 4)
    return out


def news_benchmark(embedder: str, rank: bool) -> dict[str, Any]:
    corpus, queries = load_benchmark(SHARED / "news-dev")
    texts = [d["text"] for d in corpus]
    truth = np.array([to_epoch(d["date"]) for d in corpus])
    found = infer_dates(texts)
    # "states a full date": the text holds a month name, a day and a year, or an ISO date,
    # anywhere (whether or not the rules take it for the article's own date)
    full = np.array([any(p.search(t) for p in textdates._get().full) for t in texts])
    stats: dict[str, Any] = {"all": errors_days(found.time, truth)}
    stats["stating_a_full_date"] = errors_days(found.time[full], truth[full])
    sub = stats["stating_a_full_date"]
    sub["share_within_7_days"] = round(sub["within_7_days"] / max(1, sub["documents"]), 4)
    # the most any rule that picks one of the stated full dates can reach: the articles that
    # state some full date within 7 days of their own (most state only other events' dates)
    near = np.array([_states_a_date_near(t, when) for t, when in zip(texts, truth.tolist())])
    sub["stating_a_date_within_7_days"] = int(near.sum())
    sub["ceiling_share_within_7_days"] = round(float(near[full].mean()), 4) if full.any() else None
    own = errors_days(found.time[near], truth[near])
    own["share_within_7_days"] = round(own["within_7_days"] / max(1, own["documents"]), 4)
    stats["stating_their_own_date"] = own
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for i, k in enumerate(found.kind):
        if k:
            by_kind[k][0] += 1
            by_kind[k][1] += int(abs(found.time[i] - truth[i]) <= 7 * DAY)
    stats["by_kind"] = {k: {"dated": a, "within_7_days": b} for k, (a, b) in sorted(by_kind.items())}
    if rank:
        stats["ranking"] = _three_indexes(corpus, queries, embedder, found.time)
    return stats


def _states_a_date_near(text: str, when: float, days: float = 7) -> bool:
    g = textdates._get()
    for pat in g.full:
        for m in pat.finditer(text):
            t = textdates._ymd(g, m.group("year"), m.group("mon"), m.group("day"))
            if t is not None and abs(t - when) <= days * DAY:
                return True
    return False


def changelogs_precision() -> dict[str, Any]:
    path = SHARED / "changelogs" / "corpus.jsonl"
    corpus = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    truth = np.array([to_epoch(d["date"]) for d in corpus])
    meta = [{k: v for k, v in d.items() if k not in ("id", "text", "date")} for d in corpus]
    found = infer_dates([d["text"] for d in corpus], meta)
    stats = errors_days(found.time, truth)
    bad = np.flatnonzero(~np.isnan(found.time) & (np.abs(found.time - truth) > 7 * DAY))
    stats["beyond_7_days"] = [
        {"id": corpus[i]["id"], "kind": found.kind[i], "snippet": found.snippet[i],
         "inferred": _iso(found.time[i]), "true": _iso(truth[i])} for i in bad.tolist()
    ]
    stats["snippets"] = sorted({found.snippet[i] for i in np.flatnonzero(~np.isnan(found.time)).tolist()})[:60]
    return stats


def policies_inference() -> dict[str, Any]:
    """../shared/data/policies-dev (policy snapshots) with the dates removed: what is inferred
    and its error. The corpus date is when a snapshot was taken, which may be long after the
    date a policy states ("Updated: July 17, 2025"): an error here is not always a wrong date."""
    path = SHARED / "policies-dev" / "corpus.jsonl"
    corpus = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    truth = np.array([to_epoch(d["date"]) for d in corpus])
    meta = [d.get("metadata") or {} for d in corpus]
    found = infer_dates([d["text"] for d in corpus], meta)
    stats = errors_days(found.time, truth)
    ok = ~np.isnan(found.time)
    stats["stated_after_the_snapshot"] = int((found.time[ok] > truth[ok] + 7 * DAY).sum())
    stats["stated_before_the_snapshot"] = int((found.time[ok] < truth[ok] - 7 * DAY).sum())
    return stats


def throughput(texts: list[str], rounds: int = 3, single: int = 2000) -> dict[str, Any]:
    """Documents per second: the whole batch in one call, and one call per document (the
    first ``single`` documents), interleaved; best of ``rounds``."""
    batch, one = [], []
    part = texts[:single]
    for _ in range(rounds):
        t0 = time.perf_counter()
        infer_dates(texts)
        batch.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for t in part:
            infer_dates([t])
        one.append(time.perf_counter() - t0)
    chars = sum(len(t) for t in texts)
    b, o = min(batch), min(one)
    return {
        "documents": len(texts), "mb": round(chars / 1e6, 2),
        "batch_docs_per_s": round(len(texts) / b), "batch_mb_per_s": round(chars / 1e6 / b, 2),
        "per_document_docs_per_s": round(len(part) / o),
        "batch_over_per_document": round((len(texts) / b) / (len(part) / o), 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--embedder", default="default")
    ap.add_argument("--news-embedder", default=None,
                    help="the news-dev indexes' embedder (default: --embedder); 'none' ranks by keywords + time")
    ap.add_argument("--skip-news", action="store_true", help="no news-dev indexes (embedding takes minutes)")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--only", nargs="+", choices=("debian", "changelogs", "policies", "news", "throughput"),
                    help="rerun these parts only; the other parts are kept from the existing --out file")
    args = ap.parse_args()
    news_embedder = args.news_embedder or args.embedder
    parts = set(args.only or ("debian", "changelogs", "policies", "news", "throughput"))
    result: dict[str, Any] = {"issue": 33, "embedder": args.embedder, "news_embedder": news_embedder}
    if args.only and Path(args.out).is_file():
        old = json.loads(Path(args.out).read_text(encoding="utf-8"))
        result = {**old, **result, "rerun": sorted(parts | set(old.get("rerun", ())))}
        if "news" not in parts:  # the kept news part says what it was measured with
            result["news_embedder"] = old.get("news_embedder", news_embedder)
    entries = debian_entries()
    print(f"debian: {len(entries)} entries", flush=True)
    if "debian" in parts:
        result["debian"] = debian_benchmark(entries, args.embedder)
        print(json.dumps(result["debian"]["ranking"], indent=1), flush=True)
    if "changelogs" in parts and (SHARED / "changelogs").is_dir():
        result["changelogs_precision"] = changelogs_precision()
        print("changelogs:", {k: v for k, v in result["changelogs_precision"].items() if k != "snippets"}, flush=True)
    if "policies" in parts and (SHARED / "policies-dev").is_dir():
        result["policies"] = policies_inference()
        print("policies:", result["policies"], flush=True)
    news_texts: list[str] = []
    if (SHARED / "news-dev").is_dir():
        if "news" in parts:
            result["news"] = news_benchmark(news_embedder, rank=not args.skip_news)
            print("news:", json.dumps(result["news"], indent=1), flush=True)
        news_texts = [d["text"] for d in load_benchmark(SHARED / "news-dev")[0]]
    if "throughput" in parts:
        result["throughput"] = {"debian": throughput([e["text"] for e in entries])}
        if news_texts:
            result["throughput"]["news"] = throughput(news_texts)
        print("throughput:", result["throughput"], flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
