from __future__ import annotations

import json
import math

import pytest

from chronorank.errors import InvalidInput
from chronorank.eval.datasets import (
    epoch_seconds,
    load_benchmark,
    load_corpus,
    load_queries,
    release_benchmark_from_snapshot,
    tdw_release_benchmark,
    to_epoch,
    write_corpus,
    write_queries,
)


def _write(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_corpus_metadata_merged(tmp_path):
    p = _write(tmp_path / "c.jsonl", [
        {"id": "a", "text": "x", "date": "2024-08-27", "project": "httpx", "metadata": {"tier": 1}},
        {"id": "b", "text": "y"},
    ])
    docs = load_corpus(p)
    assert docs[0] == {"id": "a", "text": "x", "date": "2024-08-27", "valid_from": None,
                       "valid_to": None, "metadata": {"project": "httpx", "tier": 1}}
    assert docs[1]["date"] is None and docs[1]["metadata"] == {}
    t = epoch_seconds(docs)
    assert t[0] == to_epoch("2024-08-27T00:00:00Z") and math.isnan(t[1])


@pytest.mark.parametrize("rows, field", [
    ([{"text": "x"}], "id"),
    ([{"id": "a"}], "text"),
    ([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}], "twice"),
    ([{"id": "a", "text": "x", "metadata": 3}], "metadata"),
])
def test_corpus_errors_name_the_field(tmp_path, rows, field):
    with pytest.raises(InvalidInput, match=field):
        load_corpus(_write(tmp_path / "c.jsonl", rows))


def test_corpus_bad_json_names_line(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text('{"id": "a", "text": "x"}\n{oops\n')
    with pytest.raises(InvalidInput, match="line 2"):
        load_corpus(p)


def test_queries_reference_time_alias_and_extras(tmp_path):
    p = _write(tmp_path / "q.jsonl", [
        {"qid": "1", "query": "latest x", "reference_time": "2026-08-01", "relevance": {"a": 3},
         "kind": "latest", "target_date": "2020-01-01"},
        {"qid": "2", "query": "y", "candidates": ["a", "b"]},
    ])
    q = load_queries(p)
    assert q[0]["reference_date"] == "2026-08-01" and q[0]["target_date"] == "2020-01-01"
    assert q[0]["kind"] == "latest" and q[0]["candidates"] is None
    assert q[1]["relevance"] == {} and q[1]["candidates"] == ["a", "b"] and q[1]["kind"] is None


@pytest.mark.parametrize("grade", [4, -1, 1.5, "3", True])
def test_bad_grade(tmp_path, grade):
    p = _write(tmp_path / "q.jsonl", [{"qid": "1", "query": "x", "relevance": {"a": grade}}])
    with pytest.raises(InvalidInput, match="grades"):
        load_queries(p)


def test_benchmark_round_trip_and_cross_check(tmp_path):
    corpus, queries = tdw_release_benchmark()
    write_corpus(corpus, tmp_path / "corpus.jsonl")
    write_queries(queries, tmp_path / "queries.jsonl")
    c2, q2 = load_benchmark(tmp_path)
    assert c2 == corpus and q2 == queries
    write_queries([{"qid": "x", "query": "y", "relevance": {"nope": 3}}], tmp_path / "queries.jsonl")
    with pytest.raises(InvalidInput, match="nope"):
        load_benchmark(tmp_path)


def test_tdw_release_benchmark_shape():
    corpus, queries = tdw_release_benchmark()
    assert len(corpus) == 242 and len(queries) == 13
    ref = {q["reference_date"] for q in queries}
    assert ref == {"2026-08-01T18:14:15.511498+00:00"}
    for q in queries:
        (top, g3), (prev, g1) = q["relevance"].items()
        assert (g3, g1) == (3, 1)
        project = q["qid"].removeprefix("latest-")
        assert q["query"] == f"what changed in the latest release of {project}"
        dates = sorted((to_epoch(d["date"]) for d in corpus if d["metadata"]["project"] == project), reverse=True)
        by_id = {d["id"]: to_epoch(d["date"]) for d in corpus}
        assert by_id[top] == dates[0] and by_id[prev] == dates[1]


def test_release_benchmark_min_releases():
    snap = {"fetched_at": "2026-01-01T00:00:00Z", "documents": [
        {"id": f"o/p@{i}", "project": "p", "date": f"2025-0{i}-01", "text": "t"} for i in range(1, 4)
    ]}
    assert release_benchmark_from_snapshot(snap)[1] == []
    _, q = release_benchmark_from_snapshot(snap, min_releases=3)
    assert q[0]["relevance"] == {"o/p@3": 3, "o/p@2": 1}


def test_matches_peer_labels():
    rd = pytest.importorskip("tdw_rag.real_datasets")
    # the labels only, recomputed from the peer's own copy of the snapshot
    docs = rd.load_release_corpus()["documents"]
    by_project: dict[str, list] = {}
    for d in docs:
        by_project.setdefault(d["project"], []).append(d)
    _, queries = tdw_release_benchmark()
    ours = {q["qid"].removeprefix("latest-"): q["relevance"] for q in queries}
    for project, rel in ours.items():
        newest = sorted(by_project[project], key=lambda d: d["date"], reverse=True)
        assert rel == {newest[0]["id"]: 3, newest[1]["id"]: 1}


def test_changelogs_loads(shared_data):
    corpus, queries = load_benchmark(shared_data / "changelogs")
    assert len(corpus) == 2062 and len(queries) == 196
    assert {q["kind"] for q in queries} == {"latest", "as_of", "version", "as_of_date"}
