"""Secrets never reach a message, a log or a repr (issue 31, item 4): the messages of failed
PostgreSQL connections are scanned for the password, in every connection-string form."""

from __future__ import annotations

import importlib.util
import logging
import socket
import traceback
from pathlib import Path

import pytest

from chronorank.errors import ChronorankError

pytest.importorskip("psycopg")
pytest.importorskip("pgvector")

SECRET = "Hunter2-Pa55word"


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again: nothing listens there


def _forms(port: int, db: str = "postgres") -> dict[str, str]:
    return {
        "url": f"postgresql://postgres:{SECRET}@127.0.0.1:{port}/{db}",
        "url_encoded": f"postgresql://postgres:{SECRET.replace('-', '%2D')}@127.0.0.1:{port}/{db}",
        "url_param": f"postgresql://postgres@127.0.0.1:{port}/{db}?connect_timeout=3&password={SECRET}",
        "key_value": f"host=127.0.0.1 port={port} user=postgres password={SECRET} dbname={db}",
        "key_value_quoted": f"host=127.0.0.1 port={port} user=postgres password = '{SECRET} x' dbname={db}",
        "key_value_bad_port": f"host=127.0.0.1 port={SECRET} user=postgres password={SECRET} dbname={db}",
        "key_value_unparsable": f"host=127.0.0.1 port={port} password={SECRET} dangling",
    }


def _everything_said(exc: BaseException) -> str:
    """The message, the repr and the whole printed traceback (every chained exception)."""
    return "\n".join([str(exc), repr(exc), *traceback.format_exception(exc)])


def _connect_fails(dsn: str, caplog) -> str:
    from chronorank.index import HashingEmbedder
    from chronorank.stores import PgVectorStore

    caplog.set_level(logging.DEBUG)
    with pytest.raises(ChronorankError) as ei:
        PgVectorStore(dsn, "t", embedder=HashingEmbedder(8), connect_timeout=3)
    said = _everything_said(ei.value) + "\n" + caplog.text
    return said


@pytest.mark.parametrize("form", list(_forms(1)))
def test_a_failed_connection_never_shows_the_password(form, caplog):
    dsn = _forms(_dead_port())[form]
    said = _connect_fails(dsn, caplog)
    assert SECRET not in said, said
    assert SECRET.replace("-", "%2D") not in said, said
    assert "127.0.0.1" in said or "connection string" in said  # still says what failed


def test_pgpassword_from_the_environment_never_shows(monkeypatch, caplog):
    monkeypatch.setenv("PGPASSWORD", SECRET)
    said = _connect_fails(f"postgresql://postgres@127.0.0.1:{_dead_port()}/postgres", caplog)
    assert SECRET not in said, said


@pytest.mark.parametrize("form", ["url", "key_value", "key_value_quoted"])
def test_the_repr_masks_every_form(form):
    from chronorank.stores.pgvector import _safe_dsn

    assert SECRET not in _safe_dsn(_forms(5432)[form])


def _pg_fixture():
    spec = importlib.util.spec_from_file_location("stores_conftest", Path(__file__).parents[1] / "stores" / "conftest.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.pg


pg = _pg_fixture()


@pytest.mark.pg
@pytest.mark.parametrize("form", ["url", "url_param", "key_value", "key_value_quoted"])
def test_a_refused_connection_to_a_live_server_never_shows_the_password(pg, form, caplog):
    from chronorank.index import HashingEmbedder
    from chronorank.stores import PgVectorStore

    said = _connect_fails(_forms(pg.port, db="no_such_database")[form], caplog)
    assert "no_such_database" in said  # the server's own reason is kept
    assert SECRET not in said, said
    store = PgVectorStore(_forms(pg.port)[form], "secrets_t", embedder=HashingEmbedder(8))  # trust auth
    try:
        assert SECRET not in repr(store)
    finally:
        store.close()
