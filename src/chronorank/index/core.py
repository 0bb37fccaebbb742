"""``TemporalIndex``: an embedded hybrid (dense + BM25) index with time-aware scoring.

Every search scores *every* document: one float32 mat-vec for the dense cosine, one pass
over the query terms' BM25 columns, a fusion of the two, then the temporal layer
(:func:`chronorank.temporal.apply_temporal`) over the whole corpus (or, for a large one, over a
pool proven to rank as it: ``_exact_pool``), and a top-k cut at the very end. Nothing is
pre-filtered, so a fresh document at similarity rank 500 can win. ``TemporalIndex.search`` is a
pipeline of the steps under "search steps" below.

Concurrency: the index state is an immutable snapshot. Writers (``add``/``delete``) build a
new snapshot under a lock and swap it in with one assignment; a search reads the snapshot
once at its start, so it sees either the old state or the new one, never a mix.
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chronorank.errors import DateWarning, InvalidInput
from chronorank.filters import filter_mask, parse_filter
from chronorank.fusion import weighted_rrf
from chronorank.index import background as _bg
from chronorank.index.ann import ann_candidates
from chronorank.index.bm25 import BM25_B, BM25_K1
from chronorank.index.config import IndexConfig
from chronorank.index.date_report import DateReport, date_report, no_dates_message
from chronorank.index.embed_cache import embed_documents
from chronorank.index.embedders import Embedder, embed_queries, get_embedder
from chronorank.index.lead import lead_cut, lead_lengths  # re-exported: they lived here
from chronorank.index.query_prep import (
    anchor_scope,
    anchor_subject,
    dated_by_own_page,
    dated_in_subject,
    glued_names,
    spell_acronyms,
    subject_scores,
)
from chronorank.index.records import TIME_COLUMNS, surrogate_at
from chronorank.index.records import check_storable as _check_storable  # it lived here
from chronorank.index.snapshot import (  # the index's arrays (these names lived here before)
    _as_matrix,
    _concat_vectors,
    _empty_snapshot,
    _lead_sums,
    _Snapshot,
    title_codes,
)
from chronorank.index.snapshot import _decay_times as _decay_times  # re-exported
from chronorank.index.storage import load_index
from chronorank.index.text import acronym_expansion, encode_for_index, query_weights
from chronorank.index.version_conflict import (
    AskedVersions,
    asked_versions,
    conflict_note,
    conflicts,
    naming,
    version_event,
    versions_of,
)
from chronorank.intent.rules import anchor_terms, facet_text, keyword_text, name_numbers
from chronorank.ranking import (  # the ranking: one pipeline of named stages (they lived here)
    POOL_SAMPLE,
    VERSION_POOL,
    Prepared,
    Rules,
    TopicDecision,
    anchor_event,
    chains_of,
    prepare,
    rank,
    section_key,
)
from chronorank.ranking import flatten_top as _flatten_top
from chronorank.ranking import key_codes as _key_codes
from chronorank.ranking import kth_largest as _kth_largest
from chronorank.ranking import open_side as _open_side
from chronorank.ranking import sample_kth as _sample_kth
from chronorank.ranking import series_key as _series_key
from chronorank.ranking import shaped as _shaped
from chronorank.ranking import title_key as _title_key
from chronorank.ranking import topic_rule as _topic_rule
from chronorank.temporal import (
    ANCHOR_BINS,
    Pool,
    TemporalPlan,
    TemporalResult,
    _at_least,
    anchor_row,
    prepare_query,
    resolve_anchor,
)
from chronorank.timeparse import parse_times
from chronorank.timeparse.numbers import read_numbers
from chronorank.timeparse.textdates import INFERRED_KEY, date_note, infer_dates
from chronorank.types import DAY, Intent, Interval, Ranking, tied_at_cut

__all__ = ["TemporalIndex"]

_RESERVED = ("id", "text", "date", "updated", "valid_from", "valid_to", "metadata", "vector")


class TemporalIndex:
    """Embedded hybrid temporal index.

    >>> idx = TemporalIndex()                                   # doctest: +SKIP
    >>> idx.add([{"id": "a@1.0", "text": "a 1.0 ...", "date": "2024-01-02"}])
    >>> hits = idx.search("what changed in the latest release of a", now="2024-06-01")
    >>> hits[0].id, hits[0].score, hits[0].explain()

    Parameters
    ----------
    embedder:
        ``"default"`` (MiniLM int8 ONNX, offline), ``None`` (keywords only, or your own
        vectors via ``add(..., vectors=...)`` and ``search(..., vector=...)``), a name
        accepted by :func:`~chronorank.index.embedders.get_embedder`, or any object with
        ``embed(texts)``, ``dim`` and ``name``.
    config:
        An :class:`IndexConfig` or its spec string (fusion weights + temporal settings).
    group_key:
        Version chains: a metadata field name or a callable ``record -> key``; documents
        with the same key are versions of one document (newer supersede older).
    bad_dates:
        ``"raise"`` (default): a date that cannot be parsed is an error naming the
        document; ``"missing"``: treat it as undated (the missing-date policy applies).
    k1, b:
        BM25 parameters. The defaults (1.2, 0.3) use weak length normalisation, so a long
        document that names the query's subject once is not buried (chosen on the
        changelog and release benchmarks, see benchmarks/index_quality.py).
    """

    def __init__(
        self,
        embedder: str | Embedder | None = "default",
        *,
        config: IndexConfig | str | None = None,
        group_key: str | Callable[[Mapping[str, Any]], Any] | None = None,
        bad_dates: str = "raise",
        k1: float = BM25_K1,
        b: float = BM25_B,
        infer_dates: bool = True,
    ) -> None:
        self.embedder = get_embedder(embedder)
        self.config = IndexConfig.from_spec(config)
        if bad_dates not in ("raise", "missing"):
            raise InvalidInput(f"bad_dates={bad_dates!r}; use 'raise' or 'missing'.")
        if group_key is not None and not (isinstance(group_key, str) or callable(group_key)):
            raise InvalidInput(f"group_key={group_key!r}; give a metadata field name or a callable record -> key.")
        self.group_key = group_key
        self.bad_dates = bad_dates
        #: the dates of the last add() batch (None before one): :class:`DateReport`
        self.date_report: DateReport | None = None
        self.infer_dates = bool(infer_dates)
        #: the last add()'s date inference (``timeparse.textdates``): the documents without a
        #: date it looked at (``checked``) and the dates found by source (field / text / url)
        self.last_inferred: dict[str, int] = {}
        self.k1 = float(k1)
        self.b = float(b)
        self.dim: int | None = self.embedder.dim if self.embedder is not None else None
        self._vocab: dict[str, int] = {}
        self._snap = _empty_snapshot()
        self._write_lock = threading.RLock()
        self._bg: Any = None  # the background embedding job (index/background.py), if any

    # ------------------------------------------------------------------ reading

    def __len__(self) -> int:
        return len(self._snap)

    def __contains__(self, doc_id: object) -> bool:
        return str(doc_id) in self._snap.row_of

    @property
    def ids(self) -> list[str]:
        return list(self._snap.ids)

    def get(self, doc_id: str) -> dict[str, Any] | None:
        """The stored record of one document (a copy), or None."""
        snap = self._snap
        i = snap.row_of.get(str(doc_id))
        return None if i is None else dict(snap.records[i])

    def __repr__(self) -> str:
        emb = self.embedder.name if self.embedder is not None else None
        return f"TemporalIndex(n={len(self)}, embedder={emb!r}, config={self.config.spec()!r})"

    # ------------------------------------------------------------------ writing

    def add(
        self,
        docs: Iterable[Mapping[str, Any]],
        vectors: np.ndarray | Sequence[Sequence[float]] | None = None,
        *,
        embed: str = "now",
        date_unit: str = "auto",
    ) -> int:
        """Insert or replace documents by ``id``; returns how many were written.

        A bare number as a date is a year (1000-9999), a YYYYMMDD date, or epoch time at or
        above 1e8 (its unit by magnitude); ``date_unit`` (``s``, ``ms``, ``us``, ``ns``,
        ``year``, ``yyyymmdd``) reads every number one way (:mod:`chronorank.timeparse.numbers`).
        :attr:`date_report` counts the batch's dated, undated and unreadable documents; a batch
        without a readable date warns (:class:`~chronorank.errors.DateWarning`).

        Documents are dicts shaped like FORMAT.md corpus lines. A document's own vector can
        be given as a ``vector`` key or as the matching row of ``vectors``; other documents
        are embedded with the index's embedder (a replaced document whose text did not change
        keeps its vector).

        ``embed="background"`` returns as soon as the keyword and time structures are built
        and embeds in a background thread: searches answer at once with keyword + time, and
        fuse the dense signal once every vector is in (then ranking as ``embed="now"`` would);
        :attr:`dense_progress`, :meth:`wait`, :mod:`chronorank.index.background`.
        """
        background = _bg.check_mode(embed) == "background" and self.embedder is not None
        docs = list(docs)
        if not docs:
            return 0
        records = [_normalise(d, i) for i, d in enumerate(docs)]
        seen: dict[str, int] = {}
        for i, r in enumerate(records):
            if r["id"] in seen:
                raise InvalidInput(
                    f"docs[{i}] repeats id={r['id']!r} (first at docs[{seen[r['id']]}]); one batch "
                    "must not hold the same id twice -- keep the version you want, or call add() twice."
                )
            seen[r["id"]] = i
        given, dim = self._collect_vectors(docs, records, vectors)
        times, unreadable = self._parse_times(records, date_unit)
        self.last_inferred = _infer_missing(records, times, self.infer_dates)
        self.date_report = date_report(times, records, unreadable, inferred=self.last_inferred)
        if self.date_report.undated == len(records):
            warnings.warn(no_dates_message(self.date_report), DateWarning, stacklevel=2)
        with self._write_lock:
            old = self._snap
            ticket = 0
            if background:
                ticket = _bg.start(self).next_ticket()
            new_vecs, new_pending = self._vectors_for(old, records, given, dim, ticket)

            texts = [r["text"] for r in records]
            # the lead's length comes from the same pass (equal to lead_lengths: property test)
            t_ids, t_ptr, new_lead, t_tf = encode_for_index(texts, [lead_cut(t) for t in texts], self._vocab)
            n_terms = len(self._vocab)
            keep = np.ones(len(old), dtype=bool)
            replaced = [old.row_of[r["id"]] for r in records if r["id"] in old.row_of]
            keep[replaced] = False
            base = _compact(old, keep) if replaced else old
            pending = _bg.join_pending(base.pending, len(base), new_pending, len(records))
            if len(base) and not replaced:  # an append: the cost of the new documents only
                snap = base.appended(
                    records, new_vecs, times, t_ids, t_ptr, n_terms,
                    new_lead if base.lead_len is not None else None, self.k1, self.b, t_tf,
                )
                snap.pending = pending
                self._snap = snap
            else:
                # the lead field's lengths are derived here, at build time, and saved with the
                # index (a first query after a load then analyses nothing); a base loaded from an
                # older index without them keeps them lazy
                lead_len = None
                if base.lead_len is not None or not len(base):
                    lead_len = new_lead if base.lead_len is None else np.concatenate([base.lead_len, new_lead])
                self._snap = _Snapshot(
                    records=base.records + records,
                    vectors=_concat_vectors(base.vectors, new_vecs, len(base), dim),
                    times=np.concatenate([base.times, times], axis=1),
                    # a first batch keeps its ids as they are (a 100 MiB text's ~70 MB, not twice)
                    term_ids=np.concatenate([base.term_ids, t_ids]) if len(base.term_ids) else t_ids,
                    term_ptr=np.concatenate([base.term_ptr, base.term_ptr[-1] + t_ptr[1:]]),
                    term_tf=_join_counts(base, t_ids, t_tf),
                    n_terms=n_terms,
                    groups=None,
                    lead_len=lead_len,
                    pending=pending,
                )
            self._snap.groups = self._group_codes(self._snap.records)
            self.dim = dim  # only once the batch is in: a failed add() leaves the width unset
            if ticket and new_pending is not None:
                todo = np.flatnonzero(new_pending == ticket).tolist()
                if todo:
                    _bg.start(self).submit(ticket, [records[i]["id"] for i in todo], [records[i]["text"] for i in todo])
        return len(records)

    def delete(self, ids: Iterable[str] | str, *, missing: str = "ignore") -> int:
        """Remove documents by id; returns how many were removed.

        ``missing="ignore"`` skips ids that are not in the index; ``"raise"`` refuses the
        whole call if any is absent.
        """
        if isinstance(ids, str):
            ids = [ids]
        wanted = [str(i) for i in ids]
        if missing not in ("ignore", "raise"):
            raise InvalidInput(f"missing={missing!r}; use 'ignore' or 'raise'.")
        with self._write_lock:
            old = self._snap
            absent = [i for i in wanted if i not in old.row_of]
            if absent and missing == "raise":
                raise InvalidInput(f"cannot delete {absent[:5]!r}: not in the index (pass missing='ignore' to skip them).")
            rows = [old.row_of[i] for i in wanted if i in old.row_of]
            if not rows:
                return 0
            keep = np.ones(len(old), dtype=bool)
            keep[rows] = False
            self._snap = _compact(old, keep)
            self._snap.groups = self._group_codes(self._snap.records)
            return int((~keep).sum())

    # ------------------------------------------------------------------ search

    def search(
        self,
        query: str,
        k: int = 10,
        now: Any = None,
        *,
        vector: np.ndarray | Sequence[float] | None = None,
        intent: Intent | None = None,
        config: IndexConfig | str | None = None,
        candidates: Sequence[str] | None = None,
        ann: bool | Mapping[str, Any] | None = None,
        filter: Mapping[str, Any] | None = None,  # noqa: A002 - the name every vector store uses
        **overrides: Any,
    ) -> Ranking:
        """Rank every document for ``query`` at time ``now`` and return the best ``k``.

        ``now`` is anything :func:`chronorank.timeparse.resolve_now` accepts (None = the wall
        clock). ``intent`` overrides the parsed query intent. ``config``/``overrides`` change
        fusion or temporal settings for this call only (e.g. ``strength=0``). ``candidates``
        restricts the pool to those ids (unknown ids raise); by default it is every document.
        ``ann=True`` (or a dict of :func:`chronorank.index.ann.ann_candidates` options such as
        ``{"ann_k": 1000}``) scores only the HNSW top-k plus time-sliced lanes (newest, last
        30/180 days, or the as-of/range target) and an exact BM25 lane, instead of every
        document: needs the ``ann`` extra (faiss-cpu).
        ``filter`` is a metadata filter (:mod:`chronorank.filters`, e.g. ``{"project": "flask"}``):
        only matching documents are scored, and every other setting (candidates, time lanes)
        applies inside it. With a filter the matching rows are scored exactly (no ANN pool).
        While documents still wait for their vectors (``add(..., embed="background")``) the
        dense signal, ``vector`` and ``ann`` are left out: keyword + time for every document,
        said in ``meta["dense"]`` and the explanation.
        """
        snap = self._snap
        early = self._early_dense(snap, vector, config, overrides, candidates, ann, filter)
        pq = prepare_query(query, k, now, intent, IndexConfig.from_spec(config) if config is not None else self.config,
                           overrides)
        cfg, now_s, intent = pq.config, pq.now, pq.intent
        topical = anchor_subject(pq.topical, intent)

        flt = parse_filter(filter)
        if len(snap) == 0:
            return _empty_ranking(query, intent, now_s)
        flt_rows = None if flt is None else np.flatnonzero(
            filter_mask(flt, snap.records.metadata, snap.filter_cols, times=_filter_times(snap))
        )
        anchor_line = ""
        event_row = page_row = -1
        below = False
        if intent.anchor is not None and intent.target is None:
            intent, anchor_line, event_row, below, page_row = self._resolve_anchor(snap, intent, now_s, cfg, topical)

        ann_rows: np.ndarray | None = None
        if ann and candidates is None and flt_rows is None and snap.pending is None:
            opts = {} if ann is True else dict(ann)  # type: ignore[arg-type]
            ann_rows, qvec, intent, now_s = ann_candidates(
                self, query, now_s, vector=vector, intent=intent, snap=snap, **opts
            )
            vector = qvec
        terms = self._query_terms(topical)
        rules = Rules.of(cfg)  # shaped by ranking.prepare, as the fusion's settings are here
        cfg = _shaped(cfg, terms)

        # the rows and their similarity, the time plan, then time and topic over the rows (a pool
        # of them for a large corpus) and the best k
        spelled = self._glued_names(snap, _spell_acronyms(snap, topical))
        rows = self._select_rows(snap, candidates, ann_rows, flt_rows)
        if rows is not None and rows.shape[0] == 0:
            return _empty_ranking(query, intent, now_s)
        # a few rows (a filter, candidates): the mat-vec over them only, each row's cosine the same
        few = rows if rows is not None and (ann_rows is not None or rows.shape[0] <= len(snap) // FEW_ROWS) else None
        kw_text = keyword_text(spelled, intent.lang)
        signals = self._signals(snap, spelled, vector, cfg, few, keywords=kw_text,
                                lead_keywords=name_numbers(kw_text, intent.lang or "en"),
                                early=early if rows is None else None)
        # the fused similarity's dense term, made with the cosines when they began early
        cols = _Columns.of(snap, signals, cfg, rows,
                           dense_part=early.part() if early is not None and rows is None else None)
        # the ranking's first stages (shape, burst) over every row, before any pool is chosen
        prep = prepare(cols.sim, cols.times, intent=intent, now=now_s, config=cfg.temporal_config(), rules=rules,
                       terms=terms, burst_cache=snap.derived if cols.rows is None else None,
                       titles_of=lambda pos: _title_codes_of(snap, pos if cols.rows is None else cols.rows[pos],
                                                             cfg.lead_tokens))
        if prep.sections and cfg.idf_power and "bm25" in signals:
            # a page in sections: the question names the page (its rare words: the service, the
            # product) and the section (ordinary words: "security and privacy"); the title matches
            # the page already, so the section's words count at plain BM25 (index/config.py, idf_power)
            cfg = cfg.replace(idf_power=0.0)
            signals = {**signals, "bm25": self._bm25(snap, keyword_text(spelled, intent.lang), cfg)}
            cols = _Columns.of(snap, signals, cfg, rows)
            prep = prepare(cols.sim, cols.times, intent=intent, now=now_s, config=cfg.temporal_config(), rules=rules,
                           terms=terms, burst_cache=snap.derived if cols.rows is None else None,
                           titles_of=lambda pos: _title_codes_of(snap, pos if cols.rows is None else cols.rows[pos],
                                                                 cfg.lead_tokens))
        intent = prep.intent
        if prep.sections and prep.flatten:
            cfg = cfg.replace(topical_margin=prep.rules.topical_margin)  # the pool flattens as rank() does
        q = _Query(text=query, topical=topical, k=k, now=now_s, intent=intent, cfg=cfg, prep=prep,
                   event_row=event_row, anchor_line=anchor_line, page_row=page_row,
                   asked=_strictly_before(asked_versions(query, intent), below) if prep.cut is not None else None,
                   # read by the facet stage of a recent question only (``ranking.rank``; the intent is final)
                   facet_hits=self._facet_hits(snap, kw_text, intent.lang or "en") if intent.mode == "recent" else None)
        scored, top, sel = _exact_search(snap, cols, q)
        return self._ranking(snap, cols, q, scored, top, sel)

    async def asearch(self, query: str, k: int = 10, now: Any = None, **kwargs: Any) -> Ranking:
        """:meth:`search` in a worker thread (the snapshot makes it safe next to writers)."""
        import asyncio

        return await asyncio.to_thread(self.search, query, k, now, **kwargs)

    async def aadd(self, docs: Iterable[Mapping[str, Any]], vectors: Any = None, *, embed: str = "now") -> int:
        """:meth:`add` in a worker thread."""
        import asyncio

        return await asyncio.to_thread(self.add, list(docs), vectors, embed=embed)

    def _early_dense(
        self, snap: _Snapshot, vector: Any, config: Any, overrides: Mapping[str, Any], candidates: Any, ann: Any,
        flt: Any,
    ) -> _Begun | None:
        """The whole corpus's cosines begun before the question is read (``_MatVec.start``: the
        worker thread takes chunks while this one parses it and scores its keywords), when the
        call has decided them already: a vector given, this index's own configuration, every
        row (no filter, candidates or ANN pool), a large matrix. None otherwise, and for a
        vector that is not valid (its error comes in its turn, after the question's)."""
        vecs = snap.vectors
        if (vector is None or config is not None or overrides or candidates is not None or ann or flt is not None
                or self.config.dense_weight <= 0 or vecs is None or snap.pending is not None
                or vecs.size < SMALL_MATVEC):
            return None
        try:
            q = _as_matrix(vector, self.dim, "vector")[0]
        except InvalidInput:
            return None
        return _cosines_start(vecs, np.ascontiguousarray(q, dtype=np.float32), _dense_term_weight(self.config))

    def _glued_names(self, snap: _Snapshot, topical: str) -> str:
        """``query_prep.glued_names`` with the whole corpus's document frequencies (BM25 idf)."""
        vocab, n = self._vocab, snap.n_terms

        def commoner(bare: str, glued: str) -> bool:
            b = [vocab.get(t, n) for t in query_weights(bare)]
            g = [w for w in (vocab.get(t, n) for t in query_weights(glued)) if w < n]
            if b[0] >= n:
                return False
            idf = snap.bm25(self.k1, self.b).idf(np.array([b[0], *g], dtype=np.int64))
            return bool(idf.shape[0] == 1 or idf[0] < idf[1])

        return glued_names(topical, commoner)

    def _query_terms(self, topical: str) -> int:
        """Distinct query terms the corpus knows (the query's shape, for ``_shaped``)."""
        vocab = self._vocab
        return sum(1 for t in query_weights(topical) if t in vocab)
    def _resolve_anchor(
        self, snap: _Snapshot, intent: Intent, now_s: float, cfg: IndexConfig, subject: str = "",
    ) -> tuple[Intent, str, int, bool, int]:
        """Date "before / after <version or event>" by the documents whose words match it (BM25).

        Also returns the row of the anchor's *event page* (-1 for none): of the dated documents
        that name the anchor's words and its event noun too, the best match for the whole
        anchor ("the 2.0 release" -> the API 2.0 release note, not the v2 pages that only
        say "2.0"). It reports the very change the question is framed by, so it is on the
        question's subject by construction (``_versions_first`` keeps it with the first hit's
        versions)."""
        if intent.anchor is None:
            return intent, "", -1, False, -1
        words = anchor_terms(intent.anchor, intent.lang)
        kw = cfg.replace(dense_weight=0.0, keyword_weight=1.0, lead_weight=0.0)
        match = self._signals(snap, words, None, kw)["bm25"]
        # "before 2.0.0" in a question about requests is requests' 2.0.0, not the first 2.0.0 of
        # any project: a version anchor is dated inside the question's subject, spelled as the
        # search spells it ("jinja2" -> "jinja2 (jinja)"); an event ("the migration to OAuth")
        # is its own subject
        own = dated_by_own_page(match, intent.anchor.text, intent.lang or "en", snap)
        has_own = own is not match
        within = self._subject_rows(snap, anchor_scope(self._glued_names(snap, subject), words, intent.lang or "en"), cfg)
        match = dated_in_subject(match, own, within)
        vf = snap.times[2]
        t = snap.time_column(cfg.time_field)
        start = np.where(np.isnan(vf), t, vf)
        out, line = resolve_anchor(intent, match, start, now_s, snap.ids)
        below = False
        if has_own and out.target is not None and intent.anchor.relation == "before":
            out, below = self._same_day_before(snap, out, match, start)
            if below:
                line += "; earlier versions were released that day too: the day is in the period, the version is not"
        event = -1
        if out.target is not None and words.strip().lower() != intent.anchor.text.strip().lower():
            event = anchor_event(match, self._signals(snap, intent.anchor.text, None, kw)["bm25"], start)
        if event < 0 and out.target is not None:
            # the page announcing the anchor's version, worded apart from it ("the v2 change":
            # "API 2.0 release.")
            when = out.target.end if intent.anchor.relation == "before" else out.target.start
            event = version_event(snap, intent.anchor.text, intent.lang or "en", start, when)
        page = -1
        if has_own and not below and out.target is not None and intent.anchor.relation == "before":
            # "before 2.31" in a question about requests: the page whose title names that version
            # in the subject ("requests 2.31.0."), the one that dated it (``ranking.anchor_page_first``)
            page = anchor_row(match, start)
        return out, line, event, below, page

    def _same_day_before(
        self, snap: _Snapshot, intent: Intent, match: np.ndarray, start: np.ndarray,
    ) -> tuple[Intent, bool]:
        """"before <version>" dated by the version's own page: when that day also holds a
        release of the same series (the page's title but for its digits, ``series_key``) whose
        lead names an earlier version, the day belongs to the period and the version itself is
        ruled out instead ("pip 20.3.4" and "pip 21.0" were both uploaded on 2021-01-23: the
        pip before 21.0 is 20.3.4). Returns the intent and whether it holds."""
        assert intent.target is not None and intent.anchor is not None
        day = float(intent.target.end)
        on_day = np.flatnonzero((start >= day) & (start < day + DAY))
        dating = on_day[match[on_day] > 0]
        others = on_day[match[on_day] <= 0]
        asked = versions_of(intent.anchor.text, "below", intent.lang or "en")
        if asked is None or not dating.size or not others.size:
            return intent, False
        tokens = self.config.lead_tokens
        keys = {_series_key(snap.records[int(r)]["text"], tokens) for r in dating} - {""}
        mine = others[np.array([_series_key(snap.records[int(r)]["text"], tokens) in keys for r in others])]
        if not mine.size or not naming(snap, asked, intent.lang or "en", mine)[mine].any():
            return intent, False
        return dataclasses.replace(intent, target=Interval(intent.target.start, day + DAY)), True

    def _subject_rows(self, snap: _Snapshot, rest: str, cfg: IndexConfig) -> np.ndarray | None:
        """Each document's match for a version anchor's subject (``query_prep.anchor_scope``;
        body and lead keywords, ``query_prep.subject_scores``). None when there is none."""
        if not rest or cfg.keyword_weight <= 0:
            return None
        sig = self._signals(snap, rest, None, cfg.replace(dense_weight=0.0, keyword_weight=1.0))
        return subject_scores(sig, len(snap))

    @staticmethod
    def _candidate_rows(snap: _Snapshot, candidates: Sequence[str]) -> np.ndarray:
        if isinstance(candidates, str):
            raise InvalidInput("candidates must be a list of ids, got a single str; wrap it in a list.")
        rows = []
        for c in candidates:
            r = snap.row_of.get(str(c))
            if r is None:
                raise InvalidInput(f"candidate id {c!r} is not in the index; pass ids of indexed documents.")
            rows.append(r)
        return np.unique(np.asarray(rows, dtype=np.int64))

    @classmethod
    def _select_rows(
        cls, snap: _Snapshot, candidates: Sequence[str] | None, ann_rows: np.ndarray | None,
        flt_rows: np.ndarray | None,
    ) -> np.ndarray | None:
        """The rows a search scores: the ANN pool, else the ``candidates`` (inside the filter),
        else the filter's rows; None for every document."""
        if ann_rows is not None:
            return ann_rows
        if candidates is not None:
            rows = cls._candidate_rows(snap, candidates)
            return rows if flt_rows is None else np.intersect1d(rows, flt_rows)
        return flt_rows

    def _ranking(
        self, snap: _Snapshot, cols: _Columns, q: _Query, scored: _Scored, top: np.ndarray, sel: _Pooled | None,
    ) -> Ranking:
        """The best ``top`` of the scored rows as a :class:`Ranking`: their columns, notes, the
        rank by similarity alone and the search's meta."""
        res, intent, cfg, tcfg = scored.res, q.intent, q.cfg, q.plan.config
        signals = scored.signals
        doc_rows = top if scored.rows is None else scored.rows[top]
        sub_ids = [snap.ids[int(i)] for i in doc_rows]
        kernel = tcfg.kernel
        return Ranking(
            ids=sub_ids,
            payloads=snap.records.view(doc_rows),  # a record dict is built when a hit is read
            order=np.arange(top.size),
            score=scored.score[top],
            similarity=scored.sim[top],
            decay=np.asarray(res.decay)[top],
            age_days=np.asarray(res.age_days)[top],
            time=np.asarray(res.start)[top],
            rank_before=_rank_before(cols, q, scored, top, sel),
            signals={name: np.asarray(v)[top] for name, v in signals.items()},
            notes=_dated_notes(snap, doc_rows, _conflict_notes(snap, scored, top, q, _top_notes(scored, top, intent))),
            query=q.text,
            meta={
                "kernel": repr(kernel),
                "half_life_days": kernel.half_life(),
                "combine": tcfg.combine,
                "intent": intent,
                "gate": intent.time_sensitivity,
                "strength": tcfg.strength,
                "effective_strength": res.effective_strength,
                "now": q.now,
                "reference_time": res.reference_time,
                # per top document (the whole candidate array said nothing of which is which)
                "anchor_time": res.anchor_time if np.ndim(res.anchor_time) == 0 else np.asarray(res.anchor_time)[top],
                "fusion": cfg.fusion,
                "config": cfg.spec(),
                "topical_query": q.topical,
                "n_docs": cols.n,
                "anchor": q.anchor_line,
                "topic_rule": _topic_rule(q.cut, [
                    (k, f) for k, f in (("dense", cfg.topic_floor), ("lead", cfg.topic_lead_floor))
                    if k in signals and f is not None], cfg.version_floor, q.asked) if "bm25" in signals else "",
                "on_topic": None if scored.on_topic is None else scored.on_topic[top],
                "topic": scored.topic,
                "raw_similarity": scored.raw_sim[top],
                "facet": None if scored.facet is None else scored.facet[top],
                "chains": _Chains(snap, doc_rows, cfg.lead_tokens, self.group_key),
                "band": None if res.band is None else res.band[top],
                "expired": res.expired[top],
                "target": intent.target,
                **_dense_meta(self, snap),
            },
        )

    def _signals(
        self, snap: _Snapshot, topical: str, vector: Any, cfg: IndexConfig, rows: np.ndarray | None = None,
        keywords: str | None = None, lead_keywords: str | None = None,
        early: _Begun | None = None,
    ) -> dict[str, np.ndarray]:
        """Similarity signals for every document, or only ``rows`` for the dense one (the
        mat-vec is the cost an ANN pool or a narrow filter saves; BM25 stays whole-corpus and
        is cut later).
        ``keywords`` is the text for the keyword lanes when it differs from ``topical``,
        ``lead_keywords`` the lead lane's when it differs from ``keywords`` (``name_numbers``);
        ``early``: the whole corpus's cosines begun already (``_early_dense``)."""
        out: dict[str, np.ndarray] = {}
        dense: Callable[[], np.ndarray] | None = None
        # the mat-vec begun first: a large one's chunks go to the worker thread while this
        # one scores the keywords, then joins it (``_MatVec.start``)
        if cfg.dense_weight > 0 and snap.vectors is not None and snap.pending is None and early is not None:
            dense = early
        elif cfg.dense_weight > 0 and snap.vectors is not None and snap.pending is None:
            # while vectors are still being embedded, keyword + time only (index/background.py)
            if vector is not None:
                q = _as_matrix(vector, self.dim, "vector")[0]
            elif self.embedder is not None:
                q = embed_queries(self.embedder, [topical])[0]
            else:
                raise InvalidInput(
                    "this index holds vectors but has no embedder to embed the query; pass "
                    "vector=... to search(), an embedder to TemporalIndex.load(path, embedder=...), "
                    "or dense_weight=0 for keywords only."
                )
            qv = np.ascontiguousarray(q, dtype=np.float32)
            dense = _cosines_start(snap.vectors if rows is None else snap.vectors[rows], qv)
        if cfg.keyword_weight > 0:
            words = topical if keywords is None else keywords
            uniq, counts = self._keyword_ids(snap, words)
            body = snap.bm25(self.k1, self.b)
            out["bm25"] = body.scores(uniq, weights=counts, idf_power=cfg.idf_power)
            if cfg.lead_weight > 0:
                # BM25F-style: the lead field's own idf would make a word rare in opening
                # lines but common in the corpus ("release") outweigh the query's subject,
                # so its terms are weighted by the whole documents' idf instead -- plain, not
                # raised to idf_power, so a title naming both the project and the version
                # beats one naming only the (rarer) version
                lead = snap.lead_bm25(self.k1, self.b, cfg.lead_tokens)
                if lead_keywords is not None and lead_keywords != words:
                    # a number that belongs to a name ("python 2.7") is not the lead's release
                    uniq, counts = self._keyword_ids(snap, lead_keywords)
                w = counts * body.idf(uniq) / np.maximum(lead.idf(uniq), 1e-12)
                out["lead"] = lead.scores(uniq, weights=w)
        if dense is not None:
            out = {"dense": dense(), **out}  # the order the signals are shown in
        if not out:
            raise InvalidInput(
                "no similarity signal is available: the index has no vectors and keyword_weight=0; "
                "set keyword_weight > 0 or add documents with vectors."
            )
        return out

    def _keyword_ids(self, snap: _Snapshot, words: str) -> tuple[np.ndarray, np.ndarray]:
        """The query's known terms (sorted unique ids, as ``Bm25Matrix.scores`` wants) and counts."""
        vocab = self._vocab
        tw = {vocab[t]: w for t, w in query_weights(words).items() if vocab.get(t, snap.n_terms) < snap.n_terms}
        uniq = np.array(sorted(tw), dtype=np.int64)
        return uniq, np.array([tw[i] for i in uniq.tolist()], dtype=np.float64)

    def _facet_hits(self, snap: _Snapshot, keywords: str, lang: str) -> Callable[[np.ndarray], np.ndarray] | None:
        """Which of the question's specific words (``facet_text``) each of some rows holds, a
        bool matrix with a row per word (``ranking.term_facet``); None when none is known."""
        words = facet_text(keywords, lang)
        if words is None:
            return None
        uniq, _ = self._keyword_ids(snap, words)
        if uniq.shape[0] < 2:  # a facet is a word besides the one naming the subject
            return None
        body = snap.bm25(self.k1, self.b)

        def hits(rows: np.ndarray) -> np.ndarray:  # a row per word: its postings at ``rows``, read once asked
            return body.holds(uniq, rows)
        return hits

    def _bm25(self, snap: _Snapshot, words: str, cfg: IndexConfig) -> np.ndarray:
        """The BM25 signal alone (what :meth:`_signals` gives as ``bm25``)."""
        uniq, counts = self._keyword_ids(snap, words)
        return snap.bm25(self.k1, self.b).scores(uniq, weights=counts, idf_power=cfg.idf_power)

    # ------------------------------------------------------------------ persistence

    def save(self, path: str | Path, *, wait: bool = True) -> Path:
        """Write the index to directory ``path`` atomically (see :mod:`chronorank.index.storage`).

        Documents still being embedded in the background are waited for (``wait=False``
        refuses instead): a saved index always holds every vector."""
        return _bg.save_complete(self, path, wait)

    # ------------------------------------------------------------------ background embedding

    @property
    def dense_progress(self) -> Any:
        """A :class:`~chronorank.index.background.DenseProgress` (``embedded`` of ``total``,
        ``complete``, ``running``, ``error``), or None for an index without a dense lane."""
        return _bg.dense_progress(self)

    @property
    def ready(self) -> bool:
        """Whether every document has its vector (searches fuse the dense signal)."""
        return self._snap.pending is None

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every vector of ``add(..., embed="background")`` is in (True) or
        ``timeout`` seconds passed (False); raises ``EmbeddingFailed`` if the embedder failed."""
        return _bg.wait(self, timeout)

    def resume_embedding(self) -> None:
        """Restart a background embedding that stopped on an error (what is in stays in)."""
        if self._bg is not None:
            self._bg.resume()

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        embedder: str | Embedder | None = "auto",
        verify: bool = True,
        mmap: bool = True,
    ) -> TemporalIndex:
        """Open a saved index; ``embedder="auto"`` rebuilds the embedder it was saved with."""
        return load_index(cls, path, embedder=embedder, verify=verify, mmap=mmap)

    # ------------------------------------------------------------------ helpers

    def _collect_vectors(
        self, docs: list[Mapping[str, Any]], records: list[dict[str, Any]], vectors: Any
    ) -> tuple[dict[int, np.ndarray], int | None]:
        given: dict[int, np.ndarray] = {}
        dim = self.dim
        if vectors is not None:
            mat = _as_matrix(vectors, dim, "vectors")
            if mat.shape[0] != len(docs):
                raise InvalidInput(
                    f"vectors has {mat.shape[0]} rows for {len(docs)} docs; pass one row per document, in order."
                )
            given = {i: mat[i] for i in range(len(docs))}
            dim = mat.shape[1]
        for i, d in enumerate(docs):
            v = d.get("vector")
            if v is not None:
                if i in given:
                    raise InvalidInput(
                        f"docs[{i}] (id={records[i]['id']!r}) has a 'vector' key and a row in vectors=; give one."
                    )
                given[i] = _as_matrix(v, dim, f"docs[{i}].vector")[0]
                dim = given[i].shape[0]
        return given, dim

    def _vectors_for(
        self, old: _Snapshot, records: list[dict[str, Any]], given: dict[int, np.ndarray], dim: int | None,
        ticket: int = 0,
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The batch's vectors and pending tickets (None = none pending). ``ticket > 0``
        leaves the rows to embed to that background batch (zero rows, pending = ticket);
        a document kept from one still waiting for its vector waits for the same batch."""
        n = len(records)
        need = [i for i in range(n) if i not in given]
        if not given and self.embedder is None and old.vectors is None:
            return None, None
        if dim is None:
            raise InvalidInput("cannot tell the vector width; pass vectors=... or an embedder.")
        out = np.empty((n, dim), dtype=np.float32)
        for i, v in given.items():
            out[i] = v
        reuse: list[int] = []
        pending = np.zeros(n, np.int32)
        if old.vectors is not None:
            for i in need:
                j = old.row_of.get(records[i]["id"])
                if j is not None and old.records[j]["text"] == records[i]["text"]:
                    out[i] = old.vectors[j]
                    reuse.append(i)
                    if old.pending is not None:
                        pending[i] = old.pending[j]
        todo = [i for i in need if i not in set(reuse)]
        if todo and ticket:
            out[todo] = 0.0
            pending[todo] = ticket
        elif todo:
            if self.embedder is None:
                raise InvalidInput(
                    f"docs[{todo[0]}] (id={records[todo[0]]['id']!r}) has no vector and the index has no "
                    "embedder; give every document a vector or create the index with an embedder."
                )

            # through the on-disk embedding cache (off: CHRONORANK_EMBED_CACHE=off), with progress
            emb = embed_documents(self.embedder, [records[i]["text"] for i in todo])
            if emb.shape != (len(todo), dim):
                raise InvalidInput(
                    f"embedder {self.embedder.name!r} returned shape {emb.shape}, expected {(len(todo), dim)}."
                )
            out[todo] = emb
        return out, (pending if pending.any() else None)

    def _parse_times(self, records: list[dict[str, Any]], date_unit: str = "auto") -> tuple[np.ndarray, int]:
        """The (4, n) time block and how many given values were unreadable (bad_dates='missing')."""
        cols = np.empty((4, len(records)), dtype=np.float64)
        unreadable = np.zeros(len(records), dtype=bool)
        for c, name in enumerate(TIME_COLUMNS):
            raw = [r.get(name) for r in records]
            is_num, num, refused = read_numbers(raw, date_unit)
            vals = np.asarray(parse_times([None if b else v for v, b in zip(raw, is_num)] if is_num.any() else raw),
                              dtype=np.float64)
            vals = np.where(is_num, num, vals)
            bad = np.flatnonzero(np.isnan(vals) & np.array([_present(x) for x in raw], dtype=bool))
            if bad.size and self.bad_dates == "raise":
                i = int(bad[0])
                if refused[i]:
                    raise InvalidInput(
                        f"document id={records[i]['id']!r}: {name}={raw[i]!r} is a bare number whose unit is not "
                        "clear (a year is 1000-9999, a date YYYYMMDD, epoch seconds at least 100000000); pass "
                        "date_unit='s' (or 'ms', 'us', 'ns', 'year', 'yyyymmdd'), write it like '2024-08-27', "
                        "or pass bad_dates='missing' to index it as undated."
                    )
                raise InvalidInput(
                    f"document id={records[i]['id']!r}: {name}={raw[i]!r} is not a date chronorank can read; "
                    "fix it (e.g. '2024-08-27' or '2024-08-27T10:00:00Z'), remove it, or pass "
                    "bad_dates='missing' to index it as undated."
                )
            unreadable[bad] = True
            cols[c] = vals
        return cols, int(unreadable.sum())

    def _group_codes(self, records: Sequence[Mapping[str, Any]]) -> np.ndarray | None:
        key = self.group_key
        if key is None:
            return None
        codes: dict[Any, int] = {}
        out = np.full(len(records), -1, dtype=np.int64)
        for i, r in enumerate(records):
            g = key(r) if callable(key) else r["metadata"].get(key, r.get(key))
            if g is None:
                continue
            if isinstance(g, (list, dict)):
                g = repr(g)
            out[i] = codes.setdefault(g, len(codes))
        return out


# ---------------------------------------------------------------------- functions


# ---------------------------------------------------------------------------- search steps
# TemporalIndex.search, after its preamble: the rows' columns (_Columns), the time plan
# (_time_plan), the exact search (_exact_search: _score_rows and _cut_top over a pool or every
# row), then the ranking (TemporalIndex._ranking with _top_notes and _rank_before).


@dataclasses.dataclass(frozen=True)
class _Columns:
    """The columns a search scores: every document's (``rows`` None) or those of ``rows``."""

    rows: np.ndarray | None
    ids: Sequence[str]
    signals: dict[str, np.ndarray]
    sim: np.ndarray  # the fused similarity (``_fuse``)
    times: np.ndarray
    vf: np.ndarray
    vt: np.ndarray
    groups: np.ndarray | None
    # an all-NaN column and None rank identically; None skips the validity passes
    has_vf: bool
    has_vt: bool

    @property
    def n(self) -> int:
        return int(self.sim.shape[0])

    @classmethod
    def of(
        cls, snap: _Snapshot, signals: dict[str, np.ndarray], cfg: IndexConfig, rows: np.ndarray | None,
        dense_part: tuple[float, np.ndarray] | None = None,
    ) -> _Columns:
        """The whole corpus's columns, or those of ``rows`` (a dense signal of the ANN pool is
        already cut to it); ``dense_part``: ``_fuse``'s dense term made already (every row)."""
        times = snap.time_column(cfg.time_field)
        vf = snap.times[2]
        vt = snap.times[3]
        groups = snap.groups
        ids: Sequence[str] = snap.ids
        if rows is not None:
            signals = {name: (v if v.shape[0] == rows.shape[0] else v[rows]) for name, v in signals.items()}
            times, vf, vt = times[rows], vf[rows], vt[rows]
            groups = None if groups is None else groups[rows]
            ids = _RowIds(snap.ids, rows)  # looked up when an explanation names one
        return cls(rows=rows, ids=ids, signals=signals, sim=_fuse(signals, cfg, dense_part if rows is None else None),
                   times=times, vf=vf, vt=vt,
                   groups=groups, has_vf=snap.has_column(2), has_vt=snap.has_column(3))

    def pooled(self, snap: _Snapshot, rows: np.ndarray) -> _Columns:
        """The whole corpus's columns at a pool's ``rows`` (``_exact_pool``); a validity column
        nobody set stays unread (all NaN: a view of one)."""
        unset = np.broadcast_to(np.float64(np.nan), rows.shape)
        return dataclasses.replace(
            self, rows=rows, ids=_RowIds(snap.ids, rows), sim=self.sim[rows], times=self.times[rows],
            vf=self.vf[rows] if self.has_vf else unset, vt=self.vt[rows] if self.has_vt else unset,
            signals={name: v[rows] for name, v in self.signals.items()},
        )


@dataclasses.dataclass(frozen=True)
class _Query:
    """One search once its intent is final: what scoring and the ranking read."""

    text: str  # the query as asked
    topical: str  # its topical part, the anchor's subject for a bare anchor (``query_prep.anchor_subject``)
    k: int
    now: float
    intent: Intent
    cfg: IndexConfig  # shaped to the query's length (``_shaped``)
    prep: Prepared  # the ranking's shape and time plan over every row (``ranking.prepare``)
    event_row: int  # the row of the anchor's event page, -1 for none
    anchor_line: str  # how the anchor was dated, for the explanation
    asked: AskedVersions | None = None  # the versions the question names (the version-conflict stage)
    page_row: int = -1  # the row of a before question's version anchor's own page (``ranking.anchor_page_first``)
    facet_hits: Callable[[np.ndarray], np.ndarray] | None = None  # rows -> which specific words each holds

    @property
    def plan(self) -> TemporalPlan:
        return self.prep.plan

    @property
    def cut(self) -> float | None:
        """The topic cut's margin (``ranking.cut_margin``); None: no topic rule."""
        return self.prep.cut

    @property
    def flatten(self) -> bool:
        """The topical cluster ties before time (``ranking.flatten_top``)."""
        return self.prep.flatten

    @property
    def calibrated(self) -> bool:
        """The topic cut's near tier applies (a short question, ``ranking.shaped``)."""
        return self.prep.calibrated


@dataclasses.dataclass(frozen=True)
class _Scored:
    """A row set scored by the temporal layer and the topic rules (``_score_rows``)."""

    rows: np.ndarray | None  # the rows scored; None: every document
    ids: Sequence[str]
    sim: np.ndarray  # the similarity time was applied to (flattened when ``_Query.flatten``)
    raw_sim: np.ndarray  # the fused similarity
    signals: dict[str, np.ndarray]  # the signals shown ("fused" added when flattened)
    res: TemporalResult
    score: np.ndarray  # -inf where the temporal layer drops a document
    on_topic: np.ndarray | None
    versions: np.ndarray | None  # the first hit's versions kept with it (``_versions_first``)
    event: int | None  # the position of the anchor's event page among them
    kept: int  # documents the temporal layer keeps
    conflict: np.ndarray | None = None  # moved below their tier by the version-conflict rule
    across: int | None = None  # the position of the version lifted across the boundary (``_across_boundary``)
    topic: Callable[[], TopicDecision | None] | None = None  # the topic stage's numbers, for the explanation (made when asked)
    facet: np.ndarray | None = None  # the on-topic rows matching the question's specific part
    anchor_page: int | None = None  # the position of the anchor's page ranked first (``ranking.anchor_page_first``)
    origin: int | None = None  # the position of the release ranked first as the one that introduced it (``ranking.origin_first``)


def _exact_search(snap: _Snapshot, cols: _Columns, q: _Query) -> tuple[_Scored, np.ndarray, _Pooled | None]:
    """Score the rows and cut the best k. A large corpus is scored over a pool that provably
    holds the best k (``_exact_pool``); when ``_pool_holds`` cannot prove it, once a pool wide
    enough for the unproven anchors (``_anchor_cut``) or cut at the judging documents' floors
    (``_floor_cuts``), then every row. Returns the scored rows, the positions of the best k
    among them and the pool (None: every row)."""
    cfg, tplan = q.cfg, q.plan
    sel = None if cols.rows is not None else _exact_pool(
        snap, cols.signals, cols.sim, cfg, tplan, q.intent, q.k, q.cut, q.event_row, q.flatten, cols.has_vf,
        calibrated=q.calibrated)
    while True:
        scored = _score_rows(snap, cols if sel is None else cols.pooled(snap, sel.rows), q, sel)
        top = _cut_top(scored, q.k)
        if sel is None or _pool_holds(sel, scored.res, scored.on_topic, scored.versions, scored.raw_sim,
                                      scored.signals, cfg, q.cut if q.calibrated else None):
            return scored, top, sel
        # once, a pool wide enough for the anchors it could not prove, or for the floors of the
        # documents that exist at an as-of date; then the whole corpus
        lower = None if sel.widened else _anchor_cut(
            sel, scored.res, scored.on_topic, scored.sim, cfg, tplan.config.relative_recency, q.flatten)
        floors = None if sel.widened else _floor_cuts(sel, scored.res, scored.signals, cfg)
        sel = None if lower is None and floors is None else _exact_pool(
            snap, cols.signals, cols.sim, cfg, tplan, q.intent, q.k, q.cut, q.event_row, q.flatten, cols.has_vf,
            lower, calibrated=q.calibrated, prev=sel, floors=floors)


def _position(row: int, rows: np.ndarray | None, n: int) -> int | None:
    """The position of document ``row`` among the scored ``rows`` (None: every row), None when
    ``row`` is -1 or not among them."""
    if row < 0:
        return None
    at = np.flatnonzero((np.arange(n) if rows is None else rows) == row)
    return int(at[0]) if at.size else None


def _score_rows(snap: _Snapshot, cols: _Columns, q: _Query, sel: _Pooled | None) -> _Scored:
    """One row set (every row, or a pool ``sel``) ranked by :func:`chronorank.ranking.rank`,
    with what only the index knows: its pool and the bound on the similarity outside it, the
    row of the anchor's event page, its title codes and series keys (remembered per index
    state), its vectors, and the version-conflict question read over its snapshot's leads."""
    cfg, rows, n = q.cfg, cols.rows, cols.n

    def doc(pos: np.ndarray) -> np.ndarray:
        return pos if rows is None else rows[pos]

    event, page = _position(q.event_row, rows, n), _position(q.page_row, rows, n)
    vectors, asked, lang, held = snap.vectors, q.asked, q.intent.lang or "en", q.facet_hits
    ranked = rank(
        cols.sim, cols.times, intent=q.intent, now=q.now, config=q.plan.config, rules=q.prep.rules,
        signals=cols.signals, valid_from=cols.vf if cols.has_vf else None,
        valid_to=cols.vt if cols.has_vt else None, groups=cols.groups, ids=cols.ids,
        vectors=None if vectors is None else (lambda pos: vectors[doc(pos)]),
        prepared=q.prep, pool=None if sel is None else sel.info, outside=-math.inf if sel is None else sel.sim_cut,
        event=event, anchor_page=page, titles=lambda: _titles(snap, rows),
        keys=lambda pos: _series_keys(snap, doc(pos), cfg.lead_tokens),
        sections=lambda pos: [section_key(snap.records[r]["text"], cfg.lead_tokens) for r in doc(pos).tolist()],
        texts_of=lambda pos: [snap.records[r]["text"] for r in doc(pos).tolist()],
        conflicts=None if asked is None else (lambda score, live, also, tier: conflicts(
            snap, rows, asked, lang, score=score, live=live, k=q.k, also=also, tier=tier)),
        top_k=_top_k, facet_hits=None if held is None else (lambda pos: held(doc(pos))),
    )
    signals = {**cols.signals, "fused": cols.sim} if q.flatten and cfg.topical_margin is not None else cols.signals
    return _Scored(rows=rows, ids=cols.ids, sim=ranked.sim, raw_sim=cols.sim, signals=signals, res=ranked.res,
                   score=ranked.score, on_topic=ranked.on_topic, versions=ranked.versions,
                   event=event if ranked.versions is not None else None, kept=ranked.kept,
                   conflict=ranked.conflict, across=ranked.across, topic=ranked.decide, facet=ranked.facet,
                   anchor_page=ranked.anchor_page, origin=ranked.origin)


def _cut_top(scored: _Scored, k: int) -> np.ndarray:
    """The positions of the best ``k`` kept rows, best first."""
    want = min(int(k), scored.kept)
    # every kept on-topic document outscores every other one (topic_first), so when there
    # are enough of them the best k are among them: cut that pool, not the whole corpus
    # (not after versions_first, which may leave a core page outside the pool above a version)
    on_topic, versions = scored.on_topic, scored.versions
    pool = None if on_topic is None or versions is not None else np.flatnonzero(on_topic & scored.res.keep)
    if pool is not None and pool.shape[0] >= want:
        return pool[_top_k(scored.score[pool], want, scored.res.start[pool], _Rows(scored.ids, pool))]
    return _top_k(scored.score, want, scored.res.start, scored.ids)


def _top_notes(scored: _Scored, top: np.ndarray, intent: Intent) -> dict[int, tuple[str, ...]]:
    """The explanation notes of the top documents by position: the temporal layer's, and why
    a version of the first hit (or the anchor's event page) is kept above less similar pages."""
    res, versions, event = scored.res, scored.versions, scored.event
    notes = {p: n for p, n in enumerate(res.notes_of(top.tolist())) if n}
    if versions is not None and top.size:
        lead_id = scored.ids[int(top[0])]
        for p in np.flatnonzero(versions[top][1:]).tolist():
            why = (f"the page of the anchor event ({intent.anchor.text!r}): kept above less similar pages"
                   if event is not None and int(top[p + 1]) == event and intent.anchor is not None
                   else f"another version of {lead_id}: kept above less similar pages")
            notes[p + 1] = (*notes.get(p + 1, ()), why)
    if scored.origin is not None:
        for p in np.flatnonzero(top == scored.origin).tolist():
            why = ("the earliest strong match of its release series naming what the question asks about in one "
                   "sentence: the release that introduced it ranks first")
            notes[p] = (*notes.get(p, ()), why)
    if scored.anchor_page is not None and intent.anchor is not None:
        for p in np.flatnonzero(top == scored.anchor_page).tolist():
            why = (f"the page of the anchor {intent.anchor.text!r}, the only strong match: it says what came "
                   "before it, so it ranks first")
            notes[p] = (*notes.get(p, ()), why)
    return notes


def _conflict_notes(
    snap: _Snapshot, scored: _Scored, top: np.ndarray, q: _Query, notes: dict[int, tuple[str, ...]],
) -> dict[int, tuple[str, ...]]:
    """``notes`` with the reasons of the version-conflict rule (the top documents it moved) and
    of the boundary rule (the version it lifted)."""
    if scored.across is not None and top.size:
        for p in np.flatnonzero(top == scored.across).tolist():
            side = _open_side(q.intent)
            what = "the page that replaced it" if side is not None and side[0] == "before" else "the page it replaced"
            why = f"the version of {scored.ids[int(top[0])]} across the boundary ({what}): ranked right after it"
            notes[p] = (*notes.get(p, ()), why)
    if scored.conflict is None or q.asked is None:
        return notes
    for p in np.flatnonzero(scored.conflict[top]).tolist():
        row = int(top[p]) if scored.rows is None else int(scored.rows[top[p]])
        why = conflict_note(snap.records[row]["text"], q.asked, q.intent.lang or "en")
        notes[p] = (*notes.get(p, ()), why)
    return notes


def _rank_before(cols: _Columns, q: _Query, scored: _Scored, top: np.ndarray, sel: _Pooled | None) -> np.ndarray:
    """Each top document's rank by similarity alone, for the "moved from rank r" part of
    explanations (only the documents above the lowest of the top can count: compared against
    those alone)."""
    if not top.size:
        return np.zeros(0, np.int64)
    sim, cfg = scored.sim, q.cfg
    s_top = sim[top]
    ref_sim = sim
    if sel is not None and float(s_top.min()) < sel.info.outside:
        # a document outside the pool may sit above the lowest of the top
        ref_sim = cols.sim
        if q.flatten and cfg.topical_margin is not None:
            ref_sim = _flatten_top(ref_sim, cfg.topical_margin, cfg.tie_break)
    above = np.sort(ref_sim[ref_sim > s_top.min()])
    # how many are strictly above each: one sort, not a top x above comparison matrix
    return 1 + above.shape[0] - np.searchsorted(above, s_top, side="right")


def _present(x: Any) -> bool:
    if x is None:
        return False
    if isinstance(x, float) and math.isnan(x):
        return False
    return not (isinstance(x, str) and not x.strip())


def _infer_missing(records: list[dict[str, Any]], times: np.ndarray, on: bool) -> dict[str, int]:
    """Date the documents with no readable time column by what their metadata, text or address
    states (:func:`chronorank.timeparse.textdates.infer_dates`): ``times[0]`` gets the date and
    the metadata ``date_inferred`` its source, confidence and snippet (a stale one is dropped).
    Returns how many were looked at (``checked``) and the counts by source."""
    for r in records:
        r["metadata"].pop(INFERRED_KEY, None)
    rows = np.flatnonzero(np.isnan(times).all(axis=0)) if on else np.zeros(0, np.int64)
    if not rows.size:
        return {}
    found = infer_dates([records[i]["text"] for i in rows], [records[i]["metadata"] for i in rows])
    hit = np.flatnonzero(~np.isnan(found.time))
    times[0, rows[hit]] = found.time[hit]
    for j in hit.tolist():
        records[int(rows[j])]["metadata"][INFERRED_KEY] = found.record(j)
    return {"checked": int(rows.size), **found.counts()}


def inferred_counts(index: TemporalIndex) -> dict[str, int]:
    """How many of the index's documents carry an inferred date, by source (field / text / url)."""
    out = {"field": 0, "text": 0, "url": 0}
    for m in index._snap.records.metadata:
        info = m.get(INFERRED_KEY) if m else None
        if isinstance(info, Mapping) and info.get("source") in out:
            out[info["source"]] += 1
    return out


def _dated_notes(snap: _Snapshot, doc_rows: np.ndarray, notes: dict[int, tuple[str, ...]]) -> dict[int, tuple[str, ...]]:
    """``notes`` with where each top document's inferred date came from."""
    metas = snap.records.metadata
    for p, r in enumerate(doc_rows.tolist()):
        m = metas[int(r)]
        info = m.get(INFERRED_KEY) if m else None
        if isinstance(info, Mapping):
            notes[p] = (date_note(info), *notes.get(p, ()))
    return notes


def _normalise(doc: Mapping[str, Any], i: int) -> dict[str, Any]:
    if not isinstance(doc, Mapping):
        raise InvalidInput(f"docs[{i}] is a {type(doc).__name__}; every document must be a dict with 'id' and 'text'.")
    doc_id = doc.get("id")
    if doc_id is None or isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or str(doc_id) == "":
        raise InvalidInput(f"docs[{i}]: id={doc_id!r}; every document needs a non-empty string id.")
    text = doc.get("text")
    if not isinstance(text, str):
        raise InvalidInput(
            f"docs[{i}] (id={doc_id!r}): text={text!r}; 'text' must be a string (an empty string is allowed)."
        )
    bad = surrogate_at(text)
    if bad is not None:
        # a lone surrogate would be accepted now and make every later save() fail
        raise InvalidInput(
            f"docs[{i}] (id={doc_id!r}): text holds an unpaired surrogate {text[bad]!r} at position "
            f"{bad}; it cannot be stored as UTF-8. Decode the source with errors='replace' first."
        )
    meta: dict[str, Any] = {k: v for k, v in doc.items() if k not in _RESERVED}
    nested = doc.get("metadata")
    if nested is not None:
        if not isinstance(nested, Mapping):
            raise InvalidInput(f"docs[{i}] (id={doc_id!r}): metadata={nested!r}; it must be a dict.")
        meta.update(nested)
    rec: dict[str, Any] = {"id": str(doc_id), "text": text}
    for name in TIME_COLUMNS:
        v = doc.get(name)
        iso = getattr(v, "isoformat", None)
        rec[name] = iso() if callable(iso) else v
    rec["metadata"] = meta
    # everything save() writes is checked here, so an index that accepted a document can
    # always be saved (docs.jsonl is UTF-8 JSON; non-JSON values are written with str())
    where = f"docs[{i}] (id={doc_id!r})"
    _check_storable(rec["id"], f"{where}: id", 0)
    for name in TIME_COLUMNS:
        _check_storable(rec[name], f"{where}: {name}", 0)
    _check_storable(meta, f"{where}: metadata", 0, set(), numbers=True)
    return rec


def _dense_meta(index: TemporalIndex, snap: _Snapshot) -> dict[str, Any]:
    """The dense lane's state for ``Ranking.meta`` (``dense``, ``dense_complete``)."""
    prog = _bg.dense_progress(index, snap)
    return {} if prog is None else {"dense": prog.describe(), "dense_complete": prog.complete}


def _join_counts(base: _Snapshot, t_ids: np.ndarray, t_tf: np.ndarray | None) -> np.ndarray | None:
    """The entry counts of ``base``'s documents followed by the new ones' (None: all ones)."""
    if base.term_tf is None and t_tf is None:
        return None
    if not len(base.term_ids):
        return t_tf
    parts = [np.ones(n.shape[0], dtype=np.int32) if c is None else c
             for n, c in ((base.term_ids, base.term_tf), (t_ids, t_tf))]
    return np.concatenate(parts)


def _compact(snap: _Snapshot, keep: np.ndarray) -> _Snapshot:
    lengths = np.diff(snap.term_ptr)
    new_len = lengths[keep]
    ptr = np.zeros(new_len.shape[0] + 1, dtype=np.int64)
    np.cumsum(new_len, out=ptr[1:])
    rows = np.flatnonzero(keep)
    out = _Snapshot(
        records=snap.records.take(rows),
        vectors=None if snap.vectors is None else np.ascontiguousarray(snap.vectors[keep]),
        times=np.ascontiguousarray(snap.times[:, keep]),
        term_ids=snap.term_ids[np.repeat(keep, lengths)],
        term_ptr=ptr,
        term_tf=None if snap.term_tf is None else snap.term_tf[np.repeat(keep, lengths)],
        n_terms=snap.n_terms,
        groups=None,
        lead_len=None if snap.lead_len is None else snap.lead_len[keep],
        pending=_bg.keep_pending(snap.pending, keep),
    )
    out.lead_memo = {lang: memo.compacted(keep) for lang, memo in list(snap.lead_memo.items())}
    return out


def _titles(snap: _Snapshot, rows: np.ndarray | None) -> np.ndarray:
    """The title codes of ``rows`` (None = every row): equal for documents whose leads' index
    terms are equal (:func:`chronorank.index.snapshot.title_codes`; built once per index state),
    what :func:`chronorank.ranking.title_chains` reads."""
    if snap.titles is None:
        if snap.title_sums is None:
            if snap.lead_len is None:
                snap.lead_len = lead_lengths(snap.records.texts)
            snap.title_sums = _lead_sums(snap.term_ids, snap.term_ptr, snap.lead_len)
        snap.titles, snap.title_index = title_codes(*snap.title_sums)
    return snap.titles if rows is None else snap.titles[rows]


def _spell_acronyms(snap: _Snapshot, topical: str) -> str:
    """``query_prep.spell_acronyms`` over the whole corpus, each acronym looked up once per snapshot."""

    def expansion(acr: str) -> str | None:
        if acr not in snap.acronyms:
            snap.acronyms[acr] = acronym_expansion(acr, snap.records.texts)
        return snap.acronyms[acr]

    return spell_acronyms(topical, expansion)


#: Below this many vector entries (about 21,800 documents at 384 dimensions) the query's
#: mat-vec runs on the calling thread alone. Waking a second thread costs more than the
#: whole product at this size, and far more right after an embedder's own threads ran: at
#: 2,062 documents BLAS's threaded gemv took 10-12 ms straight after the MiniLM query
#: embedding against 0.03 ms on its own, the ~10 ms a dense query lost
#: (benchmarks/index_speed.py, ``dense_small``). Above it the rows are split between the
#: calling thread and one worker (``_MatVec``), as BLAS splits its gemv.
SMALL_MATVEC = 1 << 23
#: A search over at most 1/FEW_ROWS of the documents (a filter, candidates) takes the cosines
#: of those rows only: gathering them costs about what their share of the whole mat-vec does.
FEW_ROWS = 8


class _MatVec:
    """``vectors @ q`` as numpy's per-row dot products (``np.vecdot``), the row chunks taken in
    turn by the calling thread and one worker thread shared by every search.

    OpenBLAS's threaded sgemv -- what ``vectors @ q`` runs -- was the slower kernel on the
    2-core machine at both sizes (random 384-d float32 rows, timed interleaved in one process,
    p50 of 40 queries): 100k rows, machine quiet, 6.5 ms against 5.3 ms for one thread's row
    dots; second core busy, 16-31 ms against 9-14 ms; 1M rows, busy, 166-239 ms against
    116-155 ms on one thread and 65-93 ms in chunks on two. Its gemv waits for its worker's
    half; here a chunk the worker has not taken is done by the caller. Each row is one dot product, so the result does not depend on who computes which
    chunk (bit-identical to ``np.vecdot`` over the whole matrix). A worker that never starts
    (busy with another search, or lost across a fork) only means the caller does every chunk.
    ``start`` hands the chunks over before the caller joins in, so that a search parses its
    question and scores its keywords meanwhile: a gain only while the second core is free (100k
    documents, the mode queries of benchmarks/index_speed.py on the shared 2-core machine: one
    run 1.48x -> 1.33x of the bare mat-vec, a later one at higher load within its noise).
    Each thread takes half of the chunks left at a time (64 in all), so the worker starts on half
    of the rows in one call, and ``start`` waits (at most ``START_WAIT_S``) until it has them: a
    worker thread needs the interpreter lock to wake and to take chunks, and the caller parsing
    the question holds it for up to the switch interval (5 ms). 100k rows, the caller in Python
    for 2 ms after ``start``: 7.6 ms to the cosines with 16 chunks taken one by one, 5.8 ms so
    (5.4 ms with the caller asleep instead).
    """

    CHUNKS = 64
    START_WAIT_S = 0.001  # the worker took 88 us to hold its chunks (p50; p99 273 us, load 3 on 2 cores)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: Any = None
        self._queued = 0  # calls handed to the worker and not done
        if hasattr(os, "register_at_fork"):
            # a forked child has no worker thread: its executor would queue every call's chunks
            os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._lock = threading.Lock()
        self._pool = None
        self._queued = 0

    def __call__(self, vectors: np.ndarray, q: np.ndarray) -> np.ndarray:
        return self.start(vectors, q)()

    def start(self, vectors: np.ndarray, q: np.ndarray, weight: float | None = None) -> _Begun:
        """Hand the chunks to the worker now; the returned call does the chunks left on the
        calling thread and returns ``vectors @ q`` (the caller works on something else between).
        ``weight``: each chunk's cosines also clipped to [0, 1] and multiplied by it in float64
        as it is computed -- the dense term of ``_fuse``, element by element the same operations
        (``_Begun.part``), made while the chunk is in cache and on both threads."""
        out = np.empty(vectors.shape[0], dtype=np.result_type(vectors.dtype, q.dtype))
        part = None if weight is None or out.dtype != np.float32 else np.empty(out.shape[0], dtype=np.float64)
        w = 0.0 if weight is None else float(weight)
        n = vectors.shape[0]
        step = -(-n // self.CHUNKS)
        claim = threading.Lock()  # hands out the chunks
        busy = threading.Lock()  # held by the worker while it computes chunks of this call
        first = [0]  # the first chunk not handed out yet
        began = threading.Event()  # the worker holds its first chunks

        def work() -> None:
            while True:
                with claim:
                    i = first[0]
                    take = -(-(self.CHUNKS - i) // 2)  # half of what is left, at least one chunk
                    first[0] = i + take
                began.set()
                if take <= 0:
                    return
                a, b = i * step, min(n, (i + take) * step)
                np.vecdot(vectors[a:b], q, out=out[a:b])
                if part is not None:
                    np.multiply(np.clip(out[a:b], 0.0, 1.0), w, out=part[a:b], dtype=np.float64)

        def worker() -> None:
            try:
                with busy:
                    work()
            finally:
                with self._lock:
                    self._queued -= 1

        def finish() -> np.ndarray:
            work()
            with busy:  # the chunks the worker took are written
                pass
            return out

        if self._submit(worker):
            # the worker needs the interpreter lock to start, and the caller's next steps (parsing
            # the question) would hold it up to the switch interval: wait until the worker holds
            # half of the rows, which it then computes without the lock
            began.wait(self.START_WAIT_S)
        return _Begun(finish, None if part is None else (w, part))

    def _submit(self, fn: Callable[[], None]) -> bool:
        """Queue ``fn`` for the worker; whether the worker was idle (nothing queued before it)."""
        with self._lock:
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor

                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chronorank-matvec")
            pool = self._pool
            idle = self._queued == 0
            self._queued += 1
        try:
            pool.submit(fn)
        except RuntimeError:  # interpreter shutting down: the caller does every chunk
            with self._lock:
                self._queued -= 1
            return False
        return idle


class _Begun:
    """A begun mat-vec (``_cosines_start``): called, it returns the cosines; ``part`` is then
    ``(weight, clip(cosines, 0, 1) * weight)`` in float64 when the chunks made it (None
    otherwise): ``_fuse`` takes it for its dense term, once (it adds the keywords in place)."""

    __slots__ = ("_done", "_finish", "_part")

    def __init__(self, finish: Callable[[], np.ndarray], part: tuple[float, np.ndarray] | None = None) -> None:
        self._finish, self._part, self._done = finish, part, False

    def __call__(self) -> np.ndarray:
        out = self._finish()
        self._done = True
        return out

    def part(self) -> tuple[float, np.ndarray] | None:
        """The fused dense term, handed out once, once the cosines are done (None before)."""
        part, self._part = self._part, None
        return part if self._done else None


_matvec = _MatVec()


def _cosines(vectors: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``vectors @ q`` (float32) as per-row dot products, on two threads for a large matrix
    (``SMALL_MATVEC``, ``_MatVec``)."""
    return _cosines_start(vectors, q)()


def _cosines_start(vectors: np.ndarray, q: np.ndarray, weight: float | None = None) -> _Begun:
    """:func:`_cosines` begun: a large matrix's chunks go to the worker at once, and the
    returned call finishes them (the calling thread's keyword signals run in between).
    ``weight``: the dense weight of a ``blend`` fusion with raw cosines, for ``_fuse``'s dense
    term made in the chunks (``_MatVec.start``)."""
    vecdot = getattr(np, "vecdot", None)  # numpy >= 2.0
    if vecdot is None:
        out = np.einsum("ij,j->i", vectors, q) if vectors.size < SMALL_MATVEC else vectors @ q
        return _Begun(lambda: out)
    if vectors.size < SMALL_MATVEC:
        return _Begun(lambda: np.asarray(vecdot(vectors, q), dtype=np.float32))
    return _matvec.start(vectors, q, weight)


def _dense_term_weight(cfg: IndexConfig) -> float | None:
    """The weight ``_fuse`` multiplies the clipped float32 cosines by, when it does (a blend of
    raw cosines); None otherwise."""
    return cfg.dense_weight if cfg.fusion != "rrf" and cfg.dense_scale != "max" and cfg.dense_weight > 0 else None


def _fuse(
    signals: Mapping[str, np.ndarray], cfg: IndexConfig, dense_part: tuple[float, np.ndarray] | None = None,
) -> np.ndarray:
    """The fused similarity. ``dense_part``: ``(weight, clip(dense, 0, 1) * weight)`` made
    already (``_Begun.part``), taken for the dense term when the weight is this one's (and
    then updated in place)."""
    dense = signals.get("dense")
    kw = signals.get("bm25")
    if cfg.fusion == "rrf":
        named: dict[str, np.ndarray] = {}
        weights: dict[str, float] = {}
        if dense is not None:
            named["vector"] = np.asarray(dense, dtype=np.float64)
            weights["vector"] = cfg.dense_weight
        if kw is not None:
            named["keyword"] = np.asarray(kw, dtype=np.float64)
            weights["keyword"] = cfg.keyword_weight
        fused = np.asarray(weighted_rrf(named, weights, k=cfg.rrf_k), dtype=np.float64)
        top = float(fused.max()) if fused.size else 0.0
        return fused / top if top > 0 else fused
    total = 0.0
    sim = None
    if dense is not None:
        total += cfg.dense_weight
        if cfg.dense_scale == "max" or dense.dtype != np.float32:
            # one float64 array, updated in place (the same operations, in the same order)
            d = dense.astype(np.float64)
            np.clip(d, 0.0, 1.0, out=d)
            if cfg.dense_scale == "max" and d.size and d.max() > 0:
                np.divide(d, d.max(), out=d)  # on the same [0, 1] scale as max-normalised BM25
            sim = np.multiply(d, cfg.dense_weight, out=d)
        elif (dense_part is not None and dense_part[0] == cfg.dense_weight
              and dense_part[1].shape == dense.shape):
            sim = dense_part[1]  # the same operations, made chunk by chunk with the cosines
        else:
            # the same values in fewer passes: clipped in float32 (0 and 1 are exact in both,
            # the widening is exact and keeps order), widened by the multiplication itself
            sim = np.multiply(np.clip(dense, 0.0, 1.0), cfg.dense_weight, dtype=np.float64)
    # the lead keeps its share of the whole (1/3 by default) when a signal is missing, e.g.
    # an index without vectors: at half the total it could push a fresh document whose first
    # line does not repeat the query's words out of the topical cluster, below a stale one
    present = (cfg.dense_weight if dense is not None else 0.0) + (cfg.keyword_weight if kw is not None else 0.0)
    full = cfg.dense_weight + cfg.keyword_weight
    lead_w = cfg.lead_weight * present / full if full > 0 else cfg.lead_weight
    for values, weight in ((kw, cfg.keyword_weight), (signals.get("lead"), lead_w)):
        if values is None or weight == 0:
            continue
        top = float(values.max()) if values.size else 0.0
        if top <= 0 and sim is not None:
            continue  # no document matches: leave the other signals on their own scale
        total += weight
        hit = values != 0 if top > 0 and sim is not None else None  # (a float array's nonzero is slow)
        if sim is not None and hit is not None and np.count_nonzero(hit) < values.shape[0] // 8:
            # a sparse signal added where it is not 0 (its part is 0.0 elsewhere, and s + 0.0
            # is s): the same operations on those entries, no whole-corpus temporary
            nz = np.flatnonzero(hit)
            part = values[nz].astype(np.float64)
            np.divide(part, top, out=part)
            np.multiply(part, weight, out=part)
            sim[nz] += part
            continue
        if top > 0:
            part = values.astype(np.float64)  # the float64 division as before, a faster cast
            np.divide(part, top, out=part)
            np.multiply(part, weight, out=part)
        else:
            part = np.zeros(values.shape[0])
        sim = part if sim is None else np.add(sim, part, out=sim)
    if sim is None or total == 0:
        raise InvalidInput("no similarity signal to fuse; enable dense_weight or keyword_weight.")
    return np.divide(sim, total, out=sim)


def _title_codes_of(snap: _Snapshot, doc_rows: np.ndarray, tokens: int) -> np.ndarray:
    """``ranking.title_codes`` of a few rows' texts (``ranking.sectioned`` reads those dated as
    the best match); each row's key is read once per index state (a regex over its lead)."""
    memo = snap.derived.get(("title_key", tokens))
    if memo is None:
        memo = snap.derived.setdefault(("title_key", tokens), {})
    texts = getattr(snap.records, "texts", None)  # the columnar Records: no dict per row
    keys = []
    for r in doc_rows.tolist():
        key = memo.get(r)
        if key is None:
            key = memo[r] = _title_key(snap.records[r]["text"] if texts is None else texts[r], tokens)
        keys.append(key)
    return _key_codes(keys)


class _Chains:
    """Which version chain each document of a ranking belongs to, for the explanation
    (:func:`chronorank.ranking.chains_of` over every document of the index: the group when
    the index has a ``group_key``, named by its value, else the series key), asked by the
    ranking's positions. The series keys of every document are read on the first question
    (remembered per index state)."""

    def __init__(self, snap: _Snapshot, doc_rows: np.ndarray, tokens: int, group_key: Any) -> None:
        self.snap, self.doc_rows, self.tokens, self.group_key = snap, doc_rows, tokens, group_key
        self.keys: np.ndarray | None = None

    def __call__(self, positions: Sequence[int]) -> list[tuple[str, int, int, str] | None]:
        snap = self.snap
        if self.keys is None:
            self.keys = np.array(_series_keys(snap, np.arange(len(snap.ids)), self.tokens), dtype=object)
        rows = [int(self.doc_rows[p]) for p in positions]
        out = chains_of(self.keys, snap.times[0], snap.ids, rows, snap.groups)
        for i, (r, got) in enumerate(zip(rows, out)):
            if got is not None and snap.groups is not None and snap.groups[r] >= 0:
                rec, key = snap.records[r], self.group_key
                value = key(rec) if callable(key) else rec["metadata"].get(key, rec.get(key))
                out[i] = (f"group {value!r}", *got[1:])
        return out


def _series_keys(snap: _Snapshot, doc_rows: np.ndarray, tokens: int) -> list[str]:
    """:func:`_series_key` of each row's text, remembered per index state."""
    memo = snap.series_keys
    out = []
    for r in doc_rows.tolist():
        key = memo.get(r)
        if key is None:
            key = memo[r] = _series_key(snap.records[r]["text"], tokens)
        out.append(key)
    return out


#: Exact search over at least this many documents scores a pool of them (``_exact_pool``).
POOL_MIN_DOCS = 20_000
#: The pool's documents by fused similarity: about this share of the corpus, at least
#: ``POOL_MIN_ROWS``; the pool is not used when it would hold more than a quarter of it.
POOL_SHARE = 1 / 64
POOL_MIN_ROWS = 1024
#: Documents the pool takes besides: about this many newest (relative recency), and the best
#: by dense cosine and by lead (the topic rule's floors).
POOL_EXTRA = 64
#: The first pool takes the anchors' competitors (``_exact_pool``) while its similarity cut
#: holds at most this many documents: above it the 1.5-3x wider pool costs as much CPU as the
#: second pool it saves (CPU time beyond the mat-vec, the mode queries of benchmarks/index_speed.py:
#: 1M recent / as_of p50 +6% / +10% with it, 100k -7% to -11%).
POOL_WIDEN_ROWS = 4 * POOL_MIN_ROWS


@dataclasses.dataclass(frozen=True)
class _Pooled:
    """A pool of the corpus for one exact search (``_exact_pool``) and what proves it."""

    rows: np.ndarray  # ascending, so ties break by row as over the whole corpus
    info: Any  # chronorank.temporal.Pool
    sim_cut: float  # every document outside has a fused similarity below this
    cut: float  # the topic cut's margin
    cuts: dict[str, float]  # signal -> every document outside has it below this
    need: int  # on-topic kept documents the pool must hold
    top: float  # the corpus's best fused similarity
    widened: bool  # the second pool (``_anchor_cut``)
    low: float = 0.0  # the corpus's lowest fused similarity
    extra: np.ndarray | None = None  # every document taken besides the similarity cut (a mask), if any


class _RowIds(Sequence[str]):
    """The ids of some rows, looked up when asked (explanations name a few of them)."""

    __slots__ = ("_ids", "_rows")

    def __init__(self, ids: Sequence[str], rows: np.ndarray) -> None:
        self._ids, self._rows = ids, rows

    def __len__(self) -> int:
        return int(self._rows.shape[0])

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._ids[int(r)] for r in self._rows[i]]
        return self._ids[int(self._rows[i])]


def _starts(snap: _Snapshot, field: str, has_vf: bool) -> tuple[np.ndarray, bool, float]:
    """Each document's start (valid_from, else its time), whether any is undated and the
    latest start (cached)."""
    key = ("start", field)
    hit = snap.derived.get(key)
    if hit is None:
        t = snap.time_column(field)
        st = np.asarray(np.where(np.isnan(snap.times[2]), t, snap.times[2]) if has_vf else t)
        undated = bool(np.isnan(st).any())
        latest = -math.inf if undated and np.isnan(st).all() else float(np.nanmax(st))
        hit = snap.derived[key] = (st, undated, latest)
    return hit


def _newest(snap: _Snapshot, field: str, has_vf: bool, ref: float) -> tuple[float, np.ndarray] | None:
    """About the ``POOL_EXTRA`` newest documents at ``ref`` (none after it): the start they are
    newer than and their mask, or None when none starts at or before ``ref`` (the last
    reference time's, cached: it depends on the index state alone)."""
    key = ("newest", field, has_vf)
    hit = snap.derived.get(key)
    if hit is not None and hit[0] == ref:
        return hit[1]
    start, _undated, latest = _starts(snap, field, has_vf)
    n = start.shape[0]
    smp = start[:: max(1, n // POOL_SAMPLE)]
    smp = smp[smp <= ref]
    got = None
    if smp.size:
        c_t = _kth_largest(smp, -(-POOL_EXTRA * smp.shape[0] // n))
        with np.errstate(invalid="ignore"):
            mask = np.greater(start, c_t)
            if latest > ref:  # documents after ref: not among its newest
                np.logical_and(mask, start <= ref, out=mask)
        mask.flags.writeable = False
        got = (c_t, mask)
    snap.derived[key] = (ref, got)
    return got


def _exact_pool(
    snap: _Snapshot, signals: Mapping[str, np.ndarray], sim: np.ndarray, cfg: IndexConfig, tplan: TemporalPlan,
    intent: Intent, k: int, cut: float | None, event_row: int, flatten: bool, has_vf: bool,
    lower: float | None = None, calibrated: bool = False, prev: _Pooled | None = None,
    floors: dict[str, float] | None = None,
) -> _Pooled | None:
    """The documents whose temporal scores an exact search needs, or None to score them all.

    With the topic rule every kept on-topic document ranks above every other one, and the
    answer is the best k of them: a pool that holds every document that can be on topic, with
    the corpus's best fused similarity, dense cosine and lead in it, and each pooled document
    given the corpus's anchor (relative recency), ranks as the corpus. The pool: the fused
    similarities above a cut (at most the topic cut, and a ``POOL_SHARE`` of the corpus), the
    cosines and leads at or above their floor x about their ``POOL_EXTRA``-th best, and the
    ``POOL_EXTRA`` newest documents at the reference time; with relative recency, when it keeps
    a small pool (``POOL_WIDEN_ROWS``) within 3x, the similarity cut goes down to
    ``_anchor_cut``'s for the documents likely on topic, so that their anchors are proven at
    once. ``_pool_holds`` checks the proof
    after the pool is scored. Not for what needs the whole corpus: version chains (group key),
    an anchor event, the ``linear`` / ``rrf`` combinations, undated documents under a
    missing-date policy that reads the others' weights. ``lower``: a lower similarity cut (a
    second, wider pool); ``prev``: the first pool, whose other cuts the second one reuses (the
    same values: every cut but ``lower`` and ``floors`` is the same for both); ``floors``: lower
    cuts of the dense cosine or the lead for the second pool (``_floor_cuts``)."""
    n = sim.shape[0]
    tcfg = tplan.config
    if (n < POOL_MIN_DOCS or cut is None or "bm25" not in signals or event_row >= 0 or snap.groups is not None
            or tcfg.combine not in ("gated_multiply", "multiply")):
        return None
    start, undated, latest = _starts(snap, cfg.time_field, has_vf)
    if undated and tcfg.missing_date not in ("keep", "drop"):
        return None
    extra: np.ndarray | None  # the documents taken besides the similarity cut
    newest: dict[float, float]
    if prev is not None:  # the second pool: the first one's cuts and documents, a lower similarity cut
        top, low, cuts, newest, extra = prev.top, prev.low, prev.cuts, prev.info.newest, prev.extra
        v = prev.sim_cut if lower is None else min(prev.sim_cut, lower)
        if not v > 0:
            return None
        mask = sim >= v
        if floors:
            cuts = {**cuts, **floors}
            for name, c in floors.items():
                col = signals[name]
                hit = np.greater_equal(col, col.dtype.type(c))
                extra = hit if extra is None else np.logical_or(extra, hit)  # the first pool's mask untouched
    else:
        top = float(sim.max())
        if not top > 0:  # NaN too: the whole corpus says which document is not finite
            return None
        kth = _sample_kth(sim, max(POOL_MIN_ROWS, int(n * POOL_SHARE)))  # an entry of sim
        v = min(kth, cut * top)
        if intent.mode == "timeless" and not intent.spans:
            v = min(v, (cfg.topical_margin or 0.5) * top)  # _title_chains reads those documents
        if lower is not None:
            v = min(v, lower)
        if not v > 0:
            return None
        mask = sim >= v
        if calibrated:  # the near tier's steps end at the best match under the cut: the pool holds it
            # (``kth``, in the cut, under ``cut * top``: that maximum is at least the cut, unread)
            u = None if kth < cut * top else _best_under(sim, mask, cut * top, -math.inf)
            if u is not None and u < v:
                v = u
                if not v > 0:
                    return None
                mask = sim >= v
        low = float(sim.min())
        extra = None
        cuts = {}
        for name, floor in (("dense", cfg.topic_floor), ("lead", cfg.topic_lead_floor)):
            x = signals.get(name)
            if x is None or floor is None:
                continue
            dt = np.dtype(np.float32) if x.dtype == np.float32 else np.dtype(np.float64)
            x_kth = _sample_kth(x, POOL_EXTRA)  # an entry of x
            want = floor * x_kth
            c = dt.type(want)
            if float(c) > want:
                c = np.nextafter(c, dt.type(-np.inf))
            if not c > 0:
                c = np.nextafter(dt.type(0), dt.type(1))  # every document with a positive signal
            hit = np.greater_equal(x, c)
            if calibrated and name == "lead":  # the lead's near tier, as the fused one's above
                tiny = np.nextafter(dt.type(0), dt.type(1))
                below = floor * float(x.max())
                xk = x.dtype.type(x_kth)  # compared in x's dtype, as _best_under compares x
                u = None if bool(c <= xk) and bool(xk < below) else _best_under(x, hit, below, tiny)
                if u is not None and dt.type(u) < c:
                    c = dt.type(u)
                    hit = np.greater_equal(x, c)
            extra = hit if extra is None else np.logical_or(extra, hit, out=extra)
            cuts[name] = float(c)
        newest = {}
        ratio = tcfg.relative_recency
        if ratio is not None and tplan.mode in ("recent", "as_of", "range"):
            # the competitors of the pooled documents likely on topic (the similarity cut's, and
            # the floors' documents at their floor x the best) in the pool from the start, when
            # that keeps it small: their anchors are then proven by this pool, not a second one
            # (``_anchor_cut``; ``_pool_holds`` checks it as ever). An as-of question judges "the
            # best" among the documents that exist at its date.
            if n * POOL_SHARE <= POOL_WIDEN_ROWS:
                judged = tplan.marks_not_yet_valid and latest >= tplan.reference_time
                best = top
                if judged:
                    mr = np.flatnonzero(mask)
                    ok = start[mr] < tplan.reference_time
                    best = float(sim[mr[ok]].max()) if ok.any() else top
                least = cut * best  # on topic by the fused similarity: at least this
                if extra is not None:
                    hr = np.flatnonzero(extra)
                    sub = hr[start[hr] < tplan.reference_time] if judged else hr
                    near = np.zeros(hr.shape[0], dtype=bool)
                    for name, floor in (("dense", cfg.topic_floor), ("lead", cfg.topic_lead_floor)):
                        if name in cuts and floor is not None:
                            x_best = float(signals[name][sub].max(initial=0.0))
                            np.logical_or(near, signals[name][hr] >= floor * x_best, out=near)
                    if near.any():
                        least = min(least, float(sim[hr[near]].min()))
                e = np.array([top, low, least])
                if flatten and cfg.topical_margin is not None:
                    e = _flatten_top(e, cfg.topical_margin, cfg.tie_break)
                t = _competitor_cut(float(e[2]), float(e[0]), float(e[1]), top, cfg, ratio, flatten)
                if 0 < t < v:
                    wide = sim >= t
                    if int(np.count_nonzero(wide)) <= 3 * max(int(np.count_nonzero(mask)), POOL_MIN_ROWS):
                        mask, v = wide, t
            ref = tplan.reference_time  # what the anchors are computed at (temporal_geometry)
            got = _newest(snap, cfg.time_field, has_vf, ref)
            if got is not None:
                c_t, hit = got
                extra = hit if extra is None else np.logical_or(extra, hit, out=extra)
                newest[ref] = c_t  # outside the pool nothing at or before ref starts after it
    if extra is not None:
        np.logical_or(mask, extra, out=mask)
    rows = np.flatnonzero(mask)
    if rows.shape[0] > n // 4:
        return None
    # the corpus's lowest similarity and the outside's bound, as the temporal layer sees them
    edge = np.array([top, low, v])
    if flatten and cfg.topical_margin is not None:
        edge = _flatten_top(edge, cfg.topical_margin, cfg.tie_break)
    info = Pool(size=n, low=float(edge[1]), outside=float(edge[2]), newest=newest)
    need = max(int(k), VERSION_POOL if cfg.version_floor is not None else 0)
    return _Pooled(rows=rows, info=info, sim_cut=v, cut=cut, cuts=cuts, need=need, top=top,
                   widened=prev is not None or lower is not None, low=low, extra=extra)


def _best_under(x: np.ndarray, at_least: np.ndarray, below: float, initial: float) -> float | None:
    """``np.max(x, where=x < below, initial=initial)`` when it is below the cut ``at_least``
    marks (``x >= c``); None when it is not (an entry at or above the cut is below ``below``,
    so the maximum is at least the cut): the cut's entries are read first, the whole array
    only when none of them is below ``below``."""
    if bool((x[at_least] < below).any()):
        return None
    # the same maximum: a masked reduction reads element by element, np.where and a plain max
    # are vectorised (~2x faster over 100k rows); ``initial`` fills the rows at or above ``below``
    fill = x.dtype.type(initial)
    return float(max(np.where(x < below, x, fill).max(), fill))


def _pool_holds(
    sel: _Pooled, res: Any, on_topic: np.ndarray | None, versions: np.ndarray | None, raw_sim: np.ndarray,
    signals: Mapping[str, np.ndarray], cfg: IndexConfig, tier_margin: float | None = None,
) -> bool:
    """Whether the pool's ranking is the corpus's (``_exact_pool``): the best fused similarity,
    cosine and lead among the judging documents are in the pool; no document outside it can be
    on topic; it holds ``need`` kept on-topic documents (the best k, and the ``VERSION_POOL``
    that ``_versions_first`` looks at); the versions rule moved nothing; every kept on-topic
    document has the corpus's anchor. ``tier_margin``: the topic cut when the calibrated near
    tier applies (``temporal.near_tier``): its steps run from the best match down to the best
    one under the margin, so that one must be in the pool too (fused similarity and lead)."""
    if on_topic is None or versions is not None:
        return False
    live = res.keep
    ref = live & ~res.not_yet_valid
    if not ref.any():
        return False
    top = float(np.max(raw_sim, where=ref, initial=-np.inf))
    if not (top >= sel.sim_cut and sel.sim_cut <= sel.cut * top):
        return False
    for name, c in sel.cuts.items():
        x = signals[name]
        floor = cfg.topic_floor if name == "dense" else cfg.topic_lead_floor
        best = float(np.max(x, where=ref, initial=-np.inf))
        if best > 0:
            if floor is None or not (best >= c and c <= _at_least(floor * best, x.dtype)):
                return False
        elif c > float(np.nextafter(x.dtype.type(0), x.dtype.type(1))):
            return False  # a document outside could have the best positive value
    if tier_margin is not None:
        tiers = [(raw_sim, tier_margin, sel.sim_cut)]
        if "lead" in signals and cfg.topic_lead_floor and "lead" in sel.cuts:
            tiers.append((signals["lead"], cfg.topic_lead_floor, sel.cuts["lead"]))
        for x, margin, cut in tiers:
            best = float(np.max(x, where=ref, initial=-np.inf))
            under = ref & (np.asarray(x, dtype=np.float64) < margin * best)
            floor = np.max(x, where=under, initial=-np.inf)
            # every document outside is below ``cut``: none may be above that floor
            if not cut <= float(np.nextafter(floor, np.inf)):
                return False
    on = on_topic & live
    if int(np.count_nonzero(on)) < sel.need:
        return False
    return res.unsure is None or not bool((res.unsure & on).any())


def _floor_cuts(sel: _Pooled, res: Any, signals: Mapping[str, np.ndarray], cfg: IndexConfig) -> dict[str, float] | None:
    """Lower cuts of the dense cosine and the lead for a second pool, when the first one's
    failed ``_pool_holds`` on them but holds the best of them among the judging documents
    (None when none did). The first pool's cut is the floor x about the ``POOL_EXTRA``-th best
    of the whole corpus; an as-of question judges only the documents that exist at its date,
    whose best can be lower (a cut of 0.1290 against a floor of 0.1278 there, 100k documents):
    the cut that proves it is that floor, and the pool holds that best already, so every
    document at or above it is all the second pool adds."""
    live = res.keep
    ref = live & ~res.not_yet_valid
    if not ref.any():
        return None
    out: dict[str, float] = {}
    for name, c in sel.cuts.items():
        x = signals[name]
        floor = cfg.topic_floor if name == "dense" else cfg.topic_lead_floor
        best = float(np.max(x, where=ref, initial=-np.inf))
        if floor is None or not best > 0 or not best >= c:
            continue  # the best may be outside: only the whole corpus tells
        want = float(_at_least(floor * best, x.dtype))
        if c > want:
            out[name] = want
    return out or None


def _strictly_before(asked: AskedVersions | None, below: bool) -> AskedVersions | None:
    """The question's versions, strictly before when its anchor's day is in the period
    (``TemporalIndex._same_day_before``)."""
    return dataclasses.replace(asked, relation="below") if below and asked is not None and asked.relation == "before" \
        else asked


def _anchor_cut(
    sel: _Pooled, res: Any, on_topic: np.ndarray | None, sim: np.ndarray, cfg: IndexConfig,
    ratio: float | None, flatten: bool,
) -> float | None:
    """A fused-similarity cut under which no competitor of an unproven anchor can be, when
    the anchors are what ``_pool_holds`` could not prove (else None). The competitors of a
    document have ``sim >= ratio x`` its own (two bins of slack for the binned anchor);
    flattened (``_flatten_top``), ``sim <= rel x ((1 - e) / m + e)`` bounds the relative
    fused similarity ``rel`` of each from below."""
    if on_topic is None or res.unsure is None or ratio is None:
        return None
    bad = res.unsure & on_topic & res.keep
    if not bad.any():
        return None
    t = _competitor_cut(float(sim[bad].min()), float(sim.max()), sel.info.low, sel.top, cfg, ratio, flatten)
    return t if 0 < t < sel.sim_cut else None


def _competitor_cut(
    least: float, hi: float, lo: float, top: float, cfg: IndexConfig, ratio: float, flatten: bool,
) -> float:
    """``_anchor_cut``'s cut for documents whose similarity (as the temporal layer sees it,
    flattened or not) is at least ``least``; ``hi`` / ``lo``: the highest and lowest of the
    corpus in those units, ``top``: its best fused similarity."""
    t = ratio * least - 2.0 * (hi - lo) / (ANCHOR_BINS - 1)
    if flatten and cfg.topical_margin is not None:
        t = top * t / ((1.0 - cfg.tie_break) / cfg.topical_margin + cfg.tie_break)
    return t * (1.0 - 1e-9)


def _top_k(score: np.ndarray, k: int, time: np.ndarray, ids: Sequence[Any]) -> np.ndarray:
    """The positions of the best ``k`` scores, best first; equal scores by ``TIE_RULE``."""
    n = score.shape[0]
    if k <= 0 or n == 0:
        return np.zeros(0, dtype=np.int64)
    if n > 4096 and k <= 64:
        # the k-th best of a strided sample is at most the k-th best of all: the rows at or
        # above it (~k x n/1024 of them) hold the top k and every row tied with it
        # (without the whole-corpus argpartition)
        sample = score[:: n // 1024]
        kth = np.partition(sample, sample.shape[0] - k)[sample.shape[0] - k]
        part = np.flatnonzero(score >= kth)
        if k <= part.shape[0] < n // 4:  # NaN scores or a flat score defeat the cut
            return part[tied_at_cut(score[part], k, time[part], _Rows(ids, part))]
    return tied_at_cut(score, k, time, ids)


class _Rows(Sequence[Any]):
    """``ids`` seen through ``rows`` (no copy of the ids)."""

    def __init__(self, ids: Sequence[Any], rows: np.ndarray) -> None:
        self.ids, self.rows = ids, rows

    def __len__(self) -> int:
        return int(self.rows.shape[0])

    def __getitem__(self, i: Any) -> Any:
        return self.ids[int(self.rows[i])]


def _empty_ranking(query: str, intent: Intent, now: float) -> Ranking:
    z = np.zeros(0)
    return Ranking(
        ids=[], payloads=[], order=np.zeros(0, np.int64), score=z, similarity=z, decay=z,
        age_days=z, time=z, rank_before=np.zeros(0, np.int64), query=query,
        meta={"intent": intent, "now": now, "n_docs": 0},
    )


def _filter_times(snap: _Snapshot) -> dict[str, np.ndarray]:
    """The start and end a filter on ``date`` / ``valid_from`` / ``valid_to`` reads: the
    stores' (``stores.documents.prepare_docs``): valid_from, else the date, else updated
    (cached per index state)."""
    hit = snap.derived.get("filter_times")
    if hit is None:
        date, updated, valid_from, valid_to = snap.times
        t = np.where(np.isnan(date), updated, date)
        hit = snap.derived["filter_times"] = {"start": np.where(np.isnan(valid_from), t, valid_from), "end": valid_to}
    return hit
