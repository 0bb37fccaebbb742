"""A learned gate: L2-regularised logistic regression in numpy.

Features: hashed word unigrams and bigrams, hashed character 3-5-grams of each word
(they cover inflected forms), the rules engine's mode and lexical cue classes, and,
when an embedder (any object with ``embed(list[str]) -> ndarray``) is given, the
L2-normalised sentence embedding.

    p(time-sensitive | q) = 1 / (1 + exp(-(w . x(q) + b)))
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.intent.lang import get_language
from chronorank.intent.rules import parse, with_sensitivity
from chronorank.intent.sensitivity import adam_logistic
from chronorank.types import MODES, Intent

FORMAT = "chronorank.learned_gate/1"
DEFAULT_WEIGHTS = Path(__file__).with_name("gate_weights.json")
HASH_DIM = 4096
_TOKEN = re.compile(r"\w+(?:['’]\w+)?")
_LEX_CLASSES = ("implicit_now", "historical", "timeless", "howto")
_SPAN_CLASSES = ("as_of", "range", "specific", "recent")
_FIXED_NOW = 1_786_000_000.0  # a fixed reference so that features do not drift with the clock


def _bucket(s: str) -> int:
    return zlib.crc32(s.encode("utf-8", "surrogatepass")) % HASH_DIM


def _dense_names() -> list[str]:
    return (
        [f"mode={m}" for m in MODES]
        + [f"lex={c}" for c in _LEX_CLASSES]
        + ["has_digit", "n_words_log", "rule_sensitivity"]
    )


N_DENSE = len(_dense_names())


def lexical_features(query: str) -> np.ndarray:
    """Feature vector (hashed n-grams + rule features) of one query, float64."""
    x = np.zeros(HASH_DIM + N_DENSE)
    text = query[:2048]
    intent = parse(text, now=_FIXED_NOW)
    words = _TOKEN.findall(text.lower())
    idx: set[int] = set()
    for i, w in enumerate(words):
        idx.add(_bucket("w:" + w))
        if i:
            idx.add(_bucket("b:" + words[i - 1] + " " + w))
        padded = f"<{w}>"
        for n in (3, 4, 5):
            for j in range(max(1, len(padded) - n + 1)):
                idx.add(_bucket(f"c{n}:" + padded[j:j + n]))
    if idx:
        x[list(idx)] = 1.0 / math.sqrt(len(idx))
    d = HASH_DIM
    x[d + MODES.index(intent.mode)] = 1.0
    lang = get_language(intent.lang)
    for k, c in enumerate(_LEX_CLASSES):
        pat = lang.lexicon.get(c)
        if pat is not None and pat.search(text):
            x[d + len(MODES) + k] = 1.0
    base = d + len(MODES) + len(_LEX_CLASSES)
    x[base] = 1.0 if any(ch.isdigit() for ch in text) else 0.0
    x[base + 1] = math.log1p(len(words)) / 3.0
    x[base + 2] = intent.time_sensitivity
    return x


def _embed(embedder: Any, queries: Sequence[str]) -> np.ndarray:
    emb = np.asarray(embedder.embed(list(queries)), dtype=np.float64)
    if emb.ndim != 2 or emb.shape[0] != len(queries):
        raise InvalidInput(
            f"embedder.embed returned shape {emb.shape}, expected ({len(queries)}, dim)"
        )
    norms = np.linalg.norm(emb, axis=1, keepdims=True)
    return emb / np.where(norms > 0, norms, 1.0)


def _features(queries: Sequence[str], embedder: Any = None) -> np.ndarray:
    X = np.stack([lexical_features(q) for q in queries]) if queries else np.zeros((0, HASH_DIM + N_DENSE))
    if embedder is not None:
        X = np.hstack([X, _embed(embedder, queries)])
    return X


@dataclass
class LearnedGate:
    """Gate ``query -> float``: a logistic regression over lexical (+ embedding) features."""

    weights: np.ndarray
    bias: float
    embedding_dim: int = 0
    embedder: Any = None
    meta: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self.weights = np.asarray(self.weights, dtype=np.float64)
        expected = HASH_DIM + N_DENSE + self.embedding_dim
        if self.weights.shape != (expected,):
            raise InvalidInput(
                f"LearnedGate weights have shape {self.weights.shape}, expected ({expected},); "
                "refit with fit_gate() for this version of chronorank"
            )
        if self.embedding_dim and self.embedder is None:
            raise InvalidInput(
                f"this gate was trained with {self.embedding_dim}-dim sentence embeddings; "
                "pass embedder=... (an object with embed(list[str]) -> ndarray)"
            )

    def predict(self, queries: Sequence[str]) -> np.ndarray:
        """Probabilities of being time-sensitive, one per query."""
        qs = [q if isinstance(q, str) else "" for q in queries]
        X = _features(qs, self.embedder if self.embedding_dim else None)
        z = X @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))

    def __call__(self, query: str) -> float:
        if not isinstance(query, str):
            raise InvalidInput(f"query must be a str, got {type(query).__name__}")
        return float(self.predict([query])[0])

    def intent(self, query: str, now: Any = None) -> Intent:
        """The rules' intent with the learned sensitivity (and mode, where no cue decided it)."""
        return with_sensitivity(query, now, self(query))

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | Path) -> None:
        data = {
            "format": FORMAT,
            "hash_dim": HASH_DIM,
            "dense": _dense_names(),
            "embedding_dim": self.embedding_dim,
            "bias": round(float(self.bias), 6),
            "weights": [round(float(w), 5) for w in self.weights],
            "meta": self.meta or {},
        }
        Path(path).write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path, embedder: Any = None) -> LearnedGate:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"cannot read gate weights from {str(path)!r}: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InvalidInput(f"{str(path)!r} is not a {FORMAT} file")
        if data.get("hash_dim") != HASH_DIM or data.get("dense") != _dense_names():
            raise InvalidInput(f"{str(path)!r} was saved with different features; refit with fit_gate()")
        return cls(
            weights=np.asarray(data["weights"], dtype=np.float64),
            bias=float(data["bias"]),
            embedding_dim=int(data.get("embedding_dim", 0)),
            embedder=embedder,
            meta=data.get("meta") or {},
        )

    @classmethod
    def default(cls) -> LearnedGate:
        """The gate shipped with chronorank, trained on the TRAIN split of the project's set."""
        return cls.load(DEFAULT_WEIGHTS)


