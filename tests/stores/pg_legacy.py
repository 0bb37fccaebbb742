"""Tables as earlier chronorank versions wrote them, for the PostgreSQL migration tests.

``to_legacy(store, version)`` rewrites a current table into the layout of schema 1 or 2: one
wide table ``(id PK, text, record, t_start, t_end, embedding, sparse[, lead])`` with its HNSW
and start-time indexes, no ``_vec`` table, and ``n_docs`` left at 0 (those versions never
kept it), then closes the store.
"""

from __future__ import annotations

from typing import Any

SPARSE_DIM = 1_000_000_000


def to_legacy(store: Any, version: int = 2) -> None:
    t, run = store.table, store._run
    run(f"ALTER TABLE {t} ADD COLUMN t_start float8, ADD COLUMN t_end float8, ADD COLUMN embedding "
        f"vector({store.dim}), ADD COLUMN sparse sparsevec({SPARSE_DIM}), ADD COLUMN lead sparsevec({SPARSE_DIM})",
        fetch=False)
    run(f"UPDATE {t} d SET t_start = v.t_start, t_end = v.t_end, embedding = v.embedding, sparse = v.sparse, "
        f"lead = v.lead FROM {t}_vec v WHERE v.doc = d.doc", fetch=False)
    run(f"ALTER TABLE {t} ALTER COLUMN embedding SET NOT NULL", fetch=False)
    run(f"DROP TABLE {t}_vec", fetch=False)
    run(f"ALTER TABLE {t} DROP COLUMN doc", fetch=False)
    run(f"CREATE INDEX {t}_hnsw ON {t} USING hnsw (embedding vector_cosine_ops)", fetch=False)
    run(f"CREATE INDEX {t}_start ON {t} (t_start)", fetch=False)
    if version == 1:
        run(f"ALTER TABLE {t} DROP COLUMN lead", fetch=False)
        run("UPDATE chronorank_schema SET lead_avgdl = NULL, lead_tokens = NULL WHERE tbl = %s", (t,), fetch=False)
    run("UPDATE chronorank_schema SET version = %s, n_docs = 0 WHERE tbl = %s", (version, t), fetch=False)
    store.close()


def columns(store: Any, table: str | None = None) -> set[str]:
    rows = store._run("SELECT column_name FROM information_schema.columns WHERE table_name = %s",
                      (table or store.table,))
    return {r[0] for r in rows}
