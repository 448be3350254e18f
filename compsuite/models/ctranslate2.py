"""CTranslate2, a decoding engine: a toolkit's Transformer checkpoint converted once
by CTranslate2's own converter and decoded by its C++ engine, with the toolkit's
decoding settings (beam, length cap, batch size) mapped so that float32 gives the
toolkit's own outputs line for line.  The toolkits whose translators use it (fairseq's,
OpenNMT-py's) describe their checkpoints to it with a :class:`Conversion`
(``compsuite/toolkits/<toolkit>/translator.py``); nothing here names a toolkit.

Chosen by the decoding settings (:class:`compsuite.models.decoding.Decoding`: a study's
or profile's ``generation``, or an eval command's ``--engine``)::

    generation: {engine: ctranslate2}                      # float32 on the CPU
    generation: {engine: ctranslate2, compute_type: int8}  # asked for: in the signature
    generation: {engine: ctranslate2, device: cuda, compute_type: float16}   # a GPU
    generation: {engine: ctranslate2, device: auto}  # a GPU where there is one, float32

The converted model is kept beside the checkpoint (``<checkpoint>.ct2/``) with the
checkpoint's sha256; a changed checkpoint is converted again.  CTranslate2 converts
Transformers only: an LSTM or ConvS2S checkpoint is decoded by its toolkit, with a
one-line notice (:func:`load`).
"""
from __future__ import annotations

import json
import math
import os
import shutil
import sys
from pathlib import Path
from typing import Callable, Protocol

from compsuite.foundation.errors import UserError
from compsuite.models.decoding import Decoding
from compsuite.models.protocol import ModelBase, batch_done, unmetered

CACHE_SUFFIX = ".ct2"
META = "compsuite.json"


def compute_type(settings: Decoding) -> str:
    return settings.compute_type or "float32"


def device(settings: Decoding) -> str:
    """The device CTranslate2 decodes on: the one asked for (default cpu); ``auto``:
    ``cuda`` where CTranslate2 finds a CUDA device, else ``cpu``."""
    asked = settings.device or "cpu"
    if asked != "auto":
        return asked
    import ctranslate2

    return "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"


# --------------------------------------------------------------------------- conversion
class Conversion(Protocol):
    """What CTranslate2 needs of a toolkit to decode its checkpoints as it does."""

    #: the toolkit's name (in notices and in the converted model's record)
    toolkit: str
    #: the shortest output the toolkit decodes (fairseq never ends before one token)
    min_decoding_length: int

    def why_not(self, checkpoint: Path) -> str | None:
        """Why CTranslate2 cannot convert this checkpoint (its architecture), or None."""

    def why_not_decoding(self, beam: int) -> str | None:
        """Why CTranslate2 cannot decode as the toolkit does with ``beam``, or None."""

    def converter(self, checkpoint: Path, work: Path):
        """CTranslate2's converter of ``checkpoint`` (``work``: a folder for a copy)."""


def cache_folder(checkpoint: Path) -> Path:
    return checkpoint.with_name(checkpoint.name + CACHE_SUFFIX)


def cached(folder: Path, digest: str) -> bool:
    """Whether ``folder`` holds a conversion of the checkpoint with sha256 ``digest`` by
    this CTranslate2."""
    import ctranslate2

    try:
        meta = json.loads((folder / META).read_text())
    except (OSError, ValueError):
        return False
    return (meta.get("checkpoint_sha256") == digest
            and meta.get("ctranslate2") == ctranslate2.__version__
            and (folder / "model.bin").is_file())


