"""On-disk format of a :class:`~chronorank.index.TemporalIndex` (format version 2; 1 is read too).

An index is a directory::

    INDEX/
      CURRENT               {"format": "chronorank-index", "generation": "g-...", "manifest_sha256": ...}
      g-<time>-<rand>/      one complete generation
        manifest.json       format, version, counts, embedder, config, sha256 + size of every file
        docs.jsonl          the stored records (id, text, times, metadata), one a line
        vectors.npy         float32 (n, dim), C order (absent for keyword-only indexes)
        times.npy           float64 (4, n): date, updated, valid_from, valid_to (NaN = missing)
        term_ids.npy, term_ptr.npy, vocab.json   the analysed documents (BM25 source of truth)
        term_tf.npy         int32, one per term_ids entry: its count (only when a document
                            longer than ``text.LONG_TEXT_CHARS`` is kept as its lead + its
                            distinct terms; absent = every entry counts once)
        bm25_data.npy, bm25_indices.npy, bm25_indptr.npy   the BM25 score matrix (CSC)
        lead_len.npy        int64 (n,): index terms in each document's lead (format 2; absent
                            in format 1, where the lead is derived at the first query)
        lead_data.npy, lead_indices.npy, lead_indptr.npy   the lead field's BM25 matrix for
                            the manifest's ``lead.tokens`` (format 2, optional)
        leadver_owner.npy, leadver_which.npy   int64 (m,): each version a lead names (English
                            patterns): its document's row and its row in leadver_parts.npy
        leadver_parts.npy   int64 (d, w), leadver_lines.npy int64 (d,): the distinct versions
                            (index.version_conflict; optional, and read only when the
                            manifest's ``lead_versions.fingerprint`` is this chronorank's,
                            else the leads are read again when a version question needs them)

Saving is atomic: the new generation is written under a temporary name, every file and
the directory are fsynced, the directory is renamed into place, and only then is
``CURRENT`` replaced (``os.replace`` of a fsynced temporary file). A crash at any moment
leaves ``CURRENT`` naming a complete generation: the previous index stays loadable.

Writers: one save at a time per directory. ``save`` holds an exclusive ``flock`` on
``INDEX/LOCK`` (threads and processes alike; the kernel drops it when a writer dies), so a
second writer waits. After the switch only generations *older* than the one ``CURRENT``
names are removed, with leftovers of killed saves. Generation names grow monotonically
(a clock that steps back cannot make a new generation look older). A save writes the whole
index from its writer's memory (last save wins); writers that load, add and save hold
:func:`writer_lock` around all three so none of their additions is lost (the CLI's
``--append`` does). The lock is advisory and local: directories shared over NFS or written
by other tools are not protected.

A failed save (disk full, any ``OSError``, a failed fsync of a file or of a directory)
removes everything it wrote, leaves the previous generation current and raises one
:class:`~chronorank.errors.StoreError`; the next save, once the cause is gone, starts
clean. (A directory fsync that fails after ``CURRENT`` was switched raises a
``StoreError`` that says the new generation is current.) A loaded index can always be
saved: a record holding an unpaired surrogate (a crafted or older ``docs.jsonl``) is
written with JSON's ASCII escapes.

Readers take no lock. A reader that read ``CURRENT`` just before a writer switched it may
find its generation removed; it then reads ``CURRENT`` again and retries (a few times, as
long as ``CURRENT`` names a different generation each time), so a load during a save
never reports a healthy index as damaged.

Loading checks the format marker and version, then every file's size and sha256 against
the manifest (``verify=True``; the files hashed in parallel threads, through their memory
maps), and memory-maps the arrays and ``docs.jsonl``. Any mismatch raises
:class:`~chronorank.errors.CorruptIndex` naming the file. The documents are not parsed at
the load (a million of them took seconds): the load finds where each line starts and
checks their count; a record is parsed and checked when it is read (a search's hits,
``get``). The ids (``get``, ``in``, ``delete``, ``ids``) are read from the start of each line
(``{"id": "...``, vectorised; records.DocLines.ids), checking that no id repeats, and a record
read later must carry the same id; the first need of another whole column (``add``, the first
metadata filter, a group key) parses every line once.

Threat model: an index directory may come from elsewhere (a download, a shared volume).
Loading it must not read outside it, crash, or exhaust memory: only the fixed file names
listed above are opened, inside the generation directory, never through a symlink
(``O_NOFOLLOW``) and without blocking (``O_NONBLOCK``: a named pipe is refused, not waited
on), regular files only; every ``.npy`` header's dtype and shape is checked against the
manifest before any data is read (no pickles; sizes counted in Python integers, so no
shape wraps around), and every array's contents against the others (pointers monotone
and in range, ids in range, vectors and times finite); JSON nested too deeply is
refused. ``LOCK`` is opened with ``O_NOFOLLOW`` too (a save never creates a link's target). Every malformed file raises ``CorruptIndex`` (a damaged document
record when it is read: at the load, or later for a line of ``docs.jsonl``). The checksums prove *integrity*
(the files are the ones the manifest lists), not *origin*: whoever can write the
directory can write a consistent manifest too. An attacker-made index can still hold any
documents and scores it likes; load only indexes whose content you would index yourself.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import mmap as _mmap
import os
import re
import shutil
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from chronorank import __version__
from chronorank.errors import ChronorankError, CorruptIndex, InvalidInput, StoreError
from chronorank.index.bm25 import Bm25Matrix, encode_terms
from chronorank.index.embedders import get_embedder
from chronorank.index.records import DocLines, LazyRecords
from chronorank.index.snapshot import VectorsPending, _Snapshot
from chronorank.index.text import ANALYZER_VERSION, analyze_many
from chronorank.index.version_conflict import LeadMemo
from chronorank.index.version_conflict import fingerprint as lead_fingerprint

if TYPE_CHECKING:
    from chronorank.index.core import TemporalIndex

__all__ = ["save_index", "load_index", "writer_lock", "FORMAT_NAME", "FORMAT_VERSION"]

FORMAT_NAME = "chronorank-index"
FORMAT_VERSION = 2
#: versions this chronorank reads: 1 lacks lead_len.npy (the lead is then derived lazily)
READ_VERSIONS = (1, 2)
CURRENT = "CURRENT"
MANIFEST = "manifest.json"
LOCK = "LOCK"
_CHUNK = 1 << 22
_GEN = re.compile(r"g-([0-9]{20})-[0-9a-f]{8}")
#: the files a generation may hold: name -> (dtype kind, item size) for arrays, None for JSON
_ARRAYS: dict[str, tuple[str, tuple[int, ...]]] = {
    "vectors.npy": ("f", (4,)),
    "times.npy": ("f", (8,)),
    "term_ids.npy": ("i", (4,)),
    "term_ptr.npy": ("i", (8,)),
    "term_tf.npy": ("i", (4,)),
    "bm25_data.npy": ("f", (4, 8)),
    "bm25_indices.npy": ("i", (4,)),
    "bm25_indptr.npy": ("i", (8,)),
    "lead_len.npy": ("i", (8,)),
    "lead_data.npy": ("f", (4, 8)),
    "lead_indices.npy": ("i", (4,)),
    "lead_indptr.npy": ("i", (8,)),
    "leadver_owner.npy": ("i", (8,)),
    "leadver_which.npy": ("i", (8,)),
    "leadver_parts.npy": ("i", (8,)),
    "leadver_lines.npy": ("i", (8,)),
}
_REQUIRED = ("docs.jsonl", "vocab.json", "times.npy", "term_ids.npy", "term_ptr.npy",
             "bm25_data.npy", "bm25_indices.npy", "bm25_indptr.npy")
_LEAD_MATRIX = ("lead_data.npy", "lead_indices.npy", "lead_indptr.npy")
_LEAD_VERSIONS = ("leadver_owner.npy", "leadver_which.npy", "leadver_parts.npy", "leadver_lines.npy")
#: the language whose version patterns a saved index's lead versions are read with
_LEAD_VERSIONS_LANG = "en"
_ALLOWED = frozenset(_REQUIRED) | {"vectors.npy", "term_tf.npy", "lead_len.npy", *_LEAD_MATRIX, *_LEAD_VERSIONS}
_LOAD_ATTEMPTS = 3
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
#: opening a named pipe for reading waits for a writer; with this the open returns at once
#: and the file type check refuses it
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_thread_locks: dict[str, threading.Lock] = {}
_thread_locks_guard = threading.Lock()
_held = threading.local()  # realpath -> how deeply this thread holds the writer lock


def _sha256_fh(fh: IO[bytes]) -> str:
    """The sha256 of an open file, read through a memory map (no copy into Python bytes;
    ``update`` releases the GIL, so files hash in parallel threads: :func:`_verify`)."""
    h = hashlib.sha256()
    size = os.fstat(fh.fileno()).st_size
    if not size:
        return h.hexdigest()
    with _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_READ) as m, memoryview(m) as view:
        for a in range(0, size, _CHUNK):
            h.update(view[a : a + _CHUNK])
    return h.hexdigest()


def _verify(root: Path, handles: dict[str, IO[bytes]], files: dict[str, Any]) -> None:
    """Every file's sha256 against the manifest, the files hashed in parallel; the first
    mismatch in the manifest's order raises CorruptIndex naming its file."""
    names = list(handles)
    workers = min(len(names), os.cpu_count() or 1, 8)
    if workers > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers) as pool:
            sums = list(pool.map(lambda name: _sha256_fh(handles[name]), names))
    else:
        sums = [_sha256_fh(handles[name]) for name in names]
    for name, got in zip(names, sums):
        if got != files[name]["sha256"]:
            raise _corrupt(root, f"file {name} does not match its sha256 checksum (bit rot or tampering)")


