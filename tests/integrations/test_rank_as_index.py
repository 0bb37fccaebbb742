"""One ranking, every adapter (issue 30): over the index's own candidates, every rerank adapter
ranks the 72 time questions of ``benchmarks/data/time_semantics`` (periods, as-of dates,
before / after a version or an event, latest, timeless, exact versions) as the index does.

The candidates are the index's whole corpus scored with time off (``strength=0``: the fused
similarity as each candidate's score), handed to each framework as its own documents. The
adapters run the ranking's stages (:mod:`chronorank.ranking`) over them, through
``TemporalReranker``. What they cannot see -- the index's dense and lead signals (the topic
cut's floors), document vectors (the version cosine test), its snapshot (the version-conflict
rule, the anchor's event page) -- can move pages below the first; the first hit is the index's
on every question, and the whole lists are the same for every adapter.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

from chronorank import TemporalReranker  # noqa: E402
from chronorank.eval.datasets import load_benchmark  # noqa: E402
from chronorank.index import TemporalIndex  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "time_semantics"
FIELDS = ("date", "valid_from", "valid_to")


@pytest.fixture(scope="module")
def fixture() -> tuple[TemporalIndex, dict[str, dict[str, Any]], list[dict[str, Any]]]:
    corpus, queries = load_benchmark(DATA)
    docs = [{k: d[k] for k in ("id", "text", *FIELDS) if d.get(k) is not None} for d in corpus]
    idx = TemporalIndex()
    idx.add(docs)
    return idx, {d["id"]: d for d in docs}, queries


def _ref(q: dict[str, Any]) -> Any:
    return q.get("reference_date", q.get("reference_time"))


def _pool(idx: TemporalIndex, docs: dict[str, dict[str, Any]], q: dict[str, Any]) -> list[tuple[str, float, dict[str, Any]]]:
    hits = idx.search(q["query"], len(idx), _ref(q), strength=0)
    return [(h.id, float(h.similarity), {k: docs[h.id][k] for k in FIELDS if k in docs[h.id]}) for h in hits]


def _reranker(pool: list[tuple[str, float, dict[str, Any]]], docs: dict[str, Any], query: str, ref: Any) -> list[str]:
    cands = [{"id": i, "score": s, "text": docs[i]["text"], **m} for i, s, m in pool]
    return list(TemporalReranker().rerank(query, cands, now=ref).ranked_ids)


def _langchain(pool: list[tuple[str, float, dict[str, Any]]], docs: dict[str, Any], query: str, ref: Any) -> list[str]:
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document

    from chronorank.integrations.langchain import TemporalCompressor

    lc = [Document(page_content=docs[i]["text"], id=i, metadata={**m, "relevance_score": s}) for i, s, m in pool]
    return [d.id for d in TemporalCompressor.build(now=ref, top_k=len(pool)).compress_documents(lc, query)]


def _llama_index(pool: list[tuple[str, float, dict[str, Any]]], docs: dict[str, Any], query: str, ref: Any) -> list[str]:
    pytest.importorskip("llama_index.core")
    from llama_index.core.schema import NodeWithScore, TextNode

    from chronorank.integrations.llama_index import TemporalPostprocessor

    nodes = [NodeWithScore(node=TextNode(id_=i, text=docs[i]["text"], metadata=m), score=s) for i, s, m in pool]
    post = TemporalPostprocessor.build(top_n=len(pool), now=ref)
    return [n.node.node_id for n in post.postprocess_nodes(nodes, query_str=query)]


def _haystack(pool: list[tuple[str, float, dict[str, Any]]], docs: dict[str, Any], query: str, ref: Any) -> list[str]:
    pytest.importorskip("haystack")
    from haystack import Document

    from chronorank.integrations.haystack import TemporalRanker

    hd = [Document(id=i, content=docs[i]["text"], meta=m, score=s) for i, s, m in pool]
    return [d.id for d in TemporalRanker(top_k=len(pool)).run(query=query, documents=hd, now=ref)["documents"]]


ADAPTERS = {"langchain": _langchain, "llama_index": _llama_index, "haystack": _haystack}


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_every_adapter_ranks_every_time_question_as_the_index(fixture: Any, adapter: str) -> None:
    idx, docs, queries = fixture
    kinds = set()
    for q in queries:
        ref = _ref(q)
        pool = _pool(idx, docs, q)
        want = list(idx.search(q["query"], 10, ref).ids)
        core = _reranker(pool, docs, q["query"], ref)
        got = ADAPTERS[adapter](pool, docs, q["query"], ref)
        # one path: the framework's API ranks as TemporalReranker does, the whole list
        assert got == core, q["query"]
        # the index's first hit, on every kind of time question
        assert got[0] == want[0], (q["query"], got[:3], want[:3])
        kinds.add(idx.search(q["query"], 1, ref).meta["intent"].mode)
    assert kinds >= {"recent", "as_of", "range", "timeless", "specific"}


def test_the_reranker_runs_the_index_stages(fixture: Any) -> None:
    """The stages the reranker ran are named, and the topic and version stages move pages: a
    'latest' question flattens the topical cluster and ranks on-topic pages first, a
    timeless question in the present reads version chains from the pages' titles."""
    idx, docs, queries = fixture
    seen: set[str] = set()
    for q in queries:
        pool = _pool(idx, docs, q)
        cands = [{"id": i, "score": s, "text": docs[i]["text"], **m} for i, s, m in pool]
        seen.update(TemporalReranker().rerank(q["query"], cands, now=_ref(q)).meta["stages"])
    assert {"shape", "flatten", "time", "topic first", "versions"} <= seen