def convert(conversion: Conversion, checkpoint: Path, digest: str) -> Path:
    """The CTranslate2 model of ``checkpoint`` (float32 weights; a compute type is
    chosen when it is loaded): its cache beside the checkpoint when that holds this
    checkpoint's conversion, else converted into it (written beside, then moved in)."""
    import ctranslate2

    from compsuite.locks import folder_lock

    folder = cache_folder(checkpoint)
    if cached(folder, digest):
        return folder
    with folder_lock(folder, "CTranslate2 conversion"):
        if cached(folder, digest):   # another process converted it meanwhile
            return folder
        tmp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
        work = folder.with_name(f"{folder.name}.work-{os.getpid()}")
        for old in (tmp, work):
            shutil.rmtree(old, ignore_errors=True)
        work.mkdir()
        try:
            conversion.converter(checkpoint, work).convert(str(tmp), force=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        (tmp / META).write_text(json.dumps(
            {"checkpoint": checkpoint.name, "checkpoint_sha256": digest,
             "toolkit": conversion.toolkit,
             "ctranslate2": ctranslate2.__version__}, indent=1) + "\n")
        old = folder.with_name(f"{folder.name}.old-{os.getpid()}")
        if folder.exists():
            folder.rename(old)
        tmp.rename(folder)
        shutil.rmtree(old, ignore_errors=True)
    return folder


# ----------------------------------------------------------------------------- decoding
def decoding_options(beam: int, max_length: int, min_length: int) -> dict:
    """CTranslate2's ``translate_batch`` options that decode as the toolkit does with
    ``beam`` and ``max_length`` (fairseq: ``--max-len-a 0 --max-len-b max_length``;
    OpenNMT-py: ``-max_length``) and the toolkit's shortest output ``min_length``.

    Both toolkits rank finished beams by their score over their length with the end
    token (CTranslate2's ``length_penalty`` 1); the n-best list (``num_hypotheses``)
    shows whether a search reached the length cap (:meth:`CT2Translator.translate`)."""
    return {"beam_size": beam, "num_hypotheses": beam, "max_input_length": 0,
            "max_decoding_length": max_length, "length_penalty": 1.0,
            "min_decoding_length": min_length}


class CT2Translator(ModelBase):
    """The translator protocol over a converted model.  ``toolkit_loader``: the
    toolkit's own translator of the same checkpoint, loaded only when needed: for the
    input embeddings (PCFG SET's Table 5), and for the sentences whose beam search
    reached the length cap, which the two engines end differently (fairseq ends every
    beam there with the end token and ranks them with its score; CTranslate2 stops
    without it).  Those few sentences are decoded by the toolkit, so that the outputs
    are the toolkit's, line for line; ``toolkit_sentences`` counts them.  Greedy
    decoding stops at the cap alike in both engines (the same tokens)."""

    capabilities = frozenset({"translate", "embed"})
    #: sentences per batch where the decoding settings give none
    BATCH_SIZE = 256

    def __init__(self, folder: Path, conversion: Conversion, settings: Decoding, *, name: str,
                 threads: int | None = None,
                 toolkit_loader: Callable[[], object] | None = None):
        import ctranslate2
        import torch

        compute = compute_type(settings)
        self.translator = ctranslate2.Translator(
            str(folder), device=device(settings), compute_type=compute,
            intra_threads=threads or torch.get_num_threads(), inter_threads=1)
        self.toolkit, self.settings = conversion.toolkit, settings
        self.batch_size, self.max_length = settings.batch(self.BATCH_SIZE), settings.max_length
        self.beam = settings.beam
        self.options = decoding_options(self.beam, self.max_length,
                                        conversion.min_decoding_length)
        self.name = f"ctranslate2-{compute}:{name}"
        self.signature = (f"engine:ctranslate2-{ctranslate2.__version__}|"
                          f"compute:{compute}|device:{device(settings)}|"
                          f"beam:{self.beam}|max_len:{self.max_length}")
        self.toolkit_sentences = 0
        self._toolkit_loader, self._toolkit_model = toolkit_loader, None

    def toolkit_model(self):
        if self._toolkit_loader is None:
            from .protocol import Unavailable

            raise Unavailable("the CTranslate2 model was loaded without its toolkit's")
        if self._toolkit_model is None:
            self._toolkit_model = self._toolkit_loader()
        return self._toolkit_model

    def translate(self, sources: list[str]) -> list[str]:
        from compsuite.processes import check_stop

        hyps: list[str] = [""] * len(sources)
        capped: list[int] = []
        # longest first, in batches of batch_size (as CTranslate2 would cut them), a
        # few batches per call so that the bar moves and a stop is seen
        tokens = [s.split() for s in sources]
        order = sorted(range(len(sources)), key=lambda i: -len(tokens[i]))
        group = self.batch_size * 4
        for start in range(0, len(order), group):
            check_stop()
            ids = order[start:start + group]
            results = self.translator.translate_batch(
                [tokens[i] for i in ids], max_batch_size=self.batch_size, **self.options)
            for i, r in zip(ids, results):
                hyps[i] = " ".join(r.hypotheses[0])
                if any(len(h) >= self.max_length for h in r.hypotheses):
                    capped.append(i)
            batch_done(len(ids), batches=math.ceil(len(ids) / self.batch_size))
        if capped and self.beam > 1 and compute_type(self.settings) == "float32":
            capped.sort()
            with unmetered():   # its batches are not this model's
                again = self.toolkit_model().translate([sources[i] for i in capped])
            for i, h in zip(capped, again):
                hyps[i] = h
            self.toolkit_sentences += len(capped)
        return hyps

    def embed(self, tokens: list[str]) -> dict[str, list[float]]:
        return self.toolkit_model().embed(tokens)


# ------------------------------------------------------------------------------- loading
_NOTICES: set[str] = set()


def notice(text: str) -> None:
    """One line on stderr, once per process for each text."""
    if text not in _NOTICES:
        _NOTICES.add(text)
        print(f"compsuite: {text}", file=sys.stderr, flush=True)


def check_device(settings: Decoding, option: bool = False) -> None:
    """A device CTranslate2 finds, and a compute type it has (``device: auto``: on the
    device found); ``option``: the device was given as ``--device``, which the message
    names."""
    import ctranslate2

    from compsuite.models.decoding import COMPUTE_TYPES

    if settings.device == "cuda" and ctranslate2.get_cuda_device_count() == 0:
        use = ("--device cpu (with --compute-type float32 or int8) or --device auto" if option
               else "device: cpu (with compute_type float32 or int8) or auto")
        raise UserError(f"{'--device cuda' if option else 'generation.device: cuda'}, but "
                        f"CTranslate2 finds no CUDA device on this machine; use {use}")
    found = device(settings)
    if settings.compute_type is not None and settings.compute_type not in COMPUTE_TYPES[found]:
        raise UserError(f"{'--compute-type' if option else 'generation.compute_type:'} "
                        f"{settings.compute_type} is not available "
                        f"on {found} (device: {settings.device}"
                        f"{', no CUDA device found' if found == 'cpu' else ''}); choose one "
                        f"of {', '.join(COMPUTE_TYPES[found])}")


def load(conversion: Conversion | None, checkpoint: Path, settings: Decoding,
         toolkit_loader: Callable[[], object]):
    """A translator of ``checkpoint`` (a file that exists) by the engine the decoding
    settings ask for: CTranslate2's (:func:`translator`) where it can decode the model
    as its toolkit does, else the toolkit's own (``toolkit_loader()``)."""
    if not settings.fast:
        return toolkit_loader()
    fast_model = translator(conversion, checkpoint, settings, toolkit_loader)
    return fast_model if fast_model is not None else toolkit_loader()


def translator(conversion: Conversion | None, checkpoint: Path, settings: Decoding,
               toolkit_loader: Callable[[], object] | None = None) -> CT2Translator | None:
    """CTranslate2's translator of ``checkpoint`` (converted once, cached beside it), or
    None where ``conversion`` says CTranslate2 cannot convert the model or decode it as
    its toolkit does with these settings (a one-line notice says why; the caller
    decodes with the toolkit).  ``toolkit_loader``: the toolkit's own translator of the
    same checkpoint, for what only the toolkit gives (:class:`CT2Translator`)."""
    def toolkit_instead(reason: str) -> None:
        notice(f"CTranslate2 cannot decode {reason}: decoding with "
               f"{conversion.toolkit if conversion else 'its toolkit'} instead")

    from compsuite.foundation.io import sha256_file

    check_device(settings)
    if conversion is None:
        return toolkit_instead("this model")
    reason = conversion.why_not_decoding(settings.beam)
    if reason is not None:
        return toolkit_instead(reason)
    digest = sha256_file(checkpoint)
    if not cached(cache_folder(checkpoint), digest):
        reason = conversion.why_not(checkpoint)
        if reason is not None:
            return toolkit_instead(reason)
    folder = convert(conversion, checkpoint, digest)
    return CT2Translator(folder, conversion, settings,
                         name=f"{conversion.toolkit}:{checkpoint}",
                         toolkit_loader=toolkit_loader)


def fast(model) -> bool:
    """Whether ``model`` (or the model its counting wrapper holds) is decoded by
    CTranslate2 (not a toolkit it fell back to)."""
    return isinstance(getattr(model, "wrapped", model), CT2Translator)


def prediction_tag(settings: Decoding) -> str:
    """What a prediction file decoded by CTranslate2 is named with (``ct2``, or
    ``ct2-int8`` ...): files of another engine or precision are never reused."""
    compute = compute_type(settings)
    return "ct2" if compute == "float32" else f"ct2-{compute}"
