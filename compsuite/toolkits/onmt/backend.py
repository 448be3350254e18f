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

from compsuite.devices import cuda_available
from compsuite.foundation.checkout import ROOT
from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import ConfigError, ToolkitError
from compsuite.foundation.io import atomic_open, load_mapping
from compsuite.models.decoding import Decoding
from compsuite.processes import set_aside_incomplete, thread_env
from compsuite.toolkits.base import (Backend, Checkpoint, begin_run, config_hash, finish_run,
                                     in_order, merge, run_with_progress, split_batch)
from compsuite.toolkits.onmt.data import write_onmt
from compsuite.toolkits.writing import run_logged, toolkit_command


def load_yaml(path: Path) -> dict:
    return load_mapping(path, "a mapping of OpenNMT-py options")


#: the checkpoints' names (``save_model`` is ``<run dir>/checkpoints/model``)
SAVED = re.compile(r"model_step_(\d+)\.pt")


def saved(folder: Path) -> list[Checkpoint]:
    """``model_step_N.pt`` in ``folder``, in step order."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return in_order(Checkpoint("step", int(m.group(1)), p)
                    for p in folder.glob("model_step_*.pt") if (m := SAVED.fullmatch(p.name)))


def checkpoints(run_dir: Path) -> list[Path]:
    """``model_step_N.pt`` of a run in step order."""
    return [c.path for c in saved(Path(run_dir) / OnmtBackend.checkpoint_folder)]


class OnmtBackend(Backend):
    name = "onmt"
    data_folder = "onmt"
    checkpoint_kinds = ("step",)   # keep_checkpoint -1 keeps them all
    title = "OpenNMT-py"
    checkpoint_file = "checkpoints/model_step_1000.pt"
    checkpoint_advice = "keep_checkpoint -1"
    validation = "onmt validation accuracy (teacher-forced tokens)"
    validation_metric = ("onmt_valid_accuracy", {"tokens": "teacher-forced",
                                                  "scale": "percent", "read": "train.log"})

    def owns_checkpoint(self, path: Path, state) -> bool:
        """A file holding OpenNMT-py's options and vocabularies."""
        content = state() if path.is_file() else None
        return isinstance(content, dict) and "opt" in content and "vocab" in content

    def validation_scores(self, run_dir: Path) -> dict[int, float]:
        """The validation accuracies ``onmt_train`` logged in ``run_dir/train.log``
        (:mod:`compsuite.toolkits.onmt.validation`)."""
        from compsuite.toolkits.onmt.validation import logged_accuracies

        return logged_accuracies(run_dir)

    def write_data(self, data: Dataset) -> Path:
        if data.layout != "text_to_text":
            raise ConfigError(f"{data.root}: the onmt backend trains text-to-text models; "
                              f"it cannot read the '{data.layout}' layout")
        out = data.root / self.data_folder
        write_onmt(data.raw, out, splits=data.splits, allow_unknown=data.allow_unknown)
        return out

    def saved_checkpoints(self, folder: Path) -> list[Checkpoint]:
        return saved(folder)

    def options(self, run, profile: str) -> dict:
        """The run's onmt_train options in a profile: the study's defaults, its base
        config, its args, its profile's override (before the dataset's paths)."""
        cfg = dict(run.defaults)
        if run.config:
            cfg = merge(cfg, load_yaml(ROOT / run.config))
        cfg = merge(cfg, run.args)
        override = run.profiles.get(profile)
        if isinstance(override, str):
            override = load_yaml(ROOT / override)
        return merge(cfg, override)

    def distributed(self, run, profile: str, gpus: int, extra: dict | None = None) -> dict:
        """onmt_train's own multi-GPU training (``world_size``, ``gpu_ranks``: one
        process per GPU of the node), the update's batch split over them."""
        cfg = merge(self.options(run, profile), extra)
        where = f"{run.source or 'the study YAML'}: runs.{run.name} ({profile})"
        return {"world_size": gpus, "gpu_ranks": list(range(gpus)),
                **split_batch(cfg, gpus, "accum_count", ("batch_size",), where)}

    def config(self, run, profile: str, data: Dataset, run_dir: Path, seed: int) -> dict:
        """The complete onmt_train config of a run in a profile (before a test's options)."""
        cfg = self.options(run, profile)
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

    def source_text(self, data: Dataset) -> Path:
        return data.folder(self.name)   # what onmt_translate reads

    def predict(self, trained: dict, data: Dataset, split: str, generation: Decoding,
                run_dir: Path, show: bool = True, wrap=None):
        from compsuite.models.predictions import read_plain

        fast = None if not generation.fast else self.translate_fast(
            trained, data, self.source_text(data), split, generation, run_dir, show, wrap)
        if fast is not None:   # else onmt_translate (a notice said why)
            return read_plain(fast, data.raw / f"{split}.tgt", data.raw / f"{split}.src",
                              fmt="ctranslate2")
        out = run_dir / f"pred-{split}.txt"
        if not out.is_file():
            self.translate_file(trained, data, split, generation, out, show)
        return read_plain(out, data.raw / f"{split}.tgt", data.raw / f"{split}.src",
                          fmt="onmt_translate")

    def translate_file(self, trained: dict, data: Dataset, split: str, generation: Decoding,
                       out: Path, show: bool) -> None:
        """``onmt_translate`` on the split into ``out`` (written beside, then moved)."""
        from compsuite.toolkits.onmt.translator import (NO_LENGTH_RATIO, OnmtTranslator,
                                                        length_penalty_args)

        tmp = out.with_name(out.name + ".tmp")
        cmd = toolkit_command("onmt_translate") + [
            "-model", trained["checkpoint"], "-src", str(data.folder(self.name) / f"{split}.src"),
            "-output", str(tmp), "-beam_size", str(generation.beam),
            "-batch_size", str(generation.batch(OnmtTranslator.BATCH_SIZE)),
            "-max_length", str(generation.max_length), *NO_LENGTH_RATIO,
            *length_penalty_args(generation.length_penalty),
        ]
        if cuda_available():
            cmd += ["-gpu", "0"]
        log = out.parent / f"translate-{split}.log"
        if show:
            print(f"onmt_translate: {split} -> {out}", flush=True)
        run_logged(cmd, log, "onmt_translate")
        if not tmp.is_file():
            raise ToolkitError(f"onmt_translate wrote no {tmp}; see {log}")
        tmp.rename(out)

    def conversion(self, data: Dataset | None):
        from compsuite.toolkits.onmt.translator import OnmtConversion

        return OnmtConversion()

    def load(self, checkpoint, data: Dataset | None, kind: str = "translator",
             generation: Decoding = Decoding()):
        if kind != "translator":
            raise self._unsupported(kind)
        from compsuite.models import ctranslate2
        from compsuite.toolkits.checkpoints import existing
        from compsuite.toolkits.onmt.translator import OnmtTranslator

        return ctranslate2.load(self.conversion(data), existing(checkpoint), generation,
                                lambda: OnmtTranslator(
                                    Path(checkpoint),
                                    generation.batch(OnmtTranslator.BATCH_SIZE),
                                    generation.max_length,
                                    beam=generation.beam,
                                    length_penalty=generation.length_penalty))


BACKEND = OnmtBackend()
