"""The layers hold: no import loop among chronorank's modules, and nothing imports a higher layer.

The layer order is written once, in the table between ``<!-- layers:begin -->`` and
``<!-- layers:end -->`` of ``docs/ARCHITECTURE.md``; this test parses it. Every import
statement counts, at the top of a module or inside a function, and so do imports under
``if TYPE_CHECKING:`` for the layer order (a type named from a higher layer is still a
dependency pointing up); only the loop check leaves those out, since they never run.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
SRC = ROOT / "src"
PACKAGE = "chronorank"

Edge = tuple[str, str, int, bool]  # importer, imported module, line, under TYPE_CHECKING


def parse_layers(text: str) -> list[tuple[str, list[str]]]:
    """``[(layer name, [module prefixes])]`` from lowest to highest, from the doc's table:
    rows ``| rank | name | `mod`, `mod` ... |`` (rank ascending; equal ranks are one layer)."""
    m = re.search(r"<!-- layers:begin -->(.*?)<!-- layers:end -->", text, re.DOTALL)
    if m is None:
        raise AssertionError("docs/ARCHITECTURE.md has no <!-- layers:begin --> ... <!-- layers:end --> table")
    rows: dict[int, tuple[str, list[str]]] = {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].isdigit():
            continue
        rank, name, mods = int(cells[0]), cells[1], re.findall(r"`([\w.]+)`", cells[2])
        if rank in rows:
            raise AssertionError(f"layer rank {rank} is listed twice")
        rows[rank] = (name, mods)
    return [rows[r] for r in sorted(rows)]


def modules(src: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package ``__init__``)."""
    out = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                for sub in ast.walk(inner):
                    if isinstance(sub, (ast.Import, ast.ImportFrom)):
                        lines.add(sub.lineno)
    return lines


def imports(src: Path, package: str) -> tuple[dict[str, tuple[Path, bool]], list[Edge]]:
    """Every module of ``package`` and every import between two of them."""
    mods = modules(src, package)
    edges: list[Edge] = []
    for name, (path, is_pkg) in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        typing_only = _type_checking_lines(tree)
        for node in ast.walk(tree):
            for target in _targets(node, name, is_pkg, mods):
                if target != name:
                    edges.append((name, target, node.lineno, node.lineno in typing_only))  # type: ignore[attr-defined]
    return mods, edges


def _targets(node: ast.AST, name: str, is_pkg: bool, mods: dict[str, tuple[Path, bool]]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in mods:
                yield alias.name
    elif isinstance(node, ast.ImportFrom):
        if node.level:  # relative: from the importer's package, one level up per extra dot
            base = name.split(".") if is_pkg else name.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        subs = [f"{prefix}.{a.name}" for a in node.names]
        yield from (s for s in subs if s in mods)  # "from pkg import submodule"
        if prefix in mods and any(s not in mods for s in subs):
            yield prefix  # a name defined in the module (or package __init__) itself


def layer_of(module: str, layers: list[tuple[str, list[str]]], package: str) -> int | None:
    """Rank of the layer whose longest listed prefix covers ``module``; the root package
    itself is matched only by its own name, never as a prefix."""
    best, best_len = None, -1
    for rank, (_, prefixes) in enumerate(layers):
        for p in prefixes:
            full = package if p == package else f"{package}.{p}"
            covers = module == full or (p != package and module.startswith(full + "."))
            if covers and len(full) > best_len:
                best, best_len = rank, len(full)
    return best


def upward(edges: list[Edge], layers: list[tuple[str, list[str]]], package: str) -> list[str]:
    out = []
    for src, dst, line, _ in edges:
        a, b = layer_of(src, layers, package), layer_of(dst, layers, package)
        if a is not None and b is not None and b > a:
            out.append(f"{src}:{line} imports {dst} ({layers[a][0]} -> {layers[b][0]}, a higher layer)")
    return out


def cycles(edges: list[Edge]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), run-time imports only."""
    graph: dict[str, set[str]] = {}
    for src, dst, _, typing_only in edges:
        graph.setdefault(dst, set())
        if not typing_only:
            graph.setdefault(src, set()).add(dst)
        else:
            graph.setdefault(src, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


# ----------------------------------------------------------------------------- the tests

LAYERS = parse_layers(DOC.read_text(encoding="utf-8"))
MODS, EDGES = imports(SRC, PACKAGE)


def test_the_layer_table_follows_the_brief():
    names = [name for name, _ in LAYERS]
    order = ["ground", "time", "kernels", "fusion", "validity", "intent", "temporal", "rerank / index",
             "stores", "eval", "integrations", "commands / CLI"]
    assert names == order


def test_every_module_belongs_to_a_layer():
    unplaced = [m for m in MODS if layer_of(m, LAYERS, PACKAGE) is None]
    assert not unplaced, f"place these in the layer table of docs/ARCHITECTURE.md: {unplaced}"


def test_the_import_graph_is_read():
    # guards the parser itself: known arrows of each kind are seen
    pairs = {(a, b) for a, b, _, _ in EDGES}
    assert ("chronorank.index.core", "chronorank.index.snapshot") in pairs  # top of the module
    assert ("chronorank.index.core", "chronorank.index.storage") in pairs  # inside a method
    assert ("chronorank.index.background", "chronorank.index.core") in pairs  # TYPE_CHECKING
    assert ("chronorank.intent.rules", "chronorank.timeparse.civil") in pairs  # from pkg import module
    assert len(EDGES) > 300


def test_nothing_imports_a_higher_layer():
    assert upward(EDGES, LAYERS, PACKAGE) == []


def test_no_import_loop():
    assert cycles(EDGES) == []


def test_the_root_package_imports_nothing_of_its_own():
    # it sits in the ground layer: ``__version__`` and a table of lazily resolved names
    assert [e for e in EDGES if e[0] == PACKAGE] == []


def _function_local(path: Path) -> Iterator[ast.ImportFrom | ast.Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    yield node


def test_the_ground_and_time_layers_are_imported_at_the_top():
    # numpy-only and loaded by everything above them: an import inside a function saves
    # nothing (the CLI's commands keep theirs lazy for ``--help``)
    ground = {r for r, (name, _) in enumerate(LAYERS) if name in ("ground", "time")}
    late = []
    for name, (path, is_pkg) in MODS.items():
        if name.startswith(("chronorank.commands", "chronorank.cli")):
            continue
        for node in _function_local(path):
            for target in _targets(node, name, is_pkg, MODS):
                if layer_of(target, LAYERS, PACKAGE) in ground:
                    late.append(f"{name}:{node.lineno} {ast.unparse(node)}")
    assert late == [], "move these imports to the top of their module"


def test_the_checks_find_a_loop_and_an_upward_arrow(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "__init__.py").write_text("")
    (pkg / "low" / "a.py").write_text("def f():\n    from pkg.high import g\n")  # up, and half a loop
    (pkg / "low" / "b.py").write_text("from . import a\n")
    (pkg / "high.py").write_text("from pkg.low.a import f\n\ndef g():\n    pass\n")
    layers = parse_layers(
        "<!-- layers:begin -->\n| rank | layer | modules |\n|---|---|---|\n"
        "| 0 | ground | `pkg`, `low` |\n| 1 | top | `high` |\n<!-- layers:end -->"
    )
    _, edges = imports(tmp_path, "pkg")
    assert ("pkg.low.b", "pkg.low.a", 1, False) in edges  # relative import resolved
    assert upward(edges, layers, "pkg") == ["pkg.low.a:2 imports pkg.high (ground -> top, a higher layer)"]
    assert cycles(edges) == [["pkg.high", "pkg.low.a"]]
