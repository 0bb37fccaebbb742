"""Retrievers over chronorank's own engines, through each framework's pipeline API.

Every framework (LangChain LCEL, a LlamaIndex query engine with MockLLM, a Haystack
Pipeline) over every engine (the embedded index, Qdrant local mode, a real PostgreSQL +
pgvector) returns exactly the engine's order on a fixed corpus; a filter keeps every result
inside its tenant, with lanes on or off, in the engine retrievers and the rerank adapters;
round-trips (LlamaIndex to_json, Haystack dumps/loads in a fresh process, LangChain's
documented refusal)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # tests never touch the network
pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")
pytest.importorskip("haystack")

from chronorank.errors import InvalidInput  # noqa: E402
from chronorank.filters import filter_mask  # noqa: E402
from chronorank.integrations._common import METADATA_KEYS, mongo_lane_filter, plan_lanes  # noqa: E402

STORES_DIR = Path(__file__).resolve().parents[1] / "stores"
NOW = "2025-06-01"
PROJECTS = ("flask", "click", "attrs")
QUERIES = [
    "what changed in the latest flask release",
    "flask release notes as of March 2023",
    "what changed in click in 2022",
    "how does the attrs cache work",
]


def corpus() -> list[dict[str, Any]]:
    """Three projects, six releases each, distinct texts; the other tenants' releases are
    newer, so a lane that dropped a filter would show them."""
    topics = ["the parser", "the cache", "the plugin loader", "the cli", "the docs", "the sync engine"]
    out = []
    for shift, p in enumerate(PROJECTS):
        for i, topic in enumerate(topics):
            out.append({
                "id": f"{p}@{i}", "text": f"{p} {i}.0 release notes: changed {topic}",
                "date": f"{2019 + i}-0{1 + 2 * shift}-10", "project": p, "major": i,
            })
    return out


sys.path.insert(0, str(STORES_DIR))
from store_cases import pg_fixture as pg  # noqa: E402,F401 - the embedded PostgreSQL fixture


@pytest.fixture(scope="module", params=["index", "qdrant", pytest.param("pgvector", marks=pytest.mark.pg)])
def engine(request: pytest.FixtureRequest) -> Any:
    from chronorank.index import HashingEmbedder

    emb = HashingEmbedder(64)
    if request.param == "index":
        from chronorank.index import TemporalIndex

        e: Any = TemporalIndex(emb)
    elif request.param == "qdrant":
        pytest.importorskip("qdrant_client")
        from chronorank.stores import QdrantStore

        e = QdrantStore("engine-retrievers", embedder=emb)
    else:
        from chronorank.stores import PgVectorStore

        e = PgVectorStore(request.getfixturevalue("pg").dsn, "engine_retrievers", embedder=emb)
        e.delete([d["id"] for d in corpus()])
    e.add(corpus())
    e.kind = request.param
    yield e
    if request.param == "pgvector":
        e.close()


def engine_ids(engine: Any, query: str, k: int = 4, **kw: Any) -> list[str]:
    return list(engine.search(query, k, NOW, **kw).ids)


def lane_options(engine: Any) -> list[dict[str, Any]]:
    """search_kwargs that switch the engine's lanes on (default) or off."""
    if engine.kind == "index":
        return [{}, {"ann": True}]
    from chronorank.stores import Lanes

    return [{}, {"lanes": Lanes.plain(4)}]


# ---------------------------------------------------------------------- order, per framework


