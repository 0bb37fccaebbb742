"""``EdgeClient``: Qdrant's own Rust engine in process (``qdrant-edge-py``) behind the subset of
the ``QdrantClient`` API that :class:`~chronorank.stores.QdrantStore` calls.

``QdrantStore(collection, edge_path=DIR)`` searches with this client: the store builds exactly
the requests it sends to a server (prefetch lanes, the compiled ``FormulaQuery``, filters) as
``qdrant_client.models`` objects and this module translates each one to its ``qdrant_edge``
twin, so the formula is written once and the engine that scores it is Qdrant's, not the
pure-Python emulation of qdrant-client's local mode.

Layout on disk: one Edge shard per collection, ``DIR/<collection>/`` (the shard's own
``edge_config.json``, ``segments/``, ``wal/``), plus ``DIR/<collection>/chronorank.json``
holding the collection metadata a server would keep (schema version, dimension, avgdl, ...).
A shard directory without that file is a collection chronorank did not create (read it
through ``columns=``). A shard is locked by the process that opens it; stores in one process
share the open shard.

What edge lacks and how it is covered: no collection metadata (the JSON file above); no
automatic optimizer (``EdgeClient.optimize`` builds the HNSW and payload indexes after a
bulk load; until then searches scan the appendable segment exactly); no ``:memory:`` mode
(give a directory, a temporary one in tests).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from chronorank.errors import ChronorankError, InvalidInput, require

__all__ = ["EdgeClient"]

META_FILE = "chronorank.json"


def _qe() -> Any:
    return require("qdrant_edge", extra="qdrant-edge", package="qdrant-edge-py")


def _models() -> Any:
    return require("qdrant_client.models", extra="qdrant-edge", package="qdrant-client")


# one open shard per directory per process (a second EdgeShard.load of a directory fails on
# the WAL lock): path -> [shard, users]
_OPEN: dict[str, list[Any]] = {}
_LOCK = threading.Lock()


class EdgeClient:
    """Collections as Edge shards under ``path``; method names and arguments as ``QdrantClient``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        if path is None or str(path) in ("", ":memory:"):
            raise InvalidInput(
                f"edge_path={path!r}: the Edge engine keeps its shards in a directory; give one, e.g. "
                "edge_path='./qdrant-edge' (a tempfile.mkdtemp() for throwaway data)."
            )
        self.path = Path(path).expanduser().resolve()
        if self.path.exists() and not self.path.is_dir():
            raise InvalidInput(f"edge_path={str(path)!r} is a file; give a directory for the Edge shards.")
        self._qe = _qe()
        self._shards: dict[str, Any] = {}

    # ------------------------------------------------------------------ collections

    def _dir(self, name: str) -> Path:
        return self.path / name

    def collection_exists(self, collection_name: str) -> bool:
        return (self._dir(collection_name) / "edge_config.json").is_file()

    def _shard(self, name: str) -> Any:
        sh = self._shards.get(name)
        if sh is not None:
            return sh
        if not self.collection_exists(name):
            raise InvalidInput(f"Edge collection {name!r} does not exist under {str(self.path)!r}.")
        key = str(self._dir(name))
        with _LOCK:
            entry = _OPEN.get(key)
            if entry is None:
                entry = _OPEN[key] = [self._qe.EdgeShard.load(key), 0]
            entry[1] += 1
        self._shards[name] = entry[0]
        return entry[0]

    def create_collection(
        self, collection_name: str, vectors_config: Any = None, sparse_vectors_config: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None, **_: Any,
    ) -> bool:
        qe = self._qe
        if isinstance(vectors_config, Mapping):
            dense: Any = {name: self._vector_params(p) for name, p in vectors_config.items()}
        else:
            dense = None if vectors_config is None else self._vector_params(vectors_config)
        sparse = {name: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf if _name(p.modifier) == "IDF" else None)
                  for name, p in (sparse_vectors_config or {}).items()}
        d = self._dir(collection_name)
        d.mkdir(parents=True, exist_ok=True)
        key = str(d)
        shard = qe.EdgeShard.create(key, qe.EdgeConfig(vectors=dense, sparse_vectors=sparse or None))
        with _LOCK:
            _OPEN[key] = [shard, 1]
        self._shards[collection_name] = shard
        tmp = d / (META_FILE + ".tmp")
        tmp.write_text(json.dumps({"metadata": dict(metadata or {})}))
        tmp.replace(d / META_FILE)
        return True

    def _vector_params(self, p: Any) -> Any:
        qe = self._qe
        dist = {"Cosine": qe.Distance.Cosine, "Euclid": qe.Distance.Euclid, "Dot": qe.Distance.Dot,
                "Manhattan": qe.Distance.Manhattan}[_value(p.distance)]
        return qe.EdgeVectorParams(size=int(p.size), distance=dist)

    def get_collection(self, collection_name: str) -> Any:
        """The parts of ``CollectionInfo`` the store reads: ``config.metadata`` and
        ``config.params.vectors`` / ``sparse_vectors`` (as ``qdrant_client.models`` params)."""
        m = _models()
        d = self._dir(collection_name)
        cfg = json.loads((d / "edge_config.json").read_text())
        meta_path = d / META_FILE
        meta = json.loads(meta_path.read_text()).get("metadata") if meta_path.is_file() else None
        vectors = {name: m.VectorParams(size=int(v["size"]), distance=m.Distance(v["distance"]))
                   for name, v in (cfg.get("vectors") or {}).items()}
        sparse = {name: m.SparseVectorParams(modifier=m.Modifier.IDF if v.get("modifier") == "idf" else None)
                  for name, v in (cfg.get("sparse_vectors") or {}).items()}
        params = SimpleNamespace(vectors=vectors.get("") if set(vectors) == {""} else vectors, sparse_vectors=sparse)
        info = self._shard(collection_name).info()
        schema = {key: SimpleNamespace(data_type=m.PayloadSchemaType(str(v.data_type).rsplit(".", 1)[-1].lower()),
                                       points=v.points) for key, v in info.payload_schema.items()}
        return SimpleNamespace(config=SimpleNamespace(metadata=meta, params=params),
                               points_count=info.points_count, payload_schema=schema)

    def delete_collection(self, collection_name: str) -> bool:
        if not self.collection_exists(collection_name):
            return False
        self._release(collection_name)
        shutil.rmtree(self._dir(collection_name))
        return True

    def create_payload_index(self, collection_name: str, field_name: str, field_schema: Any = None, **_: Any) -> Any:
        qe = self._qe
        kind = {"keyword": qe.PayloadSchemaType.Keyword, "integer": qe.PayloadSchemaType.Integer,
                "float": qe.PayloadSchemaType.Float, "datetime": qe.PayloadSchemaType.Datetime,
                "bool": qe.PayloadSchemaType.Bool, "text": qe.PayloadSchemaType.Text,
                "uuid": qe.PayloadSchemaType.Uuid, "geo": qe.PayloadSchemaType.Geo}[_value(field_schema)]
        self._shard(collection_name).update(qe.UpdateOperation.create_field_index(field_name, kind))

    def optimize(self, collection_name: str) -> bool:
        """Run Qdrant's segment optimizers now (HNSW, indexed segments); True if anything changed."""
        return bool(self._shard(collection_name).optimize())

    # ------------------------------------------------------------------ points

    def upsert(self, collection_name: str, points: Sequence[Any], wait: bool = True, **_: Any) -> Any:
        qe = self._qe
        out = [qe.Point(id=p.id, vector=self._vector(p.vector), payload=p.payload) for p in points]
        self._shard(collection_name).update(qe.UpdateOperation.upsert_points(out))

    def _vector(self, v: Any) -> Any:
        if isinstance(v, Mapping):
            return {name: self._vector(x) for name, x in v.items()}
        if hasattr(v, "indices"):
            return self._qe.SparseVector(list(v.indices), [float(x) for x in v.values])
        return v

    def delete(self, collection_name: str, points_selector: Any, wait: bool = True, **_: Any) -> Any:
        qe = self._qe
        sel = points_selector
        if hasattr(sel, "points"):
            sel = sel.points
        if hasattr(sel, "filter") or hasattr(sel, "must"):
            flt = _translate_filter(getattr(sel, "filter", sel), qe)
            op = qe.UpdateOperation.delete_points_by_filter(flt)
        else:
            op = qe.UpdateOperation.delete_points(list(sel))
        self._shard(collection_name).update(op)

    def retrieve(self, collection_name: str, ids: Sequence[Any], with_payload: Any = True, with_vectors: Any = False,
                 **_: Any) -> list[Any]:
        return list(self._shard(collection_name).retrieve(list(ids), with_payload=with_payload,
                                                           with_vector=with_vectors))

    def count(self, collection_name: str, count_filter: Any = None, exact: bool = True, **_: Any) -> Any:
        qe = self._qe
        flt = None if count_filter is None else _translate_filter(count_filter, qe)
        return SimpleNamespace(count=int(self._shard(collection_name).count(qe.CountRequest(exact=exact, filter=flt))))

    def scroll(self, collection_name: str, scroll_filter: Any = None, limit: int = 10, offset: Any = None,
               with_payload: Any = True, with_vectors: Any = False, **_: Any) -> tuple[list[Any], Any]:
        qe = self._qe
        req = qe.ScrollRequest(offset=offset, limit=limit, with_payload=with_payload, with_vector=with_vectors,
                               filter=None if scroll_filter is None else _translate_filter(scroll_filter, qe))
        pts, nxt = self._shard(collection_name).scroll(req)
        return list(pts), nxt

    # ------------------------------------------------------------------ queries

    def query_points(self, collection_name: str, query: Any = None, using: str | None = None, prefetch: Any = None,
                     query_filter: Any = None, limit: int = 10, with_payload: Any = True, with_vectors: Any = False,
                     score_threshold: float | None = None, **_: Any) -> Any:
        qe = self._qe
        req = qe.QueryRequest(
            limit=int(limit), query=_translate_query(query, using, qe), prefetches=_prefetches(prefetch, qe),
            filter=None if query_filter is None else _translate_filter(query_filter, qe),
            with_payload=with_payload, with_vector=with_vectors, score_threshold=score_threshold,
        )
        return SimpleNamespace(points=self._run(collection_name, lambda sh: sh.query(req)))

    def query_batch_points(self, collection_name: str, requests: Sequence[Any], **_: Any) -> list[Any]:
        qe = self._qe
        reqs = [qe.QueryRequest(
            limit=int(r.limit), query=_translate_query(r.query, r.using, qe), prefetches=_prefetches(r.prefetch, qe),
            filter=None if r.filter is None else _translate_filter(r.filter, qe),
            with_payload=r.with_payload if r.with_payload is not None else False,
            with_vector=r.with_vector if r.with_vector is not None else False, score_threshold=r.score_threshold,
        ) for r in requests]
        lists = self._run(collection_name, lambda sh: sh.query_batch(qe.QueryBatchRequest(reqs)))
        return [SimpleNamespace(points=pts) for pts in lists]

    def _run(self, name: str, fn: Any) -> Any:
        try:
            return fn(self._shard(name))
        except InvalidInput:
            raise
        except Exception as exc:  # qdrant_edge raises plain Exception with the engine's message
            raise ChronorankError(f"Qdrant Edge rejected a query on collection {name!r}: {exc}") from exc

    # ------------------------------------------------------------------ lifetime

    def _release(self, name: str) -> None:
        if self._shards.pop(name, None) is None:
            return
        key = str(self._dir(name))
        with _LOCK:
            entry = _OPEN.get(key)
            if entry is None:
                return
            entry[1] -= 1
            if entry[1] <= 0:
                del _OPEN[key]
                entry[0].flush()
                entry[0].close()

    def close(self) -> None:
        """Flush and release this client's shards (closed when no other store in the process uses them)."""
        for name in list(self._shards):
            self._release(name)

    def __repr__(self) -> str:
        return f"EdgeClient({str(self.path)!r})"


