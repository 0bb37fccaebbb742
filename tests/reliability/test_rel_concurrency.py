"""Many threads search while another upserts: no exception, every result from one committed state."""

from __future__ import annotations

import threading

from chronorank.index import TemporalIndex

NOW = "2026-01-01"


def _state_ops(b: int) -> tuple[list[dict], list[str]]:
    """Batch b: upsert 5 new docs, rewrite doc r{b % 7}, delete the docs of batch b - 3."""
    ups = [{"id": f"b{b}-{j}", "text": f"alpha batch{b} word{j}", "date": "2025-01-01"} for j in range(5)]
    ups.append({"id": f"r{b % 7}", "text": f"alpha rewritten v{b}", "date": "2025-06-01"})
    dels = [f"b{b - 3}-{j}" for j in range(5)] if b >= 3 else []
    return ups, dels


def test_searches_during_upserts_see_one_committed_state():
    idx = TemporalIndex(embedder=None)
    idx.add([{"id": f"r{i}", "text": f"alpha original {i}"} for i in range(7)])
    # committed states as {id: text}; the reader checks its whole result against them
    states = [{d: idx.get(d)["text"] for d in idx.ids}]
    n_batches = 60
    for b in range(1, n_batches + 1):
        ups, dels = _state_ops(b)
        s = dict(states[-1])
        for u in ups:
            s[u["id"]] = u["text"]
        for d in dels:
            s.pop(d, None)
        states.append(s)
    frozen = [frozenset(s.items()) for s in states]
    errors: list[BaseException] = []
    bad: list[str] = []
    done = threading.Event()
    searches = [0]

    def writer() -> None:
        try:
            for b in range(1, n_batches + 1):
                ups, dels = _state_ops(b)
                idx.add(ups)  # add and delete are two commits: the state between is also valid
                idx.delete(dels)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            done.set()

    def reader() -> None:
        try:
            while not done.is_set():
                res = idx.search("alpha", k=10_000, now=NOW)
                got = frozenset((h.id, h.payload["text"]) for h in res)
                # every doc contains "alpha", so a full result equals one committed state
                # (after an add, before its delete counts: that state is the add's commit)
                if not any(got == f or got == _after_add(states, i) for i, f in enumerate(frozen)):
                    bad.append(f"result of {len(got)} docs matches no committed state")
                searches[0] += 1
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    readers = [threading.Thread(target=reader) for _ in range(6)]
    for t in readers:
        t.start()
    w = threading.Thread(target=writer)
    w.start()
    w.join()
    for t in readers:
        t.join()
    assert errors == []
    assert bad == []
    assert searches[0] > 0
    assert {d: idx.get(d)["text"] for d in idx.ids} == states[-1]


_cache: dict[int, frozenset] = {}


def _after_add(states: list[dict], i: int) -> frozenset:
    """The state after batch i's add but before its delete."""
    if i == 0:
        return frozenset()
    if i not in _cache:
        ups, _ = _state_ops(i)
        s = dict(states[i - 1])
        for u in ups:
            s[u["id"]] = u["text"]
        _cache[i] = frozenset(s.items())
    return _cache[i]
