"""The built-index cache of ``chronorank eval`` (``eval/index_cache.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chronorank.cli import main
from chronorank.eval.index_cache import cached_benchmark_index
from chronorank.eval.index_eval import evaluate_index, index_for_benchmark
from chronorank.index import HashingEmbedder

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "releases"


class KeyedEmbedder:
    """The hashing embedder with a model key (so it is cacheable), counting its documents."""

    def __init__(self, key: str = "index-cache-test-model") -> None:
        self.inner = HashingEmbedder(64)
        self.name = "keyed"
        self.cache_key = key
        self.embedded = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts):
        self.embedded += len(texts)
        return self.inner.embed(texts)


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture()
def caches(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "indexes"
    monkeypatch.setenv("CHRONORANK_INDEX_CACHE", str(root))
    monkeypatch.setenv("CHRONORANK_EMBED_CACHE", str(tmp_path / "embeddings"))
    monkeypatch.setenv("CHRONORANK_PROGRESS", "0")
    return root


def _entries(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


@pytest.mark.parametrize("embedder", [None, "keyed"])
def test_a_rerun_loads_the_saved_index_and_evaluates_the_same(caches, embedder):
    from chronorank.commands._input import read_corpus, read_queries

    corpus = read_corpus(EXAMPLES / "corpus.jsonl", "eval")
    queries = read_queries(EXAMPLES / "queries.jsonl", ids={d["id"] for d in corpus})
    emb = KeyedEmbedder() if embedder else None
    fresh = evaluate_index(index_for_benchmark(corpus, embedder=emb), queries)
    first = cached_benchmark_index(corpus, embedder=emb)
    assert len(_entries(caches)) == 1
    again = KeyedEmbedder() if embedder else None
    second = cached_benchmark_index(corpus, embedder=again)
    if again is not None:
        assert again.embedded == 0  # loaded: the vectors come with the index
    assert len(second) == len(first) == len(corpus)
    for idx in (first, second):
        assert evaluate_index(idx, queries) == fresh


def test_the_key_follows_the_corpus_the_config_and_the_model(caches):
    from chronorank.commands._input import read_corpus

    corpus = read_corpus(EXAMPLES / "corpus.jsonl", "eval")
    cached_benchmark_index(corpus, embedder=None)
    edited = [dict(d) for d in corpus]
    edited[0]["text"] += " (edited)"
    idx = cached_benchmark_index(edited, embedder=None)
    assert idx.get(edited[0]["id"])["text"].endswith("(edited)")
    cached_benchmark_index(corpus, embedder=None, config="index(fusion='rrf')")
    cached_benchmark_index(corpus, embedder=KeyedEmbedder("model-a"))
    cached_benchmark_index(corpus, embedder=KeyedEmbedder("model-b"))
    assert len(_entries(caches)) == 5
    cached_benchmark_index(corpus, embedder=None)  # the same inputs again: no new entry
    assert len(_entries(caches)) == 5


def test_a_damaged_entry_is_built_again(caches):
    from chronorank.commands._input import read_corpus

    corpus = read_corpus(EXAMPLES / "corpus.jsonl", "eval")
    cached_benchmark_index(corpus, embedder=None)
    (entry,) = _entries(caches)
    for f in entry.rglob("docs.jsonl"):
        f.write_text("garbage\n")
    idx = cached_benchmark_index(corpus, embedder=None)
    assert len(idx) == len(corpus)
    assert cached_benchmark_index(corpus, embedder=None).ids == idx.ids  # rewritten, loadable


def test_off_switches_and_uncacheable_embedders_write_nothing(tmp_path, monkeypatch):
    from chronorank.commands._input import read_corpus

    corpus = read_corpus(EXAMPLES / "corpus.jsonl", "eval")
    root = tmp_path / "indexes"
    monkeypatch.setenv("CHRONORANK_INDEX_CACHE", str(root))
    monkeypatch.setenv("CHRONORANK_EMBED_CACHE", str(tmp_path / "embeddings"))
    cached_benchmark_index(corpus, embedder=HashingEmbedder(64))  # no cache_key
    assert not _entries(root)
    monkeypatch.setenv("CHRONORANK_INDEX_CACHE", "off")
    cached_benchmark_index(corpus, embedder=None)
    monkeypatch.setenv("CHRONORANK_INDEX_CACHE", str(root))
    monkeypatch.setenv("CHRONORANK_EMBED_CACHE", "off")  # a saved index holds vectors
    cached_benchmark_index(corpus, embedder=None)
    assert not _entries(root)


def test_eval_rerun_prints_the_same_report(caches, capsys):
    args = ["eval", "--corpus", str(EXAMPLES / "corpus.jsonl"), "--queries", str(EXAMPLES / "queries.jsonl"),
            "--embedder", "none"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert len(_entries(caches)) == 1
    assert main(args) == 0
    assert capsys.readouterr().out == first


def _eval_args(corpus: Path, *extra: str) -> list[str]:
    return ["eval", "--corpus", str(corpus), "--queries", str(EXAMPLES / "queries.jsonl"), "--embedder", "none", *extra]


def test_eval_rerun_finds_its_index_by_the_file_without_reading_the_corpus(caches, capsys, monkeypatch, tmp_path):
    from chronorank.commands import _input

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes((EXAMPLES / "corpus.jsonl").read_bytes())
    assert main(_eval_args(corpus)) == 0
    first = capsys.readouterr().out

    def unread(*args, **kwargs):
        raise AssertionError("a rerun on an unchanged corpus file read the corpus")

    monkeypatch.setattr(_input, "read_corpus", unread)
    assert main(_eval_args(corpus)) == 0
    assert capsys.readouterr().out == first
    assert len(_entries(caches)) == 1


def test_eval_rebuilds_for_an_edited_corpus_even_with_its_size_and_mtime_kept(caches, capsys, tmp_path):
    import os

    from chronorank.index import TemporalIndex

    corpus = tmp_path / "corpus.jsonl"
    docs = _read(EXAMPLES / "corpus.jsonl")
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs))
    assert main(_eval_args(corpus)) == 0
    (entry,) = _entries(caches)
    st = corpus.stat()
    text = docs[0]["text"]
    i = next(j for j, c in enumerate(text) if c.isalpha())
    docs[0]["text"] = text[:i] + ("X" if text[i] != "X" else "Y") + text[i + 1:]  # one letter, same size
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs))
    os.utime(corpus, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert corpus.stat().st_size == st.st_size and corpus.stat().st_mtime_ns == st.st_mtime_ns
    assert main(_eval_args(corpus)) == 0
    (new,) = [p for p in _entries(caches) if p != entry]
    assert TemporalIndex.load(new).get(docs[0]["id"])["text"] == docs[0]["text"]
    # how the file is read is in the key too: day-first slash dates are other documents
    assert main(_eval_args(corpus, "--dayfirst")) == 0
    assert len(_entries(caches)) == 3
    capsys.readouterr()


def test_only_the_most_recently_used_entries_are_kept(caches, monkeypatch):
    import os
    import time

    from chronorank.commands._input import read_corpus
    from chronorank.eval import index_cache

    monkeypatch.setattr(index_cache, "_KEEP", 2)
    corpus = read_corpus(EXAMPLES / "corpus.jsonl", "eval")
    cached_benchmark_index(corpus, embedder=None)
    (kept,) = _entries(caches)
    os.utime(kept, (time.time() + 60, time.time() + 60))  # the most recently used
    for spec in ("index(fusion='rrf')", "index(lead_weight=0.25)"):
        cached_benchmark_index(corpus, embedder=None, config=spec)
    entries = _entries(caches)
    assert len(entries) == 2 and kept in entries


# what a cached rerun must not import: each is only for a path the rerun does not take
# (numpy.ma: np.quantile / np.median / plain np.unique; email and importlib.metadata: an
# RFC 2822 date, a package version; difflib, uuid, zoneinfo: an error hint, a save, an IANA
# zone name), and no engine
_NOT_ON_A_RERUN = ("numpy.ma", "email.utils", "importlib.metadata", "difflib", "uuid", "zoneinfo", "onnxruntime",
                   "tokenizers")


def test_a_cached_eval_rerun_imports_nothing_it_does_not_use(caches, tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"), CHRONORANK_REGEX_CACHE=str(tmp_path / "regex"))
    args = ["eval", "--corpus", str(EXAMPLES / "corpus.jsonl"), "--queries", str(EXAMPLES / "queries.jsonl"),
            "--embedder", "none"]
    code = (
        "import contextlib, io, json, sys\nfrom chronorank.cli import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()):\n    main({args!r})\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
            for _ in range(2)]
    assert _entries(caches), "the first run saved its index"
    loaded = set(json.loads(runs[1].stdout.strip().splitlines()[-1]))
    assert not loaded & set(_NOT_ON_A_RERUN), sorted(loaded & set(_NOT_ON_A_RERUN))
