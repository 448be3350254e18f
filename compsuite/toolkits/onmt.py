"""The OpenNMT-py backend: text corpus + ``onmt_build_vocab`` vocabularies,
``onmt_train`` / ``onmt_translate`` with a YAML config written beside the run, and
in-process translation through the translator protocol.

The config is merged, each layer over the one before (a value of ``null`` removes a
key): the study's ``toolkit_defaults.onmt``, the run's base file (``config``,
relative to the checkout), the run's ``args``, its profile override (a mapping or a
YAML file), on a GPU the run's ``gpu`` options, then a test's options.  The suite then fills in the dataset: the paths of
``data.corpus_1`` (training) and ``data.valid`` are set, while every other key of
those entries (``transforms``, ``weight``, ...) and any other corpus the config
declares are kept.  The vocabularies, ``save_model`` and ``seed`` are set likewise.

Resuming: the newest ``model_step_N.pt`` of an interrupted run is passed as
``train_from``.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import yaml

from compsuite.data_prep.common.writers import run_logged, toolkit_command, write_onmt
from compsuite.foundation.checkout import ROOT
from compsuite.foundation.errors import ConfigError, ToolkitError
from compsuite.foundation.io import atomic_open, load_mapping
from compsuite.processes import set_aside_incomplete

from compsuite.devices import cuda_available
from compsuite.foundation.dataset import Dataset
from .base import (Backend, begin_run, config_hash, finish_run, merge, run_with_progress,
                   thread_env, translate_split)


def load_yaml(path: Path) -> dict:
    return load_mapping(path, "a mapping of OpenNMT-py options")


def checkpoint_step(path: Path) -> int:
    """N of ``model_step_N.pt``."""
    return int(re.search(r"_step_(\d+)\.pt$", path.name).group(1))


def checkpoints(run_dir: Path) -> list[Path]:
    """``model_step_N.pt`` in step order."""
    return sorted((run_dir / "checkpoints").glob("model_step_*.pt"), key=checkpoint_step)


class OnmtBackend(Backend):
    name = "onmt"
    data_folder = "onmt"

    def write_data(self, data: Dataset) -> Path:
        if data.layout != "text_to_text":
            raise ConfigError(f"{data.root}: the onmt backend trains text-to-text models; "
                              f"it cannot read the '{data.layout}' layout")
        out = data.root / self.data_folder
        write_onmt(data.raw, out, splits=data.splits, allow_unknown=data.allow_unknown)
        return out

    def checkpoints(self, run_dir: Path) -> list[tuple[int, Path]]:
        return [(checkpoint_step(p), p) for p in checkpoints(run_dir)]

    def config(self, run, profile: str, data: Dataset, run_dir: Path, seed: int) -> dict:
        """The complete onmt_train config of a run in a profile (before a test's options)."""
        cfg = dict(run.defaults)
        if run.config:
            cfg = merge(cfg, load_yaml(ROOT / run.config))
        cfg = merge(cfg, run.args)
        override = run.profiles.get(profile)
        if isinstance(override, str):
            override = load_yaml(ROOT / override)
        cfg = merge(cfg, override)
        if not cfg:
            raise ConfigError(f"run {run.name}: an OpenNMT-py run needs a base config or args")
        folder = data.folder(self.name)
        corpora = dict(cfg.get("data") or {})
        for entry, split in (("corpus_1", "train"), ("valid", "valid")):
            corpora[entry] = {**(corpora.get(entry) or {}),
                              "path_src": str(folder / f"{split}.src"),
                              "path_tgt": str(folder / f"{split}.tgt")}
        cfg.update({
            "data": corpora,
            "src_vocab": str(folder / "src.vocab"),
            "tgt_vocab": str(folder / "tgt.vocab"),
            "save_model": str(run_dir / "checkpoints" / "model"),
            "seed": seed,
        })
        if cuda_available():
            cfg.setdefault("world_size", 1)
            cfg.setdefault("gpu_ranks", [0])
            cfg = merge(cfg, run.gpu)
        return cfg

    def train(self, run, profile: str, data: Dataset, run_dir: Path, seed: int, *,
              threads: int | None = None, extra: dict | None = None,
              show: bool = True) -> dict:
        cfg = merge(self.config(run, profile, data, run_dir, seed), extra)
        h = config_hash(cfg)
        done = begin_run(run_dir, h)
        if done is not None:
            return done
        set_aside_incomplete(checkpoints(run_dir))  # a kill may cut the last save short
        existing = checkpoints(run_dir)
        final = dict(cfg)
        if existing:  # resume an interrupted run
            final["train_from"] = str(existing[-1])
        config_path = run_dir / "config.yaml"
        with atomic_open(config_path) as fh:
            fh.write(f"# written by compsuite from {run.config or 'the study YAML'} "
                     f"(+ {profile} profile); run: onmt_train -config {config_path}\n")
            yaml.safe_dump(final, fh, sort_keys=False)
        cmd = toolkit_command("onmt_train") + ["-config", str(config_path)]
        start = time.time()
        run_with_progress(cmd, run_dir / "train.log", f"train {run.name}", cfg.get("train_steps"),
                          r"Step (\d+)/", show=show, env=thread_env(threads))
        ckpts = checkpoints(run_dir)
        if not ckpts:
            raise ToolkitError(f"onmt_train wrote no checkpoint; see {run_dir / 'train.log'}")
        return finish_run(run_dir, {"toolkit": self.name, "checkpoint": str(ckpts[-1]),
                                    "config_hash": h, "config": str(config_path),
                                    "wall_s": round(time.time() - start, 1), "threads": threads})

    def predict(self, trained: dict, data: Dataset, split: str, generation: dict,
                run_dir: Path, show: bool = True) -> Path:
        from compsuite.eval.translators.ct2_backend import engine_of, prediction_tag

        if engine_of(generation).fast:
            fast = run_dir / f"pred-{split}.{prediction_tag(generation)}.txt"
            if fast.is_file():
                return fast
            model = self.fast_translator(trained, data, generation, None)
            if model is not None:   # else onmt_translate (the notice said why)
                return translate_split(self, trained, data, data.folder(self.name), split,
                                       generation, run_dir, show, model=model, name=fast.name)
        out = run_dir / f"pred-{split}.txt"
        if out.is_file():
            return out
        from compsuite.eval.translators.onmt_backend import NO_LENGTH_RATIO, length_penalty_args

        tmp = out.with_name(out.name + ".tmp")
        cmd = toolkit_command("onmt_translate") + [
            "-model", trained["checkpoint"], "-src", str(data.folder(self.name) / f"{split}.src"),
            "-output", str(tmp), "-beam_size", str(generation.get("beam", 1)),
            "-batch_size", str(generation.get("batch_size", 256)),
            "-max_length", str(generation.get("max_length", 512)), *NO_LENGTH_RATIO,
            *length_penalty_args(generation.get("length_penalty")),
        ]
        if cuda_available():
            cmd += ["-gpu", "0"]
        log = run_dir / f"translate-{split}.log"
        if show:
            print(f"onmt_translate: {split} -> {out}", flush=True)
        run_logged(cmd, log, "onmt_translate")
        if not tmp.is_file():
            raise ToolkitError(f"onmt_translate wrote no {tmp}; see {log}")
        tmp.rename(out)
        return out

    def read_predictions(self, path: Path, data: Dataset, split: str):
        from compsuite.eval.readers.predictions import read_plain

        return read_plain(path, data.raw / f"{split}.tgt", data.raw / f"{split}.src",
                          fmt="onmt_translate")

    def load(self, checkpoint, data: Dataset | None, kind: str = "translator",
             generation: dict | None = None):
        generation = generation or {}
        if kind != "translator":
            raise self._unsupported(kind)
        from compsuite.eval.translators import ct2_backend
        from compsuite.eval.translators.onmt_backend import OnmtTranslator

        return ct2_backend.load(self.name, Path(checkpoint), None, generation,
                                lambda: OnmtTranslator(
                                    Path(checkpoint), generation.get("batch_size", 256),
                                    generation.get("max_length", 512),
                                    beam=generation.get("beam", 1),
                                    length_penalty=generation.get("length_penalty")))


BACKEND = OnmtBackend()
