"""One ranking, every store (issue 30): with the index's rules run client-side over its pool
(``fallback='client'``, :func:`chronorank.ranking.rank`), each store puts the index's first hit
first on the 72 time questions of ``benchmarks/data/time_semantics`` (MiniLM vectors, the
same documents), except where the question needs what only the index's corpus holds: an
anchor ("after the 2.0 release") dated by BM25 over every document, or an acronym the corpus
spells out ("SLA" -> "service level agreement", added to the query). A store has neither, and
the test asks it for no more than that.
"""

from __future__ import annotations

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
CLIENT_RULES = {"fallback": "client", "topical_margin": 0.5, "relative_recency": 0.85}


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
        got = store.search(q["query"], 3, ref, **CLIENT_RULES)
        assert got.meta["scoring"] == "client"
        assert list(got.ids)[0] == list(want.ids)[0], (q["query"], list(got.ids), list(want.ids))
    assert asked >= 50  # most of the questions: periods, as-of dates, latest, timeless, versions
