"""Prompting a language model: templates, demonstrations and answers, as data.

What every prompted model shares (a model behind an OpenAI-compatible server, the
``served`` backend; a local Hugging Face folder, the ``hf`` backend), so that the same
weights, served or loaded, are asked the same prompts and read the same way.  A study
declares its prompting in its YAML (``toolkit_defaults: {<toolkit>: {prompting:
...}}``, which a run's ``args.prompting`` and a profile's override merge over key by
key), read into :class:`PromptSpec`:

* ``template``: the test input in words (``{input}``; a sentence pair: ``{premise}``
  and ``{hypothesis}``), e.g. a study authors' own ``"### Input: {input} ### Output:\\n"``;
* ``answer``: how a demonstration's answer follows its template (``{output}``);
* ``instruction``: what comes first (a chat's system message);
* ``shots`` demonstrations drawn from the study's own training split
  (``demonstrations``: which files, in the dataset's model text or raw folder) by a
  ``strategy`` under a ``seed``:

  - ``random``: a sample, drawn for each test input from a generator seeded by the
    seed and that input (the same demonstrations whatever else is asked, in whatever
    order or batch);
  - ``similar``: the ``shots`` training inputs most similar to the test input, by the
    cosine of their TF-IDF vectors over words and word pairs (scikit-learn's
    ``TfidfVectorizer``: maintained, already a dependency of the suite, exact and
    deterministic, and needs no model weights, which a dense retriever would download);
    ties go to the earlier training line;
  - ``structure``: demonstrations that together cover the test input's structures
    (``structures``: the tokens that name them, e.g. the functions an input applies), chosen
    greedily (the one covering most of what is left uncovered, ties by similarity),
    then the most similar; only where the study can tell (a spec without
    ``structures`` is refused).

  A training input equal to the test input is never its demonstration.  The most
  similar demonstration comes last, nearest the test input;
* ``chat``: the prompt as messages (a system message, then each demonstration as a
  user turn and an assistant turn, then the test input), for a chat endpoint or a
  tokenizer's own chat template; otherwise one text (instruction, demonstrations and
  the test input joined by ``separator``);
* answers: the model's text is cut at the first ``stop`` string and (``first_line``)
  at its first line break, its outer spaces removed; the raw text is kept beside it.
  An empty or over-long answer is an answer like any other (scored as wrong); a
  classification's answer is the class whose word (``labels``) it starts with, or
  ``""``; where the server gives first-token log-probabilities, the class whose word
  starts the likeliest of them.

:meth:`PromptSpec.sha256` hashes everything that shapes a prompt (recorded with each
result), :meth:`PromptSpec.label` names the setting in reports ("4-shot similar").
"""
from __future__ import annotations

import hashlib
import json
import random
import string
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

from compsuite.foundation.errors import ConfigError, DataError
from compsuite.schema import check

STRATEGIES = ("random", "similar", "structure")
#: the placeholders a template may hold
FIELDS = {"input", "premise", "hypothesis"}
#: how many of the most similar training inputs the structure strategy chooses among
#: first (then, for what they leave uncovered, the whole split)
STRUCTURE_POOL = 500


@dataclass
class Demonstrations:
    """Where demonstrations come from: files of the dataset's model text folder
    (``text``: the plain text a model that reads text gets) or its ``raw`` folder;
    ``input`` one file, or two (a sentence pair: premise and hypothesis); ``output`` the
    answers (a classification's class names)."""

    folder: Literal["text", "raw"] = "text"
    input: str | list[str] = "train.src"
    output: str = "train.tgt"

    def check(self, where: str) -> None:
        if isinstance(self.input, list) and len(self.input) != 2:
            raise ConfigError(f"{where}.input: one file, or two (a sentence pair), not "
                              f"{len(self.input)}")


