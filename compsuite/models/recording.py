"""Recording and replaying what a model is asked: wrappers around any model, for
``compsuite export`` and ``compsuite score`` (:mod:`compsuite.export`), each told the
folder of the unit it records or replays.

* :class:`Recording` writes every request the evaluation makes into its folder,
  ``<name>.src`` (one input per line; a sentence pair as premise<TAB>hypothesis; the
  name from the request's label) and ``<name>.ids`` (``<folder>/<name>:<line>``),
  lists them in ``inputs.json``, and answers with the model it wraps;
* :class:`Replaying` answers each input from the system's answer file, ``<name>.hyp``
  in the answers' folder of the same unit (one answer per line, in the order of
  ``<name>.src``); the model it wraps is not asked.

Both stand for a system known by its answer files (``replays``): a test that needs the
model itself (its outputs fed back, checkpoints over training, representations) refuses
them (:class:`~compsuite.models.protocol.InTheLoop`); a recording notes each such
refusal in ``inputs.json`` (the export lists them).
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import atomic_open, read_lines
from compsuite.models.protocol import (InTheLoop, Model, ModelBase, Request, batch_done,
                                       respond, unmetered)

#: the key of ``inputs.json`` that lists the analyses of a unit needing the model itself
IN_THE_LOOP = "_needs_the_model"
#: what a system known by its answer files can answer
ANSWERED = frozenset({"translate", "classify"})


def as_line(item) -> str:
    """One input as a line of ``<name>.src``."""
    text = item if isinstance(item, str) else "\t".join(str(x) for x in item[:2])
    return text.replace("\n", " ")


def digest(lines: list[str]) -> str:
    """What identifies one batch of inputs (its lines) in ``inputs.json``."""
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def read_asked(folder: Path) -> dict:
    """A unit folder's ``inputs.json``: name -> {task, n, asked_as, sha256} of each file,
    and under :data:`IN_THE_LOOP` the analyses refused ({} before the first)."""
    meta = Path(folder) / "inputs.json"
    return json.loads(meta.read_text()) if meta.is_file() else {}


def write_asked(folder: Path, asked: dict) -> None:
    with atomic_open(Path(folder) / "inputs.json") as fh:
        json.dump(asked, fh, indent=2)


def slug(label: str | None, task: str) -> str:
    words = re.sub(r"\[.*?\]", "", label or task).lower()
    return re.sub(r"[^a-z0-9]+", "-", words).strip("-")[:48] or task


class Recording(ModelBase):
    """Writes every request ``model`` is asked into ``folder`` (named by its label; ids
    prefixed with ``prefix``, the unit's folder in the export) and answers with
    ``model``'s answers (one batch a request: what ``model`` says it does is not
    counted)."""

    replays = True

    def __init__(self, model: Model, folder: Path, prefix: str = ""):
        self.model = model
        self.folder = Path(folder)
        self.prefix = prefix or self.folder.name
        self.name = f"record:{folder}"
        self.capabilities = ANSWERED & model.capabilities
        self.pair_inputs = model.pair_inputs

    def _record(self, request: Request) -> None:
        task, label = request.task, request.label
        lines = [as_line(x) for x in request.inputs]
        self.folder.mkdir(parents=True, exist_ok=True)
        known = read_asked(self.folder)
        key = digest(lines)
        if any(isinstance(k, dict) and k.get("sha256") == key for k in known.values()):
            return   # the same inputs asked again (e.g. of another model): one file
        base = slug(label, task)
        name = next(n for n in (base if k == 1 else f"{base}-{k}" for k in range(1, 10**4))
                    if n not in known)
        with atomic_open(self.folder / f"{name}.src") as fh:
            fh.writelines(line + "\n" for line in lines)
        with atomic_open(self.folder / f"{name}.ids") as fh:
            fh.writelines(f"{self.prefix}/{name}:{i}\n" for i in range(1, len(lines) + 1))
        known[name] = {"task": task, "n": len(lines), "asked_as": label, "sha256": key}
        write_asked(self.folder, known)

    def respond(self, request: Request):
        if request.task not in ANSWERED:
            return super().respond(request)   # not an answer files can give
        self._record(request)
        batch_done(None)
        with unmetered():
            return respond(self.model, request)

    def translate(self, sources):
        return self.respond(Request("translate", sources))

    def classify(self, inputs):
        return self.respond(Request("classify", inputs))

    def refused(self, error: InTheLoop) -> InTheLoop:
        """Note in the folder's ``inputs.json`` (the export lists it) that a test needs
        the model itself, then refuse it."""
        self.folder.mkdir(parents=True, exist_ok=True)
        known = read_asked(self.folder)
        refused = known.setdefault(IN_THE_LOOP, [])
        if str(error) not in refused:
            refused.append(str(error))
        write_asked(self.folder, known)
        return error

    def close(self) -> None:
        self.model.close()


class Placeholders(ModelBase):
    """What a recording answers with when no model answers: each source itself, and
    ``label`` (a valid class, e.g. the first of the training data) for every input."""

    capabilities = ANSWERED

    def __init__(self, label: str = ""):
        self.name, self.placeholder = "placeholders", label

    def translate(self, sources):
        return [as_line(s) for s in sources]

    def classify(self, inputs):
        return [self.placeholder] * len(inputs)


class Replaying(ModelBase):
    """Answers each input from the ``.hyp`` files of ``answers`` paired with the
    ``.src`` files of ``inputs`` (the exported folder of the same unit); ``model``, the
    model it stands in for, is not asked."""

    replays = True
    capabilities = ANSWERED

    def __init__(self, model: Model | None, inputs: Path, answers: Path):
        self.folder = Path(inputs)
        self.answers = Path(answers)
        self.name = f"files:{answers}"
        self._table: dict[str, str] | None = None
        self._missing: dict[str, Path] = {}
        self._asked = read_asked(self.folder)

    def _load(self) -> dict[str, str]:
        if self._table is not None:
            return self._table
        table: dict[str, str] = {}
        for src in sorted(self.folder.glob("*.src")):
            hyp = self.answers / f"{src.stem}.hyp"
            inputs = read_lines(src, allow_empty=True)
            if not hyp.is_file():
                for line in inputs:
                    self._missing.setdefault(line, hyp)
                continue
            answers = read_lines(hyp, allow_empty=True)
            if len(answers) != len(inputs):
                raise DataError(f"{hyp}: {len(answers)} lines, but {src} has {len(inputs)} "
                                "inputs (one answer per input, in order)")
            for line, answer in zip(inputs, answers):
                table.setdefault(line, answer)
        self._table = table
        return table

    def _answers(self, inputs) -> list[str]:
        """The answers to a batch: the answer file of the exported file that holds
        exactly these inputs, line by line (so repeated inputs keep their own answers);
        else each input's answer wherever it was exported."""
        lines = [as_line(x) for x in inputs]
        whole = self._whole_file(lines)
        if whole is not None:
            return whole
        table, out = self._load(), []
        for x in inputs:
            line = as_line(x)
            if line in table:
                out.append(table[line])
            elif line in self._missing:
                raise DataError(f"{self._missing[line]}: no such file (the answers to "
                                f"{self._missing[line].with_suffix('.src').name} of the export)")
            else:
                raise DataError(f"{self.folder}: the input {line[:80]!r} is not among the "
                                "exported inputs (export again with the same profile)")
        return out

    def _whole_file(self, lines: list[str]) -> list[str] | None:
        key = digest(lines)
        for name, info in self._asked.items():
            if isinstance(info, dict) and info.get("sha256") == key:
                hyp = self.answers / f"{name}.hyp"
                if not hyp.is_file():
                    raise DataError(f"{hyp}: no such file (the answers to {name}.src of the "
                                    "export)")
                answers = read_lines(hyp, allow_empty=True)
                if len(answers) != len(lines):
                    raise DataError(f"{hyp}: {len(answers)} lines, but {self.folder / name}"
                                    f".src has {len(lines)} inputs (one answer per input, "
                                    "in order)")
                return answers
        return None

    def respond(self, request: Request):
        if request.task not in ANSWERED:
            return super().respond(request)
        batch_done(None)
        return self._answers(request.inputs)

    def translate(self, sources):
        return self.respond(Request("translate", sources))

    def classify(self, inputs):
        return self.respond(Request("classify", inputs))