# ---------------------------------------------------------------------- translation


def _value(x: Any) -> str:
    """An enum's value (``models.Distance.COSINE`` -> ``'Cosine'``) or the string itself."""
    return str(getattr(x, "value", x))


def _name(x: Any) -> str | None:
    return None if x is None else str(getattr(x, "name", x)).upper()


def _listed(x: Any) -> list[Any]:
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _prefetches(p: Any, qe: Any) -> list[Any] | None:
    items = _listed(p)
    if not items:
        return None
    return [qe.Prefetch(limit=int(x.limit if x.limit is not None else 10), query=_translate_query(x.query, x.using, qe),
                        prefetches=_prefetches(x.prefetch, qe), score_threshold=x.score_threshold,
                        filter=None if x.filter is None else _translate_filter(x.filter, qe)) for x in items]


def _translate_query(q: Any, using: str | None, qe: Any) -> Any:
    """A ``models`` query (a vector, ``SparseVector``, ``NearestQuery``, ``OrderByQuery``,
    ``FormulaQuery``) as its ``qdrant_edge`` counterpart."""
    if q is None:
        return None
    m = _models()
    if isinstance(q, m.NearestQuery):
        q = q.nearest
    if isinstance(q, m.SparseVector):
        return qe.Query.Nearest(qe.SparseVector(list(q.indices), [float(v) for v in q.values]), using=using)
    if isinstance(q, (list, tuple)):
        return qe.Query.Nearest([float(v) for v in q], using=using)
    if isinstance(q, m.OrderByQuery):
        ob = q.order_by if isinstance(q.order_by, m.OrderBy) else m.OrderBy(key=q.order_by)
        direction = None if ob.direction is None else (
            qe.Direction.Desc if _name(ob.direction) == "DESC" else qe.Direction.Asc)
        return qe.OrderBy(key=ob.key, direction=direction, start_from=ob.start_from)
    if isinstance(q, m.FormulaQuery):
        return qe.Formula(_translate_expr(q.formula, qe), defaults=dict(q.defaults or {}))
    raise InvalidInput(f"query type {type(q).__name__} is not translated to Qdrant Edge; use QdrantStore(url=...)"
                       " or local mode for it.")


