"""The import structure: no cycle inside ``trustsim/`` or ``analysis/`` (function-level imports counted), lazy
imports in ``trustsim/`` only of the heavy third-party modules listed in :data:`trustsim.HEAVY_MODULES`, and reading a run directory
imports no game or agent package."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import trustsim

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("trustsim", "analysis")
"""The packages whose modules must not import each other in a cycle."""


def modules(package: str = "trustsim") -> dict[str, Path]:
    """Dotted name → file of every module of ``package`` (a package by its ``__init__.py``)."""
    out = {}
    for path in sorted((REPO / package).rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of import nodes under ``if TYPE_CHECKING:`` (annotations only: never executed)."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skipped


def imports(name: str, path: Path) -> Iterator[tuple[str, int, bool]]:
    """(imported module, line, inside a function) of every executed import statement of one module;
    relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_only(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    nested = {
        id(n)
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
        for n in ast.walk(fn)
    }
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, id(node) in nested
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno, id(node) in nested


def graph(package: str = "trustsim") -> dict[str, set[str]]:
    """Module → the modules of ``package`` it imports (an imported name that is no module counts as its
    module)."""
    known = modules(package)
    edges: dict[str, set[str]] = {m: set() for m in known}
    for name, path in known.items():
        for target, _, _ in imports(name, path):
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                edges[name].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(package: str):
    edges = graph(package)
    found = cycles(edges)
    detail = "; ".join(" ".join(f"{m} -> {sorted(edges[m] & set(c))}" for m in c) for c in found)
    assert not found, f"import cycles inside {package}/ (function-level imports counted): {detail}"


def test_the_cycle_finder_sees_cycles():
    """Not blind: a cycle through three modules (and one of two) is found; a chain is not."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    assert cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]


def test_lazy_imports_are_heavy_third_party_modules_only():
    """An import inside a function is of a module listed in ``trustsim.HEAVY_MODULES``, never of trustsim's
    own modules or a light dependency."""
    lazy = []
    for name, path in modules().items():
        for target, line, nested in imports(name, path):
            if nested and target.split(".")[0] not in trustsim.HEAVY_MODULES:
                lazy.append(f"{path.relative_to(REPO)}:{line} imports {target}")
    assert not lazy, "lazy imports of non-heavy modules: " + "; ".join(lazy)


READER = textwrap.dedent(
    """
    import json, sys, warnings
    from pathlib import Path
    from trustsim import api, status
    from trustsim.rundir import DataWarning, discover_runs, iter_events, read_tables, scan_events
    root = Path(sys.argv[1])
    found = discover_runs([root], include_incomplete=True)
    units = {}
    for run in found.runs:
        api.load(run.path)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DataWarning)
            list(iter_events(run.path))
            scan_events(run, full=True)
            for table in sorted(p.name for p in run.path.glob("*.csv")):
                read_tables([run], table, full=True)
        units[run.game] = any("whose events are intact" in str(w.message) for w in caught)
    jobs = {j.game: [j.unit, j.done, j.planned] for j in status.collect([root])}
    status.render(list(status.collect([root])))
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("games", "agents"))
    print(json.dumps({"units": units, "status": jobs, "loaded": loaded}))
    """
)


@pytest.fixture(scope="module")
def damaged_runs(tmp_path_factory) -> Path:
    """Each registered game's example job, played once, with one garbled line in the middle of its events."""
    from trustsim import api
    from trustsim.contract import games

    root = tmp_path_factory.mktemp("read")
    for name, spec in games().items():
        run_dir = root / name
        result = api.run(None, [*spec.example, "progress=false"], run_dir)
        assert result.status == "complete", (name, result.failure)
        lines = (run_dir / "events.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
        lines[len(lines) // 2] = "{garbled\n"
        (run_dir / "events.jsonl").write_text("".join(lines), encoding="utf-8")
    return root


def test_reading_a_run_directory_imports_no_game_or_agent(damaged_runs: Path):
    """Reading every game's run directory, damaged events included, imports no game or agent package: the
    damage rule and ``trustsim.status`` take each game's unit of play (and its plan) from the manifest."""
    from trustsim.contract import games

    proc = subprocess.run(
        [sys.executable, "-c", READER, str(damaged_runs)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["loaded"] == []
    with_units = {name for name, spec in games().items() if spec.unit is not None}
    assert {g for g, used in result["units"].items() if used} == with_units
    for name in with_units:
        unit, done, planned = result["status"][name]
        assert unit == games()[name].unit.counted and done == planned and done > 0, (
            name,
            unit,
            done,
            planned,
        )
