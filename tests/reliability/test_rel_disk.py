"""Disk faults and durability order (issue 18, item 7 and the fsync claim).

- a real full disk: a small tmpfs mounted for the test (root only; skipped with the reason
  otherwise), filled to every page boundary around one save's size, so the save fails at
  each of its steps in turn -- the CURRENT step included;
- injected ``ENOSPC`` at the CURRENT step where no tmpfs can be mounted;
- the fsync / rename order of a save, recorded from the system calls, checked against the
  rules that make a save survive power loss (not just ``kill -9``, which keeps the page
  cache) -- and the checker is shown to catch copies of the storage code without fsync,
  without the directory fsync, and with CURRENT rewritten in place.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import traceback
import types
from pathlib import Path

import pytest

from chronorank.errors import StoreError
from chronorank.index import TemporalIndex, storage


def _index(n: int, tag: str = "d") -> TemporalIndex:
    idx = TemporalIndex(embedder=None)
    idx.add([{"id": f"{tag}{i}", "text": f"alpha beta {tag} {i} " + "word " * 30, "date": "2024-01-01"}
             for i in range(n)])
    return idx


def _entries(root: Path) -> set[str]:
    return {p.name for p in root.iterdir()}


def _generation(root: Path) -> str:
    return json.loads((root / "CURRENT").read_text())["generation"]


@pytest.fixture()
def small_fs(tmp_path):
    mnt = tmp_path / "fs"
    mnt.mkdir()
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs Linux and root")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _fill(mnt: Path, leave: int) -> Path:
    """A filler file that leaves about ``leave`` bytes free on ``mnt``."""
    filler = mnt / "filler"
    filler.unlink(missing_ok=True)
    st = os.statvfs(mnt)
    free = st.f_bavail * st.f_frsize
    with filler.open("wb") as fh:
        fh.write(b"\0" * max(0, free - leave))
    return filler


def test_full_disk_at_every_step_keeps_the_previous_generation_and_leaks_nothing(small_fs):
    root = small_fs / "idx"
    old = _index(5, "old")
    old.save(root)
    before = _entries(root)
    gen0 = _generation(root)
    new = _index(40, "new")
    page = os.statvfs(small_fs).f_frsize
    failures = successes = 0
    steps: set[str] = set()
    for pages in range(0, 40):
        filler = _fill(small_fs, pages * page)
        try:
            new.save(root)
        except StoreError as exc:
            failures += 1
            assert "previous generation is still current" in str(exc)
            assert isinstance(exc.__cause__, OSError)  # ENOSPC (numpy's short write carries no errno)
            frames = traceback.extract_tb(exc.__cause__.__traceback__)
            steps.add([f.line for f in frames if f.filename == storage.__file__][-1] or "")
            assert _entries(root) == before, f"{pages} pages free: leftovers {_entries(root) - before}"
            assert _generation(root) == gen0
            assert sorted(TemporalIndex.load(root).ids) == sorted(old.ids)
        else:
            successes += 1
            assert sorted(TemporalIndex.load(root).ids) == sorted(new.ids)
            filler.unlink()
            break
        finally:
            filler.unlink(missing_ok=True)
    assert failures >= 3 and successes == 1  # several steps failed, then the save fitted
    assert any("ptmp" in line for line in steps), steps  # the CURRENT step was among them
    # once space is back, the next save succeeds and leaves one generation
    new.add([{"id": "later", "text": "alpha later"}])
    new.save(root)
    assert len(TemporalIndex.load(root)) == 41
    assert len([n for n in _entries(root) if n.startswith("g-")]) == 1


@pytest.mark.parametrize("step", ["current_tmp", "current_replace", "generation_rename", "npy_write"])
def test_injected_disk_full_at_a_step_leaves_the_previous_generation(tmp_path, monkeypatch, step):
    root = tmp_path / "idx"
    old = _index(5, "old")
    old.save(root)
    before = _entries(root)
    enospc = OSError(errno.ENOSPC, "No space left on device")

    def fail(*a, **k):
        raise enospc

    if step == "current_tmp":
        real = storage._fsync_file
        monkeypatch.setattr(storage, "_fsync_file", lambda p: fail() if ".CURRENT." in p.name else real(p))
    elif step == "current_replace":
        monkeypatch.setattr(storage.os, "replace", fail)
    elif step == "generation_rename":
        monkeypatch.setattr(storage.os, "rename", fail)
    else:
        real_npy = storage._write_npy
        monkeypatch.setattr(storage, "_write_npy", lambda p, a: fail() if p.name == "term_ptr.npy" else real_npy(p, a))
    new = _index(30, "new")
    with pytest.raises(StoreError, match="No space left"):
        new.save(root)
    assert _entries(root) == before
    assert sorted(TemporalIndex.load(root).ids) == sorted(old.ids)
    monkeypatch.undo()
    new.save(root)
    assert sorted(TemporalIndex.load(root).ids) == sorted(new.ids)
    assert _entries(root) == {"CURRENT", "LOCK", _generation(root)}


# ------------------------------------------------------------------ durability order


def _record(monkeypatch) -> list[tuple[str, str, str]]:
    """Record fsync (with the fd's path), rename and replace as they happen."""
    events: list[tuple[str, str, str]] = []
    real_fsync, real_rename, real_replace = os.fsync, os.rename, os.replace

    def fsync(fd):
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}"), ""))
        return real_fsync(fd)

    def rename(a, b, **k):
        events.append(("rename", os.path.realpath(a), os.path.realpath(b)))
        return real_rename(a, b, **k)

    def replace(a, b, **k):
        events.append(("replace", os.path.realpath(a), os.path.realpath(b)))
        return real_replace(a, b, **k)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "rename", rename)
    monkeypatch.setattr(os, "replace", replace)
    return events


