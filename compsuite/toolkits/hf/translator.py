"""The Hugging Face translator: a checkpoint folder of the suite's hf backend (a full model, or
a LoRA adapter over its base model), an evaluate-only run's folder (``compsuite_hf.json``
naming the user's model folder), or any local Hugging Face model folder, as a translator.

Generation is ``transformers``' own: greedy (or beam search, ``beam``), batched,
left-padded for a causal model (so every prompt ends where generation starts;
positions follow the attention mask), stopping at the end-of-sentence token or
``max_new_tokens``, held to the model's positions (:func:`position_limit`): a prompt
that leaves no room to generate is an error naming the input, before any batch is
decoded, and a batch whose prompts leave fewer than ``max_new_tokens`` is decoded one
prompt at a time, each generating what its own length leaves (noted once).  The answer
is what follows the prompt, cut at the first ``stop`` string (``compsuite_hf.json`` of
the checkpoint: the prompt template, the model kind, the stops), with its outer spaces
stripped.  A plain model folder (no
``compsuite_hf.json``) is read with defaults (:func:`read_meta`): its kind from its
``config.json``, the prompt ``{input}``, no stop string.  Everything is loaded with
``local_files_only``: nothing is downloaded.

At scale (checkpoint selection decodes a development set with every saved adapter): a
LoRA checkpoint's base is loaded once per process and each adapter loaded onto it
(:class:`SharedBase`), then merged into a copy of the base's weights for decoding
(``generation.merge``, on by default); inputs go in batches sorted by length, sized to
the device with ``batch_size: auto`` (:mod:`compsuite.toolkits.hf.batching`); greedy
generation stops a prompt once its answer holds a stop string (:class:`StopAtAnswerEnd`);
a run that sets no ``max_new_tokens`` gets the development set's
longest target plus a margin (:func:`answer_room`).  None of these changes an answer in
float32 (tests/test_hf_backend.py); ``benchmarks/bench_hf_decode.py`` measures them.
"""
from __future__ import annotations

import hashlib
import json
import sys
import threading
from contextlib import contextmanager, nullcontext
from copy import deepcopy
from pathlib import Path

from compsuite.foundation.errors import DataError
from compsuite.models.protocol import ModelBase

#: what each checkpoint folder holds besides the model: how to prompt it
META = "compsuite_hf.json"


def model_class(kind: str):
    """``transformers``' auto class for a model ``kind`` (``causal`` or ``seq2seq``)."""
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM

    return AutoModelForSeq2SeqLM if kind == "seq2seq" else AutoModelForCausalLM


def ensure_padding(tokenizer) -> None:
    """A tokenizer without a padding token pads with its unknown token (as Alpaca-LoRA
    pads Llama), else with its end-of-sentence token."""
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token_id = tokenizer.unk_token_id if tokenizer.unk_token_id is not None \
            else tokenizer.eos_token_id


