"""CLI subcommands, one module each.

Each module defines ``add_parser(subparsers)`` which registers its parser and sets
``func`` (a callable ``args -> int``) as the default. Modules are imported only when
their command runs or when ``--help`` lists them, and must import optional
dependencies inside ``func`` only.
"""

# name -> (module, one-line help). The CLI imports a module only for the command that runs.
COMMANDS: dict[str, tuple[str, str]] = {
    "curve": ("chronorank.commands.curve", "print or plot a decay kernel"),
    "rerank": ("chronorank.commands.rerank", "rerank scored, dated candidates read as JSONL"),
    "intent": ("chronorank.commands.intent", "show the temporal intent parsed from a query"),
    "index": ("chronorank.commands.index", "build an index from a corpus JSONL file"),
    "search": ("chronorank.commands.search", "search a saved index"),
    "demo": ("chronorank.commands.demo", "index the bundled corpus and answer time-aware questions"),
    "eval": ("chronorank.commands.eval", "evaluate a docs/format.md benchmark through the index"),
    "benchmark": ("chronorank.commands.benchmark", "run the quality benchmark suites"),
    "fit": ("chronorank.commands.fit", "fit kernel, strength and fusion on labelled queries"),
    "compare-weights": ("chronorank.commands.compare_weights", "compare fusion weights by hit rate"),
    "fetch-corpus": ("chronorank.commands.fetch_corpus", "refresh a release-notes corpus from GitHub"),
    "serve-demo": ("chronorank.commands.serve_demo", "serve the interactive demo app"),
}
