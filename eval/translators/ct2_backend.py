"""CTranslate2 backend: a Transformer checkpoint of fairseq or OpenNMT-py, converted
once by CTranslate2's own converters and decoded by its C++ engine, with the decoding
settings of the toolkit (beam, length cap, batch size) mapped so that float32 gives the
toolkit's own outputs line for line.

Chosen by the decoding settings (a study's or profile's ``generation``, or an eval
command's ``--engine``)::

    generation: {engine: ctranslate2}                      # float32 on the CPU
    generation: {engine: ctranslate2, compute_type: int8}  # asked for: in the signature
    generation: {engine: ctranslate2, device: cuda, compute_type: float16}   # a GPU

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
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from compsuite.foundation.errors import ConfigError, UserError

ENGINES = ("toolkit", "ctranslate2")
DEVICES = ("cpu", "cuda")
#: compute types by device (CTranslate2's names); float32 is the default everywhere
COMPUTE_TYPES = {"cpu": ("float32", "int8", "int8_float32"),
                 "cuda": ("float32", "float16", "bfloat16", "int8", "int8_float16",
                          "int8_bfloat16", "int8_float32")}
KEYS = ("engine", "compute_type", "device")
CACHE_SUFFIX = ".ct2"
META = "compsuite.json"


@dataclass(frozen=True)
class Engine:
    """Which engine decodes, on which device, with which weights' precision."""
    name: str = "toolkit"
    compute_type: str = "float32"
    device: str = "cpu"

    @property
    def fast(self) -> bool:
        return self.name == "ctranslate2"


def engine_of(generation: dict | None, where: str = "generation") -> Engine:
    """The :class:`Engine` the decoding settings ask for (``engine``, ``compute_type``,
    ``device``); a wrong value is a :class:`ConfigError` naming the key."""
    generation = generation or {}
    name = generation.get("engine") or "toolkit"
    if name not in ENGINES:
        raise ConfigError(f"{where}.engine: {name!r} is not an engine; choose one of "
                          f"{', '.join(ENGINES)}")
    device = generation.get("device") or "cpu"
    if device not in DEVICES:
        raise ConfigError(f"{where}.device: {device!r}; choose one of {', '.join(DEVICES)}")
    compute = generation.get("compute_type") or "float32"
    if name != "ctranslate2" and (generation.get("compute_type") or generation.get("device")):
        raise ConfigError(f"{where}: compute_type and device are CTranslate2's settings; "
                          "add engine: ctranslate2 (the toolkits decode in float32 on the "
                          "device they find)")
    if compute not in COMPUTE_TYPES[device]:
        raise ConfigError(f"{where}.compute_type: {compute!r} is not available on {device}; "
                          f"choose one of {', '.join(COMPUTE_TYPES[device])}")
    return Engine(name, compute, device)


# --------------------------------------------------------------------------- conversion
def why_not(toolkit: str, state: dict) -> str | None:
    """Why CTranslate2 cannot convert this checkpoint (its architecture), or None."""
    if toolkit == "onmt":
        opt = state["opt"]
        kinds = (getattr(opt, "encoder_type", None), getattr(opt, "decoder_type", None))
        if kinds != ("transformer", "transformer"):
            return f"an OpenNMT-py {kinds[0]}/{kinds[1]} model (it converts Transformers only)"
        return None
    if toolkit == "fairseq":
        from fairseq.models import ARCH_MODEL_NAME_REGISTRY

        cfg = state["cfg"]["model"]
        arch = getattr(cfg, "arch", None) or getattr(cfg, "_name", None)
        model = ARCH_MODEL_NAME_REGISTRY.get(arch, arch)
        if model != "transformer":
            return f"a fairseq {arch} model (it converts Transformers only)"
        coding = [k for k in ("tokenizer", "bpe") if (state["cfg"].get(k) or {}).get("_name")]
        if coding:
            return (f"a fairseq model with its own {' and '.join(coding)} (the suite "
                    "decodes models that read their text as it is)")
        return None
    return f"a {toolkit} model"


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