def _sha256(path: Path) -> str:
    with path.open("rb") as fh:
        return _sha256_fh(fh)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


#: what fsync of a directory returns where the file system cannot sync directories at all
#: (PostgreSQL ignores the same ones): not a failure; any other error is
_DIR_FSYNC_UNSUPPORTED = frozenset({errno.EINVAL, errno.EBADF, getattr(errno, "ENOTSUP", -1),
                                    getattr(errno, "EOPNOTSUPP", -1)})


def _fsync_dir(path: Path) -> None:
    """fsync a directory (its entries: a rename, a new file); a failure raises ``OSError``
    like a failed file fsync, so the save reports it (a ``StoreError``)."""
    if os.name == "nt":  # pragma: no cover - no directory descriptors on Windows
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _DIR_FSYNC_UNSUPPORTED:
            raise
    finally:
        os.close(fd)


def _json_line(value: Any) -> bytes:
    """``value`` as one line of UTF-8 JSON. A string holding an unpaired surrogate (which
    ``add`` refuses, but a crafted or older ``docs.jsonl`` can hold: JSON's ``"\\ud800"``)
    cannot be encoded as UTF-8; its line is written with ASCII escapes instead, which read
    back to the same string, so an index that loaded can always be saved."""
    try:
        return (json.dumps(value, ensure_ascii=False, default=str) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(value, ensure_ascii=True, default=str) + "\n").encode("ascii")


