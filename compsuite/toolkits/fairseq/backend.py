"""The fairseq backend: ``fairseq-preprocess`` data, ``fairseq-train`` /
``fairseq-generate`` with ``--user-dir fairseq_plugins``, and in-process models
through the translator and classifier protocols.

The training options are the run's: the study's ``toolkit_defaults.fairseq``, then the
run's ``args``, then its profile override, then a test's options (a value of ``null``
removes an option).  The task (``--task``) is one of them; predictions use the task
the run was trained with.  fairseq resumes from ``checkpoint_last.pt`` in its save
dir by itself.  A finished training whose scored checkpoint is not whole (truncated
after the run, e.g. by a full disk or a copy cut short) trains again, with a note; a
unit that evaluates that checkpoint of another unit names it, and the folder to delete.

One option is the suite's, not fairseq's: ``save_epochs: [1, 2, 4, ...]`` keeps the
model at those epochs only.  fairseq saves either every ``--save-interval``-th epoch
or none; a Transformer-base checkpoint with its Adam state is about 0.7 GB, so saving
all 160 epochs of a long run is not an option.  The backend trains in segments
instead (``--max-epoch`` of each listed epoch in turn, resuming from
``checkpoint_last.pt`` as fairseq does after an interruption: the same batches in the
same order, the same learning rate) and copies the model, without the optimizer
state, to ``checkpoint<E>.pt`` after each (its "epoch" checkpoints,
:meth:`FairseqBackend.saved_checkpoints`).
A resumed fairseq run is not bit-identical to an uninterrupted one: on the CPU, one
epoch after a resume the weights of a tiny model differed by up to 0.003 (measured
and documented by the study that uses ``save_epochs``).

A second one: ``score_checkpoint: best | last`` (default ``best``) names the model the
study scores: fairseq's ``checkpoint_best.pt`` (by ``--best-checkpoint-metric``) or the
model at the end of training, ``checkpoint_last.pt`` (what authors who report the
final model score).
"""
from __future__ import annotations

import os
import re
import shlex
import sys
import time
from pathlib import Path

from compsuite.devices import cuda_available
from compsuite.foundation.checkout import ROOT
from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import ConfigError, ToolkitError
from compsuite.foundation.io import atomic_open
from compsuite.models.decoding import Decoding
from compsuite.models.predictions import Predictions
from compsuite.processes import complete_checkpoint, set_aside_incomplete, thread_env
from compsuite.toolkits.base import (Backend, Checkpoint, begin_run, config_hash, finish_run,
                                     in_order, merge, run_to_file, run_with_progress,
                                     split_batch, to_cli)
from compsuite.toolkits.checkpoints import whole
from compsuite.toolkits.fairseq.data import fairseq_subsets, write_fairseq, write_fairseq_pairs
from compsuite.toolkits.writing import toolkit_command

USER_DIR = ROOT / "fairseq_plugins"


#: the names of the checkpoints :meth:`FairseqBackend.saved_checkpoints` lists
SAVED_UPDATE = re.compile(r"checkpoint_\d+_(\d+)\.pt")
SAVED_EPOCH = re.compile(r"checkpoint(\d+)\.pt")


