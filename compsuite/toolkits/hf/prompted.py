"""A local causal language model, prompted as a served one is: the same prompts
(:class:`compsuite.models.prompting.Prompter`: the study's template, demonstrations
from its training split, an instruction), tokenized, decoded and read as
``transformers serve`` does for its OpenAI-compatible endpoints, so that under greedy
decoding the same weights give the same answers served or loaded here
(tests/test_hf_prompting.py starts the real server and checks it; docs/prompting.md).

* ``chat: false`` (``/v1/completions``): the prompt's text tokenized as the server
  tokenizes it, ``tokenizer(text)``, with whatever special tokens the tokenizer adds
  (a Llama tokenizer its ``<s>``);
* ``chat: true`` (``/v1/chat/completions``): the prompt's messages through the
  tokenizer's own chat template, ``tokenizer.apply_chat_template(messages,
  add_generation_prompt=True, tokenize=True, return_dict=True)``; a tokenizer without
  one is an error naming the folder;
* the weights in the precision they were saved in (the server's ``--dtype auto``), on
  the GPU where there is one (its ``--device auto``);
* generation: the model's own ``generation_config`` (as the server starts from it),
  greedy (``do_sample`` false, one beam: the server's temperature 0), ``max_new_tokens``
  the prompting's ``max_tokens``, ``stop_strings`` its stop strings (generation ends
  once the text holds one, as the server's ``stop``); the new tokens decoded with
  ``skip_special_tokens=True``.  The raw text is then read by
  :meth:`~compsuite.models.prompting.Prompter.answer` (stop strings, first line);
* one prompt at a time by default, as the server answers (it batches nothing unless
  started with ``--continuous-batching``): left-padded batches change the shapes the
  kernels sum over, and with them the last bits of the logits (measured on the tiny
  test model: up to 3e-7; docs/prompting.md), which can flip a greedy choice between
  two near-equal tokens.  ``batch_size`` above 1 decodes left-padded batches, faster and not
  guaranteed to equal the server's answers;
* classification (``labels``): the constrained answer.  Each class's word, as the
  answer follows the prompt (``answer`` of the prompting around it in completions; the
  word alone as the assistant's turn in chat), is scored by its log-likelihood after
  the prompt (the sum over its tokens, one forward pass per class, no padding), and
  the likeliest class is the answer (ties: the first class of ``labels``); the scores
  are kept.  This is exact and generates nothing; a served model (no log-likelihood
  of given text over the OpenAI API) is read from the text it generates instead, or
  from the first token's log-probabilities where its server gives them, so a
  classification need not agree between the two routes.

Every answer is appended to ``answers.jsonl`` in ``folder`` (the unit's run folder,
where given): the request's label, the input's index and text, the raw answer, the
answer read, the tokens in and out (and a classification's scores); what each call
cost is added to ``usage.json`` there (:func:`read_usage`), which the backend's
``usage`` hands to the result.
"""
from __future__ import annotations

import json
import sys
import time
from copy import deepcopy
from pathlib import Path
from typing import Sequence

from compsuite.foundation.errors import ConfigError, DataError
from compsuite.foundation.io import atomic_open
from compsuite.models.protocol import ModelBase, batch_done
from compsuite.toolkits.hf.translator import StopAtAnswerEnd
from compsuite.toolkits.usage import USAGE_FILE, read_usage

#: the record of every answer, and of what answering cost, in a unit's run folder
ANSWERS = "answers.jsonl"
USAGE = USAGE_FILE
#: the counts of :data:`USAGE` that add up over calls
COUNTS = ("prompts", "tokens_in", "tokens_out", "answers_empty", "answers_cut", "wall_s")


def add_usage(folder: Path, counts: dict, about: dict) -> None:
    """Add ``counts`` to ``folder``'s usage record (written atomically), ``about`` (how
    the model was asked) replacing what it said."""
    old = read_usage(folder) or {}
    new = {**old, **about}
    for k in COUNTS:
        new[k] = round(old.get(k, 0) + counts.get(k, 0), 3) if k == "wall_s" else \
            int(old.get(k, 0)) + int(counts.get(k, 0))
    with atomic_open(Path(folder) / USAGE) as fh:
        json.dump(new, fh, indent=2)


