"""Startup hook installed as a ``.pth`` line by scripts/setup_env.sh.

It acts only in processes that import fairseq or OpenNMT-py, and does two things there.

Checkpoints.  torch >= 2.6 loads checkpoints with ``weights_only=True``.  fairseq's and
OpenNMT-py's checkpoints hold their options as an ``argparse.Namespace`` besides the
tensors, so ``fairseq-generate``, ``onmt_translate`` and resumed training fail to load
them.  Rather than turning ``weights_only`` off (which would allow arbitrary code in a
pickle), :mod:`compsuite.torch_compat` adds exactly that type to torch's allow-list once
either toolkit is imported.  ``COMPSUITE_NO_TORCH_COMPAT=1`` turns this off (the tests do,
to show the failure).

Start-up time.  Both toolkits import every task, criterion and transform module they
ship when they start, and three of those import a large library at their top only to
call a function of it later: scikit-learn and SciPy (fairseq's audio classification task
and sentence-prediction criterion, about 2.5 s of each fairseq command's 6 s start) and
spaCy (OpenNMT-py's terminology transform, about 1 s).  While one of those three modules
runs, the hook gives its imports of these libraries a stand-in; the library is imported
for real the first time the module uses it (a call such as ``f1_score(...)`` or an
attribute such as ``spacy.load``), so what the module does is unchanged.  Any other
import of the library, before or after, is the real one.  ``COMPSUITE_NO_DEFERRED_IMPORTS=1``
turns this off.

Nothing here imports torch or the toolkits: the hook costs nothing in other processes.
"""
import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import types

_TOOLKITS = ("fairseq", "onmt")

#: toolkit module -> the libraries it imports at its top only to call later
_DEFERRED = {
    "fairseq.tasks.audio_classification": ("sklearn", "sklearn.metrics"),
    "fairseq.criterions.sentence_prediction": ("sklearn", "sklearn.metrics", "scipy",
                                               "scipy.stats"),
    "onmt.transforms.terminology": ("spacy",),
}


class _DeferredName:
    """``from library import name`` while deferred: the name, looked up on first use."""

    def __init__(self, module: str, name: str):
        self._where = (module, name)

    def _real(self):
        module, name = self._where
        return getattr(importlib.import_module(module), name)

    def __call__(self, *args, **kwargs):
        return self._real()(*args, **kwargs)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(self._real(), attr)

    def __repr__(self):
        return "<deferred {}.{}>".format(*self._where)


class _DeferredModule(types.ModuleType):
    """A library while deferred.  During the importing module's run, names taken from it
    are :class:`_DeferredName`; afterwards any attribute is the real library's."""

    def __init__(self, name: str, running: list):
        super().__init__(name)
        self.__dict__["_running"] = running

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if self._running[0]:
            sub = sys.modules.get(f"{self.__name__}.{attr}")
            return sub if isinstance(sub, _DeferredModule) else _DeferredName(self.__name__,
                                                                             attr)
        return getattr(importlib.import_module(self.__name__), attr)


def _with_deferred(run, libraries):
    def exec_module(module):
        missing = [name for name in libraries if name not in sys.modules]
        running = [True]
        for name in missing:
            sys.modules[name] = _DeferredModule(name, running)
        try:
            run(module)
        finally:
            running[0] = False
            for name in missing:
                if isinstance(sys.modules.get(name), _DeferredModule):
                    del sys.modules[name]
    return exec_module


def _with_checkpoints(run):
    def exec_module(module):
        run(module)
        from compsuite.torch_compat import allow_toolkit_checkpoints

        allow_toolkit_checkpoints()
    return exec_module


class _ToolkitImportWatcher(importlib.abc.MetaPathFinder):
    def __init__(self, checkpoints: bool, deferred: bool):
        self.checkpoints, self.deferred = checkpoints, deferred

    def find_spec(self, name, path, target=None):
        wrap = None
        if self.checkpoints and name in _TOOLKITS:
            wrap = _with_checkpoints
        elif self.deferred and name in _DEFERRED:
            def wrap(run):
                return _with_deferred(run, _DEFERRED[name])
        if wrap is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader.exec_module = wrap(spec.loader.exec_module)
        return spec


def _install() -> None:
    checkpoints = os.environ.get("COMPSUITE_NO_TORCH_COMPAT") != "1"
    deferred = os.environ.get("COMPSUITE_NO_DEFERRED_IMPORTS") != "1"
    if (checkpoints or deferred) and not any(
            isinstance(f, _ToolkitImportWatcher) for f in sys.meta_path):
        sys.meta_path.insert(0, _ToolkitImportWatcher(checkpoints, deferred))


_install()