def _write_npy(path: Path, arr: np.ndarray) -> None:
    with path.open("wb") as fh:
        np.save(fh, np.ascontiguousarray(arr), allow_pickle=False)


def _is_index_dir(path: Path) -> bool:
    return (path / CURRENT).is_file()


@contextlib.contextmanager
def writer_lock(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the index directory's writer lock (``save`` takes it too; re-entrant per thread).

    ``save`` writes the whole index from one writer's memory, so two processes that each
    load, add and save would keep only the last one's additions. To read-modify-write an
    index from several threads or processes, hold the lock around all three::

        with writer_lock(path):
            idx = TemporalIndex.load(path)
            idx.add(docs)
            idx.save(path)
    """
    root = Path(path)
    key = os.path.realpath(root)
    held: dict[str, int] = _held.__dict__.setdefault("depth", {})
    if held.get(key):
        held[key] += 1
        try:
            yield
        finally:
            held[key] -= 1
        return
    root.mkdir(parents=True, exist_ok=True)
    with _thread_locks_guard:
        tlock = _thread_locks.setdefault(key, threading.Lock())
    with tlock:  # flock does not exclude threads on every platform
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: threads of this process only
            fcntl = None  # type: ignore[assignment]
        fd = None if fcntl is None else _open_lock(root)
        try:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)  # other processes; dropped when this one dies
            held[key] = 1
            try:
                yield
            finally:
                held[key] = 0
        finally:
            if fd is not None:
                os.close(fd)  # closing the descriptor releases the flock


def _open_lock(root: Path) -> int:
    """``INDEX/LOCK`` for the writer lock: never through a symlink (whose target a save would
    create or truncate), and only a regular file."""
    lock = root / LOCK
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _NONBLOCK, 0o644)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise StoreError(f"{str(lock)!r} is a symbolic link; an index's LOCK must be a regular file. "
                             "Remove the link and save again.") from None
        raise StoreError(f"cannot open the writer lock {str(lock)!r}: {exc}; check the path and its permissions.") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise StoreError(f"{str(lock)!r} is not a regular file; remove it and save again.")
    return fd


def _new_generation(root: Path) -> str:
    """A generation name that sorts after every generation in ``root`` (even if the clock
    stepped back): ``g-<20-digit ns>-<8 hex>``."""
    t = time.time_ns()
    for child in root.iterdir():
        m = _GEN.fullmatch(child.name.removeprefix(".tmp-"))
        if m is not None:
            t = max(t, int(m.group(1)) + 1)
    if t >= 10**20:  # a crafted name from the far future: do not outgrow the format
        t = time.time_ns()
    import uuid  # here: only a save needs it, not a load (1 ms of every start)

    return f"g-{t:020d}-{uuid.uuid4().hex[:8]}"


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


def _cleanup(root: Path, current: str) -> None:
    """Remove generations older than ``current`` and leftovers of saves that died (the
    writer lock is held, so no other save is in flight)."""
    for child in root.iterdir():
        name = child.name
        leftover = name.startswith(".tmp-g-") or (name.startswith(f".{CURRENT}.") and name.endswith(".tmp"))
        if leftover or (_GEN.fullmatch(name) and name < current):
            _remove(child)


def save_index(index: TemporalIndex, path: str | os.PathLike[str]) -> Path:
    """Write ``index`` to directory ``path`` atomically; returns the path."""
    root = Path(path)
    if root.exists() and not root.is_dir():
        raise InvalidInput(f"cannot save an index to {str(root)!r}: it is a file; choose a directory path.")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create the index directory {str(root)!r}: {exc}; check the path and its permissions.") from exc
    with index._write_lock:  # one consistent snapshot + vocabulary, even if writers run meanwhile
        snap = index._snap
        vocab_items = list(index._vocab.items())
    if getattr(snap, "pending", None) is not None:
        raise VectorsPending("documents still wait for their background vectors; TemporalIndex.save() "
                             "waits for them (or call index.wait() first): a saved index is never partial.")
    bm25 = snap.bm25(index.k1, index.b)
    # the lead field as the index's config reads it (derives lead_len for a format-1 load)
    lead = (index.config.lead_tokens, snap.lead_bm25(index.k1, index.b, index.config.lead_tokens))
    try:
        lock = writer_lock(root)
        lock.__enter__()
    except OSError as exc:
        raise StoreError(f"cannot lock the index directory {str(root)!r} for writing: {exc}.") from exc
    try:
        # leftovers of a save killed before its first CURRENT was written do not make a
        # directory foreign
        if not _is_index_dir(root) and any(
            not (c.name.startswith((".tmp-g-", f".{CURRENT}.")) or c.name == LOCK) for c in root.iterdir()
        ):
            raise InvalidInput(
                f"refusing to save into {str(root)!r}: the directory is not empty and is not a chronorank "
                "index (no CURRENT file); choose a new or empty directory."
            )
        gen = _new_generation(root)
        try:
            _write_generation(index, root, gen, snap, vocab_items, bm25, lead)
        except OSError as exc:
            raise StoreError(
                f"saving the index to {str(root)!r} failed: {exc}. Nothing was changed: the previous "
                "generation is still current and the partial files were removed. Free space (or fix the "
                "cause) and save again."
            ) from exc
        _cleanup(root, gen)
    finally:
        lock.__exit__(None, None, None)
    return root


def _write_generation(
    index: TemporalIndex, root: Path, gen: str, snap: Any, vocab_items: list[tuple[str, int]], bm25: Any,
    lead: tuple[int, Any],
) -> None:
    tmp = root / f".tmp-{gen}"
    final = root / gen
    ptmp = root / f".{CURRENT}.{gen}.tmp"
    switched = False
    try:
        tmp.mkdir()
        files: dict[str, Path] = {}

        def npy(name: str, arr: np.ndarray) -> None:
            p = tmp / name
            _write_npy(p, arr)
            files[name] = p

        with (tmp / "docs.jsonl").open("wb") as bfh:
            for rec in snap.records:
                bfh.write(_json_line(rec))
        files["docs.jsonl"] = tmp / "docs.jsonl"
        if snap.vectors is not None:
            npy("vectors.npy", snap.vectors.astype(np.float32, copy=False))
        npy("times.npy", snap.times.astype(np.float64, copy=False))
        npy("term_ids.npy", snap.term_ids.astype(np.int32, copy=False))
        npy("term_ptr.npy", snap.term_ptr.astype(np.int64, copy=False))
        if snap.term_tf is not None:
            npy("term_tf.npy", snap.term_tf.astype(np.int32, copy=False))
        npy("bm25_data.npy", bm25.data)
        npy("bm25_indices.npy", bm25.indices)
        npy("bm25_indptr.npy", bm25.indptr)
        npy("lead_len.npy", np.asarray(snap.lead_len, dtype=np.int64))  # set by lead_bm25
        lead_tokens, lead_m = lead
        npy("lead_data.npy", lead_m.data)
        npy("lead_indices.npy", lead_m.indices)
        npy("lead_indptr.npy", lead_m.indptr)
        # every lead's versions, read now (once) so that the first version question after a
        # load reads none (benchmarks/lead_load.py)
        memo = snap.lead_memo.get(_LEAD_VERSIONS_LANG)
        if memo is None:
            memo = snap.lead_memo.setdefault(_LEAD_VERSIONS_LANG, LeadMemo())
        v_owner, v_which, v_parts, v_lines = memo.arrays_of(snap, _LEAD_VERSIONS_LANG)
        for name, a in zip(_LEAD_VERSIONS, (v_owner, v_which, v_parts, v_lines)):
            npy(name, np.ascontiguousarray(a, dtype=np.int64))
        vocab = sorted(((t, i) for t, i in vocab_items if i < snap.n_terms), key=lambda x: x[1])
        (tmp / "vocab.json").write_bytes(_json_line([t for t, _ in vocab]))
        files["vocab.json"] = tmp / "vocab.json"

        emb = index.embedder
        manifest: dict[str, Any] = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "chronorank_version": __version__,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "n_docs": len(snap),
            "dim": index.dim,
            "n_terms": snap.n_terms,
            "embedder": None if emb is None else {"name": emb.name, "dim": emb.dim},
            "config": index.config.spec(),
            "bm25": {"k1": index.k1, "b": index.b, "method": "lucene"},
            "lead": {"tokens": lead_tokens},
            "lead_versions": {"lang": _LEAD_VERSIONS_LANG, "fingerprint": lead_fingerprint(_LEAD_VERSIONS_LANG),
                              "mentions": int(v_owner.shape[0]), "distinct": int(v_parts.shape[0]),
                              "width": int(v_parts.shape[1])},
            "analyzer": ANALYZER_VERSION,
            "group_key": index.group_key if isinstance(index.group_key, str) else None,
            "bad_dates": index.bad_dates,
            "infer_dates": index.infer_dates,
            "files": {},
        }
        checks: dict[str, dict[str, Any]] = {}
        for name, p in files.items():
            _fsync_file(p)
            checks[name] = {"sha256": _sha256(p), "bytes": p.stat().st_size}
        manifest["files"] = checks
        mpath = tmp / MANIFEST
        mpath.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        _fsync_file(mpath)
        _fsync_dir(tmp)
        os.rename(tmp, final)
        _fsync_dir(root)
        pointer = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "generation": gen,
            "manifest_sha256": _sha256(final / MANIFEST),
        }
        ptmp.write_text(json.dumps(pointer), encoding="utf-8")
        _fsync_file(ptmp)
        os.replace(ptmp, root / CURRENT)
        switched = True
        try:
            _fsync_dir(root)
        except OSError as exc:
            raise StoreError(
                f"saving the index to {str(root)!r}: the new generation is current, but syncing the "
                f"directory failed ({exc}), so a power loss now may bring the previous one back. Check "
                "the disk, then save again."
            ) from exc
    except BaseException:
        if not switched:  # CURRENT still names the previous generation: remove all of this one
            for p in (tmp, final, ptmp):
                if p.exists() or p.is_symlink():
                    _remove(p)
        raise


def _corrupt(root: Path, what: str) -> CorruptIndex:
    return CorruptIndex(
        f"index at {str(root)!r} is damaged: {what}. Restore it from a backup or rebuild it "
        "with `chronorank index CORPUS.jsonl --out DIR`."
    )


def _open_regular(root: Path, path: Path, label: str) -> IO[bytes]:
    """Open ``path`` for reading without following a symlink; it must be a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except FileNotFoundError:
        raise _corrupt(root, f"file {label} is missing") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise _corrupt(root, f"{label} is a symbolic link; an index holds only regular files") from None
        raise StoreError(f"cannot read {label} of the index at {str(root)!r}: {exc}.") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _corrupt(root, f"{label} is not a regular file (a named pipe, a device or a directory?)")
    if _NONBLOCK:
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _loads(root: Path, raw: bytes | str, label: str) -> Any:
    try:
        return json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: nesting too deep
        raise _corrupt(root, f"{label} is not valid JSON") from None


def _read_pointer(root: Path) -> dict[str, Any]:
    with _open_regular(root, root / CURRENT, CURRENT) as fh:
        raw = fh.read(1 << 16)
    try:
        pointer = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise _corrupt(root, "CURRENT is not valid JSON") from None
    if isinstance(pointer, dict) and "generation" in pointer and pointer.get("format") != FORMAT_NAME:
        raise _corrupt(root, f"CURRENT's format marker reads {pointer.get('format')!r}")
    if not isinstance(pointer, dict) or pointer.get("format") != FORMAT_NAME:
        raise InvalidInput(f"{str(root)!r} has a CURRENT file that is not a chronorank index marker.")
    version = pointer.get("format_version")
    if not (_is_int(version) and version in READ_VERSIONS):
        raise CorruptIndex(
            f"index at {str(root)!r} uses format version {version!r}; this chronorank reads versions "
            f"{', '.join(map(str, READ_VERSIONS))}. Rebuild the index with this version (`chronorank index`)."
        )
    gen = pointer.get("generation")
    if not isinstance(gen, str) or not _GEN.fullmatch(gen):
        raise _corrupt(root, f"CURRENT names generation {gen!r}")
    return pointer


def _current_generation(root: Path) -> str | None:
    try:
        return str(_read_pointer(root)["generation"])
    except (ChronorankError, OSError):
        return None


def read_manifest(path: str | os.PathLike[str]) -> tuple[Path, dict[str, Any]]:
    """(generation directory, manifest) of the index at ``path``, checked."""
    root = Path(path)
    if not root.exists():
        raise InvalidInput(f"no index at {str(root)!r}: the path does not exist. Build one with `chronorank index`.")
    if not root.is_dir():
        raise InvalidInput(f"{str(root)!r} is a file, not an index directory.")
    cur = root / CURRENT
    if not cur.is_file() and not cur.is_symlink():
        raise InvalidInput(
            f"{str(root)!r} is not a chronorank index (no CURRENT file). Pass the directory written by "
            "TemporalIndex.save() or `chronorank index --out DIR`."
        )
    pointer = _read_pointer(root)
    gen = pointer["generation"]
    gdir = root / gen
    try:
        st = os.lstat(gdir)
    except FileNotFoundError:
        raise _corrupt(root, f"generation {gen} has no manifest.json") from None
    if not stat.S_ISDIR(st.st_mode):
        raise _corrupt(root, f"generation {gen} is not a plain directory (a symbolic link?)")
    with _open_regular(root, gdir / MANIFEST, MANIFEST) as fh:
        raw = fh.read(1 << 24)
    if hashlib.sha256(raw).hexdigest() != pointer.get("manifest_sha256"):
        raise _corrupt(root, "manifest.json does not match its checksum in CURRENT")
    manifest = _loads(root, raw, MANIFEST)
    _check_manifest(root, manifest)
    return gdir, manifest


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_manifest(root: Path, man: Any) -> None:
    if not isinstance(man, dict):
        raise _corrupt(root, "manifest.json is not a JSON object")
    n: Any = man.get("n_docs")
    dim: Any = man.get("dim")
    n_terms: Any = man.get("n_terms")
    if not (_is_int(n) and n >= 0):
        raise _corrupt(root, f"manifest.json gives n_docs={n!r}")
    if not (dim is None or (_is_int(dim) and 0 < dim <= 1 << 16)):
        raise _corrupt(root, f"manifest.json gives dim={dim!r}")
    if not (_is_int(n_terms) and n_terms >= 0):
        raise _corrupt(root, f"manifest.json gives n_terms={n_terms!r}")
    files = man.get("files")
    if not isinstance(files, dict):
        raise _corrupt(root, "manifest.json has no file list")
    for name, info in files.items():
        if name not in _ALLOWED:
            # confinement: only the fixed names, so no '../', absolute path or other file is opened
            raise _corrupt(root, f"manifest.json lists a file {name!r} that is not part of the format")
        if not (isinstance(info, dict) and _is_int(info.get("bytes")) and isinstance(info.get("sha256"), str)):
            raise _corrupt(root, f"manifest.json's entry for {name} is malformed")
    for name in _REQUIRED:
        if name not in files:
            raise _corrupt(root, f"manifest.json does not list {name}")
    bm = man.get("bm25")
    if not (isinstance(bm, dict) and all(isinstance(bm.get(k), (int, float)) and not isinstance(bm.get(k), bool)
                                         for k in ("k1", "b"))):
        raise _corrupt(root, "manifest.json's bm25 parameters are malformed")
    if man.get("bad_dates", "raise") not in ("raise", "missing"):
        raise _corrupt(root, f"manifest.json gives bad_dates={man.get('bad_dates')!r}")
    gk = man.get("group_key")
    if not (gk is None or isinstance(gk, str)):
        raise _corrupt(root, f"manifest.json gives group_key={gk!r}")
    emb = man.get("embedder")
    if not (emb is None or isinstance(emb, dict)):
        raise _corrupt(root, "manifest.json's embedder entry is malformed")
    if not (man.get("config") is None or isinstance(man.get("config"), (str, dict))):
        raise _corrupt(root, "manifest.json's config entry is malformed")


def _read_array(root: Path, fh: IO[bytes], name: str, shape: tuple[int, ...], mmap: bool) -> np.ndarray:
    """The array in ``fh`` after checking its header against the expected dtype and ``shape``
    and its size against the header (nothing is allocated from an unchecked header)."""
    fmt = np.lib.format
    kind, sizes = _ARRAYS[name]
    try:
        version = fmt.read_magic(fh)
        if version == (1, 0):
            got_shape, fortran, dtype = fmt.read_array_header_1_0(fh)
        elif version in ((2, 0), (3, 0)):
            got_shape, fortran, dtype = fmt.read_array_header_2_0(fh)
        else:
            raise ValueError(f"npy version {version}")
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError) as exc:
        raise _corrupt(root, f"file {name} is not a readable .npy array ({exc})") from None
    if dtype.hasobject or dtype.kind != kind or dtype.itemsize not in sizes or dtype.byteorder == ">" or fortran:
        raise _corrupt(root, f"file {name} holds {dtype} (fortran order {fortran}), not the format's type")
    if tuple(got_shape) != shape:
        raise _corrupt(root, f"file {name} has shape {tuple(got_shape)}, the manifest implies {shape}")
    offset = fh.tell()
    count = math.prod(shape)  # a Python int: a crafted shape cannot wrap around int64
    size = os.fstat(fh.fileno()).st_size
    if size != offset + count * dtype.itemsize:
        raise _corrupt(root, f"file {name} has {size} bytes, its header implies {offset + count * dtype.itemsize}")
    if count == 0:
        return np.zeros(shape, dtype=dtype)
    if mmap:
        # a plain ndarray over the mapping: an np.memmap runs Python code (__getitem__,
        # __array_finalize__) on every slice and result, ~20 times per search
        return np.memmap(fh, dtype=dtype, mode="r", offset=offset, shape=shape).view(np.ndarray)
    out = np.fromfile(fh, dtype=dtype, count=count)
    if out.shape[0] != count:
        raise _corrupt(root, f"file {name} is truncated")
    return out.reshape(shape)


