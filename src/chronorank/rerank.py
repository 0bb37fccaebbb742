"""TemporalReranker: rerank any list of scored, dated candidates. Pure pipeline, no I/O.

intent (gate) -> kernel -> validity/versions -> fusion, all on columns; see
:mod:`chronorank.temporal` for how each intent mode is applied.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
from collections import ChainMap
from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter, itemgetter
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.intent import parse
from chronorank.intent.rules import anchor_terms
from chronorank.kernels import get_kernel
from chronorank.ranking import DEFAULT_LEAD_TOKENS, Rules, anchor_event, chains_of, rank, series_key
from chronorank.temporal import (
    DEFAULT_RANGE_SLOPE,
    DEFAULT_RELATIVE_RECENCY,
    DEFAULT_TOPICAL_MARGIN,
    VERSION_CORE,
    TemporalConfig,
    TemporalResult,
    resolve_anchor,
)
from chronorank.timeparse import _MIN_TS, parse_times, resolve_now
from chronorank.timeparse.textdates import date_note, infer_dates
from chronorank.types import Intent, Ranking, _FieldColumn
from chronorank.validity import group_codes, resolve_group_keys

GateLike = bool | float | Callable[[str], float] | Any
BAD_SCORE_POLICIES = ("raise", "drop", "zero")
DUPLICATE_POLICIES = ("raise", "keep")


class TemporalReranker:
    """Rerank candidates by similarity and document time.

    ``kernel`` is a spec string (``"weibull(half_life_days=90, shape=2)"``), a kernel name
    plus ``**kernel_params``, a kernel object or any callable ``age_days -> weights``.

    ``gate``: ``True`` parses the query's temporal intent (mode, target, sensitivity and the
    topical query) with the lexical parser; a float fixes the sensitivity; ``False`` means
    always full strength; a callable ``query -> float`` (or any object with
    ``intent(query, now) -> Intent``) supplies it.

    Policies: ``missing_date`` (neutral | keep | penalise | drop | raise), ``future``
    (auto | clamp | not_yet_valid | symmetric | exclude; ``auto`` excludes documents dated
    after a reference time in the past, see :mod:`chronorank.temporal`), ``max_age_days`` (an optional hard date-range filter,
    switched off per pipeline with ``use_temporal_filter=False``), ``bad_score`` for
    NaN/inf/non-numeric similarity
    (raise | drop | zero), ``duplicates`` for repeated ids (raise | keep).
    A period question ("in 2022", "before the v2 change") ranks what was in force during the
    period first (:mod:`chronorank.temporal`); ``range_scale`` sets how fast documents outside
    it fade. "Before / after <a version or an event>" is dated through the candidates' texts
    (``text_field``). ``topical_margin=m`` keeps time from lifting a candidate whose score is below
    m x the best one's over one that is above; the first hit's other versions (its ``group_key``
    chain, or the candidates whose title is its title but for the version numbers) stay above the
    candidates much less similar, with the anchor event's page; a question naming a version
    ranks the pages whose title names only others below their tier. The ranking is the index's
    own pipeline over the candidates (:func:`chronorank.ranking.rank`; ``meta["stages"]`` names
    the stages that ran); ``rerank_columns(signals=, vectors=)`` gives it the fused score's
    parts and the embeddings when the caller has them, as the index has its own.

    A candidate with no date (nor ``valid_from``) is dated by what its text (``text_field``),
    a date-named metadata field or its address (``url``, ``source``, ``file_path`` ...) states,
    as the index's ``add()`` does (:mod:`chronorank.timeparse.textdates`; the explanation names
    the source); ``infer_dates=False`` leaves it undated.

    The defaults are the index's (``relative_recency``, ``range_slope``, ``topical_margin``: the
    ``DEFAULT_*`` names of :mod:`chronorank.temporal`, which ``IndexConfig`` reads too), so
    ``TemporalReranker()`` over a pool ranks it as ``TemporalIndex`` ranks the same pool; pass
    ``relative_recency=None, range_slope=0, topical_margin=None`` for the plain decay.

    ``config`` gives every temporal policy at once as a :class:`chronorank.temporal.TemporalConfig`
    (the same object an index holds as ``IndexConfig.temporal``); the kernel and policy
    keywords are then left at their defaults.
    """

    def __init__(
        self,
        kernel: Any = None,
        strength: float = 1.0,
        combine: str = "gated_multiply",
        missing_date: str = "neutral",
        future: str = "auto",
        gate: GateLike = True,
        date_field: str = "date",
        score_field: str = "score",
        id_field: str = "id",
        *,
        valid_from_field: str = "valid_from",
        valid_to_field: str = "valid_to",
        group_key: str | Callable[[Any], Any] | None = None,
        relative_recency: float | None = DEFAULT_RELATIVE_RECENCY,
        not_yet_valid: str = "zero",
        expired_factor: float = 0.5,
        range_slope: float = DEFAULT_RANGE_SLOPE,
        range_scale: float | None = 0.1,
        max_age_days: float | None = None,
        use_temporal_filter: bool = True,
        bad_score: str = "raise",
        duplicates: str = "raise",
        tz: str = "UTC",
        text_field: str = "text",
        topical_margin: float | None = DEFAULT_TOPICAL_MARGIN,
        config: TemporalConfig | None = None,
        infer_dates: bool = True,
        **kernel_params: Any,
    ) -> None:
        policies: dict[str, Any] = {
            "strength": strength, "combine": combine, "missing_date": missing_date, "future": future,
            "not_yet_valid": not_yet_valid, "expired_factor": expired_factor, "relative_recency": relative_recency,
            "range_slope": range_slope, "range_scale": range_scale, "max_age_days": max_age_days,
            "use_temporal_filter": use_temporal_filter,
        }
        if config is not None:
            self.config = _given_config(config, kernel, kernel_params, policies)
        else:
            k = get_kernel(kernel, **kernel_params) if (kernel_params or kernel is not None) else get_kernel()
            self.config = TemporalConfig(kernel=k, **policies)
        if bad_score not in BAD_SCORE_POLICIES:
            raise InvalidInput(f"bad_score={bad_score!r}; use one of {list(BAD_SCORE_POLICIES)}")
        if duplicates not in DUPLICATE_POLICIES:
            raise InvalidInput(f"duplicates={duplicates!r}; use one of {list(DUPLICATE_POLICIES)}")
        if isinstance(gate, bool) or gate is None:
            pass
        elif isinstance(gate, (int, float)):
            if not 0.0 <= float(gate) <= 1.0:
                raise InvalidInput(f"gate={gate!r}: a fixed gate must lie in [0, 1]")
        elif not callable(gate) and not hasattr(gate, "intent"):
            raise InvalidInput(f"gate={gate!r}: use True, False, a float in [0, 1] or a callable query -> float")
        if topical_margin is not None and not (
            isinstance(topical_margin, (int, float)) and 0 < topical_margin <= 1
        ):
            raise InvalidInput(f"topical_margin={topical_margin!r}; expected a number in (0, 1] such as 0.5, or None.")
        self.topical_margin = topical_margin
        self.text_field = text_field
        self.infer_dates = bool(infer_dates)
        self.gate = gate
        self.date_field = date_field
        self.score_field = score_field
        self.id_field = id_field
        self.valid_from_field = valid_from_field
        self.valid_to_field = valid_to_field
        self.group_key = group_key
        self.bad_score = bad_score
        self.duplicates = duplicates
        self.tz = tz
        self._lexical: Any = None
        self._kernel_text: tuple[Any, str, float | None] | None = None

    # -- configuration -------------------------------------------------------------------

    @property
    def kernel(self) -> Any:
        return self.config.kernel

    def __repr__(self) -> str:
        return (
            f"TemporalReranker(kernel={self.config.kernel!r}, strength={self.config.strength:g}, "
            f"combine={self.config.combine!r}, missing_date={self.config.missing_date!r}, "
            f"future={self.config.future!r}, gate={self.gate!r})"
        )

    # -- intent --------------------------------------------------------------------------

    def intent(self, query: str, now: Any = None) -> Intent:
        """The temporal intent the reranker applies to ``query`` at ``now``."""
        now_s = resolve_now(now)
        return self._intent(query, now_s)

    def _intent(self, query: str, now_s: float) -> Intent:
        gate = self.gate
        q = "" if query is None else str(query)
        if gate is True:
            if self._lexical is None:
                self._lexical = parse
            return self._lexical(q, now=now_s)
        if gate is False or gate is None:
            return Intent(query=q, time_sensitivity=1.0, mode="recent", topical_query=q)
        if isinstance(gate, (int, float)):
            return Intent(query=q, time_sensitivity=float(gate), mode="recent", topical_query=q)
        if hasattr(gate, "intent"):
            return gate.intent(q, now_s)
        value = float(gate(q))
        if not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise InvalidInput(f"the gate returned {value!r} for {q!r}; a gate must return a number in [0, 1]")
        return Intent(query=q, time_sensitivity=value, mode="recent", topical_query=q)

    # -- reranking -----------------------------------------------------------------------

    def rerank(
        self,
        query: str,
        candidates: Sequence[Any] | Mapping[str, Any],
        top_k: int | None = None,
        now: Any = None,
    ) -> Ranking:
        """Rerank dicts, dataclasses/objects, or columns (a mapping with ``scores`` and ``times``)."""
        if isinstance(candidates, Mapping):
            if "scores" not in candidates or "times" not in candidates:
                raise InvalidInput(
                    "columns input needs 'scores' and 'times' keys (optional: 'ids', 'payloads', "
                    f"'valid_from', 'valid_to', 'groups', 'vectors', 'signals'); got keys {sorted(candidates)}"
                )
            c = candidates
            return self.rerank_columns(
                query, c["scores"], c["times"], ids=c.get("ids"), payloads=c.get("payloads"),
                top_k=top_k, now=now, valid_from=c.get("valid_from"), valid_to=c.get("valid_to"),
                groups=c.get("groups"), vectors=c.get("vectors"), signals=c.get("signals"),
            )
        items = candidates if isinstance(candidates, (list, tuple)) else list(candidates)
        n = len(items)
        keys: set[Any] | None = None
        if n and isinstance(items[0], dict):
            try:  # union of every candidate's keys, in one C-level pass
                keys = set().union(*items)
            except TypeError:
                keys = None
        ids: Sequence[Any] | None = None
        distinct: int | None = None
        if keys is not None and self.id_field in keys and self.duplicates == "raise":
            # the duplicate check is the only pass over every id: the ids themselves are
            # read from the payloads only for the hits that are looked at
            try:
                distinct = len(set(map(itemgetter(self.id_field), items)))
                ids = _FieldColumn(items, self.id_field)
            except (KeyError, TypeError):
                distinct = None
        if ids is None:
            ids = self._column(items, self.id_field, None, keys)
        if ids is None:
            ids = list(range(n))
        scores_raw: Any = None
        if keys is not None and self.score_field in keys:
            # straight into a float array, no intermediate list; anything odd (a missing
            # field, None, a bool read as 0/1) takes the general path below instead
            try:
                fast = np.fromiter(map(itemgetter(self.score_field), items), dtype=np.float64, count=n)
                sus = np.flatnonzero((fast == 0.0) | (fast == 1.0))
                if not (sus.size and any(type(items[i][self.score_field]) is bool for i in sus.tolist())):
                    scores_raw = fast
            except (KeyError, TypeError, ValueError, OverflowError):
                pass
        if scores_raw is None:
            scores_raw = self._column(items, self.score_field, None, keys)
        if scores_raw is None:
            raise InvalidInput(
                f"candidates have no {self.score_field!r} field; pass score_field='...' naming "
                "the similarity field, or give columns {'scores': ..., 'times': ...}"
            )
        dates = self._column(items, self.date_field, None, keys)
        vf = self._column(items, self.valid_from_field, None, keys)
        vt = self._column(items, self.valid_to_field, None, keys)
        groups = None
        if self.group_key is not None:
            groups = group_codes(resolve_group_keys(items, self.group_key))
        return self._rerank(
            query, scores_raw, dates if dates is not None else [None] * n, ids=ids, payloads=items,
            top_k=top_k, now=now, valid_from=vf, valid_to=vt, groups=groups, distinct=distinct,
        )

    def rerank_columns(
        self,
        query: str,
        scores: Any,
        times: Any,
        *,
        ids: Sequence[Any] | None = None,
        payloads: Sequence[Any] | None = None,
        top_k: int | None = None,
        now: Any = None,
        valid_from: Any = None,
        valid_to: Any = None,
        groups: Any = None,
        vectors: Any = None,
        signals: Mapping[str, Any] | None = None,
    ) -> Ranking:
        """Rerank columns: similarity scores and times (epoch seconds or anything parseable).
        ``vectors``: the candidates' embeddings, one row each (the versions stage's cosine test,
        as the index runs it with its document vectors); None: the on-topic versions count.
        ``signals``: the signals ``scores`` were fused from, when known (``bm25``, ``dense``,
        ``lead``: an index's ``Hit.signals``): the topic cut's floors, as in the index
        (:func:`chronorank.ranking.rank`); None: the cut reads ``scores`` alone."""
        return self._rerank(
            query, scores, times, ids=ids, payloads=payloads, top_k=top_k, now=now,
            valid_from=valid_from, valid_to=valid_to, groups=groups, vectors=vectors, signals=signals,
        )

    def _rerank(
        self,
        query: str,
        scores: Any,
        times: Any,
        *,
        ids: Sequence[Any] | None,
        payloads: Sequence[Any] | None,
        top_k: int | None,
        now: Any,
        valid_from: Any,
        valid_to: Any,
        groups: Any,
        distinct: int | None = None,
        vectors: Any = None,
        signals: Mapping[str, Any] | None = None,
    ) -> Ranking:
        now_s = resolve_now(now)
        sim, ok = self._scores(scores, ids)
        t = self._times(times)
        n = sim.shape[0]
        if t.shape[0] != n:
            raise InvalidInput(f"got {n} scores but {t.shape[0]} times; pass one time per candidate")
        positional = ids is None
        if ids is None:
            ids = range(n)
        elif len(ids) != n:
            raise InvalidInput(f"got {n} scores but {len(ids)} ids")
        try:
            if distinct is None:  # (the dict path counted them already)
                distinct = len(set(ids)) if self.duplicates == "raise" and n and not positional else n
        except TypeError:
            bad_id = next(i for i in ids if not _hashable(i))
            raise InvalidInput(
                f"candidate id {bad_id!r} is a {type(bad_id).__name__}, which cannot be compared for "
                "duplicates; use strings or numbers as ids, or pass duplicates='keep'"
            ) from None
        if distinct != n:
            seen: set[Any] = set()
            dup = [i for i in ids if i in seen or seen.add(i)]  # type: ignore[func-returns-value]
            raise InvalidInput(
                f"duplicate candidate ids {sorted(set(map(str, dup)))[:5]}: chronorank does not merge "
                "them silently; deduplicate first or pass duplicates='keep'"
            )
        vf = None if valid_from is None else self._times(valid_from)
        vt = None if valid_to is None else self._times(valid_to)
        t, dated = _infer_missing(t, vf, payloads, self.text_field) if self.infer_dates else (t, {})
        g = None if groups is None else np.asarray(groups, dtype=np.int64)
        vec = None if vectors is None else np.asarray(vectors, dtype=np.float64)
        if vec is not None and (vec.ndim != 2 or vec.shape[0] != n):
            raise InvalidInput(f"vectors has shape {vec.shape}; give one embedding row per candidate ({n} rows), or None")
        sig = None if signals is None else {name: _floats(v) for name, v in signals.items()}
        for name, v in (sig or {}).items():
            if v.shape != (n,):
                raise InvalidInput(f"signals[{name!r}] has shape {v.shape}; give one value per candidate ({n}), or no signals")
        intent = self._intent(query, now_s)
        anchor_line = ""
        held: list[set[str]] | None = None
        if intent.anchor is not None and intent.target is None:
            intent, anchor_line, held = self._resolve_anchor(intent, payloads, t, vf, now_s, ids)
        texts = self._texts(payloads)
        starts = t if vf is None else np.where(np.isnan(vf), t, vf)
        conflicts, event = text_stages(query, intent, texts, starts, held=held)
        ranked = rank(
            sim, t, intent=intent, now=now_s, config=self.config,
            # the burst stage compares the best matches with the whole collection: index only
            rules=Rules(topical_margin=self.topical_margin, burst_ratio=None),
            terms=known_terms(intent, texts), valid_from=vf, valid_to=vt, groups=g, ids=ids,
            texts=texts, live=ok, conflicts=conflicts, event=event, anchor_page=anchor_page_of(intent, texts, starts),
            vectors=vec, signals=sig, facet_hits=text_facet_hits(intent, texts),
        )
        res, intent, on_topic = ranked.res, ranked.intent, ranked.on_topic
        res.score = ranked.score
        ranking = self._ranking(query, ids, payloads, sim, res, ok, intent, top_k)
        if dated:
            ranking.notes = _DatedNotes(res, dated)
        ranking.meta.update(
            anchor=anchor_line, on_topic=on_topic, band=res.band, expired=res.expired, target=intent.target,
            stages=ranked.stages, topic=ranked.decide, raw_similarity=sim, facet=ranked.facet,
            chains=None if texts is None else _TextChains(texts, t, ids, g),
            topic_rule="" if self.topical_margin is None else (
                f"on topic = similarity >= {self.topical_margin:g} x the best candidate's; time reorders "
                "only within the on-topic set, which always ranks above the rest" + (
                    "; the first hit's other versions (same group key, or the same first sentence but "
                    "for the words holding a digit) rank above every page under "
                    f"{VERSION_CORE:g} x the best similarity, when the first hit is not or a "
                    "version is the best match")),
        )
        return ranking

    def _resolve_anchor(
        self, intent: Intent, payloads: Sequence[Any] | None, t: np.ndarray, vf: np.ndarray | None,
        now_s: float, ids: Sequence[Any],
    ) -> tuple[Intent, str, list[set[str]] | None]:
        """Date "before / after <version or event>" by the candidates whose text names it: the
        share of the anchor's words each text contains (one pass, only for such queries). Also
        returns the words each text holds (:func:`text_stages` reads them again for the
        anchor's event page)."""
        if intent.anchor is None:
            return intent, "", None
        words, _ = _anchor_words(intent)
        texts = self._texts(payloads)
        n = t.shape[0]
        match = np.zeros(n)
        held = None
        if texts is not None and words:
            held = _held_words(texts)
            match = np.fromiter((len(words & h) for h in held), dtype=np.float64, count=n) / len(words)
        start = t if vf is None else np.where(np.isnan(vf), t, vf)
        out, line = resolve_anchor(intent, match, start, now_s, ids)
        return out, line, held

    def _texts(self, payloads: Sequence[Any] | None) -> list[Any] | None:
        """The candidates' texts (``text_field``; with the default name, a framework document's
        own text attribute too: LangChain ``page_content``, Haystack ``content``)."""
        if payloads is None:
            return None
        col = self._column(payloads, self.text_field, "")
        for name in ("page_content", "content") if col is None and self.text_field == "text" else ():
            col = self._column(payloads, name, "")
            if col is not None:
                break
        return col

    def explain(self, query: str, candidates: Any, now: Any = None, top_k: int | None = None) -> str:
        """Readable trace: query, kernel, gate and strength, then one line a document."""
        return self.rerank(query, candidates, top_k=top_k, now=now).explain()

    def explain_records(self, query: str, candidates: Any, now: Any = None) -> list[dict[str, Any]]:
        """The same trace as a list of dicts, for programs."""
        return self.rerank(query, candidates, now=now).explain_records()

    # -- internals -----------------------------------------------------------------------

    def _ranking(
        self,
        query: str,
        ids: Sequence[Any],
        payloads: Sequence[Any] | None,
        sim: np.ndarray,
        res: TemporalResult,
        ok: np.ndarray | None,
        intent: Intent,
        top_k: int | None,
    ) -> Ranking:
        keep = res.keep if ok is None else (res.keep & ok)
        pool = None if keep.all() else np.flatnonzero(keep)
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 0):
            raise InvalidInput(f"top_k={top_k!r}; give an integer >= 0 such as 10, or None for every candidate")
        kernel = self.config.kernel
        cached = self._kernel_text
        if cached is None or cached[0] is not kernel:  # kernels are immutable: describe once
            cached = (kernel, repr(kernel), kernel.half_life() if hasattr(kernel, "half_life") else None)
            self._kernel_text = cached
        meta = {
            "kernel": cached[1],
            "half_life_days": cached[2],
            "combine": self.config.combine,
            "gate": intent.time_sensitivity,
            "strength": self.config.strength,
            "effective_strength": res.effective_strength,
            "intent": intent,
            "now": res.reference_time,
        }
        return Ranking(
            ids=ids, payloads=payloads, pool=pool, limit=top_k, score=res.score, similarity=sim,
            decay=res.decay, age_days=res.age_days, time=res.start, rank_before=None,
            notes=res, query=query, meta=meta,
        )

    def _scores(self, scores: Any, ids: Sequence[Any] | None) -> tuple[np.ndarray, np.ndarray | None]:
        try:
            sim = np.asarray(scores, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            sim = np.array([_to_float(v) for v in scores], dtype=np.float64)
        if isinstance(scores, (list, tuple)) and sim.ndim == 1:
            # bools are not scores, but numpy reads them as 0.0/1.0: look only at those values
            suspects = np.flatnonzero((sim == 0.0) | (sim == 1.0))
            if suspects.size and any(type(scores[i]) is bool for i in suspects.tolist()):
                sim = np.array([_to_float(v) for v in scores], dtype=np.float64)
        if sim.ndim != 1:
            raise InvalidInput(f"scores must be a 1-D sequence of numbers, got shape {sim.shape}")
        bad = ~np.isfinite(sim)
        if not bad.any():
            return sim, None
        if self.bad_score == "raise":
            i = int(np.flatnonzero(bad)[0])
            who = ids[i] if ids is not None and i < len(ids) else f"#{i}"
            raw = scores[i] if isinstance(scores, (list, tuple)) else sim[i]
            raise InvalidInput(
                f"candidate {who!r} has {self.score_field}={raw!r}; scores must be finite numbers. "
                "Fix the score, or pass bad_score='drop' (leave it out) or 'zero' (score it 0)"
            )
        sim = sim.copy()
        sim[bad] = 0.0
        return sim, (~bad if self.bad_score == "drop" else None)

    def _times(self, values: Any) -> np.ndarray:
        # float arrays too: their unit (s/ms/us/ns) and range are read as for every other
        # input (a float64 array of millisecond timestamps, 1e300, inf) -- but an array whose
        # finite values are all plain in-range seconds (the common case) is used as it is,
        # after two NaN-skipping reductions instead of parse_times' per-element unit pass

        if isinstance(values, np.ndarray) and values.dtype.kind == "f" and values.ndim == 1 and values.size:
            out = values.astype(np.float64, copy=False)
            if np.fmin.reduce(out) >= _MIN_TS and np.fmax.reduce(out) < 1e11:  # all-NaN: False
                return out

        return parse_times(values, tz=self.tz)

    def _column(
        self, items: Sequence[Any], name: str, default: Any, keys: set[Any] | None = None
    ) -> list[Any] | None:
        """One field from every candidate; None when no candidate has it.

        Dicts are read in one C-level pass; ``keys`` (the union of every candidate's keys)
        settles absent fields without a per-row scan. Rows lacking the key at the top level
        are looked up in their nested ``metadata``.
        """
        if not items:
            return []
        first = items[0]
        try:
            if isinstance(first, dict):
                try:
                    return list(map(itemgetter(name), items))
                except KeyError:
                    pass
                if keys is not None and name not in keys and "metadata" not in keys:
                    return None
                vals = [it.get(name, _MISSING) for it in items]
                n_missing = vals.count(_MISSING)
                if n_missing and (keys is None or "metadata" in keys):
                    for i, v in enumerate(vals):
                        if v is _MISSING:
                            meta = items[i].get("metadata")
                            if isinstance(meta, Mapping) and name in meta:
                                vals[i] = meta[name]
                                n_missing -= 1
                if n_missing == len(vals):
                    return None
                return [default if v is _MISSING else v for v in vals] if n_missing else vals
            if not isinstance(first, Mapping):
                return list(map(attrgetter(name), items))
        except (AttributeError, TypeError):
            pass  # mixed candidate types: read each one on its own
        out = [_field(it, name, _MISSING) for it in items]
        if all(v is _MISSING for v in out):
            return None
        return [default if v is _MISSING else v for v in out]


# the keyword defaults of TemporalReranker (the index's: DEFAULT_* of chronorank.temporal)
_POLICY_DEFAULTS = {
    f.name: inspect.signature(TemporalReranker.__init__).parameters[f.name].default
    for f in dataclasses.fields(TemporalConfig) if f.name != "kernel"
}


def _given_config(config: Any, kernel: Any, kernel_params: Mapping[str, Any], policies: Mapping[str, Any]) -> TemporalConfig:
    """``config=`` of the reranker: a TemporalConfig, with no policy keyword also set."""
    if not isinstance(config, TemporalConfig):
        raise InvalidInput(
            f"config={config!r}; give a chronorank.temporal.TemporalConfig (e.g. an index's config.temporal), "
            "or the policies as keywords."
        )
    both = [name for name, v in policies.items() if v != _POLICY_DEFAULTS[name]]
    if kernel is not None or kernel_params:
        both.insert(0, "kernel")
    if both:
        raise InvalidInput(
            f"config= and {', '.join(both)}= both set the temporal policies; put them in the config "
            f"(dataclasses.replace(config, {both[0]}=...)) or drop config=."
        )
    return config


def known_terms(intent: Intent, texts: Sequence[Any] | None) -> int | None:
    """The question's distinct topical terms that the candidates' texts hold (the index counts
    those its corpus holds): the query's shape for :func:`chronorank.ranking.shaped`. None
    without texts (a short question's rules)."""
    if texts is None:
        return None
    from chronorank.index.text import analyze_many, query_weights

    asked = set(query_weights(intent.topical_query or intent.query or ""))
    if not asked:
        return 0
    seen: set[str] = set()
    for terms in analyze_many([str(x or "") for x in texts]):
        seen.update(asked.intersection(terms))
        if len(seen) == len(asked):
            break
    return len(seen)


def text_facet_hits(intent: Intent, texts: Sequence[Any] | None) -> Callable[[np.ndarray], np.ndarray] | None:
    """``rank(facet_hits=...)`` read from the candidates' texts, as the index reads it from its
    postings (``TemporalIndex._facet_hits``): which of the question's words, without the frame
    words (:func:`chronorank.intent.rules.facet_text`), each text at some positions holds (the
    ranking asks only for the subject's documents, and only when the keyword score shows no
    facet). None without texts or with fewer than two such words. The reranker and the stores'
    client-side step (``stores.results.client_score``) both call it."""
    if texts is None:
        return None
    from chronorank.index.text import analyze_many, query_weights
    from chronorank.intent.rules import facet_text, keyword_text

    lang = intent.lang or "en"
    words = facet_text(keyword_text(intent.topical_query or intent.query or "", lang), lang)
    asked = list(query_weights(words)) if words is not None else []
    if len(asked) < 2:
        return None

    def hits(pos: np.ndarray) -> np.ndarray:
        held = [set(t) for t in analyze_many([str(texts[i] or "") for i in pos.tolist()])]
        return np.array([[w in h for h in held] for w in asked], dtype=bool).reshape(len(asked), len(held))
    return hits


def _floats(values: Any) -> np.ndarray:
    """A float array as given (an index's float32 cosines stay float32, as the index reads them)."""
    arr = np.asarray(values)
    return arr if arr.dtype.kind == "f" else arr.astype(np.float64)


def text_stages(
    query: str, intent: Intent, texts: Sequence[Any] | None, start: np.ndarray, held: list[set[str]] | None = None,
) -> tuple[Any, int | None]:
    """What the ranking's version stages read from the candidates' texts, for
    :func:`chronorank.ranking.rank` (``conflicts=``, ``event=``): the version-conflict
    question (``index.version_conflict.text_conflicts``) and, for a question whose anchor is
    dated (``intent.target`` set), the position of the anchor's event page, chosen as the index
    chooses it (:func:`chronorank.ranking.anchor_event`, then the page announcing the anchor's
    version: ``index.version_conflict.version_event``) by the words each text holds instead of
    BM25 over a corpus. ``start``: the candidates' starts; ``held``: the words each text holds,
    when read already. (None, None) without texts. The reranker and the stores' client-side
    step (``stores.results.client_score``) both call it."""
    if texts is None:
        return None, None
    from chronorank.index.version_conflict import TextRows, text_conflicts, version_event

    conflicts = text_conflicts(query, intent, texts)
    anchor = intent.anchor
    if anchor is None or intent.target is None:
        return conflicts, None
    words, whole_words = _anchor_words(intent)
    event = -1
    if words and whole_words != words:
        held = held if held is not None else _held_words(texts)
        n = len(held)
        named = np.fromiter((len(words & h) for h in held), dtype=np.float64, count=n)
        whole = np.fromiter((len(whole_words & h) for h in held), dtype=np.float64, count=n)
        event = anchor_event(named, whole, start)
    if event < 0:
        when = intent.target.end if anchor.relation == "before" else intent.target.start
        event = version_event(TextRows(texts), anchor.text, intent.lang or "en", start, when)
    return conflicts, (event if event >= 0 else None)


def anchor_page_of(intent: Intent, texts: Sequence[Any] | None, start: np.ndarray) -> int | None:
    """The position of a before question's anchor page among the candidates, for
    :func:`chronorank.ranking.rank` (``anchor_page=``), chosen as the index chooses it by the
    words each text holds: the earliest candidate whose lead names the anchor's version
    ("requests 2.31.0." for "before 2.31") and that starts at or after the period's end (not
    inside the period). None without texts, for another question, or when no lead names it.
    The reranker and the stores' client-side step (``stores.results.client_score``) both call it."""
    anchor = intent.anchor
    if texts is None or anchor is None or intent.target is None or anchor.relation != "before":
        return None
    from chronorank.index.version_conflict import TextRows, naming, versions_of

    lang = intent.lang or "en"
    asked = versions_of(anchor.text, "same", lang)
    if asked is None or not len(texts):
        return None
    own = naming(TextRows(texts), asked, lang, np.arange(len(texts)))
    with np.errstate(invalid="ignore"):
        pick = np.flatnonzero(own & (start >= intent.target.end))  # NaN >= t is False
    return int(pick[np.argmin(start[pick])]) if pick.size else None


def _anchor_words(intent: Intent) -> tuple[set[str], set[str]]:
    """The anchor's subject words, and those with the anchor's own wording added."""
    assert intent.anchor is not None
    words = set(_WORD.findall(anchor_terms(intent.anchor, intent.lang).lower()))
    return words, words | set(_WORD.findall(intent.anchor.text.lower()))


def _held_words(texts: Sequence[Any]) -> list[set[str]]:
    return [set(_WORD.findall(str(x).lower())) for x in texts]


_WORD = re.compile(r"\w+(?:\.\w+)*")


def _infer_missing(
    t: np.ndarray, vf: np.ndarray | None, payloads: Sequence[Any] | None, text_field: str,
) -> tuple[np.ndarray, dict[int, str]]:
    """Candidates with no date (nor ``valid_from``) get the date their metadata, text or
    address states (:func:`chronorank.timeparse.textdates.infer_dates`, as the index's add());
    returns the times and each dated row's explanation."""
    if payloads is None or not t.shape[0]:
        return t, {}
    missing = np.isnan(t) if vf is None else np.isnan(t) & np.isnan(vf)
    rows = np.flatnonzero(missing)
    if not rows.size:
        return t, {}
    texts = [_field(payloads[i], text_field, "") for i in rows.tolist()]
    found = infer_dates([x if isinstance(x, str) else "" for x in texts], [_meta_of(payloads[i]) for i in rows.tolist()])
    hit = np.flatnonzero(~np.isnan(found.time))
    if not hit.size:
        return t, {}
    t = t.copy()
    t[rows[hit]] = found.time[hit]
    return t, {int(rows[j]): date_note(found.record(j)) for j in hit.tolist()}


def _meta_of(item: Any) -> Mapping[str, Any] | None:
    # the fields an address or a date-named field is read from: the item's own, then its metadata
    if isinstance(item, Mapping):
        meta = item.get("metadata")
        return ChainMap(dict(item), dict(meta)) if isinstance(meta, Mapping) else item
    meta = getattr(item, "metadata", None)
    own = dict(vars(item)) if hasattr(item, "__dict__") else {}
    return ChainMap(own, dict(meta)) if isinstance(meta, Mapping) else own


class _DatedNotes:
    """The temporal layer's notes, each dated-by-inference row's source first."""

    def __init__(self, res: TemporalResult, dated: Mapping[int, str]) -> None:
        self.res, self.dated = res, dated

    def notes_of(self, rows: Sequence[int]) -> list[tuple[str, ...]]:
        base = self.res.notes_of(rows)
        return [(self.dated[int(r)], *n) if int(r) in self.dated else n for r, n in zip(rows, base)]


class _Missing:
    pass


_MISSING: Any = _Missing()


def _field(item: Any, name: str, default: Any) -> Any:
    if isinstance(item, Mapping):
        if name in item:
            return item[name]
        meta = item.get("metadata")
        if isinstance(meta, Mapping) and name in meta:
            return meta[name]
        return default
    if dataclasses.is_dataclass(item) or hasattr(item, name):
        return getattr(item, name, default)
    meta = getattr(item, "metadata", None)
    if isinstance(meta, Mapping):
        return meta.get(name, default)
    return default


def _to_float(v: Any) -> float:
    if isinstance(v, bool):
        return math.nan
    try:
        return float(v)
    except (TypeError, ValueError, OverflowError):
        return math.nan


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


class _TextChains:
    """The candidates' version chains for the explanation (:func:`chronorank.ranking.chains_of`:
    the group when the candidate has one, else the series key read from its text), asked by
    input positions; the keys are read on the first question."""

    def __init__(self, texts: Sequence[Any], times: np.ndarray, ids: Sequence[Any], groups: np.ndarray | None) -> None:
        self.texts, self.times, self.ids, self.groups = texts, times, ids, groups
        self.keys: np.ndarray | None = None

    def __call__(self, positions: Sequence[int]) -> list[tuple[str, int, int, str] | None]:
        if self.keys is None:
            self.keys = np.array([series_key(str(x or ""), DEFAULT_LEAD_TOKENS) for x in self.texts], dtype=object)
        return chains_of(self.keys, self.times, self.ids, positions, self.groups)