def _translate_expr(e: Any, qe: Any) -> Any:
    """A ``models`` formula expression (as :func:`chronorank.stores.compile.to_qdrant` writes it)
    as a ``qdrant_edge.Expression``: numbers -> Constant, strings -> Variable (a payload key or
    ``$score[i]``), conditions -> Condition, operators one for one."""
    E = qe.Expression
    m = _models()
    if isinstance(e, bool):
        raise InvalidInput(f"a boolean {e!r} is not a formula term")
    if isinstance(e, (int, float)):
        return E.Constant(float(e))
    if isinstance(e, str):
        return E.Variable(e)
    if isinstance(e, m.SumExpression):
        return E.Sum([_translate_expr(x, qe) for x in e.sum])
    if isinstance(e, m.MultExpression):
        return E.Mult([_translate_expr(x, qe) for x in e.mult])
    if isinstance(e, m.MaxExpression):
        return E.Max([_translate_expr(x, qe) for x in e.max])
    if isinstance(e, m.MinExpression):
        return E.Min([_translate_expr(x, qe) for x in e.min])
    if isinstance(e, m.NegExpression):
        return E.Neg(_translate_expr(e.neg, qe))
    if isinstance(e, m.ExpExpression):
        return E.Exp(_translate_expr(e.exp, qe))
    if isinstance(e, m.LnExpression):
        return E.Ln(_translate_expr(e.ln, qe))
    if isinstance(e, m.AbsExpression):
        return E.Abs(_translate_expr(e.abs, qe))
    if isinstance(e, m.SqrtExpression):
        return E.Sqrt(_translate_expr(e.sqrt, qe))
    if isinstance(e, m.DivExpression):
        return E.Div(_translate_expr(e.div.left, qe), _translate_expr(e.div.right, qe),
                     by_zero_default=e.div.by_zero_default)
    if isinstance(e, m.PowExpression):
        return E.Pow(_translate_expr(e.pow.base, qe), _translate_expr(e.pow.exponent, qe))
    if isinstance(e, m.DatetimeKeyExpression):
        return E.DatetimeKey(e.datetime_key)
    if isinstance(e, m.DatetimeExpression):
        return E.Datetime(str(e.datetime))
    if isinstance(e, (m.ExpDecayExpression, m.GaussDecayExpression, m.LinDecayExpression)):
        kind = {m.ExpDecayExpression: qe.DecayKind.Exp, m.GaussDecayExpression: qe.DecayKind.Gauss,
                m.LinDecayExpression: qe.DecayKind.Lin}[type(e)]
        p = getattr(e, {qe.DecayKind.Exp: "exp_decay", qe.DecayKind.Gauss: "gauss_decay",
                        qe.DecayKind.Lin: "lin_decay"}[kind])
        return E.Decay(kind, _translate_expr(p.x, qe), None if p.target is None else _translate_expr(p.target, qe),
                       midpoint=p.midpoint, scale=p.scale)
    return E.Condition(_translate_condition(e, qe))


