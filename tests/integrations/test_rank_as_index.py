"""One ranking, every adapter (issue 30): over the index's own candidates, every rerank adapter
ranks the 72 time questions of ``benchmarks/data/time_semantics`` (periods, as-of dates,
before / after a version or an event, latest, timeless, exact versions) as the index does.

The candidates are the index's whole corpus scored with time off (``strength=0``: the fused
similarity as each candidate's score), handed to each framework as its own documents -- with
the index's document vectors as their embeddings where the framework's document holds one
(LlamaIndex ``TextNode.embedding``, Haystack ``Document.embedding``; a LangChain ``Document``
has none). The adapters run :func:`chronorank.ranking.rank`, the index's own pipeline, through
``TemporalReranker``; what only the index knows and a framework's documents cannot carry
stays apart, and the questions it moves are named here (``INHERENT``) with the reason:

- the fused similarity's parts (dense cosine, lead BM25) give the topic cut its floors: a
  reranker has one score per candidate;
- a version anchor is dated inside the question's subject by BM25 over the whole corpus
  ("rate limit before API 2.0": the rate-limit pages' 2.0, not the first page naming 2.0);
- without embeddings (LangChain) the versions stage has no cosine test: a version of the first
  hit that the topic cut left out is not kept with it;
- the pool handed to the frameworks is what the index returns: for a question asked at a past
  date the index flattens the topical cluster relative to its best match among every document,
  the later ones it then drops included.

Given the fused similarity's parts and the vectors (``rerank_columns(signals=, vectors=)``),
``TemporalReranker`` ranks the top 10 as the index on every question but the anchored ones and
that pool's (``test_the_reranker_given_the_index_columns_ranks_as_the_index``).

Everywhere else the top 10 is the index's, and the whole lists are the same for every adapter.
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
    vectors = idx.embedder.embed([d["text"] for d in docs])
    idx.add(docs, vectors)
    return idx, {d["id"]: {**d, "vector": v.tolist()} for d, v in zip(docs, vectors)}, queries


def _ref(q: dict[str, Any]) -> Any:
    return q.get("reference_date", q.get("reference_time"))


def _pool(idx: TemporalIndex, docs: dict[str, dict[str, Any]], q: dict[str, Any]) -> list[tuple[str, float, dict[str, Any]]]:
    hits = idx.search(q["query"], len(idx), _ref(q), strength=0)
    return [(h.id, float(h.similarity), {k: docs[h.id][k] for k in FIELDS if k in docs[h.id]}) for h in hits]


def test_the_reranker_given_the_index_columns_ranks_as_the_index(fixture: Any) -> None:
    """``TemporalReranker`` given what the index scored each document with -- the fused
    similarity, the signals it was fused from (``Ranking.signals``) and the document vectors --
    ranks the top 10 as the index on every question but those whose anchor the index dates by
    BM25 over its corpus (``ANCHORED``) and the one it flattens over documents it then drops
    (``POOL``): one pipeline, ``chronorank.ranking.rank``."""
    idx, docs, queries = fixture
    differ = set()
    for q in queries:
        ref = _ref(q)
        hits = idx.search(q["query"], len(idx), ref, strength=0)
        ids = list(hits.ids)
        columns = {
            "scores": hits.similarity, "ids": ids, "payloads": [docs[i] for i in ids],
            **{k: [docs[i].get(k) for i in ids] for k in FIELDS}, "times": [docs[i].get("date") for i in ids],
            "vectors": [docs[i]["vector"] for i in ids], "signals": hits.signals,
        }
        got = list(TemporalReranker().rerank(q["query"], columns, now=ref).ranked_ids)[:K]
        if got != list(idx.search(q["query"], K, ref).ids):
            differ.add(q["qid"])
    # ts-48's anchor ("API 2.0") is dated by the page whose lead names that version, which the
    # reranker also finds among its candidates once it has the index's signals
    want = {*ANCHORED, *POOL} - {"ts-48"}
    assert differ == want, sorted(differ ^ want)


def _reranker(
    pool: list[tuple[str, float, dict[str, Any]]], docs: dict[str, Any], query: str, ref: Any, vectors: bool = True,
) -> list[str]:
    cands = [{"id": i, "score": s, "text": docs[i]["text"], **m} for i, s, m in pool]
    columns = {"scores": [c["score"] for c in cands], "times": [c.get("date") for c in cands],
               "ids": [c["id"] for c in cands], "payloads": cands,
               "valid_from": [c.get("valid_from") for c in cands], "valid_to": [c.get("valid_to") for c in cands],
               "vectors": [docs[i]["vector"] for i, _, _ in pool] if vectors else None}
    return list(TemporalReranker().rerank(query, columns, now=ref).ranked_ids)


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

    nodes = [NodeWithScore(node=TextNode(id_=i, text=docs[i]["text"], metadata=m, embedding=docs[i]["vector"]), score=s)
             for i, s, m in pool]
    post = TemporalPostprocessor.build(top_n=len(pool), now=ref)
    return [n.node.node_id for n in post.postprocess_nodes(nodes, query_str=query)]


def _haystack(pool: list[tuple[str, float, dict[str, Any]]], docs: dict[str, Any], query: str, ref: Any) -> list[str]:
    pytest.importorskip("haystack")
    from haystack import Document

    from chronorank.integrations.haystack import TemporalRanker

    hd = [Document(id=i, content=docs[i]["text"], meta=m, score=s, embedding=docs[i]["vector"]) for i, s, m in pool]
    return [d.id for d in TemporalRanker(top_k=len(pool)).run(query=query, documents=hd, now=ref)["documents"]]


ADAPTERS = {"langchain": _langchain, "llama_index": _llama_index, "haystack": _haystack}
#: adapters whose framework documents carry an embedding
EMBEDS = {"llama_index", "haystack"}
K = 10
#: the questions whose top 10 differs from the index's, and why (the module docstring)
ANCHORED = {  # the anchor dated inside the question's subject by BM25 over the corpus
    "ts-47": "rate limits after the 2.0 release",
    "ts-48": "rate limit before API 2.0",
}
FLOORS = {  # the topic cut's floors: the dense cosine and lead BM25 behind the fused score
    "ts-22": "how much was the pro plan as of 2019",
    "ts-27": "minimum number of seats for the enterprise plan",
    "ts-28": "how much was the pro plan in 2025",
    "ts-32": "what uptime did you promise in 2023",
    "ts-41": "how did authentication work before the v2 change",
    "ts-49": "how did login work before September 2024",
}
POOL = {  # asked at a past date: the index flattens the topical cluster relative to its best match among
    # every document, the later ones its time rule then drops too; the pool it returns holds the rest
    "ts-71": "what is the current price of the pro plan",
}
NO_EMBEDDINGS = {  # also differ without the documents' embeddings (the versions stage's cosine test)
    "ts-21": "pro plan price as of January 2024",
    "ts-65": "does SSO support OpenID Connect",
    "ts-66": "what is new in version 4.0: the 3.0 release notes are a version the topic cut left out",
}
INHERENT = {**ANCHORED, **FLOORS, **POOL}


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_every_adapter_ranks_every_time_question_as_the_index(fixture: Any, adapter: str) -> None:
    idx, docs, queries = fixture
    kinds = set()
    apart = INHERENT if adapter in EMBEDS else {**INHERENT, **NO_EMBEDDINGS}
    differ = set()
    for q in queries:
        ref = _ref(q)
        pool = _pool(idx, docs, q)
        want = list(idx.search(q["query"], K, ref).ids)
        core = _reranker(pool, docs, q["query"], ref, vectors=adapter in EMBEDS)
        got = ADAPTERS[adapter](pool, docs, q["query"], ref)
        # one path: the framework's API ranks as TemporalReranker does, the whole list
        assert got == core, q["query"]
        # the index's first hit on every kind of time question; its top 10 where the adapter
        # has the same inputs
        assert got[0] == want[0], (q["query"], got[:3], want[:3])
        if got[:K] != want:
            differ.add(q["qid"])
        kinds.add(idx.search(q["query"], 1, ref).meta["intent"].mode)
    assert kinds >= {"recent", "as_of", "range", "timeless", "specific"}
    # the rest is the index's top 10; each named difference is still there (a change that closes
    # one moves it out of the list)
    assert differ == set(apart), (sorted(differ), sorted(differ ^ set(apart)))


def test_the_reranker_runs_the_index_stages(fixture: Any) -> None:
    """The stages the reranker ran are named, and the topic and version stages move pages: a
    'latest' question flattens the topical cluster and ranks on-topic pages first, a
    timeless question in the present reads version chains from the pages' titles, a before /
    after question lifts the first hit's version across the boundary and a question naming a
    version moves the pages naming only others below their tier."""
    idx, docs, queries = fixture
    seen: set[str] = set()
    for q in queries:
        pool = _pool(idx, docs, q)
        cands = [{"id": i, "score": s, "text": docs[i]["text"], **m} for i, s, m in pool]
        seen.update(TemporalReranker().rerank(q["query"], cands, now=_ref(q)).meta["stages"])
    assert {"shape", "flatten", "title chains", "time", "topic first", "versions", "across the boundary",
            "version conflict"} <= seen
