"""Bounded work per document (issue 31, item 1): the embedder cuts a text by characters before
tokenizing, the keyword side scans a huge text part by part with the same terms, and the peak
memory of ``add()`` grows with the text, not ~20-180 times it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from chronorank.index import TemporalIndex
from chronorank.index import text as T
from chronorank.index.bm25 import encode_terms
from chronorank.index.lead import lead_cut

SRC = Path(__file__).resolve().parents[2] / "src"


def _minilm():
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    from chronorank.index.embedders import MiniLMOnnxEmbedder

    emb = MiniLMOnnxEmbedder()
    try:
        emb.model_file()
    except Exception as exc:  # noqa: BLE001 - the model package is an extra
        pytest.skip(f"MiniLM model not installed: {exc}")
    return emb


def test_minilm_tokenizes_at_most_max_chars_of_each_text():
    emb = _minilm()
    emb._load()
    seen: list[int] = []
    real = emb._tokenizer

    class Spy:  # records what the tokenizer is given, and tokenizes it for real
        def encode_batch(self, texts):
            seen.extend(len(t) for t in texts)
            return real.encode_batch(texts)

    emb._tokenizer = Spy()
    head = "Release 2.4 fixes the parser crash on empty dates. " * 20
    huge = head + "more words follow here " * 200_000  # 4.6 MB
    vec = emb.embed([huge, "short text"])
    assert max(seen) <= emb.max_chars == 64 * emb.max_length
    emb._tokenizer = real
    # the 128 tokens kept lie far inside the cut: the vector is the one of the head alone
    np.testing.assert_allclose(vec[0], emb.embed([huge[:4000]])[0], atol=1e-6)


SPECIAL = ("Straße ΣΊΣΥΦΟΣ v1.2.3 foo-bar C++ e.g. end.\u00a0“quoted” 2024-01-02 "
           "x\u2014y ΑΣ. ok\n\tnext\x0bline a\x00b ")


@pytest.mark.parametrize("part", [7, 64, 1000])
def test_a_huge_text_scanned_in_parts_gives_the_terms_of_one_scan(monkeypatch, part):
    rng = np.random.default_rng(part)
    words = ["alpha", "Beta.", "gamma-delta", "v2.0.1", "ΣΟΦΙΑ", "naïve", "x" * 40, "end.", SPECIAL]
    text = " ".join(rng.choice(words, size=3000).tolist())
    text = "Title of the thing. " + text + " " + "y" * 3 * part  # a run longer than a part, at the end
    others = ["small one before", "another after it"]
    texts, cuts = [others[0], text, others[1]], [lead_cut(t) for t in (others[0], text, others[1])]
    want_vocab: dict[str, int] = {}
    want = T._encode_documents(texts, cuts, want_vocab)  # one scan of each text
    assert T._scan(texts, cuts) is not None  # the numpy path, not the per-text fallback
    monkeypatch.setattr(T, "LONG_TEXT_CHARS", part)
    vocab: dict[str, int] = {}
    got = T.encode_documents(texts, cuts, vocab)
    assert vocab == want_vocab and list(vocab) == list(want_vocab)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)
    ref_ids, ref_ptr = encode_terms(T.analyze_many(texts, prefixes=True), {})
    assert np.array_equal(got[0], ref_ids) and np.array_equal(got[1], ref_ptr)


def test_parts_end_at_white_space_and_cover_the_text(monkeypatch):
    monkeypatch.setattr(T, "LONG_TEXT_CHARS", 10)
    text = "aaaa bbbb\ncccccccccccccccccccc dd\teeee ffff " + "g" * 25
    parts = list(T._parts(text))
    assert "".join(parts) == text
    assert all(p[-1] in " \n\t\r\x0b\x0c" for p in parts[:-1])
    assert all(len(p) <= 10 for p in parts if " " in p[:-1] or "\n" in p[:-1])


@pytest.mark.slow
def test_add_of_a_32_mib_document_stays_near_the_text_in_memory(tmp_path):
    _minilm()
    if not Path("/proc/self/clear_refs").exists():
        pytest.skip("needs Linux's peak-RSS reset")
    child = r"""
import json, sys
def status(k):
    return next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith(k + ":"))
from chronorank.index import TemporalIndex
idx = TemporalIndex(embedder="default")
idx.add([{"id": "warm", "text": "warm up the model", "date": "2024-01-01"}])
base = status("VmRSS")
text = ("the parser crash on empty dates was fixed in release notes " * 20_000)[: 1 << 20] * 32
open("/proc/self/clear_refs", "w").write("5")
idx.add([{"id": "big", "text": text, "date": "2024-06-01"}])
print(json.dumps({"text": len(text), "growth": status("VmHWM") - base,
                  "top": idx.search("parser crash", k=1, now="2025-01-01")[0].id}))
"""
    env = dict(os.environ, PYTHONPATH=str(SRC), CHRONORANK_EMBED_CACHE="off")
    res = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["top"] == "big"
    # the text (1x) and its term ids (~0.6x) stay; tokenizing it whole took ~180x
    assert got["growth"] < 3 * got["text"], got


def test_the_index_finds_words_from_every_part_of_a_long_document():
    idx = TemporalIndex(embedder=None)
    filler = "lorem ipsum dolor sit amet " * 40_000  # ~1 MB: several parts
    idx.add([{"id": "long", "text": "opening words " + filler + " closing zebra"},
             {"id": "other", "text": "opening words only"}])
    assert idx.search("zebra", k=1, now="2025-01-01")[0].id == "long"
