"""A backend is a package and a registration (docs/adding_a_toolkit.md): no module
outside ``compsuite/toolkits/<toolkit>/`` names a toolkit, so a new backend changes no
module outside its package.

The modules checked are the suite's Python code: ``compsuite/``, ``eval/`` and
``data_prep/``.  Out of scope: the toolkit packages themselves, YAML files and
``onmt_configs/`` (data), ``fairseq_plugins/`` (fairseq's own plugin folder), and the
modules of :data:`LIBRARY_LEVEL` (below).  A module names a toolkit when, outside its
docstrings and comments (which may say which toolkits a sentence is about), it

* imports a toolkit package (``compsuite.toolkits.<toolkit>``) or a toolkit's own
  library (``fairseq``, ``onmt``, ``transformers``);
* holds a string equal to the name of a backend of a toolkit (``fairseq``, ``onmt``,
  ``hf``: every package of ``compsuite/toolkits/`` but the two below); or equal to the
  name of one of the suite's own backends (``command``, ``files``, words the suite also
  uses as keys and options) where it picks a backend: as a positional argument of a
  call, as a ``toolkit=`` argument, or compared with or given to a name ``toolkit``;
* holds a string with a toolkit's file name in it (``checkpoint_best``,
  ``checkpoint_last``, ``train.log``, ``generate-``, ``_step_``).

A message or an option that mentions a toolkit in its text (``--hf-model``, "a fairseq
or OpenNMT-py checkpoint") is not a name the code acts on, and is not counted.
CTranslate2 is a decoding engine the toolkits describe their checkpoints to, not a
backend (``compsuite/models/ctranslate2.py``).
"""
from __future__ import annotations

import ast
import re

from compsuite.foundation.checkout import ROOT

#: the toolkit packages, each a registered backend of that name
PACKAGES = tuple(sorted(p.parent.name
                       for p in (ROOT / "compsuite" / "toolkits").glob("*/__init__.py")))
#: the suite's own backends, whose names are also ordinary words
OWN = ("command", "files")
#: the backends of a toolkit (every other package), named wherever a string equals
#: their name
TOOLKITS = tuple(n for n in PACKAGES if n not in OWN)
#: the toolkits' Python libraries (what ``import`` names)
LIBRARIES = ("fairseq", "onmt", "transformers")
FILE_NAMES = re.compile(r"checkpoint_best|checkpoint_last|train\.log|generate-|_step_")
#: modules that act on the toolkits' Python libraries as the interpreter imports them,
#: before any backend can be asked (module -> why)
LIBRARY_LEVEL = {
    "compsuite/_startup_hook.py": "runs at every interpreter start, before compsuite is "
                                  "imported: it watches the imports of fairseq and onmt",
    "compsuite/toolkit_noise.py": "keeps the toolkit libraries' loggers and warnings quiet "
                                  "by their module names, as they are imported",
}


def modules():
    seen = set()
    for folder in ("compsuite", "eval", "data_prep"):
        for p in sorted((ROOT / folder).rglob("*.py")):
            rel = p.relative_to(ROOT).as_posix()
            if "__pycache__" in p.parts or p.resolve() in seen:
                continue
            seen.add(p.resolve())
            parts = p.relative_to(ROOT).parts
            if parts[:2] == ("compsuite", "toolkits") and parts[2] in PACKAGES:
                continue        # a toolkit's own package
            if parts[:2] in (("compsuite", "eval"), ("compsuite", "data_prep")):
                continue        # eval/ and data_prep/ under compsuite's namespace
            if rel not in LIBRARY_LEVEL:
                yield rel, p


def docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def toolkit_expr(node: ast.AST) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name == "toolkit"


def picks_backend(tree: ast.AST) -> set[int]:
    """The string constants in a place where they pick a backend (module docstring)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            out |= {id(a) for a in node.args}
            out |= {id(k.value) for k in node.keywords if k.arg == "toolkit"}
        elif isinstance(node, ast.Compare) and any(map(toolkit_expr, [node.left, *node.comparators])):
            out |= {id(n) for n in [node.left, *node.comparators]}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(map(toolkit_expr, targets)):
                out.add(id(node.value))
    return out


def names(tree: ast.AST) -> list[str]:
    """What of ``tree`` names a toolkit (module docstring), one entry per place."""
    docs, picks, found = docstrings(tree), picks_backend(tree), []
    library = re.compile(rf"({'|'.join(LIBRARIES)})(\.|$)|compsuite\.toolkits\."
                         rf"({'|'.join(TOOLKITS + OWN)})(\.|$)")
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                    else [node.module or ""] if node.level == 0 else [])
            found += [f"line {node.lineno}: imports {m}" for m in mods if library.match(m)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if id(node) in docs:
                continue
            if text in TOOLKITS or (text in OWN and id(node) in picks):
                found.append(f"line {node.lineno}: the string {text!r}")
            elif FILE_NAMES.search(text):
                found.append(f"line {node.lineno}: a toolkit's file name in {text[:60]!r}")
    return sorted(found, key=lambda h: int(h.split(":")[0].split()[1]))


def test_no_module_outside_the_toolkit_packages_names_a_toolkit():
    found = {rel: hits for rel, p in modules()
             if (hits := names(ast.parse(p.read_text(encoding="utf-8"))))}
    assert not found, "\n".join(f"{rel}: {'; '.join(h)}" for rel, h in found.items())


def test_the_check_sees_each_way_of_naming_a_toolkit():
    code = '''
"""A docstring may say fairseq, onmt, hf, train.log."""
from compsuite.toolkits.fairseq.predictions import read_fairseq_generate
import transformers
def f(run, a):
    """hf"""
    x = {"command": a.cmd, "files": 1}          # keys: not a backend picked
    if run.toolkit != "onmt":
        return system_run(run, "x", "files", {})
    return get_backend(toolkit="command"), "checkpoint_best.pt", a.add(dest="command")
'''
    hits = names(ast.parse(code))
    assert [h.split(": ", 1)[1] for h in hits] == [
        "imports compsuite.toolkits.fairseq.predictions", "imports transformers",
        "the string 'onmt'", "the string 'files'",
        "a toolkit's file name in 'checkpoint_best.pt'", "the string 'command'"], hits


def test_the_toolkit_packages_are_the_registered_backends():
    from compsuite.toolkits import backend_names

    assert set(PACKAGES) <= set(backend_names())
    assert set(OWN) <= set(PACKAGES) and {"fairseq", "onmt", "hf"} <= set(TOOLKITS)