def _translate_filter(f: Any, qe: Any) -> Any:
    return qe.Filter(
        must=[_translate_condition(c, qe) for c in _listed(f.must)] or None,
        should=[_translate_condition(c, qe) for c in _listed(f.should)] or None,
        must_not=[_translate_condition(c, qe) for c in _listed(f.must_not)] or None,
        min_should=None if f.min_should is None else qe.MinShould(
            [_translate_condition(c, qe) for c in _listed(f.min_should.conditions)], int(f.min_should.min_count)),
    )


def _translate_condition(c: Any, qe: Any) -> Any:
    m = _models()
    if isinstance(c, m.Filter):
        return _translate_filter(c, qe)
    if isinstance(c, m.IsEmptyCondition):
        return qe.IsEmptyCondition(c.is_empty.key)
    if isinstance(c, m.IsNullCondition):
        return qe.IsNullCondition(c.is_null.key)
    if isinstance(c, m.HasIdCondition):
        return qe.HasIdCondition(set(c.has_id))
    if isinstance(c, m.FieldCondition):
        kw: dict[str, Any] = {}
        if c.match is not None:
            kw["match"] = _translate_match(c.match, qe)
        if c.range is not None:
            r = c.range
            cls = qe.RangeDateTime if isinstance(r, m.DatetimeRange) else qe.RangeFloat
            conv = (lambda v: None if v is None else str(v)) if cls is qe.RangeDateTime else (
                lambda v: None if v is None else float(v))
            kw["range"] = cls(gte=conv(r.gte), gt=conv(r.gt), lte=conv(r.lte), lt=conv(r.lt))
        if c.values_count is not None:
            vc = c.values_count
            kw["values_count"] = qe.ValuesCount(lt=vc.lt, gt=vc.gt, lte=vc.lte, gte=vc.gte)
        if c.is_empty is not None:
            kw["is_empty"] = c.is_empty
        if c.is_null is not None:
            kw["is_null"] = c.is_null
        if not kw:
            raise InvalidInput(f"field condition on {c.key!r} uses a test Qdrant Edge is not given here (geo?); "
                               "use QdrantStore(url=...) or local mode for it.")
        return qe.FieldCondition(key=c.key, **kw)
    raise InvalidInput(f"condition type {type(c).__name__} is not translated to Qdrant Edge; use QdrantStore(url=...)"
                       " or local mode for it.")


def _translate_match(mt: Any, qe: Any) -> Any:
    m = _models()
    if isinstance(mt, m.MatchValue):
        return qe.MatchValue(mt.value)
    if isinstance(mt, m.MatchAny):
        return qe.MatchAny(list(mt.any))
    if isinstance(mt, m.MatchExcept):
        return qe.MatchExcept(list(mt.except_))
    if isinstance(mt, m.MatchText):
        return qe.MatchText(mt.text)
    if isinstance(mt, m.MatchPhrase):
        return qe.MatchPhrase(mt.phrase)
    raise InvalidInput(f"match type {type(mt).__name__} is not translated to Qdrant Edge.")
