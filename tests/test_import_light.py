"""`import chronorank` and `chronorank --help` must load no optional dependency."""

import json
import subprocess
import sys

OPTIONAL = [
    "bm25s", "Stemmer", "onnxruntime", "tokenizers", "faiss", "matplotlib", "tqdm",
    "qdrant_client", "psycopg", "pgvector", "langchain_core", "llama_index", "haystack",
    "chromadb", "sentence_transformers", "fastembed", "pandas", "scipy", "tdw_rag", "ranx",
    "selenium", "torch",
]


def _loaded_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip().splitlines()[-1]
    return {m.split(".")[0] for m in json.loads(out)}


def test_import_chronorank_loads_no_optional_module():
    loaded = _loaded_after("import chronorank")
    assert not loaded & set(OPTIONAL), loaded & set(OPTIONAL)


def test_cli_help_loads_no_optional_module():
    code = (
        "import contextlib, io\n"
        "from chronorank.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['--help']) if False else None\n"
        "    try:\n        main(['--help'])\n    except SystemExit:\n        pass\n"
    )
    loaded = _loaded_after(code)
    assert not loaded & set(OPTIONAL), loaded & set(OPTIONAL)


def test_public_api_resolves_lazily():
    import chronorank

    assert chronorank.TemporalReranker.__name__ == "TemporalReranker"
    assert callable(chronorank.combine)
    assert "TemporalIndex" in dir(chronorank)
