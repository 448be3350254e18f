"""Toolkit backends, registered by name.

Each module of this package other than ``base`` is a backend named like the module
(``fairseq``, ``onmt``) and exports ``BACKEND``, an instance of
:class:`~compsuite.toolkits.base.Backend`.  Adding a toolkit is adding a module here;
a backend defined elsewhere (an in-process one in a study or a test, say) joins with
:func:`register_backend`.  A study's YAML names a run's toolkit; nothing here names a
study.
"""
from __future__ import annotations

import importlib
import pkgutil

from .base import Backend

_EXTRA: dict[str, Backend] = {}


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(__path__)
                  if m.name != "base" and not m.name.startswith("_"))


def backend_names() -> list[str]:
    return sorted(set(_modules()) | set(_EXTRA))


def data_backend_names() -> list[str]:
    """The backends that write a data format of their own (``--toolkits`` of the data
    commands): not those of models that read text as it is (a program, answer files)."""
    from .base import TextModelBackend

    return [n for n in backend_names() if not isinstance(get_backend(n), TextModelBackend)]


def register_backend(backend: Backend) -> Backend:
    """Add a backend defined outside this package (its ``name`` must be new)."""
    from compsuite.registry import RegistryError

    if backend.name in backend_names():
        raise RegistryError(f"toolkit backend '{backend.name}' is already registered")
    _EXTRA[backend.name] = backend
    return backend


def get_backend(name: str) -> Backend:
    if name in _EXTRA:
        return _EXTRA[name]
    if name not in _modules():
        from compsuite.registry import RegistryError, near

        raise RegistryError(f"unknown toolkit backend '{name}' (known: "
                            f"{', '.join(backend_names())}){near(name, backend_names())}")
    backend = importlib.import_module(f"{__name__}.{name}").BACKEND
    assert backend.name == name, f"{__name__}.{name} exports a backend named {backend.name!r}"
    return backend