def _labelled_pairs(labelled: Iterable[Any]) -> tuple[list[str], np.ndarray]:
    queries: list[str] = []
    labels: list[float] = []
    for i, item in enumerate(labelled):
        if isinstance(item, dict):
            q = item.get("query")
            y = item.get("time_sensitive", item.get("label"))
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            q, y = item
        else:
            raise InvalidInput(
                f"labelled item {i} is {item!r}; expected a dict with 'query' and 'time_sensitive' "
                "or a (query, label) pair"
            )
        if not isinstance(q, str) or y is None:
            raise InvalidInput(f"labelled item {i} needs a str query and a 0/1 label, got {item!r}")
        y = float(y)
        if not 0.0 <= y <= 1.0:
            raise InvalidInput(f"labelled item {i}: label must lie in [0, 1], got {y}")
        queries.append(q)
        labels.append(y)
    return queries, np.asarray(labels)


def fit_gate(
    labelled: Iterable[Any],
    embedder: Any = None,
    *,
    l2: float = 1e-3,
    epochs: int = 400,
    learning_rate: float = 0.1,
) -> LearnedGate:
    """Fit a :class:`LearnedGate` on labelled queries.

    ``labelled``: dicts with ``query`` and ``time_sensitive`` (0/1, or a probability), or
    ``(query, label)`` pairs. Full-batch Adam on the mean log-loss + ``l2 * |w|^2 / 2``;
    deterministic.
    """
    queries, y = _labelled_pairs(labelled)
    if len(queries) < 2 or len(set(y.round().tolist())) < 2:
        raise InvalidInput(
            f"fit_gate needs both time-sensitive and timeless examples, got {len(queries)} "
            f"queries with labels {sorted(set(y.tolist()))}"
        )
    if l2 < 0 or epochs < 1 or learning_rate <= 0:
        raise InvalidInput(f"need l2 >= 0, epochs >= 1, learning_rate > 0; got {l2}, {epochs}, {learning_rate}")
    X = _features(queries, embedder)
    n, d = X.shape
    w, b = adam_logistic(
        lambda w: X @ w, lambda g: X.T @ g, y, np.full(n, 1.0 / n), d,
        l2=l2, epochs=epochs, learning_rate=learning_rate,
    )
    emb_dim = d - HASH_DIM - N_DENSE
    return LearnedGate(
        weights=w, bias=b, embedding_dim=emb_dim, embedder=embedder if emb_dim else None,
        meta={"n_train": n, "l2": l2, "epochs": epochs},
    )