def test_langchain_chain_returns_the_engine_order(engine: Any) -> None:
    from langchain_core.runnables import RunnableLambda

    from chronorank.integrations.langchain import ChronorankRetriever

    retriever = ChronorankRetriever(engine=engine, k=4, now=NOW)
    chain = retriever | RunnableLambda(lambda docs: [d.id for d in docs])
    expected = [engine_ids(engine, q) for q in QUERIES]
    assert [chain.invoke(q) for q in QUERIES] == expected
    assert chain.batch(QUERIES) == expected
    assert asyncio.run(chain.ainvoke(QUERIES[0])) == expected[0]
    assert expected[0][0] == "flask@5"  # the newest flask release; attrs and click score lower
    doc = retriever.invoke(QUERIES[0])[0]
    assert set(METADATA_KEYS) <= set(doc.metadata)
    assert doc.metadata["relevance_score"] == doc.metadata["chronorank_score"]
    assert doc.metadata["project"] == "flask" and doc.metadata["date"].startswith("2024")
    assert doc.page_content.startswith("flask 5.0")
    # LangChain's k conventions: search_kwargs k, and invoke(k=...)
    assert len(ChronorankRetriever(engine=engine, search_kwargs={"k": 2}, now=NOW).invoke(QUERIES[0])) == 2
    assert len(retriever.invoke(QUERIES[0], k=6)) == 6


def test_llama_index_query_engine_returns_the_engine_order(engine: Any) -> None:
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine

    from chronorank.integrations.llama_index import ChronorankRetriever

    qe = RetrieverQueryEngine.from_args(ChronorankRetriever(engine, similarity_top_k=4, now=NOW), llm=MockLLM())
    for q in QUERIES:
        resp = qe.query(q)
        assert [n.node.node_id for n in resp.source_nodes] == engine_ids(engine, q)
    resp = asyncio.run(qe.aquery(QUERIES[0]))
    assert [n.node.node_id for n in resp.source_nodes] == engine_ids(engine, QUERIES[0])
    node = resp.source_nodes[0]
    assert node.score == node.node.metadata["chronorank_score"]
    assert set(METADATA_KEYS) <= set(node.node.metadata)
    from llama_index.core.schema import MetadataMode

    assert "chronorank_" not in node.node.get_content(metadata_mode=MetadataMode.LLM)


def test_haystack_pipeline_returns_the_engine_order(engine: Any) -> None:
    from haystack import Pipeline

    from chronorank.integrations.haystack import ChronorankRetriever

    pipe = Pipeline()
    pipe.add_component("retriever", ChronorankRetriever(engine=engine, top_k=4, now=NOW))
    for q in QUERIES:
        docs = pipe.run({"retriever": {"query": q}})["retriever"]["documents"]
        assert [d.id for d in docs] == engine_ids(engine, q)
        assert all(d.score == d.meta["chronorank_score"] for d in docs)


# ---------------------------------------------------------------------- tenant isolation


def test_engine_retrievers_never_leave_the_tenant(engine: Any) -> None:
    from haystack import Pipeline
    from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

    from chronorank.integrations import haystack as hs
    from chronorank.integrations import langchain as lc
    from chronorank.integrations import llama_index as li

    for opts in lane_options(engine):
        lc_r = lc.ChronorankRetriever(engine=engine, k=8, now=NOW, filter={"project": "click"}, search_kwargs=opts)
        li_r = li.ChronorankRetriever(engine, similarity_top_k=8, now=NOW, search_kwargs=opts,
                                      filters=MetadataFilters(filters=[MetadataFilter(key="project", value="click")]))
        pipe = Pipeline()
        pipe.add_component("r", hs.ChronorankRetriever(
            engine=engine, top_k=8, now=NOW, search_kwargs=opts,
            filters={"field": "meta.project", "operator": "==", "value": "click"}))
        for q in QUERIES:
            got = [
                [d.metadata["project"] for d in lc_r.invoke(q)],
                [n.node.metadata["project"] for n in li_r.retrieve(q)],
                [d.meta["project"] for d in pipe.run({"r": {"query": q}})["r"]["documents"]],
            ]
            for projects in got:
                assert projects and set(projects) == {"click"}, (q, opts, got)
            # a call's filter narrows the retriever's, never widens it
            narrow = lc_r.invoke(q, filter={"major": {"$gte": 3}})
            assert {d.metadata["project"] for d in narrow} == {"click"}
            assert all(d.metadata["major"] >= 3 for d in narrow)
            wider = lc_r.invoke(q, filter={"project": "flask"})
            assert wider == []  # click AND flask: nothing
            haystack_or = pipe.run({"r": {"query": q, "filters": {"operator": "OR", "conditions": [
                {"field": "meta.major", "operator": "<", "value": 2},
                {"field": "meta.major", "operator": ">", "value": 4}]}}})["r"]["documents"]
            assert {d.meta["project"] for d in haystack_or} == {"click"}
            assert all(d.meta["major"] in (0, 1, 5) for d in haystack_or)