def _check_finite_rows(root: Path, name: str, a: np.ndarray) -> None:
    """Refuse a matrix with a NaN or infinite value, naming the file and the first bad row
    (a block at a time: a matrix-vector product per block, so a mapped file is read once)."""
    if a.size == 0:
        return
    ones = np.ones(a.shape[1], dtype=a.dtype)
    step = max(1, (1 << 22) // a.shape[1])
    for start in range(0, a.shape[0], step):
        block = a[start : start + step]
        with np.errstate(all="ignore"):
            ok = bool(np.isfinite(block @ ones).all())
        if not ok:
            bad = np.flatnonzero(~np.isfinite(block).all(axis=1))
            row = start + int(bad[0]) if bad.size else start
            raise _corrupt(root, f"{name} row {row} holds NaN or infinite values (vectors must be finite)")


def _check_pointer(root: Path, name: str, ptr: np.ndarray, total: int) -> None:
    if int(ptr[0]) != 0 or int(ptr[-1]) != total or (ptr.shape[0] > 1 and bool((np.diff(ptr) < 0).any())):
        raise _corrupt(root, f"{name} is not a valid offset array (0 .. {total}, non-decreasing)")


def _check_range(root: Path, name: str, ids: np.ndarray, hi: int) -> None:
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= hi):
        raise _corrupt(root, f"{name} holds values outside [0, {hi})")


