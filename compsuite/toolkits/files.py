"""The ``files`` backend: a system known only by its answer files, for ``compsuite
export`` and ``compsuite score``.

Both commands evaluate one run of this backend through the study's own evaluation, so
that what is exported is exactly what scoring asks for:

* ``record`` (export): the model writes down every batch the evaluation asks of it,
  ``<name>.src`` (one input per line; a sentence pair as premise<TAB>hypothesis) and
  ``<name>.ids`` (``<folder>/<name>:<line>``) in the folder of the model asked (a unit of
  the study, see :mod:`compsuite.export`), and answers with placeholders (the input
  itself; the first label of the training data);
* ``replay`` (score): the model answers each input from the system's answer file,
  ``<name>.hyp`` beside the same relative folder (one answer per line, in the order of
  ``<name>.src``).

A test that needs the model itself (its outputs fed back, checkpoints over training,
representations) refuses such a model: :class:`compsuite.eval.translators.base.InTheLoop`.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import re
from pathlib import Path
from typing import Iterator

from compsuite.foundation.errors import ConfigError, DataError
from compsuite.foundation.io import atomic_open, read_lines

from compsuite.foundation.dataset import Dataset
from .base import TextModelBackend

#: the settings file a files run writes into each unit folder (its "checkpoint")
SETTINGS_FILE = "files.json"
MODES = ("record", "replay")
#: the key of ``inputs.json`` that lists the analyses of a unit needing the model itself
IN_THE_LOOP = "_needs_the_model"
#: the unit being evaluated (its path), whose folder the inputs and answers are in:
#: a unit that evaluates another unit's model asks its own inputs (see :func:`asking`)
_asking: list[str] = []


@contextlib.contextmanager
def asking(unit_path: str) -> Iterator[None]:
    """Within the block, models of this backend read and write the folder of the unit
    ``unit_path`` (the units are evaluated one at a time)."""
    _asking.append(unit_path)
    try:
        yield
    finally:
        _asking.pop()


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


class Recorder:
    """Writes every batch it is asked into ``folder`` and answers with placeholders."""

    replays = True

    def __init__(self, folder: Path, label_placeholder: str, prefix: str = ""):
        self.folder = Path(folder)
        self.prefix = prefix or self.folder.name
        self.placeholder = label_placeholder
        self.name = f"record:{folder}"
        self.calls = self.batches = 0
        self.progress = None
        self.label: str | None = None

    def _record(self, task: str, inputs) -> None:
        lines = [as_line(x) for x in inputs]
        self.folder.mkdir(parents=True, exist_ok=True)
        known = read_asked(self.folder)
        key = digest(lines)
        if any(isinstance(k, dict) and k.get("sha256") == key for k in known.values()):
            return   # the same inputs asked again (e.g. of another model): one file
        base = slug(self.label, task)
        name = next(n for n in (base if k == 1 else f"{base}-{k}" for k in range(1, 10**4))
                    if n not in known)
        src = self.folder / f"{name}.src"
        rel = self.prefix
        with atomic_open(src) as fh:
            fh.writelines(line + "\n" for line in lines)
        with atomic_open(self.folder / f"{name}.ids") as fh:
            fh.writelines(f"{rel}/{name}:{i}\n" for i in range(1, len(lines) + 1))
        known[name] = {"task": task, "n": len(lines), "asked_as": self.label, "sha256": key}
        write_asked(self.folder, known)

    def translate(self, sources):
        self.calls += 1
        self.batches += 1
        self._record("translate", sources)
        return [as_line(s) for s in sources]

    def predict(self, inputs):
        self.calls += 1
        self.batches += 1
        self._record("classify", inputs)
        return [self.placeholder] * len(inputs)

    def features(self, inputs):
        self._refuse(f"{self.label or 'this analysis'}",
                     "it compares the model's representations")

    def embeddings(self, tokens):
        self._refuse(f"{self.label or 'this analysis'}", "it reads the model's embeddings")

    def _refuse(self, test: str, why: str) -> None:
        """Refuse an analysis that needs the model itself, saying so first (in the
        folder's ``inputs.json``: the export lists it)."""
        from compsuite.eval.translators.base import in_the_loop

        error = in_the_loop(test, why)
        self._note_refusal(str(error))
        raise error

    def _note_refusal(self, message: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        known = read_asked(self.folder)
        refused = known.setdefault(IN_THE_LOOP, [])
        if message not in refused:
            refused.append(message)
        write_asked(self.folder, known)


class Replayer(Recorder):
    """Answers each input from the ``.hyp`` files of ``answers`` paired with the
    ``.src`` files of ``inputs`` (the exported folder of the same model)."""

    def __init__(self, inputs: Path, answers: Path, label_placeholder: str = ""):
        super().__init__(inputs, label_placeholder)
        self.answers = Path(answers)
        self.name = f"files:{answers}"
        self._table: dict[str, str] | None = None
        self._missing: dict[str, Path] = {}
        self._asked = read_asked(self.folder)

    def _note_refusal(self, message: str) -> None:
        """Nothing to note: the export listed it already."""

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

    def translate(self, sources):
        self.calls += 1
        self.batches += 1
        return self._answers(sources)

    def predict(self, inputs):
        self.calls += 1
        self.batches += 1
        return self._answers(inputs)


class FilesBackend(TextModelBackend):
    name = "files"

    def system(self, run, profile: str) -> dict | None:
        """Replayed answers are the system of the folder they are in (score refuses
        another folder's under the same name); a recording is nobody's."""
        if run.args.get("mode") != "replay":
            return None
        return {"answers": run.args.get("answers")}

    def train(self, run, profile: str, data: Dataset, run_dir: Path, seed: int, *,
              threads: int | None = None, extra: dict | None = None,
              show: bool = True) -> dict:
        args = run.args
        if args.get("mode") not in MODES:
            raise ConfigError(f"runs.{run.name}.args.mode: one of {', '.join(MODES)}")
        settings = {k: args[k] for k in ("mode", "inputs", "answers") if k in args}
        path = Path(run_dir) / SETTINGS_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path) as fh:
            json.dump(settings, fh, indent=2)
        return {"toolkit": self.name, "checkpoint": str(path), "evaluate_only": True,
                "wall_s": 0.0, "threads": threads, "answers": settings.get("answers")}

    def load(self, checkpoint, data: Dataset | None, kind: str = "translator",
             generation: dict | None = None):
        s = json.loads(Path(checkpoint).read_text(encoding="utf-8"))
        if not _asking:
            raise ConfigError("a files model answers within compsuite export/score only")
        unit = _asking[-1]
        placeholder = first_label(data) if data is not None else ""
        if s["mode"] == "record":
            return Recorder(Path(s["inputs"]) / unit, placeholder, unit)
        return Replayer(Path(s["inputs"]) / unit, Path(s["answers"]) / unit, placeholder)


def first_label(data: Dataset) -> str:
    """A valid answer of the task, for the recorder's placeholders: the first target
    (or label) of the training data."""
    for name in ("train.label", "train.tgt"):
        path = data.raw / name
        if path.is_file():
            with open(path, encoding="utf-8") as fh:
                return fh.readline().strip()
    return ""


BACKEND = FilesBackend()