def test_langchain_rerank_adapter_ands_the_user_filter_with_every_lane() -> None:
    """The tenant leak: the lanes used to replace search_kwargs['filter']."""
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    from chronorank.integrations.langchain import ChronorankEmbeddings, TemporalRetriever
    from chronorank.timeparse import to_epoch

    docs = corpus()
    store = InMemoryVectorStore(ChronorankEmbeddings("hashing-64"))
    store.add_documents([
        Document(page_content=d["text"], id=d["id"], metadata={"date": to_epoch(d["date"]), "project": d["project"]})
        for d in docs
    ])

    def flask_only(doc: Document) -> bool:
        return bool(doc.metadata["project"] == "flask")

    for lanes in ((30.0, 180.0, 2000.0), ()):
        r = TemporalRetriever.from_vectorstore(store, k=6, fetch_k=6, now=NOW, lanes=lanes,
                                               search_kwargs={"filter": flask_only})
        for q in QUERIES:
            out = r.invoke(q)
            assert out and {d.metadata["project"] for d in out} == {"flask"}, (q, lanes)
        # lanes really ran (each with the user's filter) for the temporal queries
        assert (sum(len(r.lane_plan(q)) for q in QUERIES) > 0) == bool(lanes)


def test_mongo_lane_filters_keep_the_user_filter() -> None:
    """For the stores that take Mongo-style dicts (Chroma, PGVector, ...), the combined filter
    evaluated with the same operators holds only the tenant's documents in each lane."""
    from chronorank.integrations.langchain import _and_store_filter
    from chronorank.intent import parse
    from chronorank.timeparse import resolve_now, to_epoch

    metas = [{"date": to_epoch(d["date"]), "project": d["project"]} for d in corpus()]
    now = float(resolve_now(NOW))
    for q in QUERIES:
        for lane in plan_lanes(parse(q, now=now), now, (30.0, 180.0, 2000.0)):
            combined = _and_store_filter({"project": "attrs"}, mongo_lane_filter("date", lane))
            kept = filter_mask(combined, metas)
            assert {metas[i]["project"] for i in kept.nonzero()[0]} <= {"attrs"}


def test_other_rerank_adapters_keep_the_inner_filter() -> None:
    """LlamaIndex and Haystack rerank what their own retriever fetched (no lanes): the inner
    retriever's filter holds, and chronorank only reorders inside it."""
    from haystack import Document as HDoc
    from haystack import Pipeline
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

    from chronorank.integrations.haystack import TemporalRanker
    from chronorank.integrations.llama_index import TemporalPostprocessor
    from chronorank.timeparse import resolve_now

    docs = corpus()
    hstore = InMemoryDocumentStore()
    hstore.write_documents([HDoc(id=d["id"], content=d["text"], meta={"date": d["date"], "project": d["project"]})
                            for d in docs])
    pipe = Pipeline()
    pipe.add_component("bm25", InMemoryBM25Retriever(hstore, top_k=10))
    pipe.add_component("ranker", TemporalRanker(top_k=5))
    pipe.connect("bm25.documents", "ranker.documents")
    now = float(resolve_now(NOW))
    flt = {"field": "meta.project", "operator": "==", "value": "attrs"}
    for q in QUERIES:
        out = pipe.run({"bm25": {"query": q, "filters": flt}, "ranker": {"query": q, "now": now}})
        assert {d.meta["project"] for d in out["ranker"]["documents"]} == {"attrs"}

    from llama_index.core.embeddings import MockEmbedding

    index = VectorStoreIndex([TextNode(id_=d["id"], text=d["text"], metadata={"date": d["date"], "project": d["project"]})
                              for d in docs], embed_model=MockEmbedding(embed_dim=8))
    inner = index.as_retriever(similarity_top_k=10, filters=MetadataFilters(
        filters=[MetadataFilter(key="project", value="attrs")]))
    post = TemporalPostprocessor.build(top_n=5, now=now)
    for q in QUERIES:
        nodes = post.postprocess_nodes(inner.retrieve(q), query_str=q)
        assert nodes and {n.node.metadata["project"] for n in nodes} == {"attrs"}