def _read_records(root: Path, fh: IO[bytes], n: int, mmap: bool) -> LazyRecords:
    """The records of ``docs.jsonl``, read lazily: here only where each of its ``n`` lines
    starts (one pass over the bytes); a record is parsed and checked when it is read, and a
    damaged one raises :class:`CorruptIndex` then (a repeated id at the first id lookup)."""
    size = os.fstat(fh.fileno()).st_size
    buf: Any = b""
    if size and mmap:
        buf = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_READ)
    elif size:
        buf = fh.read()
    raw = np.frombuffer(buf, dtype=np.uint8)
    ends = [np.flatnonzero(raw[s:s + _CHUNK] == 10) + s for s in range(0, size, _CHUNK)]
    nl = np.concatenate(ends) if ends else np.zeros(0, dtype=np.int64)
    if size and raw[size - 1] != 10:  # a last line without its newline
        nl = np.concatenate([nl, np.array([size], dtype=np.int64)])
    if nl.shape[0] != n:
        raise _corrupt(root, f"docs.jsonl holds {nl.shape[0]} documents, the manifest says {n}")
    starts = np.concatenate([np.zeros(1, dtype=np.int64), nl.astype(np.int64) + 1])
    return LazyRecords(DocLines(buf, starts, lambda what: _corrupt(root, what)))


