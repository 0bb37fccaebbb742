"""Time sensitivity: how much a query's answer depends on *when* it is asked.

"who is the prime minister of japan" and "how old is lionel messi" change with the day of
asking; "who wrote hamlet" never does, and "who won the world cup in 2018" is fixed by
the year it names (its ranking follows its target, see :func:`chronorank.temporal.intent_strength`).
The rules engine finds the temporal expressions; this model turns the query's words and
what the rules found into a probability, a sparse logistic regression:

    p(depends on when asked | q) = 1 / (1 + exp(-(b + sum_j w[h_j(q)])))

over hashed binary features ``h_j``: lower-cased words, word bigrams, the question's
opening two and three words ("who is", "how many", "when was the"), the kinds of the
temporal expressions found ("named_year", "relative", ...), the language's lexicon cue
classes (``intent/lang/*.json``), and a few shape cues: a superlative ("-est", "most"),
"who is the <role> of", a four-digit year, the query's length. Scoring one query sums a
few dozen weights (a few microseconds on top of the rules).

The shipped weights (``sensitivity_weights.json``) are fitted by
``benchmarks/intent_eval.py --write-weights`` on the ``train`` splits of gate-dev (real
search questions from SituatedQA; credits in ``chronorank/data/NOTICE.md``) and of the
project's own intent set; :func:`fit_sensitivity` refits them on your own labelled queries.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chronorank._recache import read_entry, regex_cache_dir, write_entry
from chronorank.errors import InvalidInput
from chronorank.intent.lang import Language

FORMAT = "chronorank.time_sensitivity/1"
HASH_BITS = 14
DIM = 1 << HASH_BITS
DEFAULT_WEIGHTS = Path(__file__).with_name("sensitivity_weights.json")

# words; a possessive "'s" stands apart ("nvidia's ceo" -> "nvidia", "'s", "ceo")
_TOKEN = re.compile(r"'s\b|[^\W_]+(?:'(?!s\b)[^\W_]+)?")
_YEAR = re.compile(r"(?<!\d)(?:1[5-9]\d\d|20\d\d)(?!\d)")
# English shape cues; the hashed words carry every language, these add what a single word
# misses. "who is the <role> of <x>" / "who is <x>'s <role>" asks for the holder of an
# office today.
_EN_ROLE_OF = re.compile(
    r"\bwho(?:\s+is|\s+are|'s)\s+(?:the\s+)?(?:\w+\s+){0,3}?(?:of|for|in)\b"
    r"|\bwho(?:\s+is|\s+are|'s)\s+(?:\w+\s+){0,2}?\w+'s\s+\w+"  # "who is nvidia's ceo"
)
_EN_SUPERLATIVE = re.compile(r"\b(?:most|least|best|worst|top|number\s+(?:one|1)|record)\b|\b\w{3,}est\b")
# the natural world and mathematics: counts and properties that do not change with the day
# ("how many moons does mars have", "how many bones in the body"); in gate-dev's train split
# 16% of the questions naming one depend on the time of asking, against 38% overall
_EN_NATURE = re.compile(
    r"\b(?:planets?|moons?|sun|atoms?|electrons?|protons?|neutrons?|molecules?|elements?|bones?|"
    r"chromosomes?|teeth|tooth|muscles?|cells?|genes?|continents?|oceans?|degrees|angles?|sides|"
    r"triangles?|hexagons?|octagons?|pentagons?|vertebrae|organs?|blood|dna|proteins?|enzymes?|"
    r"species|mammals?|insects?|legs|chambers)\b"
)
_EN_NOT_SUPERLATIVE = frozenset({
    "interest", "forest", "honest", "request", "contest", "test", "latest", "west",
    "rest", "guest", "quest", "suggest", "manifest", "protest", "harvest", "digest", "invest",
    "modest", "arrest", "earnest", "priest", "chest", "nest", "pest", "vest", "everest",
    "budapest", "bucharest", "midwest", "northwest", "southwest", "conquest", "inquest",
})


# expressions whose interval moves with the time of asking ("last week", "past 30 days",
# "3 months ago", "yesterday", "this year"): one feature pools their few examples
_MOVING_KINDS = frozenset({"relative", "past_n", "ago", "day", "ytd"})


# cue classes already seen as expression kinds ("recent" hits) or contained in one; "lookup"
# and "newest_of_line" decide the mode only (rules._parse), the shipped model never saw them
_SKIP_CUES = frozenset({"recent", "newest", "newest_of_line", "lookup"})


_BUCKETS: dict[str, int] = {}  # feature name -> bucket, memoised (words repeat across queries)
_MAX_MEMO = 200_000


def _bucket(s: str) -> int:
    b = _BUCKETS.get(s)
    if b is None:
        b = zlib.crc32(s.encode("utf-8", "surrogatepass")) & (DIM - 1)
        if len(_BUCKETS) >= _MAX_MEMO:
            _BUCKETS.clear()
        _BUCKETS[s] = b
    return b


def feature_names(
    text: str, language: Language, kinds: Sequence[str], named: Sequence[tuple[int, int]] = ()
) -> list[str]:
    """The named binary features of one query (before hashing); see the module docstring.

    ``kinds``: the kinds of the temporal expressions the rules found in ``text``;
    ``named``: character spans of cue words the rules read as part of a proper name
    ("the Current bank app", "Now TV"): they count as names, not as cues.
    """
    lang = language.code
    name_words = [w for s, e in named for w in _TOKEN.findall(text[s:e].lower().replace("’", "'"))]
    for s, e in named:
        text = text[:s] + " " * (e - s) + text[e:]  # same length: later spans stay valid
    cues = [c for c, pat in language.lexicon.items() if c not in _SKIP_CUES and pat.search(text) is not None]
    low = text.lower().replace("’", "'")
    words = _TOKEN.findall(low)
    names = ["bias:" + lang]
    names += ["w:" + w for w in words]
    names += ["n:" + w for w in name_words]
    names += ["b:" + a + " " + b for a, b in zip(words, words[1:])]
    if words:
        names.append("p2:" + " ".join(words[:2]))
        names.append("p3:" + " ".join(words[:3]))
    names += ["k:" + k for k in kinds] or ["k:none"]
    if any(k in _MOVING_KINDS for k in kinds):
        names.append("s:moving_target")
    # a cue class in general and in this language (each language's lexicon has its own reach)
    names += ["c:" + c for c in cues] + [f"c:{lang}:" + c for c in cues]
    if _YEAR.search(low):
        names.append("s:year")
    if any(ch.isdigit() for ch in low):
        names.append("s:digit")
    names.append(f"s:len{min(len(words), 12) // 3}")
    if lang == "en":
        if _EN_NATURE.search(low):
            names.append("s:nature")
        if _EN_ROLE_OF.search(low):
            names.append("s:role_of")
        if any(m.group() not in _EN_NOT_SUPERLATIVE for m in _EN_SUPERLATIVE.finditer(low)):
            names.append("s:superlative")
    return names


def feature_index(names: Sequence[str]) -> np.ndarray:
    """Sorted unique hash buckets of ``names``."""
    return np.unique(np.fromiter((_bucket(n) for n in names), dtype=np.int64, count=len(names)))


@dataclass(frozen=True)
class SensitivityModel:
    """Sparse logistic regression over hashed query features; ``score(names) -> [0, 1]``."""

    weights: np.ndarray = field(repr=False)
    bias: float
    meta: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        w = np.asarray(self.weights, dtype=np.float64)
        if w.shape != (DIM,) or not np.isfinite(w).all() or not math.isfinite(self.bias):
            raise InvalidInput(
                f"time-sensitivity weights must be {DIM} finite numbers and a finite bias, got shape "
                f"{w.shape}; refit with fit_sensitivity()"
            )
        object.__setattr__(self, "weights", w)
        # one query sums a few dozen weights: plain floats beat numpy's per-call overhead
        object.__setattr__(self, "_table", w.tolist())

    def score(self, names: Sequence[str]) -> float:
        table = self._table  # type: ignore[attr-defined]
        z = self.bias + sum([table[i] for i in {_bucket(n) for n in names}])
        return 1.0 / (1.0 + math.exp(-min(40.0, max(-40.0, z))))

    def save(self, path: str | Path) -> None:
        data = {
            "format": FORMAT,
            "hash_bits": HASH_BITS,
            "bias": round(float(self.bias), 6),
            "meta": self.meta,
            # only the buckets some training feature reached: the rest stay 0
            "weights": {str(i): round(float(v), 4) for i, v in enumerate(self.weights) if round(float(v), 4)},
        }
        Path(path).write_text(json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> SensitivityModel:
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise InvalidInput(f"cannot read time-sensitivity weights from {str(path)!r}: {exc}") from None
        key = hashlib.sha256(f"{_CACHE_FORMAT}\0{FORMAT}\0{HASH_BITS}\0".encode() + raw).hexdigest()
        cached = _cache_read(key)
        if cached is not None:
            return cls(weights=cached[0], bias=cached[1], meta=cached[2])
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise InvalidInput(f"cannot read time-sensitivity weights from {str(path)!r}: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("hash_bits") != HASH_BITS:
            raise InvalidInput(f"{str(path)!r} is not a {FORMAT} file with hash_bits={HASH_BITS}")
        w = np.zeros(DIM)
        weights = data.get("weights") or {}
        # one fancy assignment, not 13k scalar ones (3 ms of every process's first query)
        w[np.fromiter(map(int, weights), dtype=np.intp, count=len(weights))] = np.fromiter(
            map(float, weights.values()), dtype=np.float64, count=len(weights))
        model = cls(weights=w, bias=float(data["bias"]), meta=data.get("meta") or {})
        _cache_write(key, model)
        return model


# The shipped weights are 13k JSON numbers: parsing them is ~9 ms of every process's first
# query, a cached rerun of ``chronorank eval`` included. The parsed array is
# kept in the regex cache's folder (chronorank._recache: compiled forms of shipped data), named
# by the sha256 of the file's bytes, with the sha256 of the array beside it: a file that is
# missing, damaged or of another size is a miss (parsed again and rewritten). Off with the
# regex cache (``CHRONORANK_REGEX_CACHE=off``).
_CACHE_FORMAT = "chronorank.sensitivity-cache/1"


def _cache_path(key: str) -> Path | None:
    root = regex_cache_dir()
    return None if root is None else root / f"{key[:40]}.weights"


def _cache_read(key: str) -> tuple[np.ndarray, float, dict[str, Any]] | None:
    path = _cache_path(key)
    entry = None if path is None else read_entry(path)
    if entry is None:
        return None
    meta, body = entry
    bias, info = meta.get("bias"), meta.get("meta")
    if meta.get("key") != key or len(body) != DIM * 8 or not isinstance(bias, float) or not isinstance(info, dict):
        return None  # another file's or a malformed entry: parsed again and rewritten
    return np.frombuffer(body, dtype="<f8").astype(np.float64), bias, info


def _cache_write(key: str, model: SensitivityModel) -> None:
    path = _cache_path(key)
    if path is not None:
        body = np.ascontiguousarray(model.weights, dtype="<f8").tobytes()
        write_entry(path, {"key": key, "bias": float(model.bias), "meta": model.meta}, body)


_default: SensitivityModel | None = None
_lock = threading.Lock()


def default_model(reload: bool = False) -> SensitivityModel:
    """The shipped model, loaded once (``reload=True`` rereads the file after a refit)."""
    global _default
    if _default is None or reload:
        with _lock:
            if _default is None or reload:
                _default = SensitivityModel.load(DEFAULT_WEIGHTS)
    return _default


def adam_logistic(
    margin: Callable[[np.ndarray], np.ndarray],
    backprop: Callable[[np.ndarray], np.ndarray],
    y: np.ndarray,
    row_weight: np.ndarray,
    dim: int,
    *,
    l2: float,
    epochs: int,
    learning_rate: float,
) -> tuple[np.ndarray, float]:
    """Full-batch Adam on the ``row_weight``-weighted log-loss + ``l2 * |w|^2 / 2``; deterministic.

    ``margin(w)`` is ``X @ w`` and ``backprop(g)`` is ``X.T @ g`` for whatever holds the
    features (a dense matrix, or sparse index arrays); returns ``(w, b)``.
    """
    w = np.zeros(dim)
    b = 0.0
    m_w, v_w = np.zeros(dim), np.zeros(dim)
    m_b = v_b = 0.0
    b1, b2, eps = 0.9, 0.999, 1e-8
    for t in range(1, epochs + 1):
        p = 1.0 / (1.0 + np.exp(-np.clip(margin(w) + b, -40, 40)))
        g = (p - y) * row_weight
        gw = backprop(g) + l2 * w
        gb = float(g.sum())
        m_w = b1 * m_w + (1 - b1) * gw
        v_w = b2 * v_w + (1 - b2) * gw * gw
        m_b = b1 * m_b + (1 - b1) * gb
        v_b = b2 * v_b + (1 - b2) * gb * gb
        w -= learning_rate * (m_w / (1 - b1**t)) / (np.sqrt(v_w / (1 - b2**t)) + eps)
        b -= learning_rate * (m_b / (1 - b1**t)) / (math.sqrt(v_b / (1 - b2**t)) + eps)
    return w, b


def fit_sensitivity(
    rows: Sequence[tuple[Sequence[str], float]],
    *,
    sample_weight: Sequence[float] | None = None,
    l2: float = 1e-3,
    epochs: int = 300,
    learning_rate: float = 0.05,
) -> SensitivityModel:
    """Fit a :class:`SensitivityModel` on ``(feature_names, label)`` pairs.

    Labels are 0/1 (or probabilities). Full-batch Adam on the weighted mean log-loss
    + ``l2 * |w|^2 / 2``, deterministic; the features stay sparse (one index array).
    Build the names with :func:`chronorank.intent.rules.sensitivity_features` so that they
    match what the parser scores.
    """
    if l2 < 0 or epochs < 1 or learning_rate <= 0:
        raise InvalidInput(f"need l2 >= 0, epochs >= 1, learning_rate > 0; got {l2}, {epochs}, {learning_rate}")
    idx = [feature_index(list(names)) for names, _ in rows]
    y = np.asarray([float(label) for _, label in rows])
    if len(y) < 2 or not (((y > 0.5).any()) and ((y < 0.5).any())):
        raise InvalidInput(f"fit_sensitivity needs both kinds of label, got {len(y)} rows")
    if ((y < 0) | (y > 1)).any():
        raise InvalidInput("labels must lie in [0, 1]")
    sw = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if sw.shape != y.shape or (sw < 0).any():
        raise InvalidInput(f"sample_weight needs {len(y)} non-negative numbers, got shape {sw.shape}")
    sw = sw / sw.sum()
    lengths = np.array([a.size for a in idx])
    cols = np.concatenate(idx) if idx else np.zeros(0, dtype=np.int64)
    row_of = np.repeat(np.arange(len(y)), lengths)
    w, b = adam_logistic(
        lambda w: np.bincount(row_of, weights=w[cols], minlength=len(y)),
        lambda g: np.bincount(cols, weights=g[row_of], minlength=DIM),
        y, sw, DIM, l2=l2, epochs=epochs, learning_rate=learning_rate,
    )
    return SensitivityModel(weights=w, bias=b, meta={"n_train": len(y), "l2": l2, "epochs": epochs})
