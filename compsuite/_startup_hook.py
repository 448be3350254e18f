"""Startup hook installed as a ``.pth`` line by scripts/setup_env.sh.

torch >= 2.6 loads checkpoints with ``weights_only=True``.  fairseq's and
OpenNMT-py's checkpoints hold their options as an ``argparse.Namespace`` besides
the tensors, so ``fairseq-generate``, ``onmt_translate`` and resumed training
fail to load them.  Rather than turning ``weights_only`` off (which would allow
arbitrary code in a pickle), :mod:`compsuite.torch_compat` adds exactly that
type to torch's allow-list, and only in processes that import ``fairseq`` or
``onmt``: this hook waits for either import and then registers it.  It costs
nothing in any other process (it imports neither torch nor the toolkits).

Set ``COMPSUITE_NO_TORCH_COMPAT=1`` to disable it (the tests do, to show the failure).
"""
import importlib.abc
import importlib.machinery
import os
import sys

_TOOLKITS = ("fairseq", "onmt")


class _ToolkitImportWatcher(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in _TOOLKITS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            from compsuite.torch_compat import allow_toolkit_checkpoints

            allow_toolkit_checkpoints()

        spec.loader.exec_module = exec_module
        return spec


if os.environ.get("COMPSUITE_NO_TORCH_COMPAT") != "1" and not any(
    isinstance(f, _ToolkitImportWatcher) for f in sys.meta_path
):
    sys.meta_path.insert(0, _ToolkitImportWatcher())