def durability_violations(events: list[tuple[str, str, str]], root: Path, inode_before: int | None) -> list[str]:
    """What makes a save unsafe on power loss, from its recorded system calls."""
    root = Path(os.path.realpath(root))
    gen = _generation(root)
    final = root / gen
    out: list[str] = []

    def first(pred) -> int:
        return next((i for i, e in enumerate(events) if pred(e)), -1)

    ren = first(lambda e: e[0] == "rename" and e[2] == str(final))
    if ren < 0:
        return ["the generation directory was not renamed into place"]
    tmp = Path(events[ren][1])
    for f in sorted(final.iterdir()):
        if first(lambda e, f=f: e[0] == "fsync" and e[1] == str(tmp / f.name)) not in range(0, ren):
            out.append(f"{f.name} was not fsynced before the generation was renamed into place")
    if first(lambda e: e[0] == "fsync" and e[1] == str(tmp)) not in range(0, ren):
        out.append("the new generation's directory was not fsynced before its rename")
    rep = first(lambda e: e[0] == "replace" and e[2] == str(root / "CURRENT"))
    if rep < 0:
        out.append("CURRENT was not replaced atomically (rewritten in place?)")
    else:
        if first(lambda e: e[0] == "fsync" and e[1] == events[rep][1]) not in range(0, rep):
            out.append("the new CURRENT was not fsynced before it replaced the old one")
        if not any(e[0] == "fsync" and e[1] == str(root) for e in events[ren + 1:rep]):
            out.append("the index directory was not fsynced between the rename and the switch")
        if not any(e[0] == "fsync" and e[1] == str(root) for e in events[rep + 1:]):
            out.append("the index directory was not fsynced after CURRENT was switched")
    if inode_before is not None and os.stat(root / "CURRENT").st_ino == inode_before:
        out.append("CURRENT kept its inode: it was rewritten in place")
    return out


