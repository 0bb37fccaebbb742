"""One ranking, every store (issue 30): a store built with its defaults runs the index's rules,
with the index's defaults, client-side over its pool (``fallback='client'``,
:func:`chronorank.ranking.rank`) and the index's query preparation
(:mod:`chronorank.stores.prepare`: an undated anchor dated by the engine's BM25 within the
question's subject, acronyms spelled out, the anchor's subject, the keyword text), each store
ranks the 72 time questions of ``benchmarks/data/time_semantics`` (MiniLM vectors, the same
documents; every kind: periods, as-of dates, current, before / after / since / until anchors,
versions, timeless, distractors) as the index does: the same top 3 for every question,
the stages that read texts included (the version-conflict rule and the anchor's event page over
the pool's texts, :func:`chronorank.rerank.text_stages`; the version cosine test over vectors
the store fetches when it runs) -- on Qdrant in at most two requests a question.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from store_cases import make_store  # this folder's conftest, loaded by path

from chronorank.eval.datasets import load_benchmark
from chronorank.index import TemporalIndex
from chronorank.index.text import acronym_expansion, query_acronyms
from chronorank.intent import parse
from chronorank.timeparse import to_epoch

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "time_semantics"


@pytest.fixture(scope="module")
def reference() -> tuple[TemporalIndex, list[dict[str, Any]], list[dict[str, Any]]]:
    corpus, queries = load_benchmark(DATA)
    docs = [{k: d[k] for k in ("id", "text", "date", "valid_from", "valid_to") if d.get(k) is not None} for d in corpus]
    idx = TemporalIndex()
    idx.add(docs)
    return idx, docs, queries


@pytest.fixture(params=["qdrant", "qdrant_edge", pytest.param("pgvector", marks=pytest.mark.pg)])
def store(request: pytest.FixtureRequest, reference: Any) -> Iterator[Any]:
    idx, docs, _ = reference
    st = make_store(request.param, request, idx.embedder)
    st.add(docs, vectors=idx._snap.vectors)
    yield st


def test_each_store_ranks_the_time_questions_as_the_index(reference: Any, store: Any) -> None:
    idx, _, queries = reference
    kinds: set[str] = set()
    whole = conflict = event = 0
    for q in queries:
        ref = q.get("reference_date", q.get("reference_time"))
        want = idx.search(q["query"], 3, ref)
        got = store.search(q["query"], 3, ref)
        assert got.meta["scoring"] == "client"
        kinds.add(q["kind"])
        whole += 1
        assert list(got.ids) == list(want.ids), (q["query"], list(got.ids), list(want.ids))
        if "asks about version" in str(want.meta.get("topic_rule", "")):
            conflict += 1  # the version-conflict rule ran on the index
        notes = [n for h in want for n in h.notes]
        event += any("anchor event" in n for n in notes)
    assert kinds >= {"period", "current", "before", "after", "as_of", "timeless"} and whole == len(queries), kinds
    assert conflict >= 5 and event >= 1, (conflict, event)  # the cases the text stages decide are here


def test_an_anchor_is_dated_as_the_index_dates_it(reference: Any, store: Any) -> None:
    idx, _, queries = reference
    asked = 0
    for q in queries:
        ref = q.get("reference_date", q.get("reference_time"))
        if parse(q["query"], now=to_epoch(ref)).anchor is None:
            continue
        asked += 1
        want = idx.search(q["query"], 3, ref).meta["intent"]
        got = store.search(q["query"], 3, ref).meta["intent"]
        assert (got.mode, got.target) == (want.mode, want.target), q["query"]
    assert asked >= 5
    # scored by the engine alone an undated anchor turns time off (one engine query)
    plain = store.search("rate limits after the 2.0 release", 3, "2026-08-20", fallback="error").meta["intent"]
    assert plain.target is None and plain.mode == "specific"


def _corpus_only(query: str, ref: Any, texts: list[str]) -> bool:
    """The question's anchor, or an acronym the corpus spells out: read from every document."""
    if parse(query, now=to_epoch(ref)).anchor is not None:
        return True
    return any(acronym_expansion(a, texts) is not None for a in query_acronyms(query))


def test_each_store_puts_the_index_first_hit_first(reference: Any, store: Any) -> None:
    idx, docs, queries = reference
    texts = [d["text"] for d in docs]
    asked = 0
    for q in queries:
        ref = q.get("reference_date", q.get("reference_time"))
        if _corpus_only(q["query"], ref, texts):
            continue
        asked += 1
        want = idx.search(q["query"], 3, ref)
        got = store.search(q["query"], 3, ref)
        assert got.meta["scoring"] == "client"
        assert list(got.ids)[0] == list(want.ids)[0], (q["query"], list(got.ids), list(want.ids))
    assert asked >= 50  # most of the questions: periods, as-of dates, latest, timeless, versions


def test_every_question_is_at_most_two_requests_to_qdrant(reference: Any) -> None:
    """Each of the 72 questions, as a Qdrant server would receive it: the probe and the pool in
    one batched request; a question that needs the corpus first (an undated anchor, an
    acronym) one before it, its pool then carrying the vectors; otherwise the version cosine
    test's vectors, where it runs, in one ``retrieve``."""
    pytest.importorskip("qdrant_client")
    from counting import Counting
    from qdrant_client import QdrantClient

    from chronorank.stores import QdrantStore

    idx, docs, queries = reference
    client = Counting(QdrantClient(":memory:"))
    store = QdrantStore("time_semantics", client=client, embedder=idx.embedder)
    store.add(docs, vectors=idx._snap.vectors)
    store.search("rate limits", 3, "2026-08-20")  # the first search after a write reads the statistics
    seen: Counter[str] = Counter()
    for q in queries:
        ref = q.get("reference_date", q.get("reference_time"))
        client.calls.clear()
        got = store.search(q["query"], 3, ref)
        calls = dict(client.calls)
        assert sum(calls.values()) <= 2 and set(calls) <= {"query_batch_points", "retrieve"}, (q["query"], calls)
        assert list(got.ids) == list(idx.search(q["query"], 3, ref).ids), q["query"]
        seen[q["kind"]] += 1
        seen["prepared" if calls.get("query_batch_points") == 2 else "one batch"] += 1
        seen["vectors fetched"] += "retrieve" in calls
    assert seen["prepared"] >= 5 and seen["vectors fetched"] >= 1, seen
    assert {"period", "current", "before", "after", "as_of", "timeless"} <= set(seen), seen