class FairseqBackend(Backend):
    name = "fairseq"
    data_folder = "fairseq-bin"
    checkpoint_kinds = ("update", "epoch")
    title = "fairseq"
    checkpoint_file = "checkpoints/checkpoint_best.pt"
    checkpoint_advice = "do not pass --no-epoch-checkpoints"
    outputs = "fairseq-generate output"
    hypotheses = ("fairseq-generate or fairseq-interactive output for {inputs} (D- lines, "
                  "else H- lines)")

    def owns_checkpoint(self, path: Path, state) -> bool:
        """A file holding fairseq's configuration and model."""
        content = state() if path.is_file() else None
        return isinstance(content, dict) and "cfg" in content and "model" in content

    def read_outputs(self, path) -> Predictions:
        """fairseq-generate's output (:func:`read_fairseq_generate`)."""
        from compsuite.toolkits.fairseq.predictions import read_fairseq_generate

        return read_fairseq_generate(path)

    def read_hypotheses(self, path, n: int) -> list[str]:
        """fairseq-generate's or fairseq-interactive's output
        (:func:`read_fairseq_hypotheses`: detokenised where it has ``D-`` lines)."""
        from compsuite.toolkits.fairseq.predictions import read_fairseq_hypotheses

        return read_fairseq_hypotheses(path, n)

    def write_data(self, data: Dataset) -> Path:
        out = data.root / self.data_folder
        if data.layout == "sentence_pair":
            write_fairseq_pairs(data.raw, out, splits=data.splits)
            return out
        write_fairseq(data.raw, out, splits=data.splits, allow_unknown=data.allow_unknown,
                      joined_dictionary=data.joined_dictionary)
        return out

    def saved_checkpoints(self, folder: Path) -> list[Checkpoint]:
        """``checkpoint_<epoch>_<updates>.pt``, the checkpoints ``--save-interval-updates``
        writes (all kept with ``--keep-interval-updates -1``), as "update" checkpoints
        numbered by the updates; then ``checkpoint<epoch>.pt``, fairseq's end-of-epoch
        checkpoints or the ``save_epochs`` snapshots, as "epoch" ones.  Not
        ``checkpoint_best.pt`` nor ``checkpoint_last.pt``."""
        folder = Path(folder)
        if not folder.is_dir():
            return []
        updates: dict[int, Path] = {}
        epochs = []
        for p in folder.glob("checkpoint*.pt"):
            if m := SAVED_UPDATE.fullmatch(p.name):
                updates[int(m.group(1))] = p
            elif m := SAVED_EPOCH.fullmatch(p.name):
                epochs.append(Checkpoint("epoch", int(m.group(1)), p))
        return in_order([Checkpoint("update", n, p) for n, p in updates.items()] + epochs)

    def split_names(self, splits) -> dict[str, str]:
        """fairseq-preprocess names the test prefixes ``test``, ``test1``, ... (the
        ``--gen-subset`` names); train and valid keep theirs."""
        return {**{s: s for s in splits}, **fairseq_subsets(splits)}

    def before_threads(self) -> None:
        from argparse import Namespace

        from compsuite.toolkit_noise import import_toolkit

        import_toolkit("fairseq")    # its import-time noise kept off the terminal
        from fairseq import utils

        utils.import_user_module(Namespace(user_dir=str(USER_DIR)))

    def train_args(self, run, profile: str) -> dict:
        """The run's fairseq-train options in a profile (before seed and save dir)."""
        override = run.profiles.get(profile)
        if isinstance(override, str):
            raise ConfigError(f"run {run.name}: fairseq profile overrides are argument "
                              "mappings, not files")
        return merge(merge(run.defaults, run.args), override)

    def distributed(self, run, profile: str, gpus: int, extra: dict | None = None) -> dict:
        """fairseq-train's own data-parallel training: one process per GPU of the node
        (``distributed_world_size``), the update's batch split over them."""
        args = merge(self.train_args(run, profile), extra)
        where = f"{run.source or 'the study YAML'}: runs.{run.name} ({profile})"
        return {"distributed_world_size": gpus,
                **split_batch(args, gpus, "update_freq", ("batch_size", "max_tokens"), where)}

    def train(self, run, profile: str, data: Dataset, run_dir: Path, seed: int, *,
              threads: int | None = None, extra: dict | None = None,
              show: bool = True) -> dict:
        args = merge(self.train_args(run, profile), extra)
        args.update(seed=seed, save_dir=str(run_dir / "checkpoints"))
        if not cuda_available():
            args["cpu"] = True
        else:
            args = merge(args, run.gpu)
        h = config_hash(args)
        done = begin_run(run_dir, h)
        if done is not None:
            ckpt = Path(done["checkpoint"])
            if complete_checkpoint(ckpt):
                return done
            if args.get("save_epochs"):   # its epoch snapshots would be kept as they are
                whole(ckpt)
            print(f"compsuite: note: {ckpt} is missing or not a whole checkpoint (truncated?): "
                  f"{run.name} trains again", file=sys.stderr, flush=True)
            os.remove(run_dir / "train.json")   # the training is not finished after all
        epochs = save_epochs(args.pop("save_epochs", None), run.name)
        scored = score_checkpoint(args.pop("score_checkpoint", "best"), run.name)
        set_aside_cut_short(run_dir / "checkpoints")
        start = time.time()
        for stop in epochs or [None]:
            seg = dict(args)
            if stop is not None:
                snapshot = run_dir / "checkpoints" / f"checkpoint{stop}.pt"
                if snapshot.is_file():
                    continue
                seg.update(max_epoch=stop, no_epoch_checkpoints=True)
            cmd = toolkit_command("fairseq-train") + [str(data.folder(self.name)), "--user-dir",
                                                      str(USER_DIR)] + to_cli(seg)
            with atomic_open(run_dir / "command.txt") as fh:
                fh.write(shlex.join(cmd) + "\n")
            desc = f"train {run.name}" + (f" to epoch {stop}" if stop is not None else "")
            run_with_progress(cmd, run_dir / "train.log", desc,
                              None if stop is not None else args.get("max_update"),
                              r"num_updates[= ](\d+)", show=show, env=thread_env(threads))
            if stop is not None:
                keep_epoch(run_dir / "checkpoints", stop)
        if epochs:
            args["save_epochs"] = epochs
        if scored != "best":
            args["score_checkpoint"] = scored
        ckpt = run_dir / "checkpoints" / f"checkpoint_{scored}.pt"
        if not ckpt.is_file():
            raise ToolkitError(f"fairseq-train finished without {ckpt}; see {run_dir / 'train.log'}")
        return finish_run(run_dir, {"toolkit": self.name, "checkpoint": str(ckpt),
                                    "config_hash": h, "args": args,
                                    "wall_s": round(time.time() - start, 1), "threads": threads})

    def source_text(self, data: Dataset) -> Path:
        return data.raw   # the text the binarised data was made from

    def predict(self, trained: dict, data: Dataset, split: str, generation: Decoding,
                run_dir: Path, show: bool = True, wrap=None):
        from compsuite.toolkits.fairseq.predictions import read_fairseq_generate

        if generation.fast:
            preds = self.predict_fast(trained, data, split, generation, run_dir, show, wrap)
            if preds is not None:
                return preds
        out = run_dir / f"generate-{split}.txt"
        if not out.is_file():
            self.generate(trained, data, split, generation, out, show)
        return read_fairseq_generate(out)

    def generate(self, trained: dict, data: Dataset, split: str, generation: Decoding,
                 out: Path, show: bool) -> None:
        """``fairseq-generate`` on the split, its output into ``out``."""
        from compsuite.toolkits.fairseq.translator import FairseqTranslator

        task = trained.get("args", {}).get("task", "translation")
        cmd = toolkit_command("fairseq-generate") + [
            str(data.folder(self.name)), "--user-dir", str(USER_DIR), "--task", task,
            "--path", trained["checkpoint"],
            "--gen-subset", fairseq_subsets(data.splits).get(split, split),
            "--beam", str(generation.beam),
            "--batch-size", str(generation.batch(FairseqTranslator.BATCH_SIZE)),
            "--max-len-a", "0", "--max-len-b", str(generation.max_length),
        ]
        if not cuda_available():
            cmd.append("--cpu")
        src = data.raw / f"{split}.src"
        total = None
        if show and src.is_file():   # the bar's total: the split's sentences
            with open(src, "rb") as fh:
                total = sum(1 for _ in fh)
        try:
            run_to_file(cmd, out, out.parent / f"generate-{split}.log",
                        desc=f"fairseq-generate {split}", total=total,
                        line_pattern=r"H-\d+\t", show=show)
        except ToolkitError:
            whole(trained["checkpoint"])   # a truncated checkpoint: named, not the log
            raise

    def predict_fast(self, trained: dict, data: Dataset, split: str, generation: Decoding,
                     run_dir: Path, show: bool = True, wrap=None):
        """The split decoded by CTranslate2 (``pred-{split}.ct2.txt``, one output per
        line), beside its sources and references as fairseq-generate renders them (its
        dictionaries' ``<unk>``); None where CTranslate2 cannot decode the model
        (fairseq-generate then does)."""
        from compsuite.foundation.io import read_aligned, read_lines
        from compsuite.models.predictions import Predictions
        from compsuite.toolkits.fairseq.predictions import rendered

        out = self.translate_fast(trained, data, data.raw, split, generation, run_dir, show,
                                  wrap)
        if out is None:
            return None
        sources, targets = read_aligned(data.raw / f"{split}.src", data.raw / f"{split}.tgt")
        hyps = read_lines(out, allow_empty=True)
        folder = data.folder(self.name)
        return Predictions(hyps, rendered(folder / "dict.tgt.txt", targets, escape_unk=True),
                           rendered(folder / "dict.src.txt", sources),
                           {"format": "ctranslate2", "file": str(out)}, out)

    def conversion(self, data: Dataset | None):
        from compsuite.toolkits.fairseq.translator import FairseqConversion

        if data is None:
            raise ConfigError("a fairseq checkpoint needs --data (the fairseq-bin folder with "
                              "its dictionaries)")
        return FairseqConversion(data.folder(self.name))

    def load(self, checkpoint, data: Dataset | None, kind: str = "translator",
             generation: Decoding = Decoding()):
        if data is None:
            raise ConfigError("a fairseq checkpoint needs --data (the fairseq-bin folder with "
                              "its dictionaries)")
        folder = data.folder(self.name)
        if kind == "translator":
            from compsuite.models import ctranslate2
            from compsuite.toolkits.checkpoints import existing
            from compsuite.toolkits.fairseq.translator import FairseqTranslator

            batch = generation.batch(FairseqTranslator.BATCH_SIZE)
            return ctranslate2.load(self.conversion(data), existing(checkpoint), generation,
                                    lambda: FairseqTranslator(
                                        Path(checkpoint), folder, batch,
                                        generation.max_length,
                                        beam=generation.beam))
        if kind == "classifier":
            from compsuite.toolkits.fairseq.classifier import FairseqClassifier

            return FairseqClassifier(checkpoint, folder,
                                     generation.batch(FairseqClassifier.BATCH_SIZE))
        raise self._unsupported(kind)


