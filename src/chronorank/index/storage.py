"""On-disk format of a :class:`~chronorank.index.TemporalIndex` (format version 1).

An index is a directory::

    INDEX/
      CURRENT               {"format": "chronorank-index", "generation": "g-...", "manifest_sha256": ...}
      g-<time>-<rand>/      one complete generation
        manifest.json       format, version, counts, embedder, config, sha256 + size of every file
        docs.jsonl          the stored records (id, text, times, metadata), one a line
        vectors.npy         float32 (n, dim), C order (absent for keyword-only indexes)
        times.npy           float64 (4, n): date, updated, valid_from, valid_to (NaN = missing)
        term_ids.npy, term_ptr.npy, vocab.json   the analysed documents (BM25 source of truth)
        bm25_data.npy, bm25_indices.npy, bm25_indptr.npy   the BM25 score matrix (CSC)

Saving is atomic: the new generation is written under a temporary name, every file and
the directory are fsynced, the directory is renamed into place, and only then is
``CURRENT`` replaced (``os.replace`` of a fsynced temporary file). A crash at any moment
leaves ``CURRENT`` naming a complete generation: the previous index stays loadable. Old
generations are removed after the switch.

Loading checks the format marker and version, then every file's size and sha256 against
the manifest (``verify=True``), and memory-maps the arrays. Any mismatch raises
:class:`~chronorank.errors.CorruptIndex` naming the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from chronorank.errors import CorruptIndex, InvalidInput
from chronorank.index.text import ANALYZER_VERSION

if TYPE_CHECKING:
    from chronorank.index.core import TemporalIndex

__all__ = ["save_index", "load_index", "FORMAT_NAME", "FORMAT_VERSION"]

FORMAT_NAME = "chronorank-index"
FORMAT_VERSION = 1
CURRENT = "CURRENT"
MANIFEST = "manifest.json"
_CHUNK = 1 << 22


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while True:
            block = fh.read(_CHUNK)
            if not block:
                break
            h.update(block)
    return h.hexdigest()


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds (Windows)
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _write_npy(path: Path, arr: np.ndarray) -> None:
    with path.open("wb") as fh:
        np.save(fh, np.ascontiguousarray(arr), allow_pickle=False)


def _is_index_dir(path: Path) -> bool:
    return (path / CURRENT).is_file()


def save_index(index: TemporalIndex, path: str | os.PathLike[str]) -> Path:
    """Write ``index`` to directory ``path`` atomically; returns the path."""
    root = Path(path)
    if root.exists() and not root.is_dir():
        raise InvalidInput(f"cannot save an index to {str(root)!r}: it is a file; choose a directory path.")
    # leftovers of a save killed before its first CURRENT was written do not make a
    # directory foreign
    if root.is_dir() and not _is_index_dir(root) and any(
        not c.name.startswith((".tmp-g-", f".{CURRENT}.")) for c in root.iterdir()
    ):
        raise InvalidInput(
            f"refusing to save into {str(root)!r}: the directory is not empty and is not a chronorank "
            "index (no CURRENT file); choose a new or empty directory."
        )
    root.mkdir(parents=True, exist_ok=True)
    with index._write_lock:  # one consistent snapshot + vocabulary, even if writers run meanwhile
        snap = index._snap
        vocab_items = list(index._vocab.items())
    bm25 = snap.bm25(index.k1, index.b)
    gen = f"g-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}"
    tmp = root / f".tmp-{gen}"
    tmp.mkdir()
    try:
        files: dict[str, Path] = {}

        def npy(name: str, arr: np.ndarray) -> None:
            p = tmp / name
            _write_npy(p, arr)
            files[name] = p

        with (tmp / "docs.jsonl").open("w", encoding="utf-8") as fh:
            for rec in snap.records:
                fh.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")
        files["docs.jsonl"] = tmp / "docs.jsonl"
        if snap.vectors is not None:
            npy("vectors.npy", snap.vectors.astype(np.float32, copy=False))
        npy("times.npy", snap.times.astype(np.float64, copy=False))
        npy("term_ids.npy", snap.term_ids.astype(np.int32, copy=False))
        npy("term_ptr.npy", snap.term_ptr.astype(np.int64, copy=False))
        npy("bm25_data.npy", bm25.data)
        npy("bm25_indices.npy", bm25.indices)
        npy("bm25_indptr.npy", bm25.indptr)
        vocab = sorted(((t, i) for t, i in vocab_items if i < snap.n_terms), key=lambda x: x[1])
        (tmp / "vocab.json").write_text(json.dumps([t for t, _ in vocab], ensure_ascii=False), encoding="utf-8")
        files["vocab.json"] = tmp / "vocab.json"

        from chronorank import __version__

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
            "analyzer": ANALYZER_VERSION,
            "group_key": index.group_key if isinstance(index.group_key, str) else None,
            "bad_dates": index.bad_dates,
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
        final = root / gen
        os.rename(tmp, final)
        _fsync_dir(root)
        pointer = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "generation": gen,
            "manifest_sha256": _sha256(final / MANIFEST),
        }
        ptmp = root / f".{CURRENT}.{gen}.tmp"
        ptmp.write_text(json.dumps(pointer), encoding="utf-8")
        _fsync_file(ptmp)
        os.replace(ptmp, root / CURRENT)
        _fsync_dir(root)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    for child in root.iterdir():  # old generations and leftovers of killed saves
        if child.name != gen and (child.name.startswith(("g-", ".tmp-g-")) or child.name.startswith(f".{CURRENT}.")):
            if child.is_dir():
                shutil.rmtree(child, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    child.unlink()
    return root


def _corrupt(root: Path, what: str) -> CorruptIndex:
    return CorruptIndex(
        f"index at {str(root)!r} is damaged: {what}. Restore it from a backup or rebuild it "
        "with `chronorank index CORPUS.jsonl --out DIR`."
    )


def read_manifest(path: str | os.PathLike[str]) -> tuple[Path, dict[str, Any]]:
    """(generation directory, manifest) of the index at ``path``, checked."""
    root = Path(path)
    if not root.exists():
        raise InvalidInput(f"no index at {str(root)!r}: the path does not exist. Build one with `chronorank index`.")
    if not root.is_dir():
        raise InvalidInput(f"{str(root)!r} is a file, not an index directory.")
    cur = root / CURRENT
    if not cur.is_file():
        raise InvalidInput(
            f"{str(root)!r} is not a chronorank index (no CURRENT file). Pass the directory written by "
            "TemporalIndex.save() or `chronorank index --out DIR`."
        )
    try:
        pointer = json.loads(cur.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise _corrupt(root, "CURRENT is not valid JSON") from None
    if isinstance(pointer, dict) and "generation" in pointer and pointer.get("format") != FORMAT_NAME:
        raise _corrupt(root, f"CURRENT's format marker reads {pointer.get('format')!r}")
    if not isinstance(pointer, dict) or pointer.get("format") != FORMAT_NAME:
        raise InvalidInput(f"{str(root)!r} has a CURRENT file that is not a chronorank index marker.")
    version = pointer.get("format_version")
    if version != FORMAT_VERSION:
        raise CorruptIndex(
            f"index at {str(root)!r} uses format version {version!r}; this chronorank reads version "
            f"{FORMAT_VERSION}. Rebuild the index with this version (`chronorank index`)."
        )
    gen = pointer.get("generation")
    if not isinstance(gen, str) or "/" in gen or "\\" in gen or not gen.startswith("g-"):
        raise _corrupt(root, f"CURRENT names generation {gen!r}")
    gdir = root / gen
    mpath = gdir / MANIFEST
    if not mpath.is_file():
        raise _corrupt(root, f"generation {gen} has no manifest.json")
    if _sha256(mpath) != pointer.get("manifest_sha256"):
        raise _corrupt(root, "manifest.json does not match its checksum in CURRENT")
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    return gdir, manifest


def load_index(
    cls: type[TemporalIndex],
    path: str | os.PathLike[str],
    *,
    embedder: Any = "auto",
    verify: bool = True,
    mmap: bool = True,
) -> TemporalIndex:
    from chronorank.index.bm25 import Bm25Matrix
    from chronorank.index.core import _Snapshot
    from chronorank.index.embedders import get_embedder

    root = Path(path)
    gdir, man = read_manifest(root)
    files: dict[str, Any] = man.get("files", {})
    for name, info in files.items():
        p = gdir / name
        if not p.is_file():
            raise _corrupt(root, f"file {name} is missing")
        size = p.stat().st_size
        if size != info.get("bytes"):
            raise _corrupt(root, f"file {name} has {size} bytes, the manifest says {info.get('bytes')} (truncated?)")
        if verify and _sha256(p) != info.get("sha256"):
            raise _corrupt(root, f"file {name} does not match its sha256 checksum (bit rot or tampering)")

    def arr(name: str) -> np.ndarray:
        try:
            return np.load(gdir / name, mmap_mode="r" if mmap else None, allow_pickle=False)
        except (ValueError, OSError) as exc:
            raise _corrupt(root, f"file {name} is not a readable .npy array ({exc})") from None

    emb_info = man.get("embedder")
    if isinstance(embedder, str) and embedder == "auto":
        emb = None
        if emb_info is not None:
            name = str(emb_info.get("name"))
            if name == "minilm-l6-v2-int8":
                emb = get_embedder("default")
            elif name.startswith("hashing-"):
                emb = get_embedder(name)
    else:
        emb = get_embedder(embedder)
    dim = man.get("dim")
    if emb is not None and dim is not None and emb.dim != dim:
        raise InvalidInput(f"embedder {emb.name!r} gives {emb.dim}-dimensional vectors but the index holds {dim}.")

    idx = cls(embedder=None, config=man.get("config"), group_key=man.get("group_key"),
              bad_dates=man.get("bad_dates", "raise"),
              k1=man["bm25"]["k1"], b=man["bm25"]["b"])
    idx.embedder = emb
    idx.dim = dim
    records = []
    with (gdir / "docs.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            records.append(json.loads(line))
    vocab_list = json.loads((gdir / "vocab.json").read_text(encoding="utf-8"))
    idx._vocab = {t: i for i, t in enumerate(vocab_list)}
    n = int(man["n_docs"])
    vectors = arr("vectors.npy") if "vectors.npy" in files else None
    times = arr("times.npy")
    term_ptr = arr("term_ptr.npy")
    bm = Bm25Matrix(arr("bm25_data.npy"), arr("bm25_indices.npy"), arr("bm25_indptr.npy"), n)
    checks = [
        (len(records) == n, "docs.jsonl"),
        (vectors is None or vectors.shape == (n, dim), "vectors.npy"),
        (times.shape == (4, n), "times.npy"),
        (term_ptr.shape == (n + 1,), "term_ptr.npy"),
        (bm.indptr.shape == (len(vocab_list) + 1,), "bm25_indptr.npy"),
    ]
    for ok, name in checks:
        if not ok:
            raise _corrupt(root, f"{name} does not match the manifest's shape")
    term_ids: np.ndarray = arr("term_ids.npy")
    bm25: Bm25Matrix | None = bm
    if man.get("analyzer", 1) != ANALYZER_VERSION:
        # saved by a chronorank that analysed text differently: the records hold the texts,
        # so the keyword side is rebuilt here (the files on disk are left as they are)
        from chronorank.index.bm25 import encode_terms
        from chronorank.index.text import analyze_many

        idx._vocab = {}
        term_ids, term_ptr = encode_terms(analyze_many((r["text"] for r in records), prefixes=True), idx._vocab)
        bm25 = None  # built from the new terms on first use
    snap = _Snapshot(
        records=records, vectors=vectors, times=times, term_ids=term_ids,
        term_ptr=term_ptr, n_terms=len(idx._vocab), groups=None, bm25=bm25,
    )
    snap.groups = idx._group_codes(records)
    idx._snap = snap
    return idx