def load_index(
    cls: type[TemporalIndex],
    path: str | os.PathLike[str],
    *,
    embedder: Any = "auto",
    verify: bool = True,
    mmap: bool = True,
) -> TemporalIndex:
    root = Path(path)
    for attempt in range(_LOAD_ATTEMPTS):
        tried = _current_generation(root)
        try:
            return _load_once(cls, root, embedder=embedder, verify=verify, mmap=mmap)
        except (CorruptIndex, StoreError):
            # a writer may have switched CURRENT and removed the generation this reader was
            # opening: if CURRENT now names another generation, read that one instead
            now = _current_generation(root)
            if attempt + 1 == _LOAD_ATTEMPTS or now is None or now == tried:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def _load_once(
    cls: type[TemporalIndex], root: Path, *, embedder: Any, verify: bool, mmap: bool
) -> TemporalIndex:
    gdir, man = read_manifest(root)
    files: dict[str, Any] = man["files"]
    handles: dict[str, IO[bytes]] = {}
    try:
        for name, info in files.items():
            fh = _open_regular(root, gdir / name, name)
            handles[name] = fh
            size = os.fstat(fh.fileno()).st_size
            if size != info["bytes"]:
                raise _corrupt(root, f"file {name} has {size} bytes, the manifest says {info['bytes']} (truncated?)")
        if verify:
            _verify(root, handles, files)
        n = int(man["n_docs"])
        dim = man["dim"]
        records = _read_records(root, handles["docs.jsonl"], n, mmap)
        vocab_list = _loads(root, handles["vocab.json"].read(), "vocab.json")
        if not (isinstance(vocab_list, list) and set(map(type, vocab_list)) <= {str}
                and len(set(vocab_list)) == len(vocab_list) == man["n_terms"]):
            raise _corrupt(root, "vocab.json is not a list of distinct terms of the manifest's length")
        n_terms = len(vocab_list)

        def arr(name: str, shape: tuple[int, ...]) -> np.ndarray:
            return _read_array(root, handles[name], name, shape, mmap)

        vectors = None
        if "vectors.npy" in files:
            if dim is None:
                raise _corrupt(root, "vectors.npy is present but the manifest gives no dimension")
            vectors = arr("vectors.npy", (n, dim))
            _check_finite_rows(root, "vectors.npy", vectors)
        times = arr("times.npy", (4, n))
        if bool(np.isinf(times).any()):  # NaN means "missing"; an infinite time is no time
            raise _corrupt(root, "times.npy holds an infinite time")
        term_ptr = arr("term_ptr.npy", (n + 1,))
        n_post = int(term_ptr[-1])
        if not 0 <= n_post <= int(files["term_ids.npy"]["bytes"]) // 4:
            raise _corrupt(root, f"term_ptr.npy ends at {n_post}, beyond term_ids.npy")
        term_ids: np.ndarray = arr("term_ids.npy", (n_post,))
        _check_pointer(root, "term_ptr.npy", term_ptr, n_post)
        _check_range(root, "term_ids.npy", term_ids, n_terms)
        term_tf = None
        if "term_tf.npy" in files:
            term_tf = arr("term_tf.npy", (n_post,))
            if term_tf.size and int(term_tf.min()) < 1:
                raise _corrupt(root, "term_tf.npy holds a count below 1")

        def csc(prefix: str) -> Bm25Matrix:
            """A score matrix's three files (``{prefix}_indptr/_indices/_data.npy``), each
            checked against the others before use."""
            ptr = arr(f"{prefix}_indptr.npy", (n_terms + 1,))
            nnz = int(ptr[-1])
            if not 0 <= nnz <= int(files[f"{prefix}_indices.npy"]["bytes"]) // 4:
                raise _corrupt(root, f"{prefix}_indptr.npy ends at {nnz}, beyond {prefix}_indices.npy")
            _check_pointer(root, f"{prefix}_indptr.npy", ptr, nnz)
            rows = arr(f"{prefix}_indices.npy", (nnz,))
            _check_range(root, f"{prefix}_indices.npy", rows, n)
            data = arr(f"{prefix}_data.npy", (nnz,))
            if data.size and not bool(np.isfinite(data).all()):
                raise _corrupt(root, f"{prefix}_data.npy holds NaN or infinite scores")
            return Bm25Matrix(data, rows, ptr, n)

        bm = csc("bm25")
        lead_len = None
        if "lead_len.npy" in files:
            lead_len = arr("lead_len.npy", (n,))
            _check_range(root, "lead_len.npy", lead_len, 1 << 31)
        lead_m: tuple[int, Bm25Matrix] | None = None
        lead_info = man.get("lead")
        if any(f in files for f in _LEAD_MATRIX):
            tokens: Any = lead_info.get("tokens") if isinstance(lead_info, dict) else None
            if not (all(f in files for f in _LEAD_MATRIX) and _is_int(tokens) and tokens >= 1 and lead_len is not None):
                raise _corrupt(root, "the lead matrix files, lead_len.npy and manifest.json's lead entry disagree")
            lead_m = (int(tokens), csc("lead"))
        lead_memo = _read_lead_versions(root, files, man.get("lead_versions"), arr, n)
    finally:
        for fh in handles.values():
            fh.close()  # np.memmap keeps its own mapping

    emb_info = man.get("embedder")
    if isinstance(embedder, str) and embedder == "auto":
        emb = None
        if emb_info is not None:
            name = str(emb_info.get("name"))
            if name == "minilm-l6-v2-int8":
                emb = get_embedder("default")
            elif name.startswith("hashing-"):
                try:
                    emb = get_embedder(name)
                except InvalidInput:
                    raise _corrupt(root, f"manifest.json names embedder {name!r}") from None
    else:
        emb = get_embedder(embedder)
    if emb is not None and dim is not None and emb.dim != dim:
        raise InvalidInput(f"embedder {emb.name!r} gives {emb.dim}-dimensional vectors but the index holds {dim}.")

    try:
        idx = cls(embedder=None, config=man.get("config"), group_key=man.get("group_key"),
                  bad_dates=man.get("bad_dates", "raise"), infer_dates=man.get("infer_dates", True) is not False,
                  k1=man["bm25"]["k1"], b=man["bm25"]["b"])
    except InvalidInput as exc:
        raise _corrupt(root, f"manifest.json's settings are invalid ({exc})") from None
    idx.embedder = emb
    idx.dim = dim
    idx._vocab = dict(zip(vocab_list, range(len(vocab_list))))
    bm25: Bm25Matrix | None = bm
    if man.get("analyzer", 1) != ANALYZER_VERSION:
        # saved by a chronorank that analysed text differently: the records hold the texts,
        # so the keyword side is rebuilt here (the files on disk are left as they are)

        idx._vocab = {}
        term_ids, term_ptr = encode_terms(analyze_many((r["text"] for r in records), prefixes=True), idx._vocab)
        term_tf = None
        bm25 = None  # built from the new terms on first use
        lead_len = lead_m = None  # and so is the lead, from the texts
    snap = _Snapshot(
        records=records, vectors=vectors, times=times, term_ids=term_ids,
        term_ptr=term_ptr, n_terms=len(idx._vocab), groups=None, bm25=bm25, lead_len=lead_len,
        row_of=records.row_of(), term_tf=term_tf,
    )
    snap.groups = idx._group_codes(records)
    if lead_m is not None:
        snap._lead[lead_m[0]] = lead_m[1]
    if lead_memo is not None:
        snap.lead_memo[_LEAD_VERSIONS_LANG] = lead_memo
    idx._snap = snap
    return idx


