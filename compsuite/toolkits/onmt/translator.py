"""The OpenNMT-py translator: OpenNMT-py's own inference engine (``InferenceEnginePY``,
what ``onmt_translate`` runs) on a list of sources; greedy decoding unless ``beam`` > 1."""
from __future__ import annotations

import os
from pathlib import Path

from compsuite.models.decoding import Decoding
from compsuite.models.protocol import ModelBase

#: OpenNMT-py 3.5 also caps an output at 1.25 x its batch's longest source + 5 tokens
#: (``-max_length_ratio``, default 1.25), which cuts correct outputs longer than that
#: (PCFG SET's ``repeat``) and makes a sentence's output depend on its batch; the suite
#: caps at ``max_length`` alone, as fairseq (``--max-len-a 0``) and the OpenNMT-py of
#: the papers did.
NO_LENGTH_RATIO = ("-max_length_ratio", "0")
#: the beam's length penalty (a profile's ``generation: {length_penalty: ...}``):
#: OpenNMT-py 3.5's default is ``avg``; the OpenNMT-py of 2018 had none
LENGTH_PENALTIES = ("none", "wu", "avg")


def length_penalty_args(value: str | None) -> list[str]:
    """``-length_penalty VALUE`` for onmt_translate, nothing for None (its default)."""
    if value is None:
        return []
    if value not in LENGTH_PENALTIES:
        from compsuite.foundation.errors import ConfigError

        raise ConfigError(f"generation.length_penalty must be one of "
                          f"{', '.join(LENGTH_PENALTIES)}, not {value!r}")
    return ["-length_penalty", value]


class OnmtTranslator(ModelBase):
    capabilities = frozenset({"translate", "embed"})

    #: sentences per batch where the decoding settings give none
    BATCH_SIZE = 256

    def __init__(self, checkpoint: Path, batch_size: int = BATCH_SIZE,
                 max_length: int = Decoding.max_length, beam: int = Decoding.beam,
                 length_penalty: str | None = Decoding.length_penalty):
        from compsuite.toolkit_noise import import_toolkit

        import_toolkit("onmt")    # first: OpenNMT-py's import-time warnings kept off the terminal
        from onmt.bin.translate import _get_parser
        from onmt.inference_engine import InferenceEnginePY
        from onmt.utils.parse import ArgumentParser

        from compsuite.models.protocol import count_batches
        from compsuite.torch_compat import allow_toolkit_checkpoints

        allow_toolkit_checkpoints()
        opt = _get_parser().parse_args([
            # -output defaults to pred.txt in the working directory; results come back in memory
            "-model", str(checkpoint), "-src", "<in-memory>", "-output", os.devnull,
            "-beam_size", str(beam),
            "-batch_size", str(batch_size), "-max_length", str(max_length),
            *NO_LENGTH_RATIO, *length_penalty_args(length_penalty)])
        ArgumentParser.validate_translate_opts(opt)
        ArgumentParser._get_all_transform_translate(opt)
        ArgumentParser._validate_transforms_opts(opt)
        ArgumentParser.validate_translate_opts_dynamic(opt)
        self.engine = InferenceEnginePY(opt)
        self.name = f"onmt:{checkpoint}"
        self.engine.translator.report_score = False  # no "PRED SCORE" log line per call
        # translate_batch(batch, attn_debug): the batch's sources, [sentences, length, 1]
        count_batches(self.engine.translator, "translate_batch",
                      size=lambda batch, *a, **k: int(batch["src"].size(0)))

    def translate(self, sources: list[str]) -> list[str]:
        if not sources:
            return []
        _, preds = self.engine.infer_list(sources)
        return [p[0] for p in preds]

    def embed(self, tokens: list[str]) -> dict[str, list[float]]:
        model = self.engine.translator.model
        weight = model.encoder.embeddings.make_embedding.emb_luts[0].weight.detach()
        vocab = self.engine.translator.vocabs["src"]
        unk = vocab.lookup_token("<unk>")
        return {t: weight[vocab.lookup_token(t)].tolist() for t in tokens
                if vocab.lookup_token(t) != unk}


class OnmtConversion:
    """CTranslate2's view of an OpenNMT-py checkpoint (:class:`compsuite.models.
    ctranslate2.Conversion`): Transformers convert, greedy decoding is OpenNMT-py's.

    OpenNMT-py 3.5 names its default self-attention ``scaled-dot-flash`` (the same
    attention, computed by torch's fused kernel where it can), a name CTranslate2's
    converter does not know: such a checkpoint is converted from a copy in ``work``
    whose options say ``scaled-dot``."""

    toolkit = "onmt"
    min_decoding_length = 0

    def why_not(self, checkpoint: Path) -> str | None:
        import torch

        from compsuite.toolkits.checkpoints import unreadable
        from compsuite.torch_compat import allow_toolkit_checkpoints

        allow_toolkit_checkpoints()
        try:
            opt = torch.load(checkpoint, map_location="cpu")["opt"]
        except Exception as e:
            raise unreadable(checkpoint, e) from None
        kinds = (getattr(opt, "encoder_type", None), getattr(opt, "decoder_type", None))
        if kinds != ("transformer", "transformer"):
            return f"an OpenNMT-py {kinds[0]}/{kinds[1]} model (it converts Transformers only)"
        return None

    def why_not_decoding(self, beam: int) -> str | None:
        if beam > 1:
            return ("OpenNMT-py's beam search as it does (OpenNMT-py divides a beam's score "
                    "by its length counting the start token, CTranslate2 without it)")
        return None

    def converter(self, checkpoint: Path, work: Path):
        import ctranslate2
        import torch

        state = torch.load(checkpoint, map_location="cpu")
        if getattr(state["opt"], "self_attn_type", None) == "scaled-dot-flash":
            state["opt"].self_attn_type = "scaled-dot"
            checkpoint = work / "checkpoint.pt"
            torch.save(state, checkpoint)
        return ctranslate2.converters.OpenNMTPyConverter(str(checkpoint))
