"""The example study's module (docs/adding_a_study.md): "which letter occurs most
often?", a bag-of-words classification task, with an in-process scikit-learn backend.

It shows every hook of :class:`compsuite.studies.base.Study`: its own YAML keys
declared as a typed schema (``data`` in a profile), its ``data`` subcommand, the plan (one unit per run and
seed), data generation with a manifest, evaluation through the classifier protocol,
and a report.
"""
from __future__ import annotations

import argparse
import dataclasses
import random
from dataclasses import dataclass
from pathlib import Path

from compsuite.foundation.dataset import Dataset
from compsuite.foundation.io import read_aligned, write_lines
from compsuite.foundation.manifest import is_complete, write_manifest
from compsuite.schema import PositiveInt
from compsuite.studies.base import Context, Profile, Study, Unit
from compsuite.toolkits import backend_names, register_backend

import sklearn_bow

if sklearn_bow.BACKEND.name not in backend_names():
    register_backend(sklearn_bow.BACKEND)

GENERATOR = "majority_study"
LETTERS = "abcde"


@dataclass
class Data:
    """A profile's ``data:``: the generator's sizes."""
    n_train: PositiveInt
    n_test: PositiveInt
    length: PositiveInt = 9


@dataclass
class Options:
    """The keys a profile of this study adds (checked by compsuite.schema.check: an
    unknown or missing key, or a wrong type, is an error naming the file and key)."""
    data: Data


def generate(out: Path, n_train: int, n_test: int, length: int = 9, seed: int = 1) -> dict:
    """``{train,valid,test}.{src,tgt}``: sequences of letters, each labelled with the
    letter that occurs most often (sequences with a tie are redrawn and counted)."""
    rng = random.Random(f"majority-{seed}")
    counts = {"train": n_train, "valid": n_test, "test": n_test}
    dropped = {"tie for the most frequent letter": 0}
    files = []
    for split, n in counts.items():
        src, tgt = [], []
        while len(src) < n:
            seq = [rng.choice(LETTERS) for _ in range(length)]
            freq = sorted((seq.count(c), c) for c in LETTERS)
            if freq[-1][0] == freq[-2][0]:
                dropped["tie for the most frequent letter"] += 1
                continue
            src.append(" ".join(seq))
            tgt.append(freq[-1][1])
        write_lines(out / f"{split}.src", src)
        write_lines(out / f"{split}.tgt", tgt)
        files += [f"{split}.src", f"{split}.tgt"]
    return write_manifest(out, generator=GENERATOR, generator_version="1", seed=seed,
                          args={"n_train": n_train, "n_test": n_test, "length": length},
                          files=files, counts=counts, dropped=dropped)


class Majority(Study):
    profile_schema = Options

    @classmethod
    def commands(cls):
        return {"data": add_data_commands}

    def parts(self, profile: Profile) -> dict[str, str]:
        return {"accuracy": "test accuracy of every run and seed"}

    def plan(self, profile: Profile, seeds=None, runs=None) -> list[Unit]:
        return [Unit("accuracy", r, s, "majority", f"{r}/seed{s}")
                for s in seeds or profile.seeds for r in runs or profile.runs]

    def prepare(self, dataset: str, seed: int, profile: Profile, data_root: Path,
                show: bool = True) -> Dataset:
        args = dataclasses.asdict(profile.settings.data)
        data = Dataset(data_root / "majority" / f"n{args['n_train']}" / f"seed{seed}",
                       label=f"majority letter, {args['n_train']} training sequences")
        if not is_complete(data.raw, GENERATOR, args):
            generate(data.raw, seed=seed, **args)
        return data

    def evaluate(self, ctx: Context) -> dict:
        from compsuite.eval.metrics.accuracy import accuracy_with_breakdown

        src, tgt = read_aligned(ctx.data.raw / "test.src", ctx.data.raw / "test.tgt")
        predictions = ctx.load(kind="classifier").classify(src)
        return accuracy_with_breakdown(predictions, tgt, {"label": tgt}).as_dict()

    def report(self, profile: str, results: list[dict], out_dir: Path) -> list[Path]:
        from compsuite.eval.reports.tables import markdown_table, mean_std_cell, write_report

        rows = []
        for run in dict.fromkeys(r["run"] for r in results):
            accs = [r["accuracy"] for r in results if r["run"] == run]
            rows.append([run, mean_std_cell(accs), len(accs)])
        md = [f"# {self.title}: {profile} profile\n",
              markdown_table(["run", "accuracy", "seeds"], rows)]
        return write_report(out_dir, {"study": self.name, "profile": profile, "runs": results},
                            md)


STUDY = Majority


def add_data_commands(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    g = sub.add_parser("generate", help="{train,valid,test}.{src,tgt} and manifest.json")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--out", required=True)
    g.add_argument("--n-train", type=int, default=5000)
    g.add_argument("--n-test", type=int, default=1000)
    g.set_defaults(func=lambda a: print(generate(Path(a.out), a.n_train, a.n_test,
                                                 seed=a.seed)["counts"]) or 0)