def _read_lead_versions(root: Path, files: dict[str, Any], info: Any, arr: Any, n: int) -> LeadMemo | None:
    """The saved lead versions as a :class:`LeadMemo`, each array checked against the others;
    None when the index has none or read them with other patterns (they are read again)."""
    present = [f in files for f in _LEAD_VERSIONS]
    if not any(present):
        return None
    ok_info = isinstance(info, dict) and all(_is_int(info.get(k)) and info[k] >= 0 for k in ("mentions", "distinct", "width"))
    if not all(present) or not ok_info:
        raise _corrupt(root, "the lead version files and manifest.json's lead_versions entry disagree")
    if info.get("lang") != _LEAD_VERSIONS_LANG or info.get("fingerprint") != lead_fingerprint(_LEAD_VERSIONS_LANG):
        return None
    m, d, w = int(info["mentions"]), int(info["distinct"]), int(info["width"])
    owner = np.asarray(arr("leadver_owner.npy", (m,)))
    which = np.asarray(arr("leadver_which.npy", (m,)))
    parts = np.asarray(arr("leadver_parts.npy", (d, w)))
    lines = np.asarray(arr("leadver_lines.npy", (d,)))
    _check_range(root, "leadver_owner.npy", owner, n)
    _check_range(root, "leadver_which.npy", which, d)
    _check_range(root, "leadver_parts.npy", parts.ravel(), 1 << 62)
    _check_range(root, "leadver_lines.npy", lines, w + 1)
    return LeadMemo.from_arrays(n, owner, which, parts, lines)
