"""The toolkit backend interface and what every backend shares.

A backend wraps one toolkit behind the same small interface:

* :meth:`Backend.write_data`: the dataset's raw ``{split}.{src,tgt}`` text in the
  toolkit's format (in ``Dataset.root / data_folder``);
* :meth:`Backend.train`: train one run with the toolkit's own loop, on ``threads`` CPU
  threads, resuming an interrupted run; a finished run leaves ``train.json``;
* :meth:`Backend.predict`: a split's predictions
  (:class:`~compsuite.models.predictions.Predictions`), by the toolkit's own prediction
  command, or by CTranslate2 where the decoding settings ask for it and it decodes as
  the toolkit does (:meth:`Backend.conversion`); what was written is kept for a resumed
  evaluation;
* :meth:`Backend.predict_lines`: some lines of a split (a sample of the development
  set), by the backend's translator in memory;
* :meth:`Backend.load`: a checkpoint as a translator or a classifier (a
  :class:`compsuite.models.protocol.Model`), for tests with the model in the loop;
* :meth:`Backend.checkpoints`: the checkpoints a training saved on its way
  (:class:`Checkpoint`: kind, number, path), for a study that tests or selects them;
  :attr:`Backend.checkpoint_kinds` says which kinds a backend saves.  Only the backend
  knows its toolkit's file names: studies and evaluations ask it;
* what the rest of the suite would otherwise have to know of the toolkit: its name in
  reports (:attr:`Backend.title`), whether a checkpoint is its own
  (:meth:`Backend.owns_checkpoint`), the validation scores its training logged
  (:meth:`Backend.validation_scores`), its own output files
  (:meth:`Backend.read_outputs`, :meth:`Backend.read_hypotheses`), a system the user
  brings on the command line (:attr:`Backend.system_options`,
  :meth:`Backend.user_system`, :meth:`Backend.user_model`)
  and whether it is the backend of answer files (:attr:`Backend.answers_files`).  No
  module outside a toolkit's package names the toolkit.

Run folders: a finished training leaves ``train.json`` with a hash of the
configuration that produced it, and an unfinished one ``config_hash``; a folder
whose configuration changed is refused rather than silently mixed.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import ConfigError, DataError, ToolkitError
from compsuite.foundation.io import atomic_open, write_text
from compsuite.models.decoding import Decoding
from compsuite.models.predictions import Predictions, read_plain
from compsuite.processes import child


#: the kinds of checkpoint a training saves on its way, finest first:
#:
#: * ``"step"``: every N training steps, numbered by the step (OpenNMT-py's
#:   ``save_checkpoint_steps``, Trainer's ``save_steps``);
#: * ``"update"``: every N updates where the toolkit saves by epoch unless asked
#:   (fairseq's ``--save-interval-updates``), numbered by the updates;
#: * ``"epoch"``: at the end of an epoch, numbered by the epoch.
#:
#: "step" and "update" both count optimizer updates; they stay apart because results
#: record the kind, and a study that selects among "step" checkpoints takes no run whose
#: toolkit saves by epoch unless asked.  A model's final or best checkpoint (fairseq's
#: ``checkpoint_best.pt``) is none of these.
CHECKPOINT_KINDS = ("step", "update", "epoch")


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint a training saved on its way: its ``kind`` (one of
    :data:`CHECKPOINT_KINDS`), ``at`` (its step, update or epoch number) and ``path``
    (a file, or a folder for Trainer's checkpoints)."""

    kind: str
    at: int
    path: Path


@dataclass(frozen=True)
class UserSystem:
    """A system brought on the command line (:meth:`Backend.user_system`): ``args``,
    the evaluate-only run's arguments, ``what`` it is and why CTranslate2 does not
    decode it (``instead``, the notice's words where an engine was asked for)."""

    args: dict
    what: str
    instead: str


def in_order(found, kinds=CHECKPOINT_KINDS) -> list[Checkpoint]:
    """``found`` (checkpoints) by kind, in the order of ``kinds``, then by number."""
    rank = {k: i for i, k in enumerate(kinds)}
    return sorted(found, key=lambda c: (rank[c.kind], c.at, str(c.path)))


