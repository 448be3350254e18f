"""An in-process toolkit backend: scikit-learn's CountVectorizer + LogisticRegression
over whitespace tokens, behind the suite's backend interface (train with a thread
count, predict, load as a classifier).  Registered by the example study's module."""
from __future__ import annotations

import pickle
import time
from pathlib import Path
from typing import Sequence

from compsuite.foundation.dataset import Dataset
from compsuite.foundation.io import atomic_open, read_aligned, read_lines, write_lines
from compsuite.models.protocol import ModelBase
from compsuite.toolkits.base import Backend, begin_run, config_hash, finish_run, merge


class BowClassifier(ModelBase):
    """The classifier protocol over a pickled (vectoriser, model) pair."""

    capabilities = frozenset({"classify"})

    def __init__(self, checkpoint: str | Path):
        with open(checkpoint, "rb") as fh:
            self.vectoriser, self.model = pickle.load(fh)
        self.name = f"sklearn_bow:{checkpoint}"

    def classify(self, inputs: Sequence[str]) -> list[str]:
        return [str(y) for y in self.model.predict(self.vectoriser.transform(inputs))]

    def features(self, inputs: Sequence[str]):
        return self.vectoriser.transform(inputs)


class BowBackend(Backend):
    name = "sklearn_bow"
    data_folder = None   # reads the raw text

    def train(self, run, profile: str, data: Dataset, run_dir: Path, seed: int, *,
              threads: int | None = None, extra: dict | None = None,
              show: bool = True) -> dict:
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.linear_model import LogisticRegression
        from threadpoolctl import threadpool_limits

        params = merge(merge(merge(run.defaults, run.args), run.profiles.get(profile)), extra)
        h = config_hash({**params, "seed": seed, "data": data.checksum()})
        done = begin_run(run_dir, h)
        if done is not None:
            return done
        start = time.time()
        x, y = read_aligned(data.raw / "train.src", data.raw / "train.tgt")
        vectoriser = CountVectorizer(token_pattern=r"\S+", lowercase=False)
        model = LogisticRegression(C=params.get("C", 1.0), max_iter=params.get("max_iter", 1000),
                                   random_state=seed)
        with threadpool_limits(limits=threads):
            model.fit(vectoriser.fit_transform(x), y)
        checkpoint = run_dir / "model.pkl"
        with atomic_open(checkpoint, "wb") as fh:
            pickle.dump((vectoriser, model), fh)
        return finish_run(run_dir, {"toolkit": self.name, "checkpoint": str(checkpoint),
                                    "config_hash": h, "args": params, "threads": threads,
                                    "wall_s": round(time.time() - start, 2)})

    def predict(self, trained: dict, data: Dataset, split: str, generation: dict,
                run_dir: Path, show: bool = True, wrap=None):
        from compsuite.models.predictions import read_plain

        out = run_dir / f"pred-{split}.txt"
        if not out.is_file():
            clf = self.load(trained["checkpoint"], data, "classifier")
            write_lines(out, clf.classify(read_lines(data.raw / f"{split}.src")))
        return read_plain(out, data.raw / f"{split}.tgt", data.raw / f"{split}.src")

    def load(self, checkpoint, data: Dataset | None, kind: str = "classifier",
             generation: dict | None = None):
        if kind != "classifier":
            raise self._unsupported(kind)
        return BowClassifier(checkpoint)


BACKEND = BowBackend()
