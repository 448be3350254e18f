"""The suite's import graph, read from the code as it stands (docs/architecture.md,
"Layers"):

* no cycle among the modules of the suite's packages (compsuite, its data_prep and eval,
  fairseq_plugins), counting every import: at the top of a module, inside functions and
  under ``if TYPE_CHECKING`` alike;
* the foundation (compsuite/foundation/) imports nothing of the suite outside itself;
* data_prep imports neither compsuite.toolkits nor eval, not even through other modules;
* eval imports no module of compsuite.toolkits but the package's public face.

Every ``import`` and ``from ... import`` statement is read with :mod:`ast`.  A module
that imports ``a.b.c`` (or a name from it) depends on ``a.b.c`` and on the packages
above it (Python runs their ``__init__.py`` first), but not on its own packages.  What
no statement names counts too: the registry imports every study's module with
:mod:`importlib`, by the name it builds from the study's file (``module:``, by default
``compsuite.studies.<study>``), so it depends on each module the registry gives.
"""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the checkout's package folders and the names they are imported under (setup.py)
HOMES = {"compsuite": "compsuite", "data_prep": "compsuite.data_prep",
         "eval": "compsuite.eval", "fairseq_plugins": "fairseq_plugins"}
FOUNDATION = "compsuite.foundation"
DATA_PREP = "compsuite.data_prep"
EVAL = "compsuite.eval"
TOOLKITS = "compsuite.toolkits"


@lru_cache(maxsize=None)
def modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the suite: its dotted name -> (file, is a package)."""
    out = {}
    for folder, prefix in HOMES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            package = parts[-1] == "__init__"
            if package:
                parts.pop()
            out[".".join([prefix, *parts])] = (path, package)
    return out


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def suite_module(name: str) -> str | None:
    """The suite's module that ``import name`` runs last (``name`` itself, or the
    package that holds the attribute ``name``); None outside the suite."""
    mods = modules()
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def targets(node: ast.Import | ast.ImportFrom, importer: str, package: bool) -> list[str]:
    """What one statement imports, as dotted names (relative imports resolved)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = importer.split(".") if package else importer.split(".")[:-1]
        base = base[:len(base) - node.level + 1]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    mods = modules()
    return [f"{module}.{a.name}" if f"{module}.{a.name}" in mods else module
            for a in node.names]


@lru_cache(maxsize=None)
def loaded() -> dict[str, dict[str, int]]:
    """What modules import with :mod:`importlib`, by names built at run time: importer
    -> {dotted name: the line of the call}.  The registry imports every study's module
    (``registry.study_module``) at its ``importlib.import_module``."""
    from compsuite import registry

    importer = "compsuite.registry"
    tree = ast.parse(modules()[importer][0].read_text(encoding="utf-8"))
    lines = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)
             and ast.unparse(n.func) == "importlib.import_module"]
    assert lines, "compsuite/registry.py no longer calls importlib.import_module"
    return {importer: {registry.study_module(name): min(lines)
                       for name in registry.studies()}}


@lru_cache(maxsize=None)
def imports(importer: str) -> dict[str, int]:
    """The suite's modules ``importer`` depends on -> the line of the first import."""
    path, package = modules()[importer]
    named = [(name, node.lineno)
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, (ast.Import, ast.ImportFrom))
             for name in targets(node, importer, package)]
    out: dict[str, int] = {}
    for name, line in named + sorted(loaded().get(importer, {}).items()):
        module = suite_module(name)
        while module:
            if not within(importer, module):     # its own packages do not count
                out.setdefault(module, line)
            parent = module.rpartition(".")[0]
            module = parent if parent in modules() else ""
    return out


def where(module: str, line: int | None = None) -> str:
    path = modules()[module][0].relative_to(ROOT)
    return f"{path}:{line}" if line else str(path)


def cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    without recursion)."""
    graph = {m: sorted(imports(m)) for m in modules()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        component.append(m)
                        if m == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def describe(component: list[str]) -> str:
    """The files of one cycle and the imports that tie them."""
    ties = [f"    {where(a, line)} imports {b}" for a in component
            for b, line in sorted(imports(a).items()) if b in component]
    return (f"{len(component)} files import each other: "
            f"{', '.join(where(m) for m in component)}\n" + "\n".join(ties))


def chain(start: str, bad) -> list[str] | None:
    """The shortest import chain from ``start`` to a module for which ``bad`` holds."""
    seen = {start: [start]}
    todo = [start]
    while todo:
        module = todo.pop(0)
        for nxt in sorted(imports(module)):
            if nxt in seen:
                continue
            seen[nxt] = seen[module] + [nxt]
            if bad(nxt):
                return seen[nxt]
            todo.append(nxt)
    return None


def test_the_graph_is_read():
    mods = modules()
    assert {"compsuite.cli", "compsuite.data_prep.common.paths",
            "compsuite.models.protocol", "fairseq_plugins.models.ctlpp",
            "compsuite.foundation.errors"} <= set(mods)
    assert "compsuite.foundation.errors" in imports("compsuite.schema")
    assert "compsuite.foundation" in imports("compsuite.schema")   # the package above


def test_the_registry_s_loading_of_study_modules_is_read():
    studies = {f"compsuite.studies.{s}" for s in ("pcfgset", "ctlpp", "sget", "paradox", "nli")}
    assert studies <= set(loaded()["compsuite.registry"])
    assert studies <= set(imports("compsuite.registry"))


def test_no_import_cycle():
    found = cycles()
    assert not found, "import cycles:\n" + "\n".join(describe(c) for c in found)


def test_the_foundation_imports_nothing_of_the_suite():
    foundation = [m for m in modules() if within(m, FOUNDATION)]
    assert foundation
    bad = [f"{where(m, line)} imports {t}" for m in foundation
           for t, line in sorted(imports(m).items()) if not within(t, FOUNDATION)]
    assert not bad, bad


def test_data_prep_imports_neither_toolkits_nor_eval():
    """Not directly, and not through any module it imports."""
    forbidden = lambda m: within(m, TOOLKITS) or within(m, EVAL)  # noqa: E731
    bad = [" -> ".join(c) for m in modules() if within(m, DATA_PREP)
           if (c := chain(m, forbidden))]
    assert not bad, bad


def test_eval_imports_no_toolkit_internals():
    """eval may use the toolkits' public face (``compsuite.toolkits``), no module in it."""
    bad = [f"{where(m, line)} imports {t}" for m in modules() if within(m, EVAL)
           for t, line in sorted(imports(m).items()) if within(t, TOOLKITS) and t != TOOLKITS]
    assert not bad, bad