def prompt_ids(tokenizer, text: str, causal: bool) -> list[int]:
    """A prompt's token ids as the model reads them, in training and in generation alike:
    causal, ``<s>`` then the text's own tokens (no other special token); seq2seq, the
    tokenizer's own special tokens around the text."""
    if not causal:
        return tokenizer(text)["input_ids"]
    bos = [tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []
    return bos + tokenizer(text, add_special_tokens=False)["input_ids"]


#: what a plain model folder is read with (no ``compsuite_hf.json``): the input as it is
PLAIN_DEFAULTS = {"prompt": "{input}", "stop": [], "max_new_tokens": None}


def folder_kind(folder: Path) -> str:
    """A Hugging Face model folder's kind, from its ``config.json``: ``classifier`` (an
    architecture ``...ForSequenceClassification``), ``seq2seq`` (an encoder-decoder)
    or ``causal``.  A config that names neither a ``model_type`` nor ``architectures``
    is no model's (a DataError naming the file)."""
    config = Path(folder) / "config.json"
    try:
        cfg = json.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{folder}: not a model folder (no config.json)") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise DataError(f"{config}: not a model's config (unreadable JSON: {e})") from None
    if not isinstance(cfg, dict):
        raise DataError(f"{config}: not a model's config (expected a JSON object)")
    if not isinstance(cfg.get("model_type"), str) and not cfg.get("architectures"):
        raise DataError(f"{config}: not a model's config (it names no model_type and no "
                        "architectures; a model saved with save_pretrained writes both)")
    if any(str(a).endswith("ForSequenceClassification") for a in cfg.get("architectures") or []):
        return "classifier"
    return "seq2seq" if cfg.get("is_encoder_decoder") else "causal"


def read_meta(checkpoint: Path) -> dict:
    """How to load and prompt a model folder: its ``compsuite_hf.json`` (a checkpoint of
    the hf backend, or an evaluate-only run's folder whose ``model`` names the user's
    model folder), else, for a plain Hugging Face model folder, :data:`PLAIN_DEFAULTS`
    with the kind its config says (:func:`folder_kind`)."""
    checkpoint = Path(checkpoint)
    meta = checkpoint / META
    if meta.is_file():
        try:
            return json.loads(meta.read_text(encoding="utf-8"))
        except ValueError as e:
            raise DataError(f"{meta}: unreadable ({e})") from None
    if not checkpoint.is_dir():
        raise DataError(f"{checkpoint}: no such model folder")
    if not (checkpoint / "config.json").is_file():
        raise DataError(f"{checkpoint}: not a model folder: no {META} (a checkpoint of the hf "
                        "backend) and no config.json (a Hugging Face model saved with "
                        "save_pretrained)")
    return {**PLAIN_DEFAULTS, "kind": folder_kind(checkpoint)}


def model_folder(checkpoint: Path, meta: dict) -> Path:
    """Where the weights and the tokenizer are: the folder an evaluate-only run's
    ``compsuite_hf.json`` names (``model``), else the checkpoint folder itself."""
    if not meta.get("model"):
        return Path(checkpoint)
    folder = Path(meta["model"])
    if not folder.is_dir():
        raise DataError(f"{Path(checkpoint) / META}: its model folder {folder} does not exist "
                        "(moved or deleted?)")
    return folder


#: config keys that bound the positions a model reads (the first one a config has)
POSITION_KEYS = ("n_positions", "max_position_embeddings", "n_ctx", "max_sequence_length",
                 "seq_length")
#: models whose position ids start after the padding id (RoBERTa's family): their
#: table holds pad_token_id + 1 rows fewer usable positions
PADDING_OFFSET = frozenset({"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert",
                            "data2vec-text", "ibert", "longformer", "roberta-prelayernorm",
                            "xmod"})
#: a tokenizer's model_max_length above this is transformers' "no limit" placeholder
SANE_MAX_LENGTH = 1_000_000


def position_limit(config, tokenizer) -> tuple[int, str] | None:
    """The most tokens one sequence of the model may hold, and where that number comes
    from: the config's positions (:data:`POSITION_KEYS`), and the tokenizer's
    ``model_max_length`` when it is a real one; the smaller.  None: neither says."""
    found = []
    for key in POSITION_KEYS:
        value = getattr(config, key, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            why = f"{key} {value} in its config.json"
            pad = getattr(config, "pad_token_id", None)
            if getattr(config, "model_type", None) in PADDING_OFFSET and isinstance(pad, int):
                value -= pad + 1
                why += f", less {pad + 1} for its padding offset"
            found.append((value, why))
            break
    most = getattr(tokenizer, "model_max_length", None)
    if isinstance(most, int) and 0 < most < SANE_MAX_LENGTH:
        found.append((most, f"model_max_length {most} of its tokenizer"))
    return min(found) if found else None


def shortened(text: str, most: int = 80) -> str:
    """``text``, cut after ``most`` characters (with "...")."""
    return text if len(text) <= most else text[:most] + "..."


def too_long(name: str, k: int, n: int, text: str, length: int, limit: tuple[int, str],
             what: str) -> DataError:
    """The error for input ``k`` (from 0) of ``n`` (``text``, shown shortened) that is
    ``length`` tokens, more than ``limit`` allows."""
    return DataError(f"{name}: input {k + 1} of {n} ({shortened(text, 90)!r}) is {length} "
                     f"tokens {what}; the model reads at most {limit[0]} ({limit[1]}): "
                     "shorten it, or use a model with more positions")


def from_folder(load, folder: Path, **kwargs):
    """``load(folder, local_files_only=True, **kwargs)``; a folder transformers cannot
    read is a DataError naming it."""
    try:
        return load(folder, local_files_only=True, **kwargs)
    except (OSError, ValueError, KeyError) as e:
        raise DataError(f"{folder}: not a model folder transformers can load "
                        f"({str(e).splitlines()[0] if str(e) else type(e).__name__})") from None


class SharedBase:
    """A base model loaded once in this process, with the LoRA adapters of its
    checkpoints loaded onto it as they are asked for (peft's ``load_adapter``): checkpoint
    selection decodes every saved adapter of a run, and reloading a 7B base for each
    would cost more than decoding.  One base is kept (the last asked for); ``lock``
    guards the active adapter while a batch decodes over it unmerged."""

    _kept: "SharedBase | None" = None
    _guard = threading.Lock()

    def __init__(self, key: tuple, model):
        self.key, self.model, self.lock = key, model, threading.Lock()
        self.adapters: set[str] = set()

    @classmethod
    def get(cls, auto, base_dir: str, dtype, device: str, folder: Path) -> tuple["SharedBase", str]:
        """The shared base of ``base_dir`` with the adapter of ``folder`` loaded; the
        adapter's name on it."""
        from peft import PeftModel

        name = "a" + hashlib.sha1(str(Path(folder).resolve()).encode()).hexdigest()[:16]
        key = (str(Path(base_dir).resolve()), str(dtype), device, auto.__name__)
        with cls._guard:
            shared = cls._kept if cls._kept is not None and cls._kept.key == key else None
            if shared is None:
                cls._kept = None   # the previous base goes before the next loads
                base = from_folder(auto.from_pretrained, base_dir, dtype=dtype)
                model = PeftModel.from_pretrained(base, folder, adapter_name=name,
                                                  local_files_only=True)
                shared = cls._kept = SharedBase(key, model.to(device).eval())
                shared.adapters.add(name)
            elif name not in shared.adapters:
                with shared.lock:
                    shared.model.load_adapter(str(folder), adapter_name=name,
                                              local_files_only=True)
                    shared.model.eval()
                shared.adapters.add(name)
        return shared, name

    def merged(self, name: str):
        """A copy of the base with adapter ``name`` merged into its weights (no LoRA
        layers left): what decodes fastest."""
        with self.lock:
            self.model.set_adapter(name)
            copy = deepcopy(self.model)
        return copy.merge_and_unload(adapter_names=[name]).eval()


def load_model_and_tokenizer(checkpoint: Path, meta: dict, device: str, merge: bool = True,
                             dtype=None):
    """The model of a checkpoint folder: the full model, or base + LoRA adapter (its
    ``adapter_config.json`` names the base's local folder: the base is loaded once per
    process, :class:`SharedBase`), the adapter merged into a copy of the base's weights
    unless ``merge`` is false; an evaluate-only run's folder loads the model folder its
    ``compsuite_hf.json`` names.  ``dtype``: the weights' (``"auto"``: as saved); None,
    bfloat16 on a GPU, float32 on the CPU.  Returns the model, its tokenizer, and
    (unmerged) the shared base and the adapter's name on it, else None."""
    import torch
    from transformers import AutoTokenizer

    auto = model_class(meta["kind"])
    if dtype is None:
        dtype = torch.bfloat16 if device == "cuda" else torch.float32
    folder = model_folder(checkpoint, meta)
    tokenizer = from_folder(AutoTokenizer.from_pretrained, folder)
    ensure_padding(tokenizer)
    if (folder / "adapter_config.json").is_file():
        base_dir = json.loads((folder / "adapter_config.json").read_text())[
            "base_model_name_or_path"]
        shared, name = SharedBase.get(auto, base_dir, dtype, device, folder)
        if merge:
            return shared.merged(name), tokenizer, None
        return shared.model, tokenizer, (shared, name)
    model = from_folder(auto.from_pretrained, folder, dtype=dtype)
    return model.to(device).eval(), tokenizer, None


class StopAtAnswerEnd:
    """A stopping criterion for greedy generation: a prompt is done once the text it has
    generated holds one of ``stops`` (its answer is cut at the first anyway, and greedy
    tokens before the stop do not depend on those after).  It reads the generated tokens
    only, decoded as the answer is, so a stop string in the prompt stops nothing."""

    def __init__(self, tokenizer, stops: list[str], prompt_length: int):
        self.tokenizer, self.stops, self.start = tokenizer, stops, prompt_length
        #: the rows found done (one generate call's): not decoded again at later steps
        self.done: list[bool] | None = None

    def __call__(self, input_ids, scores, **kwargs):
        import torch

        if self.done is None:
            self.done = [False] * input_ids.shape[0]
        todo = [i for i, d in enumerate(self.done) if not d]
        texts = self.tokenizer.batch_decode(input_ids[todo, self.start:],
                                            skip_special_tokens=True)
        for i, t in zip(todo, texts):
            self.done[i] = any(s in t for s in self.stops)
        return torch.tensor(self.done, dtype=torch.bool, device=input_ids.device)


def answer_room(tokenizer, references: list[str]) -> int:
    """Room for an answer when the run sets none: the longest of ``references`` (the
    development set's targets) in the model's tokens, plus a quarter (at least 16
    tokens) for a longer wrong answer and the end-of-sentence token.  An answer past
    that is wrong by exact match anyway; generating it costs a whole batch's time."""
    longest = max((len(tokenizer(r, add_special_tokens=False)["input_ids"])
                   for r in references), default=0)
    return longest + max(16, longest // 4)


class HFTranslator(ModelBase):
    capabilities = frozenset({"translate", "embed"})

    #: prompts per batch where the decoding settings give none (and on the CPU with
    #: ``batch_size: auto``)
    BATCH_SIZE = 32

    def __init__(self, checkpoint: Path, batch_size: int | str = BATCH_SIZE,
                 max_new_tokens: int | None = None, beam: int = 1, *,
                 references: list[str] | None = None, merge: bool = True, sort: bool = True,
                 stop_early: bool = True):
        """``batch_size``: a number or ``"auto"`` (:mod:`~compsuite.toolkits.hf.batching`);
        ``max_new_tokens``: the cap on each answer (absent: the run's, else
        :func:`answer_room` of ``references``, the development set's targets, else 256);
        ``merge``: decode an adapter merged into a copy of its base's weights (false:
        over the shared base, unmerged); ``sort``: batch the inputs by length;
        ``stop_early``: greedy decoding stops a prompt at its first stop string (the
        answer is cut there anyway).  The last three change the speed, not the
        answers (tests/test_hf_backend.py); they are there to measure that."""
        from compsuite.devices import cuda_available
        from compsuite.models.protocol import count_batches
        from compsuite.toolkits.hf.batching import Batcher

        checkpoint = Path(checkpoint)
        self.meta = read_meta(checkpoint)
        if self.meta.get("kind") == "classifier":
            raise DataError(f"{self.meta.get('model') or checkpoint}: a sequence-classification "
                            "model, not a translator (load it as a classifier)")
        self.device = "cuda" if cuda_available() else "cpu"
        self.model, self.tokenizer, self.shared = load_model_and_tokenizer(
            checkpoint, self.meta, self.device, merge=merge)
        #: the model's folder (the user's, for an evaluate-only run): errors name it
        self.folder = model_folder(checkpoint, self.meta)
        self.causal = self.meta["kind"] != "seq2seq"
        self.name = f"hf:{checkpoint}"
        self.batcher = Batcher(batch_size, self.BATCH_SIZE, self.device, self.name)
        self.sort, self.stop_early = sort, stop_early
        self.beam = beam
        self.max_new_tokens = (max_new_tokens or self.meta.get("max_new_tokens")
                               or (answer_room(self.tokenizer, references) if references
                                   else None) or 256)
        self.limit = position_limit(self.model.config, self.tokenizer)
        self._noted = False
        count_batches(self, "_generate", size=lambda ids: len(ids))

    @property
    def batch_size(self) -> int:
        """The batch size in use (``auto``: the one found so far)."""
        return self.batcher.size

    def prompts(self, sources: list[str]) -> list[str]:
        return [self.meta["prompt"].format(input=s) for s in sources]

    def room(self, n: int) -> int:
        """How many tokens may be generated after a prompt of ``n`` tokens."""
        if self.limit is None:
            return self.max_new_tokens
        # causal: prompt and answer share the positions; seq2seq: the decoder's start
        return min(self.max_new_tokens, self.limit[0] - (n if self.causal else 1))

    def check_lengths(self, sources: list[str], ids: list[list[int]]) -> None:
        """Every prompt fits the model with room for one token (an error naming the
        first that does not)."""
        if self.limit is None:
            return
        for k, (s, i) in enumerate(zip(sources, ids)):
            if self.room(len(i)) < 1 or len(i) > self.limit[0]:
                what = ("with its prompt, leaving no position to generate into" if self.causal
                        else "as its tokenizer encodes it")
                raise too_long(f"hf:{self.folder}", k, len(sources), s, len(i), self.limit, what)

    def _generate(self, ids: list[list[int]]) -> list[str]:
        """One batch of prompts' token ids: generated continuations, the prompt cut off;
        one prompt at a time where the longest leaves less room than the others."""
        n = max(len(i) for i in ids)
        if self.room(n) < self.max_new_tokens:
            if not self._noted:
                self._noted = True
                print(f"compsuite: note: hf:{self.folder}: generation capped at "
                      f"{self.room(n)} new tokens (max_new_tokens {self.max_new_tokens}) for "
                      f"inputs of {n} tokens: the model reads at most {self.limit[0]} "
                      f"({self.limit[1]})",
                      file=sys.stderr, flush=True)
            if self.causal and len(ids) > 1:
                return [t for i in ids for t in self._decode([i])]
        return self._decode(ids)

    def _decode(self, ids: list[list[int]]) -> list[str]:
        import torch

        tok = self.tokenizer
        n = max(len(i) for i in ids)
        pad = [[tok.pad_token_id] * (n - len(i)) for i in ids]
        # causal: left padding, so that every prompt ends where generation starts
        rows = [p + i if self.causal else i + p for p, i in zip(pad, ids)]
        mask = [[0] * len(p) + [1] * len(i) if self.causal else [1] * len(i) + [0] * len(p)
                for p, i in zip(pad, ids)]
        enc = {"input_ids": torch.tensor(rows, device=self.device),
               "attention_mask": torch.tensor(mask, device=self.device)}
        stops = [x for x in self.meta.get("stop") or [] if x]
        early = {}
        if stops and self.stop_early and self.beam == 1:
            from transformers import StoppingCriteriaList

            early["stopping_criteria"] = StoppingCriteriaList(
                [StopAtAnswerEnd(tok, stops, enc["input_ids"].shape[1] if self.causal else 0)])
        with torch.no_grad(), self._adapter():
            out = self.model.generate(**enc, max_new_tokens=self.room(n),
                                      do_sample=False, num_beams=self.beam,
                                      pad_token_id=tok.pad_token_id,
                                      eos_token_id=tok.eos_token_id, **early)
        if self.causal:
            out = out[:, enc["input_ids"].shape[1]:]
        return tok.batch_decode(out, skip_special_tokens=True)

    def answer(self, text: str) -> str:
        """The generated text up to the first stop string, stripped."""
        for stop in self.meta.get("stop") or []:
            if stop and stop in text:
                text = text[:text.index(stop)]
        return text.strip()

    def translate(self, sources: list[str]) -> list[str]:
        ids = [prompt_ids(self.tokenizer, p, self.causal)   # as in training
               for p in self.prompts(sources)]
        self.check_lengths(sources, ids)   # before any batch is decoded
        lengths = [len(i) for i in ids] if self.sort else [0] * len(ids)
        return [self.answer(t) for t in self.batcher.map(ids, lengths, self._generate)]

    def _adapter(self):
        """While a batch decodes over the shared base unmerged: its lock held, this
        translator's adapter active."""
        if self.shared is None:
            return nullcontext()
        shared, name = self.shared

        @contextmanager
        def active():
            with shared.lock:
                shared.model.set_adapter(name)
                yield
        return active()

    def embed(self, tokens: list[str]) -> dict[str, list[float]]:
        """The model's input embedding of each token: the mean of its pieces' rows
        (the token as its tokenizer splits it, no special tokens); a token that is only
        unknown pieces is left out, as the toolkits leave out tokens outside their
        vocabulary."""
        import torch

        table = self.model.get_input_embeddings().weight
        unk = self.tokenizer.unk_token_id
        out = {}
        for t in tokens:
            ids = self.tokenizer(t, add_special_tokens=False)["input_ids"]
            if not ids or all(i == unk for i in ids):
                continue
            with torch.no_grad():
                out[t] = table[ids].float().mean(dim=0).cpu().tolist()
        return out