class Backend:
    """A toolkit behind the suite's interface (see the module docstring)."""

    name: str = ""
    #: where :meth:`write_data` writes, under the dataset's root (None: reads raw text)
    data_folder: str | None = None
    #: the kinds of checkpoint (:data:`CHECKPOINT_KINDS`) a training of this backend
    #: saves on its way, which :meth:`checkpoints` lists
    checkpoint_kinds: tuple[str, ...] = ()
    #: the folder of a run folder the training saves its checkpoints in
    checkpoint_folder: str = "checkpoints"
    #: how to make its training keep the checkpoints it saves on its way (the error on a
    #: folder without any); None: nothing to say
    checkpoint_advice: str | None = None
    #: the toolkit's name in reports and messages (:func:`compsuite.toolkits.title`;
    #: empty: the backend's :attr:`name`)
    title: str = ""
    #: a checkpoint file its training writes, as a user would name it (the example of
    #: the error on a file no backend owns); None: its checkpoints are no such files
    checkpoint_file: str | None = None
    #: what :meth:`validation_scores` reads (recorded with a checkpoint chosen by it);
    #: None: the training logs no validation score per checkpoint
    validation: str | None = None
    #: the name and settings of the signature of :meth:`validation_scores`'s score (a
    #: :class:`compsuite.eval.metrics.signature.Signature`'s, with the selection's rule)
    validation_metric: tuple[str, dict] | None = None
    #: the output file of the toolkit's own prediction command, which
    #: :meth:`read_outputs` reads (``compsuite eval accuracy --<name> FILE``); None: its
    #: outputs are plain text, one per line
    outputs: str | None = None
    #: the output files :meth:`read_hypotheses` reads (a study's ``--<name>-output
    #: FILE``), ``{inputs}`` where the inputs are named; None: none
    hypotheses: str | None = None
    #: whether this is the backend of answer files, through which ``compsuite export``
    #: records a study's inputs and ``compsuite score`` replays the answers (its run's
    #: ``args``: ``mode``, ``record`` or ``replay``; ``inputs``; ``answers``)
    answers_files: bool = False
    #: the options of ``compsuite run`` that bring a system of this backend's
    #: (:meth:`add_system_arguments`): the one that names the system first, then those
    #: that go with it; () where it has none
    system_options: tuple[str, ...] = ()

    def write_data(self, data: Dataset) -> Path:
        return data.raw

    def before_threads(self) -> None:
        """Called once, in the main thread, before this backend's models are trained
        and loaded in several threads at once (import what is not thread-safe to
        import)."""

    def trains(self, run) -> bool:
        """Whether :meth:`train` trains ``run``: False for an evaluate-only run (a model
        or a program brought by the user), whose :meth:`train` only says where the
        model is (``{"checkpoint": ..., "evaluate_only": True}``)."""
        return True

    def system(self, run, profile: str) -> dict | None:
        """For an evaluate-only run, what identifies the model or program evaluated (a
        command, a model folder): recorded in each result, and a stored result of another
        system under the same run name is refused rather than reused.  None: a trained
        run (its training folder checks its configuration)."""
        return None

    def same_system(self, before, now: dict) -> bool:
        """Whether ``before`` (the ``system`` a stored result records) identifies the
        system that :meth:`system` names ``now``: by default, when the two are equal."""
        return before == now

    def train(self, run, profile: str, data: Dataset, run_dir: Path, seed: int, *,
              threads: int | None = None, extra: dict | None = None,
              show: bool = True) -> dict:
        raise NotImplementedError

    def predict(self, trained: dict, data: Dataset, split: str, generation: Decoding,
                run_dir: Path, show: bool = True, wrap=None) -> Predictions:
        raise NotImplementedError

    def distributed(self, run, profile: str, gpus: int, extra: dict | None = None) -> dict:
        """The training options (over ``extra``, the unit's own) that spread one unit's
        training over ``gpus`` GPUs of its node with the toolkit's own distributed
        training, the batch of an update kept (:func:`split_batch`); a batch the GPUs
        cannot divide, or a backend that trains on one device, is a ConfigError."""
        raise ConfigError(f"{run.source or 'the study YAML'}: runs.{run.name}: the "
                          f"{self.name} backend trains on one device, not {gpus} GPUs "
                          "(resources.gpus)")

    def source_text(self, data: Dataset) -> Path:
        """The folder whose ``{split}.src`` :meth:`predict` decodes (and
        :meth:`predict_lines` reads): the text this backend's models read."""
        return model_text(data)

    def predict_lines(self, trained: dict, data: Dataset, split: str, lines: Sequence[int],
                      generation: Decoding, out: Path, show: bool = False) -> list[str]:
        """The outputs of ``trained``'s model for the lines ``lines`` (0-based, in that
        order) of ``split``'s sources (:meth:`source_text`), as :meth:`predict` writes
        its outputs; kept in ``out``, one per line, and read back when it holds them.
        Decoded by the backend's translator in memory (:meth:`load`: CTranslate2 where
        the settings ask for it and it decodes as the toolkit does), which batches them
        among themselves: what a study scores on a sample of a split (a checkpoint
        selection on a sample of the development set) before it decodes the best few
        in full with :meth:`predict`."""
        from compsuite.foundation.io import read_lines

        out = Path(out)
        if out.is_file():
            kept = read_lines(out, allow_empty=True)
            if len(kept) == len(lines):
                return kept
        sources = read_lines(self.source_text(data) / f"{split}.src")
        bad = [i for i in lines if not 0 <= i < len(sources)]
        if bad:
            raise DataError(f"{self.source_text(data) / f'{split}.src'}: {len(sources)} lines, "
                            f"no line {bad[0] + 1}")
        out.parent.mkdir(parents=True, exist_ok=True)
        model = self.load(trained["checkpoint"], data, "translator", generation)
        return decode_into(model, [sources[i] for i in lines], f"translate {split}", out, show)

    def checkpoints(self, run_dir: Path, kind: str | None = None) -> list[Checkpoint]:
        """The checkpoints a training saved on its way in ``run_dir`` (for a study that
        tests or selects them), of ``kind`` or of every kind this backend saves: by
        kind (:data:`CHECKPOINT_KINDS` order), then by number.  A kind this backend does
        not save is an error."""
        if kind is not None and kind not in self.checkpoint_kinds:
            saves = ", ".join(self.checkpoint_kinds) or "none"
            raise ConfigError(f"the {self.name} backend saves no {kind!r} checkpoints "
                              f"(it saves: {saves})")
        found = self.saved_checkpoints(Path(run_dir) / self.checkpoint_folder)
        return [c for c in found if kind is None or c.kind == kind]

    def saved_checkpoints(self, folder: Path) -> list[Checkpoint]:
        """The checkpoints in ``folder``, a folder this backend's training saves its
        checkpoints in (a run's :attr:`checkpoint_folder`, or one the user names), in
        :meth:`checkpoints`'s order; none where there is no such folder.  What a
        backend whose :attr:`checkpoint_kinds` is not empty defines."""
        if not self.checkpoint_kinds:
            raise ConfigError(f"the {self.name} backend does not list its checkpoints")
        raise NotImplementedError

    def owns_checkpoint(self, path: Path, state) -> bool:
        """Whether ``path`` is a checkpoint of this toolkit (for
        :func:`compsuite.toolkits.load_checkpoint` without ``toolkit``): ``state()``
        gives what torch loads from a file (called only for a file, once for all the
        backends asked).  By default no checkpoint is recognised."""
        return False

    def validation_scores(self, run_dir: Path) -> dict[int, float]:
        """Step -> the validation score (:attr:`validation`) the training logged in
        ``run_dir`` for the checkpoint saved at that step, for each checkpoint saved
        right after a validation; a log without any is a ToolkitError.  Only for a
        backend whose :attr:`validation` is set."""
        raise ConfigError(f"the {self.name} backend logs no validation score per checkpoint")

    def read_outputs(self, path: str | Path) -> Predictions:
        """The toolkit's own prediction output file (:attr:`outputs`) with its
        references (and sources), read into :class:`Predictions`."""
        raise ConfigError(f"the {self.name} backend has no output file of its own to read")

    def read_hypotheses(self, path: str | Path, n: int) -> list[str]:
        """The best hypothesis for each of ``n`` inputs, in their order, from the
        toolkit's own prediction output (:attr:`hypotheses`; no references needed)."""
        raise ConfigError(f"the {self.name} backend has no output file of its own to read")

    def add_system_arguments(self, parser) -> None:
        """Add :attr:`system_options` to ``compsuite run``'s ``parser``, each with its
        type and help."""

    def add_model_arguments(self, sources, parser, reads: str = "") -> None:
        """Add to a model-in-the-loop command (``compsuite eval ...``) the options that
        bring this backend's system of the user's instead of a checkpoint: what names
        it to ``sources`` (the command's group of model sources), what qualifies it to
        ``parser``; ``reads``: what the system reads, for the help.  Nothing by default
        (a checkpoint is named by ``--checkpoint``)."""

    def user_system(self, options) -> UserSystem | None:
        """The evaluate-only run of a system the user brings, from the options of
        ``compsuite run`` (``options``, checked already): None where they bring none of
        this backend's."""
        return None

    def user_model(self, system: UserSystem, batch_size: int, env: dict | None = None):
        """The model of ``system`` (:meth:`user_system`'s, from the same options of a
        model-in-the-loop command) in this process: ``batch_size`` inputs a request,
        ``env`` set for a program it starts."""
        raise ConfigError(f"the {self.name} backend brings no system of the user's")

    def split_names(self, splits) -> dict[str, str]:
        """The name this backend's data folder gives each split of ``splits`` (what its
        training options name a split by); the split's own name unless it renames it."""
        return {s: s for s in splits}

    def load(self, checkpoint: str | Path, data: Dataset | None, kind: str = "translator",
             generation: Decoding = Decoding()):
        raise NotImplementedError

    def usage(self, run_dir: Path) -> dict | None:
        """What evaluating the unit in ``run_dir`` cost and how it was asked (a served
        model's requests sent and answered from its cache, tokens, wall time, the
        server's model id, the prompt's hash), recorded in its result as ``usage``;
        None (nothing recorded) by default."""
        return None

    def engine_unfit(self, checkpoint: str | Path) -> tuple[str, str] | None:
        """Where CTranslate2 never decodes this backend's ``checkpoint`` (the toolkit
        has no conversion): what the checkpoint is and what decodes it instead, for the
        notice that ``--engine ctranslate2`` is left unused; None where it may (whether
        it can is then decided as it loads: :meth:`fast_translator`)."""
        return None

    def conversion(self, data: Dataset | None):
        """CTranslate2's view of this toolkit's checkpoints (a
        :class:`compsuite.models.ctranslate2.Conversion`; ``data``: the dataset the model
        was trained on), or None: CTranslate2 does not decode this toolkit's models."""
        return None

    def translate_fast(self, trained: dict, data: Dataset, text: Path, split: str,
                       generation: Decoding, run_dir: Path, show: bool = True,
                       wrap=None) -> Path | None:
        """``run_dir/pred-{split}.<tag>.txt``: ``text/{split}.src`` decoded by CTranslate2
        (:func:`translate_split`; the tag names the precision, see
        :func:`compsuite.models.ctranslate2.prediction_tag`), kept and read back when
        resumed; None where CTranslate2 cannot decode the model as the toolkit does (a
        notice said why): the toolkit's own command then predicts."""
        from compsuite.models.ctranslate2 import prediction_tag

        out = run_dir / f"pred-{split}.{prediction_tag(generation)}.txt"
        model = None if out.is_file() else self.fast_translator(trained, data, generation)
        if model is None and not out.is_file():
            return None
        return translate_split(self, trained, data, text, split, generation, run_dir, show,
                               model=model, name=out.name, wrap=wrap)

    def fast_translator(self, trained: dict, data: Dataset, generation: Decoding):
        """CTranslate2's translator of ``trained``'s checkpoint, to predict a split with;
        None where CTranslate2 cannot decode it as the toolkit does (a notice said why):
        the toolkit's own command then predicts."""
        from compsuite.models import ctranslate2
        from compsuite.toolkits.checkpoints import existing

        return ctranslate2.translator(
            self.conversion(data), existing(trained["checkpoint"]), generation,
            lambda: self.load(trained["checkpoint"], data, "translator", generation.toolkit()))

    def _unsupported(self, kind: str):
        return ConfigError(f"the {self.name} backend cannot load a model as a {kind}")