class PromptedLM(ModelBase):
    """A local causal language model prompted by ``spec`` (a
    :class:`~compsuite.models.prompting.PromptSpec`; see the module docstring):
    ``checkpoint``, a model folder or an evaluate-only run's (its ``compsuite_hf.json``
    names the model folder); ``data``, the dataset demonstrations come from;
    ``folder``, where answers and usage are recorded (None: nowhere); ``batch_size``,
    prompts decoded at once (1: as the server, one at a time)."""

    def __init__(self, checkpoint: str | Path, spec, data=None, *,
                 folder: str | Path | None = None, batch_size: int = 1):
        from compsuite.devices import cuda_available
        from compsuite.models.prompting import Prompter
        from compsuite.toolkits.hf.batching import Batcher
        from compsuite.toolkits.hf.translator import (load_model_and_tokenizer, model_folder,
                                                      position_limit, read_meta)

        checkpoint = Path(checkpoint)
        meta = read_meta(checkpoint)
        if meta.get("kind") != "causal":
            raise ConfigError(f"{meta.get('model') or checkpoint}: prompting is for a causal "
                              f"language model, and this is a {meta.get('kind')} model")
        self.spec = spec
        self.prompter = Prompter(spec, data)
        self.device = "cuda" if cuda_available() else "cpu"
        # the weights as saved, as transformers serve loads them (its --dtype auto)
        self.model, self.tokenizer, _ = load_model_and_tokenizer(
            checkpoint, {**meta, "kind": "causal"}, self.device, dtype="auto")
        self.folder_of_model = model_folder(checkpoint, meta)
        self.name = f"hf:{self.folder_of_model} ({spec.label()})"
        self.capabilities = frozenset({"translate", "classify"} if spec.labels else
                                      {"translate"})
        if spec.chat and not getattr(self.tokenizer, "chat_template", None):
            raise ConfigError(f"{self.folder_of_model}: prompting.chat is true, but its "
                              "tokenizer has no chat template (chat_template in "
                              "tokenizer_config.json, or chat_template.jinja): set chat: "
                              "false, or give a model whose tokenizer has one")
        self.folder = None if folder is None else Path(folder)
        self.batcher = Batcher(batch_size, 1, self.device, self.name)
        self.limit = position_limit(self.model.config, self.tokenizer)
        self.eos = self._eos_ids()
        #: the answers of the last call (raw and read), in input order
        self.answers: list = []
        self._label: str | None = None
        self._noted = False

    # ------------------------------------------------------------------ the protocol
    def respond(self, request):
        self._label = request.label   # what the answers are recorded under
        return super().respond(request)

    def translate(self, sources: Sequence[str]) -> list[str]:
        return [a.answer for a in self._answer(list(sources), classify=False)]

    def classify(self, inputs: Sequence) -> list[str]:
        if not self.spec.labels:
            raise ConfigError(f"{self.name}: classifying needs prompting.labels (each class "
                              "and the word the model answers for it, e.g. {entailment: "
                              "yes, contradiction: no, neutral: maybe})")
        return [a.answer for a in self._answer(list(inputs), classify=True)]

    # ------------------------------------------------------------------ prompts as tokens
    def encode(self, prompt) -> list[int]:
        """A prompt's token ids as ``transformers serve`` makes them: the messages
        through the chat template (chat), else the text as the tokenizer encodes it."""
        tok = self.tokenizer
        if self.spec.chat:
            enc = tok.apply_chat_template([dict(m) for m in prompt.messages],
                                          add_generation_prompt=True, tokenize=True,
                                          return_dict=True)
            return list(enc["input_ids"])
        return list(tok(prompt.text)["input_ids"])

    def continuation(self, word: str) -> str:
        """What follows a prompt when the answer is ``word``: in chat the assistant's
        turn, the word alone; else as a demonstration's answer follows its template."""
        return word if self.spec.chat else self.spec.answer.format(output=word)

    def _eos_ids(self) -> set[int]:
        eos = self.model.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        return set(eos if isinstance(eos, (list, tuple)) else [eos]) - {None}

    def _check(self, items: list, ids: list[list[int]], extra: int = 1) -> None:
        """Every prompt leaves room for ``extra`` tokens within the model's positions
        (an error naming the first that does not, before anything is decoded)."""
        from compsuite.toolkits.hf.translator import too_long

        if self.limit is None:
            return
        from compsuite.models.prompting import fields_of

        for k, (item, i) in enumerate(zip(items, ids)):
            if len(i) + extra > self.limit[0]:
                raise too_long(f"hf:{self.folder_of_model}", k, len(items),
                               fields_of(item)["input"], len(i),
                               self.limit, "with its prompt, leaving no position to "
                               "generate into")

    # ------------------------------------------------------------------ generation
    def generation_config(self, room: int):
        """The server's generation settings: the model's own, greedy, ``room`` new
        tokens at most, the prompting's stop strings."""
        g = deepcopy(self.model.generation_config)
        g.max_new_tokens = room
        g.do_sample = False
        g.num_beams = 1
        stops = [s for s in self.spec.stop if s]
        g.stop_strings = stops or None
        if g.pad_token_id is None:
            g.pad_token_id = self.tokenizer.pad_token_id
        return g

    def room(self, n: int) -> int:
        """New tokens a prompt of ``n`` tokens may have (``max_tokens``, within the
        model's positions)."""
        most = self.spec.max_tokens
        return most if self.limit is None else max(1, min(most, self.limit[0] - n))

    def _generate(self, rows: list[list[int]]) -> list[tuple[str, int]]:
        """One batch of prompts (token ids): each one's raw text and how many tokens it
        generated.  One prompt: no padding at all, as the server decodes it."""
        import torch
        from transformers import StoppingCriteriaList

        from compsuite.processes import check_stop

        check_stop()
        tok = self.tokenizer
        n = max(len(r) for r in rows)
        room = self.room(n)
        if room < self.spec.max_tokens and not self._noted:
            self._noted = True
            print(f"compsuite: note: {self.name}: answers capped at {room} tokens "
                  f"(max_tokens {self.spec.max_tokens}) for prompts of {n} tokens: the "
                  f"model reads at most {self.limit[0]} ({self.limit[1]})",
                  file=sys.stderr, flush=True)
        pad = tok.pad_token_id
        ids = torch.tensor([[pad] * (n - len(r)) + r for r in rows], device=self.device)
        mask = torch.tensor([[0] * (n - len(r)) + [1] * len(r) for r in rows],
                            device=self.device)
        config = self.generation_config(room)
        extra: dict = {}
        if config.stop_strings and getattr(self, "_own_stops", False):
            config.stop_strings = None   # transformers cannot match them in this vocabulary
            extra["stopping_criteria"] = StoppingCriteriaList([StopAtAnswerEnd(
                tok, [s for s in self.spec.stop if s], n)])
        with torch.no_grad():
            try:
                out = self.model.generate(input_ids=ids, attention_mask=mask,
                                          generation_config=config, tokenizer=tok, **extra)
            except ValueError as e:
                # StopStringCriteria reads every token of the vocabulary as text, which
                # some tokenizers' tokens defeat (before anything is generated): stop at
                # the stop strings by decoding instead; greedy tokens before the stop are
                # the same, and the answer is cut there anyway
                if not config.stop_strings or "substring not found" not in str(e):
                    raise
                self._own_stops = True
                print(f"compsuite: note: {self.name}: transformers cannot match stop strings "
                      "in this tokenizer's vocabulary; generation stops at them by decoding "
                      "the answer instead (the same answers)", file=sys.stderr, flush=True)
                return self._generate(rows)
        got = []
        for row in out[:, n:].tolist():
            if len(rows) > 1:   # a finished row is padded to the batch's longest
                ends = [k for k, t in enumerate(row) if t in self.eos]
                row = row[:ends[0] + 1] if ends else row
                while len(rows) > 1 and row and row[-1] == pad and pad not in self.eos:
                    row = row[:-1]
            got.append((tok.decode(row, skip_special_tokens=True), len(row)))
        batch_done(len(rows))
        return got

    # ------------------------------------------------------------------ classification
    def scores(self, ids: list[int]) -> dict[str, float]:
        """Each class's log-likelihood after the prompt ``ids``: the sum of its word's
        tokens' log-probabilities (:meth:`continuation`)."""
        import torch

        out = {}
        for cls, word in self.spec.labels.items():
            cont = self.tokenizer(self.continuation(word), add_special_tokens=False)["input_ids"]
            if not cont:
                raise ConfigError(f"prompting.labels.{cls}: the word {word!r} is no token "
                                  "of the model's")
            row = torch.tensor([ids + cont], device=self.device)
            with torch.no_grad():
                logits = self.model(input_ids=row).logits[0, len(ids) - 1:-1].float()
            logp = torch.log_softmax(logits, dim=-1)
            out[cls] = float(logp[torch.arange(len(cont)), torch.tensor(cont)].sum())
        return out

    def _classify(self, rows: list[list[int]]) -> list[tuple[str, int, dict]]:
        from compsuite.processes import check_stop

        got = []
        for ids in rows:
            check_stop()
            s = self.scores(ids)
            best = max(s, key=lambda c: s[c])   # the first of equals: labels' order
            got.append((self.spec.labels[best], 0, s, best))
        batch_done(len(rows))
        return got

    # ------------------------------------------------------------------ answering
    def _answer(self, items: list, classify: bool) -> list:
        from compsuite.models.prompting import Answer

        start = time.monotonic()
        prompts = self.prompter.prompts(items)
        ids = [self.encode(p) for p in prompts]
        longest = max((len(self.tokenizer(self.continuation(w), add_special_tokens=False)
                           ["input_ids"]) for w in (self.spec.labels or {}).values()),
                      default=1) if classify else 1
        self._check(items, ids, longest)
        lengths = [len(i) for i in ids]
        if classify:
            got = self.batcher.map(ids, lengths, self._classify)
            answers = [Answer(raw, cls) for raw, _, _, cls in got]
        else:
            got = self.batcher.map(ids, lengths, self._generate)
            answers = [self.prompter.answer(raw) for raw, _ in got]
        self.answers = answers
        if self.folder is not None and items:
            self._record(items, ids, got, answers, classify, time.monotonic() - start)
        return answers

    def about(self) -> dict:
        """How the model is asked: what the usage record says beside its counts."""
        return {"model": str(self.folder_of_model),
                "api": "chat" if self.spec.chat else "completions",
                "decoding": {"greedy": True, "max_tokens": self.spec.max_tokens,
                             "stop": [s for s in self.spec.stop if s],
                             "batch_size": self.batcher.size},
                "label": self.spec.label(), "prompting": self.spec.label(),
                "template_sha256": self.spec.sha256()}

    def _record(self, items, ids, got, answers, classify: bool, wall: float) -> None:
        from compsuite.models.prompting import fields_of

        self.folder.mkdir(parents=True, exist_ok=True)
        counts = {"prompts": len(items), "tokens_in": sum(map(len, ids)), "wall_s": wall,
                  "tokens_out": 0 if classify else sum(g[1] for g in got),
                  "answers_empty": sum(not a.answer for a in answers),
                  "answers_cut": 0 if classify else sum(g[1] >= self.spec.max_tokens
                                                        for g in got)}
        with open(self.folder / ANSWERS, "a", encoding="utf-8") as fh:
            for k, (item, i, g, a) in enumerate(zip(items, ids, got, answers)):
                f = fields_of(item)
                rec = {"label": self._label, "index": k,
                       "input": [f["premise"], f["hypothesis"]] if "premise" in f
                       else f["input"], "raw": a.raw, "answer": a.answer,
                       "tokens_in": len(i), "tokens_out": g[1]}
                if classify:
                    rec["scores"] = g[2]
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            fh.flush()
        add_usage(self.folder, counts, self.about())