def converter(toolkit: str, checkpoint: Path, data: Path | None, work: Path):
    """CTranslate2's converter of ``checkpoint``; ``work``: a folder for a copy it needs.

    OpenNMT-py 3.5 names its default self-attention ``scaled-dot-flash`` (the same
    attention, computed by torch's fused kernel where it can), a name CTranslate2's
    converter does not know: such a checkpoint is converted from a copy in ``work``
    whose options say ``scaled-dot``."""
    import ctranslate2

    if toolkit == "fairseq":
        from compsuite.foundation.checkout import ROOT

        return ctranslate2.converters.FairseqConverter(
            str(checkpoint), str(data), user_dir=str(ROOT / "fairseq_plugins"))
    import torch

    state = torch.load(checkpoint, map_location="cpu")
    if getattr(state["opt"], "self_attn_type", None) == "scaled-dot-flash":
        state["opt"].self_attn_type = "scaled-dot"
        checkpoint = work / "checkpoint.pt"
        torch.save(state, checkpoint)
    return ctranslate2.converters.OpenNMTPyConverter(str(checkpoint))


def convert(toolkit: str, checkpoint: Path, data: Path | None, digest: str) -> Path:
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
            converter(toolkit, checkpoint, data, work).convert(str(tmp), force=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        (tmp / META).write_text(json.dumps(
            {"checkpoint": checkpoint.name, "checkpoint_sha256": digest, "toolkit": toolkit,
             "ctranslate2": ctranslate2.__version__}, indent=1) + "\n")
        old = folder.with_name(f"{folder.name}.old-{os.getpid()}")
        if folder.exists():
            folder.rename(old)
        tmp.rename(folder)
        shutil.rmtree(old, ignore_errors=True)
    return folder


# ----------------------------------------------------------------------------- decoding
def decoding_options(toolkit: str, beam: int, max_length: int) -> dict:
    """CTranslate2's ``translate_batch`` options that decode as the toolkit does with
    ``beam`` and ``max_length`` (fairseq: ``--max-len-a 0 --max-len-b max_length``;
    OpenNMT-py: ``-max_length``, greedy).

    fairseq never ends an output before its first token (``min_len`` 1), and ranks
    finished beams by their score over their length with the end token (CTranslate2's
    ``length_penalty`` 1); the n-best list (``num_hypotheses``) shows whether a search
    reached the length cap (:meth:`CT2Translator.translate`)."""
    options = {"beam_size": beam, "num_hypotheses": beam, "max_input_length": 0,
               "max_decoding_length": max_length, "length_penalty": 1.0}
    if toolkit == "fairseq":
        options.update(min_decoding_length=1)
    else:
        options.update(min_decoding_length=0)
    return options


def why_not_decoding(toolkit: str, beam: int) -> str | None:
    """Why CTranslate2 cannot decode as the toolkit does with these settings, or None."""
    if toolkit == "onmt" and beam > 1:
        return ("OpenNMT-py's beam search as it does (OpenNMT-py divides a beam's score by "
                "its length counting the start token, CTranslate2 without it)")
    return None


class CT2Translator:
    """The translator protocol over a converted model.  ``toolkit_loader``: the
    toolkit's own translator of the same checkpoint, loaded only when needed: for the
    input embeddings (PCFG SET's Table 5), and for the sentences whose beam search
    reached the length cap, which the two engines end differently (fairseq ends every
    beam there with the end token and ranks them with its score; CTranslate2 stops
    without it).  Those few sentences are decoded by the toolkit, so that the outputs
    are the toolkit's, line for line; ``toolkit_sentences`` counts them.  Greedy
    decoding stops at the cap alike in both engines (the same tokens)."""

    def __init__(self, folder: Path, toolkit: str, engine: Engine, *, name: str,
                 batch_size: int = 256, max_length: int = 512, beam: int = 1,
                 threads: int | None = None,
                 toolkit_loader: Callable[[], object] | None = None):
        import ctranslate2
        import torch

        self.translator = ctranslate2.Translator(
            str(folder), device=engine.device, compute_type=engine.compute_type,
            intra_threads=threads or torch.get_num_threads(), inter_threads=1)
        self.toolkit, self.engine = toolkit, engine
        self.batch_size, self.max_length, self.beam = batch_size, max_length, beam
        self.options = decoding_options(toolkit, beam, max_length)
        self.name = f"ctranslate2-{engine.compute_type}:{name}"
        self.signature = (f"engine:ctranslate2-{ctranslate2.__version__}|"
                          f"compute:{engine.compute_type}|device:{engine.device}|"
                          f"beam:{beam}|max_len:{max_length}")
        self.calls = self.batches = self.toolkit_sentences = 0
        self.progress = None
        self._toolkit_loader, self._toolkit_model = toolkit_loader, None

    def toolkit_model(self):
        if self._toolkit_loader is None:
            from .base import Unavailable

            raise Unavailable("the CTranslate2 model was loaded without its toolkit's")
        if self._toolkit_model is None:
            self._toolkit_model = self._toolkit_loader()
        return self._toolkit_model

    def translate(self, sources: list[str]) -> list[str]:
        from compsuite.processes import check_stop

        self.calls += 1
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
            self.batches += math.ceil(len(ids) / self.batch_size)
            if self.progress is not None:
                self.progress(len(ids))
        if capped and self.beam > 1 and self.engine.compute_type == "float32":
            capped.sort()
            for i, h in zip(capped, self.toolkit_model().translate([sources[i] for i in capped])):
                hyps[i] = h
            self.toolkit_sentences += len(capped)
        return hyps

    def embeddings(self, tokens: list[str]) -> dict[str, list[float]]:
        return self.toolkit_model().embeddings(tokens)


# ------------------------------------------------------------------------------- loading
_NOTICES: set[str] = set()


def notice(text: str) -> None:
    """One line on stderr, once per process for each text."""
    if text not in _NOTICES:
        _NOTICES.add(text)
        print(f"compsuite: {text}", file=sys.stderr, flush=True)


def check_device(engine: Engine) -> None:
    import ctranslate2

    if engine.device == "cuda" and ctranslate2.get_cuda_device_count() == 0:
        raise UserError("generation.device: cuda, but CTranslate2 finds no CUDA device on "
                        "this machine; use device: cpu (with compute_type float32 or int8)")


def load(toolkit: str, checkpoint: Path, data: Path | None, generation: dict,
         toolkit_loader: Callable[[], object], fall_back: bool = True):
    """A translator of ``checkpoint`` by the engine ``generation`` asks for: CTranslate2
    (converted once, cached beside it) where it can convert the model and decode as
    the toolkit does, else the toolkit's own (``toolkit_loader()``), with a one-line
    notice saying why (``fall_back`` False: None instead, for a caller that decodes
    with the toolkit's own command)."""
    engine = engine_of(generation)
    if not engine.fast:
        return toolkit_loader()

    def toolkit_instead(reason: str):
        notice(f"CTranslate2 cannot decode {reason}: decoding with {toolkit} instead")
        return toolkit_loader() if fall_back else None

    import torch

    from compsuite.eval.checkpoints import existing, unreadable
    from compsuite.foundation.io import sha256_file
    from compsuite.torch_compat import allow_toolkit_checkpoints

    check_device(engine)
    beam = generation.get("beam", 1)
    reason = why_not_decoding(toolkit, beam)
    if reason is not None:
        return toolkit_instead(reason)
    checkpoint = existing(checkpoint)
    digest = sha256_file(checkpoint)
    if not cached(cache_folder(checkpoint), digest):
        if toolkit == "fairseq":
            from compsuite.toolkit_noise import import_toolkit

            import_toolkit("fairseq")
        allow_toolkit_checkpoints()
        try:
            state = torch.load(checkpoint, map_location="cpu")
        except Exception as e:
            raise unreadable(checkpoint, e) from None
        reason = why_not(toolkit, state)
        del state
        if reason is not None:
            return toolkit_instead(reason)
    folder = convert(toolkit, checkpoint, data, digest)
    return CT2Translator(folder, toolkit, engine, name=f"{toolkit}:{checkpoint}",
                         batch_size=generation.get("batch_size", 256),
                         max_length=generation.get("max_length", 512),
                         beam=beam, toolkit_loader=toolkit_loader)


def fast(model) -> bool:
    """Whether ``model`` is decoded by CTranslate2 (not a toolkit it fell back to)."""
    return isinstance(model, CT2Translator)


def prediction_tag(generation: dict) -> str:
    """What a prediction file decoded by CTranslate2 is named with (``ct2``, or
    ``ct2-int8`` ...): files of another engine or precision are never reused."""
    engine = engine_of(generation)
    return "ct2" if engine.compute_type == "float32" else f"ct2-{engine.compute_type}"


def toolkit_decoding(generation: dict) -> dict:
    """``generation`` with the toolkit as the engine (its CTranslate2 settings left out)."""
    return {k: v for k, v in generation.items() if k not in KEYS}
