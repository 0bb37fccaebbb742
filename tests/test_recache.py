"""chronorank._recache: a pattern rebuilt from its cached SRE program equals re.compile's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import chronorank._recache as rc
from chronorank._recache import compile_cached

needs_sre = pytest.mark.skipif(rc._sre is None, reason="the SRE program cache needs CPython's _sre")


def _lang_sources() -> list[str]:
    from chronorank.intent.lang import _load_all

    return [s for lang in _load_all().values() for s in lang.sources]


@needs_sre
def test_cached_patterns_equal_re_compile(tmp_path, monkeypatch):
    monkeypatch.setenv("CHRONORANK_REGEX_CACHE", str(tmp_path))
    monkeypatch.setattr(rc, "_memo", {})
    sources = _lang_sources() + [r"(?P<year>\d{4})-(?P<month>\d\d)", r"(?i)abc|d(e)f", "plain"]
    cold = [compile_cached(s, re.IGNORECASE) for s in sources]
    assert len(list(tmp_path.glob("*.sre"))) >= len(set(sources))  # (+ those loading the languages made)
    monkeypatch.setattr(rc, "_memo", {})
    built = []
    monkeypatch.setattr(rc, "_compile", lambda s, f: built.append(s) or pytest.fail("a cached pattern was parsed again"))
    warm = [compile_cached(s, re.IGNORECASE) for s in sources]
    assert not built
    for s, a, b in zip(sources, cold, warm):
        ref = re.compile(s, re.IGNORECASE)
        assert a == ref and b == ref, s  # Pattern equality compares the program
        assert b.groupindex == ref.groupindex and b.groups == ref.groups and b.flags == ref.flags
    m = warm[len(sources) - 3].match("2024-05")
    assert m is not None and m.group("year") == "2024" and m.group("month") == "05"


@needs_sre
@pytest.mark.parametrize("damage", [b"", b"not json\n\x00\x01", b'{"source": "other"}\n', "truncate", "garbage-code", "other-program"])
def test_a_damaged_file_is_a_miss_and_is_rewritten(tmp_path, monkeypatch, damage):
    monkeypatch.setenv("CHRONORANK_REGEX_CACHE", str(tmp_path))
    monkeypatch.setattr(rc, "_memo", {})
    src = r"(?:alpha|beta|gamma)\s+(\d+)"
    compile_cached(src, re.IGNORECASE)
    (path,) = tmp_path.glob("*.sre")
    data = path.read_bytes()
    if damage == "truncate":
        bad = data[: len(data) - 7]
    elif damage == "garbage-code":
        head, _, body = data.partition(b"\n")
        bad = head + b"\n" + bytes(len(body))  # a program of zeros: _sre refuses it
    elif damage == "other-program":
        # a valid program of another pattern with the same groups: _sre accepts it, so only
        # the stored digest tells it is not this pattern's
        other = r"(?:alpha|beta|delta)\s+(\d+)"
        compile_cached(other, re.IGNORECASE)
        (o,) = [q for q in tmp_path.glob("*.sre") if q != path]
        head, _, _ = data.partition(b"\n")
        bad = head + b"\n" + o.read_bytes().partition(b"\n")[2]
    else:
        bad = damage
    path.write_bytes(bad)
    monkeypatch.setattr(rc, "_memo", {})
    pat = compile_cached(src, re.IGNORECASE)
    assert pat == re.compile(src, re.IGNORECASE)
    assert path.read_bytes() == data  # written afresh


def test_off_and_unwritable_fall_back_to_re_compile(tmp_path, monkeypatch):
    monkeypatch.setenv("CHRONORANK_REGEX_CACHE", "off")
    monkeypatch.setattr(rc, "_memo", {})
    assert compile_cached("a+b", 0) == re.compile("a+b")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("CHRONORANK_REGEX_CACHE", str(blocker / "sub"))  # cannot be created
    assert compile_cached("c+d", re.IGNORECASE) == re.compile("c+d", re.IGNORECASE)


@needs_sre
def test_language_patterns_are_the_same_in_every_process(tmp_path):
    """The cache only helps if a new process builds the same sources (a set's order varies
    with hash randomisation): a second process finds every language pattern cached."""
    code = (
        "import chronorank._recache as rc\n"
        "from chronorank.intent import parse\n"
        "parse('what changed in the latest release of polars as of March 2025', now=1.78e9)\n"
        "from chronorank.intent.lang import _load_all\n"
        "[l.pattern(i) for l in _load_all().values() for i in range(len(l.sources))]\n"
        "print(len(list(rc.regex_cache_dir().glob('*.sre'))))\n"
    )
    env = dict(os.environ, CHRONORANK_REGEX_CACHE=str(tmp_path))
    src = str(Path(rc.__file__).resolve().parents[1])
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    counts = []
    for seed in ("1", "2"):
        env["PYTHONHASHSEED"] = seed
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        counts.append(int(out.stdout.strip().splitlines()[-1]))
    assert counts[0] > 20 and counts[1] == counts[0]