class TextModelBackend(Backend):
    """A backend whose model reads text as it is (a program, answer files): it predicts
    a split through its own translator, on the dataset's plain text where it has some
    (``Dataset.text``), else its raw files; and trains nothing (an evaluate-only run)."""

    def trains(self, run) -> bool:
        return False

    def checkpoints(self, run_dir: Path, kind: str | None = None) -> list[Checkpoint]:
        return []   # nothing was trained: the one model is the run's "checkpoint"

    def saved_checkpoints(self, folder: Path) -> list[Checkpoint]:
        return []

    def predict(self, trained: dict, data: Dataset, split: str, generation: Decoding,
                run_dir: Path, show: bool = True, wrap=None) -> Predictions:
        return predict_split(self, trained, data, model_text(data), split, generation,
                             run_dir, show, wrap=wrap)

    def write_settings(self, path: Path, settings: dict) -> Path:
        """An evaluate-only run's settings, written atomically into its unit folder
        (``path``): the run's "checkpoint", which :meth:`read_settings` reads back."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path) as fh:
            json.dump(settings, fh, indent=2)
        return path

    def read_settings(self, checkpoint, kind: str, schema):
        """The settings :meth:`write_settings` wrote at ``checkpoint``, read into
        ``schema`` (checked) for a model of ``kind`` (a translator or a classifier); a
        missing or unreadable file is a DataError naming it."""
        from compsuite.schema import check

        if kind not in ("translator", "classifier"):
            raise self._unsupported(kind)
        path = Path(checkpoint)
        if not path.is_file():
            raise DataError(f"{path}: no such file (the settings an evaluate-only "
                            f"{self.name} run writes into its unit folder)")
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            raise DataError(f"{path}: not JSON; delete the unit's folder to write it "
                            "again") from None
        return check(schema, stored, str(path))


def translate_split(backend: Backend, trained: dict, data: Dataset, text: Path, split: str,
                    generation: Decoding, run_dir: Path, show: bool = True, model=None,
                    name: str | None = None, wrap=None) -> Path:
    """``run_dir/pred-{split}.txt`` (or ``name``): the backend's translator (or
    ``model``, loaded already; ``wrap``: what it is wrapped in first, see
    :attr:`compsuite.studies.base.Context.wrap`) on ``text/{split}.src``, one output per
    line (kept: a resumed evaluation reads it back)."""
    from compsuite.foundation.io import read_lines

    out = Path(run_dir) / (name or f"pred-{split}.txt")
    if out.is_file():
        return out
    sources = read_lines(Path(text) / f"{split}.src")
    if model is None:
        model = backend.load(trained["checkpoint"], data, "translator", generation)
    if wrap is not None:
        model = wrap(model)
    decode_into(model, sources, f"translate {split}", out, show)
    return out


def decode_into(model, sources: list[str], desc: str, out: Path, show: bool) -> list[str]:
    """``model``'s outputs for ``sources`` (one request, named ``desc``, as its bar),
    one line each (a newline in an output becomes a space), written atomically to
    ``out``; the model is closed afterwards."""
    from compsuite.models.protocol import closing, translate

    with closing(model):
        hyps = [h.replace("\n", " ") for h in translate(model, sources, desc, show=show)]
    with atomic_open(out) as fh:
        fh.writelines(h + "\n" for h in hyps)
    return hyps


def predict_split(backend: Backend, trained: dict, data: Dataset, text: Path, split: str,
                  generation: Decoding, run_dir: Path, show: bool = True, model=None,
                  name: str | None = None, fmt: str = "plain", wrap=None) -> Predictions:
    """:func:`translate_split`'s outputs beside ``text/{split}.tgt`` and ``.src``."""
    out = translate_split(backend, trained, data, text, split, generation, run_dir, show,
                          model, name, wrap)
    return read_plain(out, Path(text) / f"{split}.tgt", Path(text) / f"{split}.src", fmt)