# ---------------------------------------------------------------------- conventions


def test_langchain_rerank_conventions() -> None:
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore, VectorStore

    from chronorank import TemporalReranker
    from chronorank.integrations.langchain import ChronorankEmbeddings, TemporalRetriever

    emb = ChronorankEmbeddings("hashing-64")
    inner = InMemoryVectorStore(emb)
    inner.add_documents([Document(page_content=d["text"], id=d["id"], metadata={"published": d["date"]})
                         for d in corpus()])
    # search_kwargs={"k": n} sets how many come back (was: TypeError, k given twice)
    r = TemporalRetriever.from_vectorstore(inner, search_kwargs={"k": 3}, now=NOW, lanes=())
    assert len(r.invoke(QUERIES[0])) == 3
    # a passed reranker's date_field is honoured (was: every age None)
    r = TemporalRetriever.from_vectorstore(inner, reranker=TemporalReranker(date_field="published"), now=NOW, lanes=())
    out = r.invoke(QUERIES[0])
    assert all(d.metadata["chronorank_age_days"] is not None for d in out)
    assert out[0].metadata["relevance_score"] == out[0].metadata["chronorank_score"]
    r = TemporalRetriever(vectorstore=inner, reranker=TemporalReranker(date_field="published"), now=NOW, lanes=())
    assert r.date_field == "published"

    class OtherStore(VectorStore):
        """A store chronorank knows no filter syntax for (as langchain-qdrant's)."""

        def __init__(self, base: InMemoryVectorStore) -> None:
            self.base = base

        def add_texts(self, texts: Any, metadatas: Any = None, **kwargs: Any) -> list[str]:
            return self.base.add_texts(texts, metadatas, **kwargs)

        @classmethod
        def from_texts(cls, texts: Any, embedding: Any, metadatas: Any = None, **kwargs: Any) -> OtherStore:
            return cls(InMemoryVectorStore.from_texts(texts, embedding, metadatas))

        def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
            return self.base.similarity_search(query, k, **kwargs)

        def similarity_search_with_score(self, query: str, k: int = 4, **kwargs: Any) -> list[Any]:
            return self.base.similarity_search_with_score(query, k, **kwargs)

    r = TemporalRetriever.from_vectorstore(OtherStore(inner), date_field="published", now=NOW)
    with pytest.warns(RuntimeWarning, match="no time lanes"):
        r.invoke(QUERIES[0])
    # a custom lane filter and a user filter cannot be ANDed by chronorank: refused, not dropped
    r = TemporalRetriever.from_vectorstore(inner, date_field="published", now=NOW,
                                           lane_filter=lambda field, lane: None,
                                           search_kwargs={"filter": lambda d: True})
    with pytest.raises(InvalidInput, match="cannot AND"):
        r.invoke(QUERIES[0])


def test_langchain_embeddings_match_the_embedder() -> None:
    import numpy as np

    from chronorank.index import HashingEmbedder
    from chronorank.integrations.langchain import ChronorankEmbeddings

    emb = ChronorankEmbeddings("hashing-64")
    texts = ["flask 1.0 release notes", "click cache"]
    assert np.allclose(emb.embed_documents(texts), HashingEmbedder(64).embed(texts))
    assert emb.embed_query(texts[0]) == emb.embed_documents(texts[:1])[0]
    assert emb.embed_documents([]) == []
    with pytest.raises(InvalidInput):
        ChronorankEmbeddings(None)


# ---------------------------------------------------------------------- round trips


