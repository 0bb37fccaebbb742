"""Chroma: a real PersistentClient collection, an offline embedding function, chronorank lanes."""

from __future__ import annotations

import numpy as np
import pytest

chromadb = pytest.importorskip("chromadb")

from chromadb import Documents, EmbeddingFunction, Embeddings  # noqa: E402
from itest_corpus import (  # noqa: E402
    AS_OF,
    CORPUS,
    CROWD,
    IN_2021,
    LATEST,
    NOW_S,
    PLAIN,
    TIMELESS,
    assert_same_as_core,
    core_ranking,
    hashing_embed,
    similarity_then_tie_rule,
)

from chronorank import TemporalReranker  # noqa: E402
from chronorank.integrations._common import hit_metadata  # noqa: E402
from chronorank.integrations.chroma import (  # noqa: E402
    collection_space,
    distance_to_similarity,
    query_collection,
)


class HashingEF(EmbeddingFunction[Documents]):
    """Offline: never Chroma's default function, which downloads a model."""

    def __init__(self) -> None:
        pass

    def __call__(self, input: Documents) -> Embeddings:
        return [np.asarray(hashing_embed(t), dtype=np.float32) for t in input]

    @staticmethod
    def name() -> str:
        return "chronorank-test-hashing"

    def get_config(self) -> dict:
        return {}

    @staticmethod
    def build_from_config(config: dict) -> HashingEF:
        return HashingEF()


def make_collection(path, rows=CORPUS, space="cosine"):
    client = chromadb.PersistentClient(path=str(path))
    col = client.get_or_create_collection(
        "chronorank-test", embedding_function=HashingEF(), metadata={"hnsw:space": space}
    )
    col.add(ids=[r[0] for r in rows], documents=[r[1] for r in rows],
            metadatas=[{"date": r[2]} for r in rows])
    return col


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    return make_collection(tmp_path_factory.mktemp("chroma"))


def similarity_ids(col, query, n=6):
    return col.query(query_texts=[query], n_results=n)["ids"][0]


def test_fresh_document_wins_latest_query(collection):
    assert similarity_ids(collection, LATEST)[0] != "acme-2026"
    ranking = query_collection(collection, LATEST, TemporalReranker(), k=3, fetch_k=6, now=NOW_S)
    assert ranking[0].id == "acme-2026"
    assert ranking[0].payload["metadata"]["date"] == CORPUS[2][2]


@pytest.mark.parametrize(("query", "expected"), [(AS_OF, "acme-2022"), (IN_2021, "acme-2021")])
def test_old_document_wins_as_of_query(collection, query, expected):
    ranking = query_collection(collection, query, TemporalReranker(), k=3, fetch_k=6, now=NOW_S)
    assert ranking[0].id == expected


def test_timeless_query_keeps_similarity_order(collection):
    ranking = query_collection(collection, TIMELESS, TemporalReranker(), k=6, fetch_k=6, now=NOW_S)
    res = collection.query(query_texts=[TIMELESS], n_results=6, include=["distances"])
    assert ranking.ranked_ids == similarity_then_tie_rule([(i, -d) for i, d in zip(res["ids"][0], res["distances"][0])])


@pytest.mark.parametrize("query", [LATEST, AS_OF, IN_2021, TIMELESS])
def test_identical_to_core_reranker(collection, query):
    # the collection is searched with the intent's topical query
    topical = TemporalReranker().intent(query, now=NOW_S).topical_query or query
    res = collection.query(query_texts=[topical], n_results=6, include=["metadatas", "distances"])
    sims = 1.0 - np.asarray(res["distances"][0], dtype=np.float64)  # cosine space
    core = core_ranking(query, sims, [m["date"] for m in res["metadatas"][0]], res["ids"][0], top_k=3)
    ranking = query_collection(collection, query, TemporalReranker(), k=3, fetch_k=6,
                               lanes=(), now=NOW_S)
    assert_same_as_core([(h.id, hit_metadata(h)["chronorank_score"]) for h in ranking], core)


CROWDED = "what changed in the cache and the plugin loader in the latest acme release notes"


def test_lanes_use_where_filters_on_epoch_metadata(tmp_path):
    col = make_collection(tmp_path, CORPUS + CROWD)
    r = TemporalReranker(**PLAIN)
    assert "acme-2026" not in similarity_ids(col, r.intent(CROWDED, now=NOW_S).topical_query, 4)
    without = query_collection(col, CROWDED, r, k=2, fetch_k=4, lanes=(), now=NOW_S)
    assert "acme-2026" not in without.ranked_ids
    with_lanes = query_collection(col, CROWDED, r, k=2, fetch_k=4, now=NOW_S)
    assert with_lanes[0].id == "acme-2026"
    # a user filter is combined with the lane filters
    none = query_collection(col, CROWDED, r, k=2, fetch_k=4, now=NOW_S, where={"date": {"$lt": 0.0}})
    assert len(none) == 0


def test_numpy_query_vector_and_string_dates_warn(tmp_path):
    client = chromadb.PersistentClient(path=str(tmp_path))
    col = client.create_collection("iso", embedding_function=HashingEF(), configuration={"hnsw": {"space": "cosine"}})
    from chronorank.types import format_epoch

    rows = CORPUS + CROWD
    col.add(ids=[i for i, _, _ in rows], documents=[t for _, t, _ in rows],
            metadatas=[{"date": format_epoch(d)} for _, _, d in rows])
    vec = np.asarray(hashing_embed(CROWDED), dtype=np.float32)  # numpy, as most embedders return
    with pytest.warns(RuntimeWarning, match="epoch seconds"):
        ranking = query_collection(col, CROWDED, TemporalReranker(), k=2, fetch_k=4, now=NOW_S,
                                   query_embedding=vec)
    # no lanes, but the ISO dates still drive the reranking of the fetched pool
    assert len(ranking) == 2 and all(h.age_days == h.age_days for h in ranking)


def test_persisted_collection_reopens(tmp_path):
    make_collection(tmp_path)
    col = chromadb.PersistentClient(path=str(tmp_path)).get_collection(
        "chronorank-test", embedding_function=HashingEF()
    )
    assert collection_space(col) == "cosine"
    assert query_collection(col, LATEST, TemporalReranker(), k=1, fetch_k=6, now=NOW_S)[0].id == "acme-2026"


def test_distance_conversions():
    d = np.array([0.0, 0.5, 2.0])
    assert distance_to_similarity(d, "cosine").tolist() == [1.0, 0.5, -1.0]
    assert distance_to_similarity(d, "l2").tolist() == [1.0, 1 - 0.5 / 2, 0.0]
    from chronorank.errors import InvalidInput

    with pytest.raises(InvalidInput, match="space"):
        distance_to_similarity(d, "manhattan")
