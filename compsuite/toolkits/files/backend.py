"""The ``files`` backend: a system known only by its answer files, for ``compsuite
export`` and ``compsuite score``.

Both commands evaluate one run of this backend (``mode``: ``record`` for export,
``replay`` for score) through the study's own evaluation, so that what is exported is
exactly what scoring asks for.  The run trains nothing; its model answers with
placeholders (each source itself; the first label of the training data), and the
command wraps it, in each unit, in a recording or a replaying of that unit's folder
(:mod:`compsuite.models.recording`): the placeholders are what an export answers while
it records.
"""
from __future__ import annotations

import json
from pathlib import Path

from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import ConfigError
from compsuite.foundation.io import atomic_open
from compsuite.models.decoding import Decoding
from compsuite.models.recording import Placeholders
from compsuite.toolkits.base import TextModelBackend

#: the settings file a files run writes into each unit folder (its "checkpoint")
SETTINGS_FILE = "files.json"
MODES = ("record", "replay")


class FilesBackend(TextModelBackend):
    name = "files"
    title = "answer files"
    answers_files = True

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
             generation: Decoding = Decoding()):
        return Placeholders(first_label(data) if data is not None else "")


def first_label(data: Dataset) -> str:
    """A valid answer of the task, for the placeholders: the first target
    (or label) of the training data."""
    for name in ("train.label", "train.tgt"):
        path = data.raw / name
        if path.is_file():
            with open(path, encoding="utf-8") as fh:
                return fh.readline().strip()
    return ""


BACKEND = FilesBackend()