def test_llama_index_postprocessor_to_json_round_trip() -> None:
    from llama_index.core.schema import NodeWithScore, TextNode

    from chronorank import TemporalReranker
    from chronorank.integrations.llama_index import TemporalPostprocessor

    post = TemporalPostprocessor(reranker=TemporalReranker(kernel="weibull(half_life_days=90, shape=2)",
                                                           date_field="published"), top_n=3, now=NOW)
    data = json.loads(post.to_json())
    assert data["reranker"]["kernel"] == "weibull(half_life_days=90, shape=2)"
    back = TemporalPostprocessor.from_json(post.to_json())
    assert back.date_field == "published" and back.top_n == 3
    nodes = [NodeWithScore(node=TextNode(id_=d["id"], text=d["text"], metadata={"published": d["date"]}), score=0.5)
             for d in corpus()]
    q = QUERIES[0]
    assert [n.node.node_id for n in back.postprocess_nodes(nodes, query_str=q)] == [
        n.node.node_id for n in post.postprocess_nodes(nodes, query_str=q)]
    with pytest.raises(ValueError, match="cannot be written to JSON"):  # pydantic wraps InvalidInput
        TemporalPostprocessor(reranker=TemporalReranker(gate=lambda q: 0.5)).to_json()


def test_haystack_pipeline_dumps_loads_in_a_fresh_process(tmp_path: Path) -> None:
    """Default settings: no allowed_modules, and chronorank not imported before loads()."""
    from haystack import Pipeline

    from chronorank.index import HashingEmbedder, TemporalIndex
    from chronorank.integrations.haystack import ChronorankRetriever, TemporalRanker

    idx = TemporalIndex(HashingEmbedder(64))
    idx.add(corpus())
    idx.save(tmp_path / "docs.idx")
    cfg = {"kind": "index", "path": str(tmp_path / "docs.idx")}
    pipe = Pipeline()
    pipe.add_component("retriever", ChronorankRetriever(engine_config=cfg, top_k=5, now=NOW,
                                                        filters={"project": "click"}))
    pipe.add_component("ranker", TemporalRanker(top_k=3))
    pipe.connect("retriever.documents", "ranker.documents")
    (tmp_path / "pipe.yaml").write_text(pipe.dumps())
    expected = [d.id for d in pipe.run({"retriever": {"query": QUERIES[0]},
                                        "ranker": {"query": QUERIES[0], "now": NOW}})["ranker"]["documents"]]
    script = textwrap.dedent(f"""
        import json, sys
        from haystack import Pipeline
        pipe = Pipeline.loads(open({str(tmp_path / "pipe.yaml")!r}).read())
        out = pipe.run({{"retriever": {{"query": {QUERIES[0]!r}}}, "ranker": {{"query": {QUERIES[0]!r}, "now": {NOW!r}}}}})
        print(json.dumps([d.id for d in out["ranker"]["documents"]]))
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "HAYSTACK_TELEMETRY_ENABLED": "False"})
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout.strip().splitlines()[-1]) == expected
    assert expected and all(i.startswith("click@") for i in expected)
    # a retriever over a live engine serialises; the loaded one says how to give it an engine
    live = Pipeline()
    live.add_component("retriever", ChronorankRetriever(engine=idx, top_k=5))
    loaded = Pipeline.loads(live.dumps())
    with pytest.raises(InvalidInput, match=r"live TemporalIndex.*engine_config"):
        loaded.run({"retriever": {"query": "what changed in click", "now": NOW}})


def test_haystack_pipeline_loads_without_a_reachable_database() -> None:
    """The engine opens in warm_up, not in __init__: loading needs no database."""
    from haystack import Pipeline

    from chronorank.integrations.haystack import ChronorankRetriever

    cfg = {"kind": "pgvector", "table": "docs", "dsn": "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2",
           "embedder": "hashing"}
    pipe = Pipeline()
    pipe.add_component("retriever", ChronorankRetriever(engine_config=cfg, top_k=5))
    loaded = Pipeline.loads(pipe.dumps())
    retriever = loaded.get_component("retriever")
    assert retriever.engine is None and retriever.engine_config == cfg
    with pytest.raises(Exception, match="127.0.0.1|connect|refused"):  # the database, at warm_up
        loaded.warm_up()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.filterwarnings("ignore:Failed to obtain server version")
@pytest.mark.parametrize("kind", ["index", "qdrant", "pgvector"])
def test_haystack_dumps_loads_of_every_component_with_no_database(kind: str, tmp_path: Path) -> None:
    """Every chronorank component in one pipeline, its engine unreachable (a closed port, a
    missing index): dumps, loads and dumps again without opening anything; the engine's error
    comes at warm_up, clear and without the password."""
    from haystack import Pipeline

    from chronorank.errors import ChronorankError
    from chronorank.integrations.haystack import ChronorankRetriever, TemporalRanker

    if kind == "qdrant":
        pytest.importorskip("qdrant_client")
    if kind == "pgvector":
        pytest.importorskip("psycopg")
    port = _free_port()
    cfg = {
        "index": {"kind": "index", "path": str(tmp_path / "missing.idx"), "embedder": "hashing"},
        "qdrant": {"kind": "qdrant", "collection": "docs", "url": f"http://reader:pw-9f2c@127.0.0.1:{port}",
                   "timeout": 2, "embedder": "hashing"},
        "pgvector": {"kind": "pgvector", "table": "docs", "embedder": "hashing",
                     "dsn": f"postgresql://reader:pw-9f2c@127.0.0.1:{port}/none?connect_timeout=2"},
    }[kind]
    pipe = Pipeline()
    pipe.add_component("retriever", ChronorankRetriever(engine_config=cfg, top_k=5, now=NOW,
                                                        filters={"field": "meta.project", "operator": "==", "value": "click"}))
    pipe.add_component("ranker", TemporalRanker(top_k=3, filters={"major": {"$gte": 1}}))
    pipe.connect("retriever.documents", "ranker.documents")
    text = pipe.dumps()
    loaded = Pipeline.loads(text)
    assert loaded.dumps() == text
    retriever, ranker = loaded.get_component("retriever"), loaded.get_component("ranker")
    assert retriever.engine is None and retriever.engine_config == cfg
    assert ranker.to_dict() == pipe.get_component("ranker").to_dict()
    with pytest.raises(ChronorankError) as err:  # InvalidInput for the missing index is one too
        loaded.warm_up()
    assert ("missing.idx" if kind == "index" else "127.0.0.1") in str(err.value) or "unreachable" in str(err.value)
    assert "pw-9f2c" not in str(err.value)


def test_haystack_dumps_a_retriever_over_any_live_engine(engine: Any) -> None:
    """A retriever built around a live engine (index, Qdrant, PostgreSQL) serialises; the loaded
    one names what to give it."""
    from haystack import Pipeline

    from chronorank.integrations.haystack import ChronorankRetriever

    pipe = Pipeline()
    pipe.add_component("retriever", ChronorankRetriever(engine=engine, top_k=3, now=NOW))
    text = pipe.dumps()
    assert type(engine).__name__ in text
    loaded = Pipeline.loads(text)
    assert loaded.dumps() == text
    with pytest.raises(InvalidInput, match=rf"live {type(engine).__name__}.*engine_config"):
        loaded.run({"retriever": {"query": QUERIES[0]}})


def test_langchain_serialisation_is_refused_with_a_reason() -> None:
    from langchain_core.load import dumps

    from chronorank.index import HashingEmbedder, TemporalIndex
    from chronorank.integrations.langchain import ChronorankRetriever

    data = json.loads(dumps(ChronorankRetriever(engine=TemporalIndex(HashingEmbedder(8)))))
    assert data["type"] == "not_implemented"  # the documented reason: a live engine has no JSON form
    assert "live engine" in (ChronorankRetriever.__doc__ or "")


def test_haystack_pipelines_saved_under_the_old_module_path_still_load() -> None:
    from haystack import Pipeline

    old = ("components:\n  r:\n    init_parameters: {top_k: 3}\n"
           "    type: chronorank.integrations.haystack.TemporalRanker\nconnections: []\n")
    pipe = Pipeline.loads(old, allowed_modules=["chronorank"])  # the old path needed the allowlist
    assert pipe.get_component("r").top_k == 3
    assert "haystack_integrations.components.chronorank.TemporalRanker" in pipe.dumps()
