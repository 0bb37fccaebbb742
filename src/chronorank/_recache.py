"""Compiled regular expressions kept on disk between processes (CPython).

The intent rules are a few dozen large regexes (every month, number and unit word of a
language in one alternation, several KB each): ``re.compile`` spends ~0.3 s of pure-Python
parsing on them in every new process, which was most of what a cached rerun of ``chronorank
demo`` or ``eval`` still cost (benchmarks/embed_cache.py). :func:`compile_cached` keeps
what the parser produces -- the SRE program -- in the cache directory, one file per
pattern named by the sha256 of the Python build, the SRE version, the flags and the
source, and rebuilds the pattern from it with ``_sre.compile``, the constructor
``re.compile`` itself ends with. The result is equal to ``re.compile``'s (``Pattern``
equality compares the program; a test checks every language pattern).

Safe to lose or damage: a file that is missing, unreadable or malformed, whose program does
not match the sha256 stored beside it, or a program
``_sre`` rejects (it validates every program it is given), is compiled afresh and
rewritten. Off with ``CHRONORANK_REGEX_CACHE=off`` (or ``0``), and on any Python without
``_sre`` (not CPython), where it is ``re.compile``. Where: ``$CHRONORANK_REGEX_CACHE`` if
it names a directory, else ``$XDG_CACHE_HOME/chronorank/regex`` (``~/.cache/...``).
The folder also keeps the parsed time-sensitivity weights (:mod:`chronorank.intent.sensitivity`),
in the same file format (:func:`read_entry` / :func:`write_entry`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
from array import array
from pathlib import Path
from typing import Any

from chronorank import __version__

__all__ = ["code_stamp", "compile_cached", "read_entry", "regex_cache_dir", "write_entry"]

try:  # CPython internals; anything else falls back to re.compile
    import _sre
    from re import _compiler, _parser  # type: ignore[attr-defined]

    _CODE_TYPE = next(t for t in "IL" if array(t).itemsize == _sre.CODESIZE)
    _BUILD = f"{sys.implementation.name}-{sys.version}-{_sre.MAGIC}-{_sre.CODESIZE}"
except (ImportError, AttributeError, StopIteration):  # pragma: no cover - not CPython
    _sre = None
    _BUILD = ""

_memo: dict[str, re.Pattern[str]] = {}


def code_stamp() -> str:
    """A digest of this chronorank's version and package files (path, size and mtime of every
    module and data file: the language files and weights rank too), for caches of what it
    built (``eval``'s indexes, ``demo``'s):
    a changed or edited checkout never loads what an older one saved."""
    out = [__version__]

    def walk(folder: str, rel: str) -> None:  # scandir, not os.walk + relpath: 0.5 ms, not 1.2
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
        for e in entries:
            if e.is_file() and not e.name.endswith((".pyc", ".tmp")):
                st = e.stat()
                out.append(f"{rel}{e.name}:{st.st_size}:{st.st_mtime_ns}")
        for e in entries:
            if e.is_dir(follow_symlinks=False) and e.name != "__pycache__":
                walk(e.path, f"{rel}{e.name}/")

    walk(str(Path(__file__).parent), "")  # the package
    return hashlib.sha256(json.dumps(out, ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()


def env_cache_dir(env: str, name: str) -> Path | None:
    """A cache directory: ``$<env>`` if it names a directory, else
    ``$XDG_CACHE_HOME/chronorank/<name>`` (``~/.cache/...``); None when ``$<env>`` is
    ``off``/``0``/``false``/``no``/``none``."""
    value = os.environ.get(env, "").strip()
    if value.lower() in ("0", "off", "false", "no", "none"):
        return None
    if value and value.lower() not in ("1", "on", "true", "yes"):
        return Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "chronorank" / name


def regex_cache_dir() -> Path | None:
    """The cache directory, or None when ``CHRONORANK_REGEX_CACHE`` turns it off."""
    return env_cache_dir("CHRONORANK_REGEX_CACHE", "regex")


def compile_cached(source: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)``, its SRE program read from the cache when present."""
    root = regex_cache_dir() if _sre is not None else None
    if root is None:
        return re.compile(source, flags)
    key = hashlib.sha256(f"{_BUILD}\0{int(flags)}\0{source}".encode("utf-8", "surrogatepass")).hexdigest()
    pat = _memo.get(key)
    if pat is not None:
        return pat
    path = root / f"{key[:40]}.sre"
    pat = _load(path, source, flags)
    if pat is None:
        pat, entry = _compile(source, flags)
        _store(root, path, entry)
    _memo[key] = pat
    return pat


def _compile(source: str, flags: int) -> tuple[re.Pattern[str], tuple[dict[str, Any], list[int]]]:
    """What ``re._compiler.compile`` does, keeping its parts."""
    p = _parser.parse(source, flags)
    code = _compiler._code(p, flags)
    groupindex = dict(p.state.groupdict)
    indexgroup: list[str | None] = [None] * p.state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    meta = {"input_flags": int(flags), "flags": flags | p.state.flags, "groups": p.state.groups - 1,
            "groupindex": groupindex, "indexgroup": indexgroup, "source": source}
    return _build(source, meta, code), (meta, code)


def _build(source: str, meta: dict[str, Any], code: list[int]) -> re.Pattern[str]:
    pat: re.Pattern[str] = _sre.compile(
        source, meta["flags"], code, meta["groups"], meta["groupindex"], tuple(meta["indexgroup"])
    )
    return pat


def _load(path: Path, source: str, flags: int) -> re.Pattern[str] | None:
    entry = read_entry(path)
    if entry is None:
        return None
    meta, body = entry
    try:
        if meta.get("source") != source or meta.get("input_flags") != int(flags):
            raise ValueError("another pattern")
        code = array(_CODE_TYPE)
        code.frombytes(body)
        return _build(source, meta, code.tolist())
    except Exception:  # noqa: BLE001 - any damage (truncation, bad JSON, a program _sre rejects) is a miss
        with contextlib.suppress(OSError):
            path.unlink()
        return None


def _store(root: Path, path: Path, entry: tuple[dict[str, Any], list[int]]) -> None:
    meta, code = entry
    with contextlib.suppress(OverflowError, TypeError, ValueError):
        write_entry(path, meta, array(_CODE_TYPE, code).tobytes())


def read_entry(path: Path) -> tuple[dict[str, Any], bytes] | None:
    """A cache file's JSON head and its body, when the body matches the sha256 the head gives
    (``_sre`` validates a program's structure, not that it is this pattern's); a file that is
    missing, unreadable or damaged is None (and removed)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        head, sep, body = data.partition(b"\n")
        meta = json.loads(head)
        if not sep or not isinstance(meta, dict) or meta.get("sha256") != hashlib.sha256(body).hexdigest():
            raise ValueError("damaged")
        return meta, body
    except Exception:  # noqa: BLE001 - any damage (truncation, bad JSON) is a miss
        with contextlib.suppress(OSError):
            path.unlink()
        return None


def write_entry(path: Path, meta: dict[str, Any], body: bytes) -> None:
    """Write ``meta`` (a JSON head, with the body's sha256 added) and ``body`` to ``path``
    atomically; a read-only or full disk writes nothing (the cache is an optimisation only)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{os.urandom(16).hex()}.tmp")
        try:
            head = json.dumps({**meta, "sha256": hashlib.sha256(body).hexdigest()})
            with open(tmp, "wb") as fh:
                fh.write(head.encode("utf-8", "surrogatepass") + b"\n")
                fh.write(body)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
    except (OSError, TypeError, ValueError):
        pass