def set_aside_cut_short(folder: Path) -> None:
    """Before fairseq resumes from ``folder``: set aside each checkpoint a kill cut
    short (fairseq writes one checkpoint atomically, then copies it to the others, e.g.
    ``checkpoint_last.pt``).  Without a whole ``checkpoint_best.pt`` the best model is
    lost, so ``checkpoint_last.pt`` goes too and the training starts again."""
    if not folder.is_dir():
        return
    bad = set_aside_incomplete(sorted(folder.glob("checkpoint*.pt")))
    if any(p.name == "checkpoint_best.pt" for p in bad):
        last = folder / "checkpoint_last.pt"
        if last.is_file():
            os.replace(last, last.with_name(last.name + ".incomplete"))


def score_checkpoint(value, run: str) -> str:
    """The ``score_checkpoint`` option checked: ``best`` or ``last``."""
    if value not in ("best", "last"):
        raise ConfigError(f"run {run}: score_checkpoint must be 'best' or 'last', "
                          f"not {value!r}")
    return value


def save_epochs(value, run: str) -> list[int] | None:
    """The ``save_epochs`` option checked: increasing positive epochs."""
    if value is None:
        return None
    if (not isinstance(value, list) or not value
            or not all(isinstance(e, int) and not isinstance(e, bool) and e > 0 for e in value)
            or sorted(set(value)) != value):
        raise ConfigError(f"run {run}: save_epochs must be a list of increasing positive "
                          f"epochs, not {value!r}")
    return value


