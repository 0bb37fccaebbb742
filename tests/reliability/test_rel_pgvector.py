"""PgVectorStore writes against a real PostgreSQL + pgvector (issue 18, items 6 and 9): a batch
is all or nothing with exact keyword frequencies, two stores upserting one table at once keep
the frequencies and the document count exact, driver errors arrive as InvalidInput/StoreError, table names are
checked, and a server restart is survived."""

from __future__ import annotations

import importlib.util
import threading
from collections import Counter
from pathlib import Path

import pytest

from chronorank.errors import ChronorankError, InvalidInput, StoreError

pytestmark = pytest.mark.pg

_spec = importlib.util.spec_from_file_location("stores_conftest", Path(__file__).parents[1] / "stores" / "conftest.py")
assert _spec is not None and _spec.loader is not None
_conf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_conf)
pg = _conf.pg
NOW = "2026-01-01"
_n = iter(range(10**6))


def _store(pg, **kw):
    from chronorank.index import HashingEmbedder
    from chronorank.stores import PgVectorStore

    return PgVectorStore(pg.dsn, f"rel{next(_n)}", embedder=HashingEmbedder(32), **kw)


def _docs(tag: str, n: int, offset: int = 0) -> list[dict]:
    words = ["alpha", "beta", "gamma", "delta", "release", "fix", "join", "speed"]
    return [{"id": f"{tag}{i}", "text": f"{words[i % 8]} {words[(i * 3) % 8]} {tag} {words[(i + offset) % 5]}",
             "date": f"2024-01-{i % 28 + 1:02d}"} for i in range(n)]


def _df_truth(store) -> dict[int, int]:
    """The frequencies recounted from the stored sparse vectors (the independent truth)."""
    rows = store._run(f"SELECT sparse FROM {store.table}_vec WHERE sparse IS NOT NULL")
    c: Counter[int] = Counter()
    for (sv,) in rows:
        c.update(int(t) for t in sv.indices())
    return dict(c)


def _df_table(store) -> dict[int, int]:
    return {int(t): int(d) for t, d in store._run(f"SELECT term, df FROM {store.table}_df") if d != 0}


@pytest.mark.parametrize("poison", ["nul_in_text", "nul_in_metadata", "surrogate_in_text"])
def test_partial_batch_is_all_or_nothing_and_frequencies_stay_exact(pg, poison):
    store = _store(pg)
    store.add(_docs("base", 6))
    before_rows = sorted(r[0] for r in store._run(f"SELECT id FROM {store.table}"))
    before_df = _df_table(store)
    batch = _docs("new", 10) + _docs("base", 3, offset=2)  # new rows and replacements
    bad = dict(batch[5])
    if poison == "nul_in_text":
        bad["text"] = "alpha \x00 beta"
    elif poison == "nul_in_metadata":
        bad["metadata"] = {"note": "a\x00b"}
    else:
        bad["text"] = "alpha \ud800 beta"
    batch[5] = bad
    with pytest.raises(InvalidInput, match=r"docs\[5\]"):
        store.add(batch)
    assert sorted(r[0] for r in store._run(f"SELECT id FROM {store.table}")) == before_rows
    assert _df_table(store) == before_df == _df_truth(store)
    store.close()


def test_driver_data_error_inside_the_transaction_rolls_back_and_is_invalid_input(pg, monkeypatch):
    store = _store(pg)
    store.add(_docs("base", 4))
    before = _df_table(store)
    real = store._apply_df

    def then_fail(delta):
        real(delta)  # the frequencies are updated, then the database refuses a value
        store._run("SELECT 'not a number'::int", fetch=False)

    monkeypatch.setattr(store, "_apply_df", then_fail)
    with pytest.raises(InvalidInput, match="rolled back"):
        store.add(_docs("new", 5))
    monkeypatch.undo()
    assert len(store) == 4
    assert _df_table(store) == before == _df_truth(store)
    with pytest.raises(InvalidInput, match="rolled back"):
        monkeypatch.setattr(store, "_apply_df", then_fail)
        store.delete(["base0", "base1"])
    monkeypatch.undo()
    assert len(store) == 4 and _df_table(store) == _df_truth(store)
    store.close()


def test_two_stores_upserting_one_table_at_once_keep_exact_frequencies(pg):
    from chronorank.index import HashingEmbedder
    from chronorank.stores import PgVectorStore

    first = _store(pg)
    first.add(_docs("seed", 5))
    stores = [first, PgVectorStore(pg.dsn, first.table, embedder=HashingEmbedder(32))]
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def writer(k: int) -> None:
        try:
            barrier.wait()
            for r in range(15):
                stores[k].add(_docs("shared", 12, offset=r + k))  # the same ids, other texts
                stores[k].delete([f"shared{(r + k) % 12}"])
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    ths = [threading.Thread(target=writer, args=(k,)) for k in range(2)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    assert errors == []
    assert _df_table(first) == _df_truth(first)
    # the document count both writers kept (schema 3: no count per search) is the rows' count
    n = int(first._run(f"SELECT count(*) FROM {first.table}")[0][0])
    assert len(first) == len(stores[1]) == n == int(first._run(f"SELECT count(*) FROM {first.table}_vec")[0][0])
    for s in stores:
        s.close()


@pytest.mark.parametrize("name", ["docs\n", "select", "user", "order", "x_df", "chronorank_schema", "Docs", "a-b"])
def test_bad_table_names_are_refused_up_front(pg, name):
    from chronorank.stores import PgVectorStore

    with pytest.raises(InvalidInput, match="table="):
        PgVectorStore(pg.dsn, name, embedder=None)


def test_server_restart_gives_a_store_error_then_reconnects(pg):
    store = _store(pg)
    store.add(_docs("r", 4))
    pg.stop()
    pg.start()
    with pytest.raises(StoreError, match="connection was lost"):
        store.search("alpha", k=2, now=NOW)
    assert len(store.search("alpha", k=2, now=NOW)) == 2  # the next call reconnects
    assert issubclass(StoreError, ChronorankError)
    store.close()
