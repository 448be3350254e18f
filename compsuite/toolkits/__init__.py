"""Toolkit backends, registered by name, and what the rest of the suite asks of them.

Each package of this package is a toolkit named like the package (``fairseq``,
``onmt``, ``hf``, ``command``, ``files``), everything of that toolkit in one place (its
backend, data writer, translator, classifier, checkpoint listing, predictions), and
exports ``BACKEND``, an instance of :class:`~compsuite.toolkits.base.Backend`.  Adding a
toolkit is adding a package here (docs/adding_a_toolkit.md); a backend defined
elsewhere (an in-process one in a study or a test, say) joins with
:func:`register_backend`.  The modules beside the packages are what toolkits share:
``base`` (the interface), ``checkpoints`` (loading a checkpoint file, and its errors),
``writing`` (what the data writers share).  A study's YAML names a run's toolkit; nothing here names a
study.

This package's face is the toolkits' public entry point: the backends by name
(:func:`get_backend`, :func:`backend_names`, :func:`backends`), a checkpoint of any
toolkit in the loop (:func:`load_checkpoint`, :func:`load_translator`, :func:`load_classifier`), the
checkpoints a training saved on its way in a folder the user names
(:func:`saved_checkpoints`; a run's: :meth:`Backend.checkpoints`) and a generated corpus
in the toolkits' formats (:func:`write_with_toolkits`).  Only the backends know their
toolkits' file names.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import DataError, RegistryError
from compsuite.foundation.names import near
from compsuite.models.decoding import Decoding, decoding
from compsuite.models.protocol import Model, counted
from compsuite.toolkits.checkpoints import existing, load_state, not_owned

from .base import CHECKPOINT_KINDS, Backend, Checkpoint, UserSystem

_EXTRA: dict[str, Backend] = {}


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(__path__)
                  if m.ispkg and not m.name.startswith("_"))


def backend_names() -> list[str]:
    return sorted(set(_modules()) | set(_EXTRA))


def backends() -> list[Backend]:
    """Every registered backend, in name order (what asks each in turn: which owns a
    checkpoint, which brings the user's system, which reads an output file)."""
    return [get_backend(n) for n in backend_names()]


def data_backend_names() -> list[str]:
    """The backends that write a data format of their own (``--toolkits`` of the data
    commands): not those of models that read text as it is (a program, answer files)."""
    from .base import TextModelBackend

    return [b.name for b in backends() if not isinstance(b, TextModelBackend)]


def register_backend(backend: Backend) -> Backend:
    """Add a backend defined outside this package (its ``name`` must be new)."""
    if backend.name in backend_names():
        raise RegistryError(f"toolkit backend '{backend.name}' is already registered")
    _EXTRA[backend.name] = backend
    return backend


def get_backend(name: str) -> Backend:
    if name in _EXTRA:
        return _EXTRA[name]
    if name not in _modules():
        raise RegistryError(f"unknown toolkit backend '{name}' (known: "
                            f"{', '.join(backend_names())}){near(name, backend_names())}")
    backend = importlib.import_module(f"{__name__}.{name}").BACKEND
    assert backend.name == name, f"{__name__}.{name} exports a backend named {backend.name!r}"
    return backend


def title(name: str) -> str:
    """A toolkit's name in reports: its backend's :attr:`~Backend.title` (else its
    name); a name no registered backend has, as it is."""
    if name not in backend_names():
        return name
    backend = get_backend(name)
    return backend.title or backend.name


def user_system(options) -> tuple[str, UserSystem] | None:
    """The backend and the evaluate-only run of the system the options of ``compsuite
    run`` or a model-in-the-loop command bring instead of a checkpoint
    (:meth:`Backend.user_system`: the first backend, in name order, whose options they
    are); None where they bring none."""
    for backend in backends():
        system = backend.user_system(options)
        if system is not None:
            return backend.name, system
    return None


def answers_backend() -> str:
    """The name of the backend of answer files (:attr:`Backend.answers_files`), through
    which ``compsuite export`` records and ``compsuite score`` replays."""
    for backend in backends():
        if backend.answers_files:
            return backend.name
    raise RegistryError("no toolkit backend records and replays answer files")


# ----------------------------------------------------------------------------- models in the loop
def checkpoint_toolkit(checkpoint: str | Path) -> str:
    """The backend that owns ``checkpoint`` (a file or a folder), asked in name order
    (:meth:`Backend.owns_checkpoint`; a file is loaded once for all of them); a file
    none owns is a DataError naming it."""
    checkpoint = Path(checkpoint)
    if not checkpoint.is_dir():
        checkpoint = existing(checkpoint)
    loaded: list = []

    def state():
        if not loaded:
            loaded.append(load_state(checkpoint))
        return loaded[0]

    for backend in backends():
        if backend.owns_checkpoint(checkpoint, state):
            return backend.name
    raise not_owned(checkpoint)


def load_checkpoint(checkpoint: str | Path, data: str | Path | None = None,
                    kind: str = "translator", toolkit: str | None = None,
                    generation: Decoding = Decoding()):
    """A checkpoint of any toolkit as a translator or a classifier, by the backend of
    the toolkit that wrote it (``toolkit`` to say which), counting what it is asked
    (:class:`~compsuite.models.protocol.Counting`).  ``data``: the folder in that
    toolkit's format the model was trained on (fairseq: its dictionaries);
    ``generation``: the decoding settings (each left out: the model's own)."""
    if not Path(checkpoint).is_dir():
        checkpoint = existing(checkpoint)
    toolkit = toolkit or checkpoint_toolkit(checkpoint)
    dataset = None if data is None else Dataset(Path(data).parent,
                                                formats={toolkit: Path(data)})
    return counted(get_backend(toolkit).load(checkpoint, dataset, kind, generation))


def load_translator(checkpoint: str | Path, data: str | Path | None = None,
                    batch_size: int | None = None, max_length: int | None = None,
                    toolkit: str | None = None, beam: int | None = None,
                    **engine) -> Model:
    """Load a checkpoint with the right backend.  ``data``: the fairseq-binarised
    folder (its dictionaries) for fairseq checkpoints; unused for OpenNMT-py, whose
    checkpoints carry their vocabularies.  The decoding settings (:class:`Decoding`;
    each left out or None: its default, the batch size the model's own):
    ``batch_size``, ``max_length``, ``beam`` (1, greedy, by default) and the decoding
    engine's (``engine``, ``compute_type``, ``device``: see
    :mod:`compsuite.models.ctranslate2`)."""
    given = {"batch_size": batch_size, "max_length": max_length, "beam": beam, **engine}
    return load_checkpoint(checkpoint, data, "translator", toolkit, decoding(
        {k: v for k, v in given.items() if v is not None}, "options"))


def load_classifier(checkpoint: str | Path, data: str | Path | None = None,
                    batch_size: int | None = None, toolkit: str | None = None) -> Model:
    """Load a checkpoint with the right backend.  ``data``: the fairseq-binarised
    folder (its dictionaries) for fairseq checkpoints; ``batch_size``: by default the
    model's own."""
    given = {} if batch_size is None else {"batch_size": batch_size}
    return load_checkpoint(checkpoint, data, "classifier", toolkit,
                           decoding(given, "options"))


# ----------------------------------------------------------------------------- checkpoints
def saved_checkpoints(folder: str | Path, backend: Backend | None = None) -> list[Checkpoint]:
    """The checkpoints a training saved on its way in ``folder`` (a toolkit's save
    folder, a run's :attr:`~Backend.checkpoint_folder` or one the user names), as
    ``backend`` reads it, or every backend that saves checkpoints: those of one kind,
    the finest found (:data:`~compsuite.toolkits.base.CHECKPOINT_KINDS`: steps, else
    updates, else epochs), in training order.  None found is an error."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"{folder}: no such checkpoint folder")
    readers = [backend] if backend is not None else [
        b for b in backends() if b.checkpoint_kinds]
    found = [c for b in readers for c in b.saved_checkpoints(folder)]
    for kind in CHECKPOINT_KINDS:
        of_kind = [c for c in found if c.kind == kind]
        if of_kind:
            return sorted(of_kind, key=lambda c: (c.at, str(c.path)))
    advice = "; ".join(f"{title(b.name)}: {b.checkpoint_advice}"
                       for b in backends() if b.checkpoint_advice)
    raise DataError(f"{folder}: no per-epoch or per-step checkpoints ({advice})")


# ----------------------------------------------------------------------------- data
@dataclass
class Written:
    """What :func:`write_with_toolkits` wrote: the raw folder, its manifest and the
    toolkit folders (toolkit -> folder)."""
    raw: Path
    manifest: dict
    formats: dict[str, Path] = field(default_factory=dict)


def write_with_toolkits(out: str | Path, write_raw: Callable[[Path], dict],
                        toolkits: Sequence[str] = (),
                        splits: Sequence[str] | None = None) -> Written:
    """A ``compsuite data <study> generate`` corpus: ``write_raw(folder)`` writes the
    text and returns its manifest, into ``out`` itself, or with ``toolkits`` into
    ``out/raw`` with each toolkit's format written beside it by its backend."""
    out = Path(out)
    raw = out / "raw" if toolkits else out
    written = Written(raw, write_raw(raw))
    for tk in toolkits:
        data = Dataset(out, tuple(splits)) if splits else Dataset(out)
        written.formats[tk] = get_backend(tk).write_data(data)
    return written
