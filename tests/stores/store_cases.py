"""The store fixtures' shared names for test modules: ``NOW``, ``STORES``, ``SERVER_STORES``
and ``docs_fixture`` from this folder's conftest.py, loaded by path ("import conftest" is
ambiguous when several test folders have one). conftest.py puts this folder on sys.path."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("chronorank_stores_conftest", Path(__file__).with_name("conftest.py"))
assert _spec is not None and _spec.loader is not None
_conf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_conf)
NOW, SERVER_STORES, STORES, docs_fixture = _conf.NOW, _conf.SERVER_STORES, _conf.STORES, _conf.docs_fixture
pg_fixture = _conf.pg  # for test folders outside this one (the integration retrievers)
make_store = _conf.make_store  # (kind, request, embedder, **kw): a store of that kind with that embedder