@dataclass
class PromptSpec:
    """A study's (or a run's) ``prompting:`` (see the module docstring)."""

    template: str = "{input}"
    answer: str = " {output}"
    instruction: str = ""
    separator: str = "\n\n"
    shots: int = 0
    strategy: Literal["random", "similar", "structure"] = "random"
    seed: int = 1
    structures: list[str] = field(default_factory=list)
    chat: bool = False
    stop: list[str] = field(default_factory=lambda: ["\n"])
    first_line: bool = True
    max_tokens: int = 64
    labels: dict[str, str] | None = None
    demonstrations: Demonstrations = field(default_factory=Demonstrations)

    def check(self, where: str) -> None:
        for key in ("template", "answer"):
            names = {n for _, n, _, _ in string.Formatter().parse(getattr(self, key)) if n}
            allowed = {"output"} if key == "answer" else FIELDS
            bad = sorted(names - allowed)
            if bad:
                raise ConfigError(f"{where}.{key}: unknown placeholder {{{bad[0]}}} (allowed: "
                                  + ", ".join("{%s}" % a for a in sorted(allowed)) + ")")
        if self.shots < 0:
            raise ConfigError(f"{where}.shots: 0 or more, not {self.shots}")
        if self.max_tokens < 1:
            raise ConfigError(f"{where}.max_tokens: a positive number, not {self.max_tokens}")
        if self.shots and self.strategy == "structure" and not self.structures:
            raise ConfigError(f"{where}.strategy: 'structure' needs structures (the tokens "
                              "that name an input's structures, e.g. its functions); this "
                              "study names none: use random or similar")
        if self.labels is not None and not self.labels:
            raise ConfigError(f"{where}.labels: a class -> word mapping, not empty")

    def label(self) -> str:
        """The setting in words, for reports: ``zero-shot``, ``4-shot similar``."""
        shots = "zero-shot" if self.shots == 0 else f"{self.shots}-shot {self.strategy}"
        return shots + (", chat" if self.chat else "")

    def as_dict(self) -> dict:
        return asdict(self)

    def sha256(self) -> str:
        """A hash of everything that shapes a prompt and reads its answer."""
        text = json.dumps(self.as_dict(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def prompt_spec(value: Any, where: str) -> PromptSpec:
    """``value`` (a mapping, or None: the defaults) read into a :class:`PromptSpec`;
    mistakes are ConfigErrors naming ``where`` and the key."""
    return check(PromptSpec, value, where)


@dataclass(frozen=True)
class Prompt:
    """One test input's prompt: ``text`` (a completion endpoint, a local model without
    a chat template) and ``messages`` (a chat endpoint, a tokenizer's chat template)."""

    text: str
    messages: tuple[Mapping[str, str], ...]

    def key(self, chat: bool):
        """What identifies the prompt as sent: its messages in chat, else its text."""
        return [dict(m) for m in self.messages] if chat else self.text


@dataclass(frozen=True)
class Answer:
    """A prompted model's answer to one input: ``raw``, its text as it came, and
    ``answer``, what was read from it (the extracted text, or the class)."""

    raw: str
    answer: str


def fields_of(item) -> dict[str, str]:
    """The placeholders of one input: ``{input}``; a pair's ``{premise}`` and
    ``{hypothesis}`` (``{input}``: both, one space apart)."""
    if isinstance(item, str):
        return {"input": item}
    if isinstance(item, (tuple, list)) and len(item) >= 2:
        premise, hypothesis = str(item[0]), str(item[1])
        return {"input": f"{premise} {hypothesis}", "premise": premise,
                "hypothesis": hypothesis}
    raise DataError(f"a prompt's input is a text or a sentence pair, not {item!r}")


def _text_of(item) -> str:
    return fields_of(item)["input"]


class Prompter:
    """Prompts for test inputs under a :class:`PromptSpec`, with demonstrations from
    ``data``'s training split (read once, when a prompt first needs them)."""

    def __init__(self, spec: PromptSpec, data=None):
        self.spec = spec
        self.data = data
        self._demos: tuple[list, list[str]] | None = None
        self._index = None
        self._structs: list[frozenset[str]] | None = None

    # ------------------------------------------------------------------ demonstrations
    def _folder(self) -> Path:
        from compsuite.toolkits.base import model_text

        if self.data is None:
            raise ConfigError(f"{self.spec.shots}-shot prompting draws demonstrations from "
                              "the study's training split, and no dataset was given (use "
                              "shots: 0, or run the model through a study)")
        return Path(self.data.raw) if self.spec.demonstrations.folder == "raw" else \
            model_text(self.data)

    def demonstrations(self) -> tuple[list, list[str]]:
        """The training inputs (texts or pairs) and their answers."""
        if self._demos is None:
            from compsuite.foundation.io import read_lines

            folder, d = self._folder(), self.spec.demonstrations
            names = d.input if isinstance(d.input, list) else [d.input]
            columns = [read_lines(folder / n) for n in names]
            outputs = read_lines(folder / d.output)
            for name, col in zip(names, columns):
                if len(col) != len(outputs):
                    raise DataError(f"{folder / name}: {len(col)} lines, but "
                                    f"{folder / d.output} has {len(outputs)}")
            inputs = columns[0] if len(columns) == 1 else list(zip(*columns))
            if not inputs:
                raise DataError(f"{folder / names[0]}: no training inputs to draw "
                                "demonstrations from")
            self._demos = (inputs, outputs)
        return self._demos

    def _similarity_index(self):
        if self._index is None:
            import numpy as np
            from sklearn.feature_extraction.text import TfidfVectorizer

            inputs, _ = self.demonstrations()
            vectorizer = TfidfVectorizer(token_pattern=r"\S+", lowercase=False,
                                         ngram_range=(1, 2), dtype=np.float64)
            matrix = vectorizer.fit_transform([_text_of(x) for x in inputs])
            self._index = (vectorizer, matrix)
        return self._index

    def _similarities(self, texts: list[str]):
        """The cosine similarity of each text to each training input: [texts, train]."""
        vectorizer, matrix = self._similarity_index()
        return (vectorizer.transform(texts) @ matrix.T).toarray()

    def select(self, items: Sequence) -> list[list[int]]:
        """The training lines demonstrating each item, in prompt order."""
        k, strategy = self.spec.shots, self.spec.strategy
        if k == 0:
            return [[] for _ in items]
        inputs, _ = self.demonstrations()
        texts = [_text_of(x) for x in items]
        train_texts = None
        chosen: list[list[int]] = []
        if strategy == "random":
            train_texts = [_text_of(x) for x in inputs]
            for text in texts:
                rng = random.Random(hashlib.sha256(
                    f"{self.spec.seed}\t{text}".encode("utf-8")).hexdigest())
                order = rng.sample(range(len(inputs)), min(len(inputs), k + 8))
                picked = [i for i in order if train_texts[i] != text][:k]
                if len(picked) < k:   # a tiny split with many copies of the input
                    picked = [i for i in range(len(inputs)) if train_texts[i] != text][:k]
                chosen.append(picked)
            return chosen
        import numpy as np

        for start in range(0, len(texts), 256):
            block = texts[start:start + 256]
            sims = self._similarities(block)
            for row, text in zip(sims, block):
                if train_texts is None:
                    train_texts = [_text_of(x) for x in inputs]
                order = np.lexsort((np.arange(len(row)), -row))   # by similarity, then line
                order = [int(i) for i in order if train_texts[i] != text]
                if strategy == "similar":
                    picked = order[:k]
                else:
                    picked = self._cover(text, order, row, k)
                # the most similar last, nearest the test input
                chosen.append(sorted(picked, key=lambda i: (row[i], -i)))
        return chosen

    def _structures_of(self, text: str) -> set[str]:
        wanted = set(self.spec.structures)
        return {t for t in text.split() if t in wanted}

    def _cover(self, text: str, order: list[int], row, k: int) -> list[int]:
        """Greedy cover of ``text``'s structures by at most ``k`` training inputs (first
        among the most similar, then the whole split), the rest the most similar."""
        if self._structs is None:
            self._structs = [frozenset(self._structures_of(_text_of(x)))
                             for x in self.demonstrations()[0]]
        structs = self._structs
        left = self._structures_of(text)
        picked: list[int] = []
        for pool in (order[:STRUCTURE_POOL], order):
            while left and len(picked) < k:
                best, gain = None, 0
                for i in pool:
                    if i in picked:
                        continue
                    g = len(structs[i] & left)
                    if g > gain:   # the first of the most covering is the most similar
                        best, gain = i, g
                if best is None:
                    break
                picked.append(best)
                left -= structs[best]
            if not left or len(picked) >= k:
                break
        for i in order:
            if len(picked) >= k:
                break
            if i not in picked:
                picked.append(i)
        return picked

    # ------------------------------------------------------------------ prompts
    def _output_word(self, output: str) -> str:
        labels = self.spec.labels
        return labels.get(output, output) if labels else output

    def prompts(self, items: Sequence) -> list[Prompt]:
        """Each item's prompt, with its demonstrations (:meth:`select`)."""
        spec = self.spec
        demos = self.select(items)
        inputs, outputs = self.demonstrations() if spec.shots else ([], [])
        out = []
        for item, lines in zip(items, demos):
            shown = [(spec.template.format_map(fields_of(inputs[i])),
                      self._output_word(outputs[i])) for i in lines]
            query = spec.template.format_map(fields_of(item))
            parts = ([spec.instruction] if spec.instruction else []) + [
                q + spec.answer.format(output=a) for q, a in shown] + [query]
            messages = [{"role": "system", "content": spec.instruction}] if spec.instruction \
                else []
            for q, a in shown:
                messages += [{"role": "user", "content": q},
                             {"role": "assistant", "content": a}]
            messages.append({"role": "user", "content": query})
            out.append(Prompt(spec.separator.join(parts), tuple(messages)))
        return out

    # ------------------------------------------------------------------ answers
    def extract(self, raw: str) -> str:
        """The answer in ``raw``: up to the first stop string and (``first_line``) the
        first line break, without its outer spaces."""
        text = raw or ""
        cut = [i for s in self.spec.stop if s and (i := text.find(s)) >= 0]
        if cut:
            text = text[:min(cut)]
        if self.spec.first_line:
            text = text.strip(" \t").split("\n", 1)[0]
        return text.strip()

    def to_label(self, answer: str) -> str:
        """The class whose word ``answer`` starts with (case aside; the longest word
        first), or ``""``: no class (scored as wrong)."""
        labels = self.spec.labels or {}
        said = answer.strip().lower()
        for cls, word in sorted(labels.items(), key=lambda kv: -len(kv[1])):
            if word and said.startswith(word.strip().lower()):
                return cls
        return ""

    def label_scores(self, logprobs: Mapping[str, float] | None) -> str | None:
        """The class whose word starts the likeliest of the first token's alternatives
        (token text -> log-probability, as a server gives them); None where none of
        them starts a class word (or none were given)."""
        if not logprobs or not self.spec.labels:
            return None
        best = None
        for token, lp in sorted(logprobs.items(), key=lambda kv: (-kv[1], kv[0])):
            t = token.strip().lower()
            if not t:
                continue
            for cls, word in self.spec.labels.items():
                if word.strip().lower().startswith(t):
                    best = cls
                    break
            if best is not None:
                return best
        return None

    def answer(self, raw: str, classify: bool = False,
               logprobs: Mapping[str, float] | None = None) -> Answer:
        """:class:`Answer`: ``raw`` and what is read from it."""
        text = self.extract(raw)
        if not classify:
            return Answer(raw or "", text)
        cls = self.label_scores(logprobs)
        return Answer(raw or "", cls if cls is not None else self.to_label(text))


# ----------------------------------------------------------------------------- options
#: the options of ``compsuite run`` and the eval commands that set how any prompted
#: model is prompted (over the study's prompting), shared by every backend of one
PROMPTING_OPTIONS = ("--shots", "--demos", "--max-tokens")


def add_prompting_arguments(parser) -> None:
    """``--shots K`` and ``--demos STRATEGY`` in ``parser`` (once, however many
    backends of prompted models ask)."""
    from compsuite.foundation.arguments import non_negative_int, positive_int

    if "--shots" in getattr(parser, "_option_string_actions", {}):
        return
    parser.add_argument("--shots", type=non_negative_int, default=None, metavar="K",
                        help="with a prompted model: K demonstrations from the study's "
                             "training split in each prompt (default: the study's "
                             "prompting, usually 0)")
    parser.add_argument("--demos", choices=STRATEGIES, default=None,
                        help="with a prompted model and --shots: how demonstrations are "
                             "drawn: random (seeded), similar (TF-IDF nearest), structure "
                             "(covering the input's structures, where the study names them)")
    parser.add_argument("--max-tokens", type=positive_int, default=None, metavar="N",
                        help="with a prompted model: the most tokens an answer may have "
                             "(default: the study's prompting; a longer answer is cut and "
                             "scored as it is)")


def prompting_overrides(options) -> dict:
    """What :data:`PROMPTING_OPTIONS` given in ``options`` set of a :class:`PromptSpec`."""
    out = {}
    if getattr(options, "shots", None) is not None:
        out["shots"] = options.shots
    if getattr(options, "demos", None) is not None:
        out["strategy"] = options.demos
    if getattr(options, "max_tokens", None) is not None:
        out["max_tokens"] = options.max_tokens
    return out
