"""The parsed time-sensitivity weights kept between processes (intent/sensitivity.py)."""

from __future__ import annotations

import numpy as np
import pytest

from chronorank.intent import sensitivity as sens


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CHRONORANK_REGEX_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _same(a: sens.SensitivityModel, b: sens.SensitivityModel) -> None:
    assert a.weights.tobytes() == b.weights.tobytes() and a.bias == b.bias and a.meta == b.meta


def test_a_cached_load_is_the_parsed_model(cache):
    first = sens.SensitivityModel.load(sens.DEFAULT_WEIGHTS)
    files = list(cache.glob("*.weights"))
    assert len(files) == 1
    again = sens.SensitivityModel.load(sens.DEFAULT_WEIGHTS)
    _same(first, again)
    names = ["k:recent", "s:digit", "w:latest"]
    assert first.score(names) == again.score(names)


def test_a_damaged_or_foreign_entry_is_parsed_again(cache):
    first = sens.SensitivityModel.load(sens.DEFAULT_WEIGHTS)
    (entry,) = cache.glob("*.weights")
    blob = bytearray(entry.read_bytes())
    blob[-3] ^= 0xFF  # one weight changed: its checksum no longer matches
    entry.write_bytes(bytes(blob))
    _same(first, sens.SensitivityModel.load(sens.DEFAULT_WEIGHTS))
    entry.write_bytes(b"not a cache file")
    _same(first, sens.SensitivityModel.load(sens.DEFAULT_WEIGHTS))
    assert entry.read_bytes() != b"not a cache file"  # rewritten


def test_an_edited_weights_file_is_not_served_from_the_cache(cache, tmp_path):
    sens.SensitivityModel.load(sens.DEFAULT_WEIGHTS)
    model = sens.SensitivityModel(weights=np.full(sens.DIM, 0.5), bias=0.25, meta={"edited": True})
    path = tmp_path / "w.json"
    model.save(path)
    loaded = sens.SensitivityModel.load(path)
    assert loaded.bias == 0.25 and loaded.meta == {"edited": True} and float(loaded.weights[7]) == 0.5


def test_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("CHRONORANK_REGEX_CACHE", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    sens.SensitivityModel.load(sens.DEFAULT_WEIGHTS)
    assert not list(tmp_path.rglob("*.weights"))