def model_text(data: Dataset) -> Path:
    """The text a model that reads text as it is gets: the dataset's plain text where
    it has some, else its raw files."""
    return Path(data.text) if data.text is not None else data.raw


# ----------------------------------------------------------------------------- shared helpers
def merge(base: dict, override: dict | None) -> dict:
    """Shallow merge; an override value of ``None`` removes the key."""
    out = dict(base)
    for k, v in (override or {}).items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def split_batch(options: dict, gpus: int, accumulation: str, batches: tuple[str, ...],
                where: str) -> dict:
    """The options that keep the batch of one update when ``gpus`` processes each take
    a share of it (a toolkit's data-parallel training: each GPU its own batch, the
    gradients summed): the ``accumulation`` steps divided by ``gpus`` where they can be
    (each GPU's batch stays the run's), else each batch size of ``batches`` that the
    options set; neither divisible: a ConfigError naming ``where``."""
    accum = options.get(accumulation, 1)
    listed = isinstance(accum, list)
    steps = accum[0] if listed and len(accum) == 1 else accum
    if isinstance(steps, str) and steps.isdigit():
        steps = int(steps)
    if isinstance(steps, int) and steps % gpus == 0:
        steps //= gpus
        return {accumulation: [steps] if listed else steps}
    sizes = {k: options[k] for k in batches if options.get(k) is not None}
    if sizes and all(isinstance(v, int) and v % gpus == 0 for v in sizes.values()):
        return {k: v // gpus for k, v in sizes.items()}
    said = ", ".join(f"{k} {v}" for k, v in sizes.items()) or "no batch size"
    raise ConfigError(f"{where}: {gpus} GPUs (resources.gpus) cannot share the batch of an "
                      f"update ({said}, {accumulation} {accum}): choose a number of GPUs "
                      f"that divides {accumulation} or the batch size")


def config_hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def begin_run(run_dir: Path, h: str) -> dict | None:
    """The stored ``train.json`` when training already finished with this configuration
    (hash ``h``); otherwise None, after marking the folder with ``h``.  A folder
    holding another configuration's run, finished or not, is an error."""
    marker = run_dir / "train.json"
    if marker.is_file():
        done = json.loads(marker.read_text())
        if done.get("config_hash") != h:
            raise ToolkitError(f"{run_dir} was trained with another configuration "
                               f"({done.get('config_hash')} != {h}); delete it to retrain")
        return done
    cfg_file = run_dir / "config_hash"
    if cfg_file.is_file() and cfg_file.read_text().strip() != h:
        raise ToolkitError(f"{run_dir} holds an unfinished run with another configuration; "
                           "delete the folder to start again")
    write_text(cfg_file, h + "\n")
    return None


def finish_run(run_dir: Path, info: dict) -> dict:
    with atomic_open(run_dir / "train.json") as fh:
        json.dump(info, fh, indent=2)
    return info


def to_cli(args: dict[str, Any]) -> list[str]:
    """``{"max_update": 10, "cpu": True}`` -> ``["--max-update", "10", "--cpu"]``.  A
    negative number goes as ``--flag=value``: argparse reads a separate ``-1e-09`` as an
    option, not as the flag's value."""
    out = []
    for key, val in args.items():
        flag = "--" + key.replace("_", "-")
        if val is True:
            out.append(flag)
        elif val is False or val is None:
            continue
        elif isinstance(val, (list, tuple)):
            out += [flag] + [str(v) for v in val]
        elif isinstance(val, (int, float)) and val < 0:
            out.append(f"{flag}={val}")
        else:
            out += [flag, str(val)]
    return out


def run_with_progress(cmd: list[str], log: Path, desc: str, total: int | None,
                      step_pattern: str, show: bool = True,
                      env: dict[str, str] | None = None) -> None:
    """Run ``cmd``, copy its output to ``log``, and show a progress bar driven by the
    step numbers the toolkit prints (``step_pattern``'s first group).  ``env``: extra
    environment variables for the command."""
    from tqdm import tqdm

    rx = re.compile(step_pattern)
    log.parent.mkdir(parents=True, exist_ok=True)
    bar = tqdm(total=total, desc=desc, unit="step", disable=not show, leave=True)
    # line-buffered: the log on disk follows the training (a user may tail it)
    with bar, open(log, "a", encoding="utf-8", buffering=1) as fh:
        fh.write(f"# {' '.join(cmd)}\n")
        with child(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                   bufsize=1, env={**os.environ, **env} if env else None) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                fh.write(line)
                m = rx.search(line)
                if m:
                    step = int(m.group(1))
                    if step > bar.n:
                        bar.update(step - bar.n)
            rc = proc.wait()
    if rc != 0:
        tail = "".join(log.read_text(encoding="utf-8", errors="replace").splitlines(True)[-20:])
        raise ToolkitError(f"{desc}: '{Path(cmd[0]).name}' failed (exit {rc}); log {log}:\n{tail}")


def run_to_file(cmd: list[str], out: Path, log: Path, desc: str = "",
                total: int | None = None, line_pattern: str | None = None,
                show: bool = False) -> None:
    """Run ``cmd`` with stdout into ``out`` (atomically) and stderr into ``log``; with
    ``show`` and ``line_pattern``, a bar over the ``total`` output lines that match it
    (e.g. fairseq-generate's ``H-`` lines: one per sentence translated)."""
    from tqdm import tqdm

    rx = re.compile(line_pattern) if line_pattern else None
    with atomic_open(out) as fh, open(log, "w", encoding="utf-8") as err, \
            tqdm(total=total, desc=desc, unit="sentence", disable=not (show and rx)) as bar:
        with child(cmd, stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1,
                   env={**os.environ, "PYTHONUNBUFFERED": "1"}) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                fh.write(line)
                if rx is not None and rx.match(line):
                    bar.update(1)
            rc = proc.wait()
        if rc != 0:
            raise ToolkitError(f"'{Path(cmd[0]).name}' failed (exit {rc}); see {log}")
