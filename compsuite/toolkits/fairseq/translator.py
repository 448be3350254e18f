"""The fairseq translator (the model protocol's translate and embed): fairseq's own hub
interface (``GeneratorHubInterface``) over a checkpoint trained with ``--user-dir
fairseq_plugins``; greedy decoding unless ``beam`` > 1.  And CTranslate2's view of
fairseq checkpoints (:class:`FairseqConversion`)."""
from __future__ import annotations

from pathlib import Path

from compsuite.models.decoding import Decoding
from compsuite.models.protocol import ModelBase


class FairseqTranslator(ModelBase):
    capabilities = frozenset({"translate", "embed"})
    #: sentences per batch where the decoding settings give none
    BATCH_SIZE = 256

    def __init__(self, checkpoint: Path, data: Path, batch_size: int = BATCH_SIZE,
                 max_length: int = Decoding.max_length, beam: int = Decoding.beam):
        from compsuite.toolkit_noise import import_toolkit

        import_toolkit("fairseq")    # first: fairseq's import-time noise kept off the terminal
        from fairseq import hub_utils

        from compsuite.models.protocol import count_batches
        from compsuite.toolkits.fairseq.checkpoints import load_fairseq

        models, cfg, task = load_fairseq(checkpoint, data)
        # The beam (1: greedy), said before the hub prepares the models: ConvS2S sizes its
        # BeamableMM by cfg.generation.beam (5 by default) in prepare_for_inference_, and
        # then fails on batches of another beam ("shape '[256, 1, -1]' is invalid").
        from omegaconf import open_dict

        with open_dict(cfg):
            cfg.generation.beam = beam
        self.hub = hub_utils.GeneratorHubInterface(cfg, task, models)
        self.hub.eval()
        cfg = self.hub.cfg.dataset
        cfg.batch_size, cfg.max_tokens = batch_size, None
        self.max_length, self.beam = max_length, beam
        self.name = f"fairseq:{checkpoint}"
        # inference_step(generator, models, sample, ...): the sample's sentences
        count_batches(self.hub.task, "inference_step",
                      size=lambda generator, models, sample, *a, **k: len(sample["id"]))

    def translate(self, sources: list[str]) -> list[str]:
        if not sources:
            return []
        tokens = [self.hub.encode(s) for s in sources]
        hypos = self.hub.generate(tokens, beam=self.beam, max_len_a=0, max_len_b=self.max_length)
        return [self.hub.decode(h[0]["tokens"]) for h in hypos]

    def embed(self, tokens: list[str]) -> dict[str, list[float]]:
        weight = self.hub.models[0].encoder.embed_tokens.weight.detach()
        vocab = self.hub.src_dict
        return {t: weight[vocab.index(t)].tolist() for t in tokens if vocab.index(t) != vocab.unk()}


class FairseqConversion:
    """CTranslate2's view of a fairseq checkpoint (:class:`compsuite.models.ctranslate2.
    Conversion`): a Transformer that reads its text as it is converts with the
    dictionaries of ``data`` (the fairseq-bin folder); fairseq never ends an output
    before its first token."""

    toolkit = "fairseq"
    min_decoding_length = 1

    def __init__(self, data: Path):
        self.data = Path(data)

    def why_not(self, checkpoint: Path) -> str | None:
        import torch

        from compsuite.toolkit_noise import import_toolkit
        from compsuite.toolkits.checkpoints import unreadable
        from compsuite.torch_compat import allow_toolkit_checkpoints

        import_toolkit("fairseq")
        from fairseq.models import ARCH_MODEL_NAME_REGISTRY

        allow_toolkit_checkpoints()
        try:
            state = torch.load(checkpoint, map_location="cpu")
        except Exception as e:
            raise unreadable(checkpoint, e) from None
        cfg = state["cfg"]["model"]
        arch = getattr(cfg, "arch", None) or getattr(cfg, "_name", None)
        if ARCH_MODEL_NAME_REGISTRY.get(arch, arch) != "transformer":
            return f"a fairseq {arch} model (it converts Transformers only)"
        coding = [k for k in ("tokenizer", "bpe") if (state["cfg"].get(k) or {}).get("_name")]
        if coding:
            return (f"a fairseq model with its own {' and '.join(coding)} (the suite "
                    "decodes models that read their text as it is)")
        return None

    def why_not_decoding(self, beam: int) -> str | None:
        return None

    def converter(self, checkpoint: Path, work: Path):
        import ctranslate2

        from compsuite.foundation.checkout import ROOT

        return ctranslate2.converters.FairseqConverter(
            str(checkpoint), str(self.data), user_dir=str(ROOT / "fairseq_plugins"))