def keep_epoch(folder: Path, epoch: int) -> Path:
    """Copy the model of ``checkpoint_last.pt`` (which must be at the end of
    ``epoch``) to ``checkpoint<epoch>.pt`` without its optimizer state."""
    import torch

    from compsuite.torch_compat import allow_toolkit_checkpoints

    allow_toolkit_checkpoints()
    last = folder / "checkpoint_last.pt"
    if not last.is_file():
        raise ToolkitError(f"fairseq-train left no {last}")
    state = torch.load(last, map_location="cpu", weights_only=False)
    reached = (state.get("extra_state") or {}).get("train_iterator", {}).get("epoch")
    # the iterator of a finished epoch E is stored as epoch E + 1 with no batch consumed
    itr = (state.get("extra_state") or {}).get("train_iterator", {})
    done = reached - 1 if itr.get("iterations_in_epoch", 0) == 0 else reached
    if done != epoch:
        raise ToolkitError(f"{last} holds epoch {done}, not {epoch} (did --max-update or "
                           "--patience stop the training first?)")
    state["last_optimizer_state"] = None
    out = folder / f"checkpoint{epoch}.pt"
    tmp = out.with_suffix(".pt.tmp")
    torch.save(state, tmp)
    tmp.replace(out)
    return out


BACKEND = FairseqBackend()