def _save_with(module: types.ModuleType, tmp_path: Path, monkeypatch) -> list[str]:
    root = tmp_path / "idx"
    storage.save_index(_index(5, "old"), root)  # the first generation, saved by the real code
    inode = os.stat(root / "CURRENT").st_ino
    events = _record(monkeypatch)
    module.save_index(_index(8, "new"), root)
    monkeypatch.undo()
    assert sorted(TemporalIndex.load(root).ids) == sorted(f"new{i}" for i in range(8))
    return durability_violations(events, root, inode)


MUTANTS = {
    "no_fsync": [("os.fsync(fd)", "pass")],
    "no_directory_fsync": [("    try:\n        os.fsync(fd)\n    except OSError as exc:",
                            "    try:\n        pass\n    except OSError as exc:")],
    "current_in_place": [("os.replace(ptmp, root / CURRENT)",
                          "(root / CURRENT).write_bytes(ptmp.read_bytes()); ptmp.unlink()")],
}


def _mutant(name: str) -> types.ModuleType:
    src = Path(storage.__file__).read_text(encoding="utf-8")
    for old, new in MUTANTS[name]:
        assert old in src, f"mutation {name} no longer applies: update MUTANTS"
        src = src.replace(old, new)
    mod = types.ModuleType(f"chronorank.index._storage_{name}")
    mod.__file__ = storage.__file__
    exec(compile(src, f"<storage mutant {name}>", "exec"), mod.__dict__)  # noqa: S102
    return mod


pytestmark_linux = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")


@pytestmark_linux
def test_save_fsyncs_and_renames_in_the_durable_order(tmp_path, monkeypatch):
    assert _save_with(storage, tmp_path, monkeypatch) == []


@pytestmark_linux
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_the_order_check_catches_storage_code_without_fsync(tmp_path, monkeypatch, name):
    violations = _save_with(_mutant(name), tmp_path, monkeypatch)
    assert violations, f"the {name} copy passed the durability check"


# ------------------------------------------------------------------ directory fsync (issue 31)


def _fail_directory_fsync(monkeypatch, which: int) -> list[str]:
    """Make the ``which``-th fsync of a directory (0-based) fail with EIO; returns the
    directories fsynced, in order."""
    real = os.fsync
    seen: list[str] = []

    def fsync(fd):
        import stat

        if stat.S_ISDIR(os.fstat(fd).st_mode):
            seen.append(os.readlink(f"/proc/self/fd/{fd}") if Path("/proc/self/fd").is_dir() else "?")
            if len(seen) - 1 == which:
                raise OSError(errno.EIO, "Input/output error")
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return seen


@pytest.mark.parametrize("which", [0, 1])
def test_a_failed_directory_fsync_before_the_switch_raises_and_keeps_the_old_index(tmp_path, monkeypatch, which):
    root = tmp_path / "idx"
    old = _index(5, "old")
    old.save(root)
    before = _entries(root)
    _fail_directory_fsync(monkeypatch, which)  # 0: the new generation's, 1: the index's before the switch
    with pytest.raises(StoreError, match="Input/output error"):
        _index(9, "new").save(root)
    monkeypatch.undo()
    assert _entries(root) == before
    assert sorted(TemporalIndex.load(root).ids) == sorted(old.ids)


def test_a_failed_directory_fsync_after_the_switch_raises_and_says_the_new_index_is_current(tmp_path, monkeypatch):
    root = tmp_path / "idx"
    _index(5, "old").save(root)
    seen = _fail_directory_fsync(monkeypatch, 2)  # the index directory, after CURRENT was replaced
    new = _index(9, "new")
    with pytest.raises(StoreError, match="new generation is current") as ei:
        new.save(root)
    assert "Input/output error" in str(ei.value)
    monkeypatch.undo()
    assert len(seen) == 3
    assert sorted(TemporalIndex.load(root).ids) == sorted(new.ids)
    new.save(root)  # the next save succeeds and cleans up
    assert _entries(root) == {"CURRENT", "LOCK", _generation(root)}
