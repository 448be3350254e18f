"""Helpers for the subcommands that studies add to the command line (``compsuite data
<study> ...``, ``compsuite eval <study> ...``): the options every model-in-the-loop
command takes, and writing a result as JSON or a table."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from compsuite.foundation.arguments import positive_int
from compsuite.foundation.errors import ConfigError

#: the most inputs a program (``--model-cmd``) gets in one request, and its batch size
#: unless ``--batch-size``
PROGRAM_BATCH = 256


def model_arguments(p: argparse.ArgumentParser, folder: bool = False, engine: bool = True,
                    *, sources=None, checkpoint: str | None = None, reads: str | None = None,
                    dictionaries: tuple[str, str] | None = (
                        "--data", "fairseq: the fairseq-bin folder (dictionaries)"),
                    batch_size: int | None = None) -> None:
    """The options of every model-in-the-loop command (translator/classifier protocols):
    the model is a checkpoint (fairseq, OpenNMT-py, a Hugging Face model folder) or a
    program behind the command protocol (``--model-cmd``); ``folder``: the command
    reads every checkpoint a training saved, so it takes a checkpoint folder;
    ``engine``: the model translates, and may be decoded by CTranslate2.

    What differs between commands is given as parameters; the options are declared here
    only.  ``sources``: the command's mutually exclusive group of what it scores, where
    it has added its own (answer files) before the model's; ``checkpoint`` and
    ``reads``: the help of ``--checkpoint`` and what a program reads; ``dictionaries``:
    the option naming a fairseq checkpoint's fairseq-bin folder and its help, read as
    ``a.data`` (None: the command has none); ``batch_size``: the default of
    ``--batch-size``."""
    which = p.add_mutually_exclusive_group(required=True) if sources is None else sources
    if folder:
        which.add_argument("--checkpoints", help="the run's checkpoint folder")
    else:
        which.add_argument("--checkpoint", help=checkpoint or "a fairseq or OpenNMT-py "
                                                "checkpoint, or a local Hugging Face model "
                                                "folder")
    program_arguments(which, p, reads or ("its one model stands for the checkpoints" if
                                          folder else "e.g. \"python my_model.py\""))
    if dictionaries:
        option, help_ = dictionaries
        p.add_argument(option, dest="data", metavar=option.lstrip("-").upper(), help=help_)
    p.add_argument("--batch-size", type=positive_int, default=batch_size,
                   help="inputs per batch (default: " + (
                       "the model's own)" if batch_size is None else f"{batch_size})"))
    if engine:
        engine_arguments(p)


def engine_arguments(p: argparse.ArgumentParser) -> None:
    """The decoding engine of a checkpoint's translator: the toolkit's own, or
    CTranslate2 (a Transformer, converted once; the same outputs in float32)."""
    from compsuite.models.decoding import COMPUTE_TYPES, DEVICES, ENGINES

    p.add_argument("--engine", choices=ENGINES, default=None,
                   help="decode a Transformer checkpoint with CTranslate2 (converted once, "
                        "beside the checkpoint; the toolkit's outputs in float32), or with "
                        "its toolkit; default: a profile's generation.engine (compsuite "
                        "run), the toolkit (an eval command)")
    p.add_argument("--compute-type", default=None,
                   choices=sorted({t for ts in COMPUTE_TYPES.values() for t in ts}),
                   help="with CTranslate2: the weights' precision (default float32; "
                        "int8 is faster and not identical)")
    p.add_argument("--device", choices=DEVICES, default=None,
                   help="with CTranslate2: cpu (default), cuda, or auto (a GPU where "
                        "there is one)")


def engine_settings(a: argparse.Namespace, alone: bool = True) -> dict:
    """The decoding engine options a command was given, checked ``alone`` (a wrong
    combination is a ConfigError naming the option); ``compsuite run`` checks them over
    each run's generation instead (``--compute-type int8`` with a profile's ``engine:
    ctranslate2``: :class:`~compsuite.runner.Runner`)."""
    from compsuite.models.decoding import ENGINE_KEYS, OPTIONS, decoding

    settings = {k: v for k in ENGINE_KEYS if (v := getattr(a, k, None)) is not None}
    if alone:
        decoding(settings, where=OPTIONS)
    return settings


def program_arguments(sources, p: argparse.ArgumentParser, reads: str = "") -> None:
    """The options of the systems a user brings instead of a checkpoint, as each backend
    declares them (:meth:`~compsuite.toolkits.base.Backend.add_model_arguments`: a
    program's ``--model-cmd`` in ``sources``, the group of a command's model sources,
    and ``--model-timeout`` in ``p``); ``reads``: what such a system reads."""
    from compsuite.toolkits import backends

    for backend in backends():
        backend.add_model_arguments(sources, p, reads)


def load_model_from_options(a: argparse.Namespace, kind: str = "translator",
                            raw: str | Path | None = None):
    """The model a command's :func:`model_arguments` name, as a ``translator`` or a
    ``classifier``, counting what it is asked; ``raw``: the dataset folder a program is
    told of (``COMPSUITE_DATA``), where the command reads one."""
    from compsuite.models.protocol import counted

    engine = engine_settings(a) if kind == "translator" else {}
    brought = user_system_given(a)
    if brought is not None:   # a system of the user's (--model-cmd, ...), not a checkpoint
        from compsuite.toolkits import get_backend

        toolkit, system = brought
        unused_engine(engine, system.what, system.instead)
        env = {"COMPSUITE_DATA": str(Path(raw).resolve())} if raw is not None else None
        return counted(get_backend(toolkit).user_model(
            system, min(a.batch_size or PROGRAM_BATCH, PROGRAM_BATCH), env))
    if getattr(a, "model_timeout", None) is not None:
        raise ConfigError("--model-timeout is the time a program may take: give it with "
                          "--model-cmd, or leave it out")
    from compsuite.models.decoding import decoding
    from compsuite.toolkits import checkpoint_toolkit, get_backend, load_checkpoint

    # which backend owns the checkpoint, asked once (load_checkpoint is told it)
    toolkit = checkpoint_toolkit(a.checkpoint) if engine else None
    unfit = toolkit and get_backend(toolkit).engine_unfit(a.checkpoint)
    if unfit:   # a checkpoint CTranslate2 never decodes: the notice, the engine left out
        unused_engine(engine, *unfit)
        engine = {}
    given = {} if a.batch_size is None else {"batch_size": a.batch_size}
    return load_checkpoint(a.checkpoint, a.data, kind, toolkit,
                           generation=decoding({**given, **engine}, "options"))


def user_system_given(a: argparse.Namespace):
    """(backend name, :class:`~compsuite.toolkits.base.UserSystem`) of the system of
    the user's that a command's options bring instead of a checkpoint, each backend
    asked in turn (:meth:`~compsuite.toolkits.base.Backend.user_system`: a program's
    ``--model-cmd``, ...); None: they bring none."""
    from compsuite.toolkits import user_system

    return user_system(a)


def output_arguments(group, suffix: str = "", what: str = "outputs",
                     inputs: str = "the inputs") -> None:
    """``--<toolkit><suffix> FILE`` in ``group`` for each backend that reads an output
    file of its toolkit's own (its ``what``: ``outputs``, read by ``read_outputs``, or
    ``hypotheses``, by ``read_hypotheses``), its help that attribute (``inputs``: what
    the outputs are of)."""
    from compsuite.toolkits import backends

    for backend in backends():
        said = getattr(backend, what)
        if said:
            group.add_argument(f"--{backend.name}{suffix}", help=said.format(inputs=inputs))


def outputs_given(a: argparse.Namespace, suffix: str = "", what: str = "outputs"):
    """(backend, file) of the :func:`output_arguments` option given, or None."""
    from compsuite.toolkits import backends

    for backend in backends():
        given = getattr(a, f"{backend.name}{suffix}".replace("-", "_"), None)
        if given and getattr(backend, what):
            return backend, given
    return None


def output_options(what: str = "outputs", suffix: str = "") -> list[str]:
    """The :func:`output_arguments` options, for a message."""
    from compsuite.toolkits import backends

    return [f"--{b.name}{suffix}" for b in backends() if getattr(b, what)]


def unused_engine(settings: dict, model: str, instead: str) -> None:
    """The notice (stderr, one line) that ``--engine ctranslate2`` does not decode
    ``model``: CTranslate2 converts fairseq and OpenNMT-py Transformer checkpoints
    only (docs/fast_decoding.md)."""
    if settings.get("engine") == "ctranslate2":
        print(f"compsuite: CTranslate2 cannot decode {model}: {instead} "
              "(--engine ctranslate2 decodes fairseq and OpenNMT-py Transformer "
              "checkpoints)", file=sys.stderr, flush=True)


@contextmanager
def model_in_the_loop(a: argparse.Namespace, kind: str = "translator",
                      raw: str | Path | None = None) -> Iterator:
    """:func:`load_model_from_options` for the block; a program is stopped when it ends."""
    from compsuite.models.protocol import closing

    with closing(load_model_from_options(a, kind, raw)) as model:
        yield model


def model_source(a: argparse.Namespace) -> dict:
    """What a result records of the model: its checkpoint, its command, or the
    settings of another system of the user's (its backend's arguments)."""
    if getattr(a, "model_cmd", None):
        return {"command": a.model_cmd}
    brought = user_system_given(a)
    if brought is not None:
        return {"system": {"toolkit": brought[0], **brought[1].args}}
    return {"checkpoint": a.checkpoint}


def write_json(path: str | Path, obj: Any) -> None:
    from compsuite.foundation.io import atomic_open

    with atomic_open(path) as fh:
        json.dump(obj, fh, indent=2)


def show(result: dict, as_json: bool, header: Sequence[str], rows: Sequence[Sequence[Any]],
         footer: str = "") -> None:
    """Print ``result`` as one JSON object, or ``rows`` as a Markdown table."""
    if as_json:
        print(json.dumps(result))
        return
    from compsuite.eval.reports.tables import markdown_table

    print(markdown_table(header, rows) + (footer if footer else ""), end="")
