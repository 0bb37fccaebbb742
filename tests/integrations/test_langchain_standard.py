"""LangChain's own standard tests (the ``langchain-tests`` package) for chronorank's retrievers
and embeddings: ``RetrieversIntegrationTests`` for ``TemporalRetriever`` (over LangChain's
``InMemoryVectorStore``) and ``ChronorankRetriever`` (over the embedded index, Qdrant local mode,
Qdrant edge and a real PostgreSQL + pgvector), ``EmbeddingsUnitTests`` and
``EmbeddingsIntegrationTests`` for ``ChronorankEmbeddings`` (the hashing embedder and the bundled
MiniLM). The standard classes forbid overriding their tests; every test below is theirs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_tests")
pytest.importorskip("pytest_asyncio")  # the standard async tests run under asyncio_mode = "auto"

from itest_corpus import CORPUS, LATEST, NOW_S, hashing_embed  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402
from langchain_tests.integration_tests import (  # noqa: E402
    EmbeddingsIntegrationTests,
    RetrieversIntegrationTests,
)
from langchain_tests.unit_tests import EmbeddingsUnitTests  # noqa: E402

from chronorank import TemporalReranker  # noqa: E402
from chronorank.integrations.langchain import (  # noqa: E402
    ChronorankEmbeddings,
    ChronorankRetriever,
    TemporalRetriever,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stores"))
from store_cases import pg_fixture as pg  # noqa: E402,F401 - the embedded PostgreSQL fixture

ENGINE_NOW = "2026-08-20"


class _Hashing(Embeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [hashing_embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return hashing_embed(text)


def _vectorstore() -> InMemoryVectorStore:
    store = InMemoryVectorStore(_Hashing())
    store.add_documents([Document(page_content=t, metadata={"date": d}, id=i) for i, t, d in CORPUS])
    return store


class TestTemporalRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[TemporalRetriever]:
        return TemporalRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"vectorstore": _vectorstore(), "reranker": TemporalReranker(), "now": NOW_S}

    @property
    def retriever_query_example(self) -> str:
        return LATEST


# --------------------------------------------------------------- ChronorankRetriever, per engine

ENGINE_DOCS = [{"id": i, "text": t, "date": d} for i, t, d in CORPUS]


def _engine(kind: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from chronorank.index import HashingEmbedder

    emb = HashingEmbedder(64)
    if kind == "index":
        from chronorank.index import TemporalIndex

        e: Any = TemporalIndex(emb)
    elif kind == "qdrant":
        pytest.importorskip("qdrant_client")
        from chronorank.stores import QdrantStore

        e = QdrantStore("langchain-standard", embedder=emb)
    elif kind == "qdrant_edge":
        pytest.importorskip("qdrant_edge")
        from chronorank.stores import QdrantStore

        e = QdrantStore("langchain-standard", embedder=emb,
                        edge_path=str(tmp_path_factory.mktemp("lc-standard-edge")))
    else:
        from chronorank.stores import PgVectorStore

        e = PgVectorStore(request.getfixturevalue("pg").dsn, "langchain_standard", embedder=emb)
        e.delete([d["id"] for d in ENGINE_DOCS])
    e.add(ENGINE_DOCS)
    return e


@pytest.fixture(scope="module", params=["index", "qdrant", "qdrant_edge", pytest.param("pgvector", marks=pytest.mark.pg)])
def engine(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    e = _engine(request.param, request, tmp_path_factory)
    yield e
    close = getattr(e, "close", None)
    if close is not None:
        close()


class TestChronorankRetrieverStandard(RetrieversIntegrationTests):
    """The standard tests build the retriever from ``retriever_constructor_params`` (a property,
    not a fixture), so the parametrised engine is handed over through the class."""

    _engine: Any = None

    @pytest.fixture(autouse=True)
    def _use_engine(self, engine: Any) -> None:
        type(self)._engine = engine

    @property
    def retriever_constructor(self) -> type[ChronorankRetriever]:
        return ChronorankRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"engine": type(self)._engine, "now": ENGINE_NOW}

    @property
    def retriever_query_example(self) -> str:
        return LATEST


# --------------------------------------------------------------- ChronorankEmbeddings


class TestChronorankEmbeddingsUnit(EmbeddingsUnitTests):
    @property
    def embeddings_class(self) -> type[ChronorankEmbeddings]:
        return ChronorankEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, Any]:
        return {"embedder": "hashing"}


class TestChronorankEmbeddingsHashing(EmbeddingsIntegrationTests):
    @property
    def embeddings_class(self) -> type[ChronorankEmbeddings]:
        return ChronorankEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, Any]:
        return {"embedder": "hashing"}


class TestChronorankEmbeddingsDefault(EmbeddingsIntegrationTests):
    """The bundled offline MiniLM (the ``index`` extra)."""

    @pytest.fixture(autouse=True)
    def _needs_the_model(self) -> None:
        pytest.importorskip("onnxruntime")
        pytest.importorskip("tokenizers")

    @property
    def embeddings_class(self) -> type[ChronorankEmbeddings]:
        return ChronorankEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, Any]:
        return {"embedder": "default"}
