"""The Hugging Face backend: a causal or sequence-to-sequence language model from a
local folder (``transformers``), fine-tuned with LoRA (``peft``) or fully by
``transformers.Trainer``, translating through the translator protocol.

A run's ``args`` (declared by :class:`Settings`; a profile's override merges over them
key by key) say where the model comes from and how it is trained:

* ``model``: a local folder with a model and its tokenizer (``${LLAMA2_DIR}``:
  environment variables and ``~`` are expanded).  Nothing is ever downloaded: every
  load passes ``local_files_only``; an unset variable or a missing folder is a
  ConfigError naming the key;
* or ``build``: a small model built from a config in the suite (``architecture``, a
  ``transformers`` model type such as ``llama``; ``config``, its sizes;
  ``tokenizer_vocab``), with a BPE tokenizer trained on the dataset's own training
  text: a stand-in that runs on a CPU, built once per dataset under
  ``<dataset>/hf/`` (the same weights for every training seed, as one pretrained
  model is for the paper's seeds);
* ``kind``: ``causal`` (the prompt, then the answer, then the end-of-sentence token;
  the loss on the answer only) or ``seq2seq`` (the prompt in the encoder); for an
  evaluate-only run also ``classifier`` (a sequence-classification model), and absent,
  the kind the model's ``config.json`` says (a training run: ``causal``);
* ``train``: ``false`` makes the run evaluate-only: the model of ``model`` is evaluated
  as it is, nothing is trained (set in ``args``, not per profile: whether a run trains
  is the run's own).  :meth:`HFBackend.train` then writes ``model/compsuite_hf.json``
  into the unit's folder (the model folder, kind, prompt, stops), the run's
  "checkpoint", which loads like any checkpoint of the backend; ``labels``: a
  classifier's class names in its output order (absent: its ``config.id2label``);
* ``prompt``: the template, ``{input}`` standing for the source;
* ``prompting`` (an evaluate-only causal model): prompted as a served model is, with
  the study's templates and demonstrations (a
  :class:`~compsuite.models.prompting.PromptSpec`'s keys: the study's
  ``toolkit_defaults.hf.prompting``, then the run's ``args.prompting`` and its
  profile's, merged key by key; ``--shots``/``--demos`` over them for ``--hf-model``;
  a null at any of them leaves the run unprompted, on its ``prompt`` alone).  A
  prompted run's own ``prompt``, ``stop`` and ``max_new_tokens`` (and ``--hf-prompt``)
  are its prompting's ``template``, ``stop`` and ``max_tokens``.  Its prompts are
  tokenized and decoded as ``transformers serve`` does (the text with the tokenizer's
  special tokens, or the messages through the tokenizer's chat template; greedy, one
  prompt at a time unless ``prompt_batch_size`` says more), so that the same weights
  served give the same answers; a classification is the likeliest label word; the raw
  answers are kept beside those read (:mod:`compsuite.toolkits.hf.prompted`,
  docs/prompting.md).  A run that trains, a classifier and a sequence-to-sequence
  model are not prompted (a study's prompting is left out for them);
* ``lora``: ``r``, ``alpha``, ``dropout``, ``target_modules`` (absent or null:
  every weight is trained);
* the schedule: ``learning_rate``, ``batch_size`` (sentences per update),
  ``micro_batch_size`` (per forward pass; the rest is gradient accumulation),
  ``epochs`` or ``max_steps``, ``warmup_steps``, ``weight_decay``, ``max_length``
  (tokens of prompt and answer; longer examples are cut, and counted; at most the
  model's positions, which a larger value is lowered to, with a notice);
* ``save_steps``: a checkpoint every N updates (absent: one per epoch).  A LoRA
  checkpoint holds the adapter only;
* on a GPU only: ``precision`` (``bf16`` or ``fp16`` mixed precision) and
  ``load_in_8bit`` (bitsandbytes; refused without CUDA).

Training runs in a child process (``python -m compsuite.toolkits.hf.train
CONFIG.json``, :mod:`compsuite.toolkits.hf.train`, the command a user can rerun),
resumes from its newest checkpoint, and writes into each checkpoint
``compsuite_hf.json`` (prompt, kind, answer stop), so any
checkpoint folder loads as a translator by itself.  The dataset must carry plain text
(``Dataset.text``, or raw ``{split}.src``/``.tgt`` files that are plain already): the
model brings its own tokenizer.
"""
from __future__ import annotations

import json
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from compsuite.devices import cuda_available
from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import ConfigError, DataError, ToolkitError
from compsuite.foundation.io import atomic_open, read_lines
from compsuite.models.decoding import Decoding
from compsuite.processes import thread_env
from compsuite.schema import PositiveInt, check, join
from compsuite.toolkits.base import (Backend, Checkpoint, begin_run, config_hash, finish_run,
                                     in_order, merge, predict_split, run_with_progress,
                                     UserSystem)
from compsuite.models.prompting import PROMPTING_OPTIONS
from compsuite.toolkits.hf.translator import META, folder_kind, model_class, read_meta

#: the training process never reaches the Hugging Face hub
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
#: the checkpoints' folder in a run folder, and their names (Trainer's)
CHECKPOINTS = "checkpoints"
PREFIX = "checkpoint-"
#: an evaluate-only run's "checkpoint": a folder in the run folder with its compsuite_hf.json
EVALUATE_ONLY = "model"


# ----------------------------------------------------------------------------- the YAML
@dataclass
class Lora:
    """LoRA's settings (Hu et al. 2022) as ``peft.LoraConfig`` takes them."""
    r: PositiveInt = 8
    alpha: float = 16
    dropout: float = 0.05
    target_modules: list[str] = field(default_factory=lambda: ["q_proj", "v_proj"])


@dataclass
class Build:
    """A stand-in model built from a config (no pretrained weights)."""
    architecture: str = "llama"
    config: dict[str, Any] = field(default_factory=dict)
    tokenizer_vocab: PositiveInt = 1000
    #: the weights' seed (one model for every training seed)
    seed: int = 0


@dataclass
class Settings:
    """A run's ``args`` for the hf backend (see the module docstring)."""
    model: str | None = None
    build: Build | None = None
    #: None: the model's own (from its config; ``causal`` for a training run)
    kind: Literal["causal", "seq2seq", "classifier"] | None = None
    #: false: an evaluate-only run (the model as it is; nothing trained)
    train: bool = True
    #: a classifier's class names in its output order (None: its config's id2label)
    labels: list[str] | None = None
    prompt: str = "{input}"
    #: the answer ends at the first of these strings (besides the end-of-sentence token)
    stop: list[str] = field(default_factory=lambda: ["\n"])
    lora: Lora | None = None
    learning_rate: float = 1e-4
    batch_size: PositiveInt = 64
    micro_batch_size: PositiveInt | None = None
    epochs: float = 1.0
    max_steps: PositiveInt | None = None
    warmup_steps: int = 0
    weight_decay: float = 0.0
    max_length: PositiveInt = 256
    save_steps: PositiveInt | None = None
    precision: Literal["fp32", "bf16", "fp16"] = "fp32"
    load_in_8bit: bool = False
    #: None: the development set's longest target plus a margin (the translator's
    #: answer_room), 256 where there is none
    max_new_tokens: PositiveInt | None = None
    #: processes torchrun starts, one per GPU of the node (set from a Slurm job's
    #: ``resources.gpus``: :meth:`HFBackend.distributed`); 1: no torchrun
    gpus: PositiveInt = 1
    #: an evaluate-only causal model prompted as a served one (a
    #: :class:`~compsuite.models.prompting.PromptSpec`'s keys; see :func:`settings`);
    #: None: the plain ``prompt`` template above
    prompting: dict[str, Any] | None = None
    #: prompted inputs decoded at once: 1, one at a time as a server answers them (the
    #: answers equal a served model's); more, left-padded batches (faster, and may
    #: differ from the server's in a near tie: docs/prompting.md)
    prompt_batch_size: PositiveInt = 1

    def __post_init__(self):
        if self.kind is None and self.train:
            self.kind = "causal"

    def check(self, where: str) -> None:
        if not self.train and self.build is not None:
            raise ConfigError(f"{join(where, 'build')}: a stand-in built from a config has "
                              "random weights: it must be trained (train: true), or give "
                              "the model's folder (model:) to evaluate it as it is")
        if self.train and self.kind == "classifier":
            raise ConfigError(f"{join(where, 'kind')}: the hf backend trains causal or seq2seq "
                              "models; a classifier is evaluated as it is (train: false)")
        if self.labels is not None and self.kind not in (None, "classifier"):
            raise ConfigError(f"{join(where, 'labels')}: only for a classifier (kind: "
                              f"classifier), not kind {self.kind}")
        if (self.model is None) == (self.build is None):
            raise ConfigError(f"{join(where, 'model')}: give the model's local folder "
                              "(model: ${LLAMA2_DIR}, say) or a stand-in to build (build:), "
                              "one of them")
        if self.prompting is not None:
            if self.train:
                raise ConfigError(f"{join(where, 'prompting')}: a run that trains is not "
                                  "prompted (prompting is for a model evaluated as it is: "
                                  "train: false)")
            self.spec(where)
        elif "{input}" not in self.prompt:
            raise ConfigError(f"{join(where, 'prompt')}: the template has no {{input}}: "
                              f"{self.prompt!r}")
        if self.micro_batch_size and self.batch_size % self.micro_batch_size:
            raise ConfigError(f"{join(where, 'micro_batch_size')}: {self.micro_batch_size} "
                              f"does not divide batch_size {self.batch_size}")
        micro = self.micro_batch_size or self.batch_size
        if self.batch_size % (micro * self.gpus):
            raise ConfigError(f"{join(where, 'batch_size')}: {self.gpus} GPUs (resources.gpus) "
                              f"cannot share batch_size {self.batch_size} in micro-batches of "
                              f"{micro}: choose a number of GPUs that divides it")

    def spec(self, where: str = ""):
        """The prompting (:class:`~compsuite.models.prompting.PromptSpec`), checked;
        None for a run that is not prompted."""
        from compsuite.models.prompting import prompt_spec

        if self.prompting is None:
            return None
        return prompt_spec(self.prompting, join(where, "prompting"))


#: a plain run's keys that a prompted run reads as its prompting's (its own ``prompt``,
#: ``stop`` and ``max_new_tokens``, or ``--hf-prompt``, over the study's prompting)
AS_PROMPTING = {"prompt": "template", "stop": "stop", "max_new_tokens": "max_tokens"}


def merged_args(run, profile: str, gpu: bool = False) -> tuple[dict, dict]:
    """The study's ``toolkit_defaults.hf``, the run's ``args``, its profile's override
    (and on a GPU its ``gpu`` options), in that order (a null removes a key), with
    ``prompting`` merged key by key (a null at any of them: not prompted).  Where the
    result is prompted, the run's own ``prompt``, ``stop`` and ``max_new_tokens`` (its
    args and override; ``--hf-prompt``) are its prompting's ``template``, ``stop`` and
    ``max_tokens``, over the study's; the run giving both one of these and the
    prompting's own key is an error naming both.  A run that trains is not prompted
    (the study's prompting is left out; the run's own is an error).  Returns the
    arguments, and the prompting keys the run itself sets (key -> where)."""
    override = run.profiles.get(profile)
    at = f"{run.source or 'the study YAML'}: runs.{run.name}"
    if override is not None and not isinstance(override, dict):
        raise ConfigError(f"{at}.profiles.{profile}: a mapping of hf options")
    for key, extra in ((f"profiles.{profile}", override), ("gpu", run.gpu)):
        if extra and "train" in extra:
            raise ConfigError(f"{at}.{key}.train: set train in the run's args (whether a run "
                              "trains is the run's own, in every profile)")
    layers = [("toolkit_defaults.hf", run.defaults or {}), ("args", run.args or {}),
              (f"profiles.{profile}", override or {})]
    prompting: dict | None = None
    own: dict = {}   # the prompting keys the run itself sets
    for name, layer in layers:
        if "prompting" not in layer:
            continue
        given = layer["prompting"]
        if given is None:
            prompting, own = None, {}
            continue
        if not isinstance(given, dict):
            raise ConfigError(f"{at}.{name}.prompting: a mapping of prompting settings "
                              f"(template, shots, ...), not {type(given).__name__}")
        prompting = merge(prompting or {}, given)
        if name != layers[0][0]:
            own.update({k: name for k in given})
    args = merge(merge(merge(run.defaults or {}, run.args), override),
                 run.gpu if gpu else None)
    args.pop("prompting", None)
    if prompting is not None and (run.args or {}).get("train", True) is not False:
        if own:   # a trained run of a study whose hf runs are prompted is not
            key = next(iter(own))
            raise ConfigError(f"{at}.{own[key]}.prompting: a run that trains is not "
                              "prompted (prompting is for a model evaluated as it is: "
                              "train: false)")
        prompting = None
    if prompting is not None:
        for name, layer in layers[1:]:
            for key, target in AS_PROMPTING.items():
                if key not in layer or layer[key] is None:
                    continue
                if target in own:
                    raise ConfigError(f"{at}.{name}.{key}: a prompted run's {key} is its "
                                      f"prompting.{target}, which {own[target]}.prompting "
                                      f"sets too: give one of them")
                prompting[target] = layer[key]
        args["prompting"] = prompting
    return args, own


def settings(run, profile: str, gpu: bool = False) -> Settings:
    """The run's ``args`` with its profile's override (and on a GPU its ``gpu``
    options), checked; errors name the key."""
    override = run.profiles.get(profile)
    at = f"{run.source or 'the study YAML'}: runs.{run.name}"
    args, own = merged_args(run, profile, gpu)
    s = check(Settings, args, f"{at}.args")
    if s.model is not None:
        from compsuite.data_prep.common.paths import resolve_path

        model_key = f"{at}.args.model" + (f" (or profiles.{profile}.model)" if override else "")
        s.model = str(resolve_path(s.model, model_key))
    if s.prompting is not None:
        kind = s.kind or model_kind(s, f"{at}.args")
        if kind != "causal":   # a classifier in a study whose hf models are prompted
            if own:
                key = next(iter(own))
                raise ConfigError(f"{at}.{own[key]}.prompting: prompting is for a causal "
                                  f"language model, and this run's is a {kind} model "
                                  f"({s.model}); leave prompting out for it")
            s.prompting = None
    return s


# ----------------------------------------------------------------------------- the backend
class HFBackend(Backend):
    name = "hf"
    checkpoint_kinds = ("step",)   # Trainer's save_steps
    checkpoint_folder = CHECKPOINTS
    title = "Hugging Face"
    system_options = ("--hf-model", "--hf-prompt", *PROMPTING_OPTIONS)

    def add_system_arguments(self, parser) -> None:
        from compsuite.foundation.arguments import folder_path
        from compsuite.models.prompting import add_prompting_arguments

        parser.add_argument("--hf-model", metavar="DIR", type=folder_path,
                            help="evaluate a local Hugging Face model folder as it is "
                                 "(translator or classifier, by its config) in every unit, "
                                 "as the run --name (as --model-cmd)")
        parser.add_argument("--hf-prompt", metavar="TEMPLATE",
                            help="with --hf-model: the prompt, {input} for the input "
                                 "(default: the input alone; where the study prompts its "
                                 "models, the template of its prompting)")
        add_prompting_arguments(parser)

    def engine_unfit(self, checkpoint: str | Path) -> tuple[str, str] | None:
        return f"a Hugging Face model folder ({checkpoint})", "transformers decodes it"

    def usage(self, run_dir: Path) -> dict | None:
        """A prompted model's usage record in ``run_dir`` (prompts answered, tokens in
        and out, wall time, how it was prompted: :mod:`compsuite.toolkits.hf.prompted`);
        None for any other run."""
        from compsuite.toolkits.hf.prompted import read_usage

        return read_usage(run_dir)

    def owns_checkpoint(self, path: Path, state) -> bool:
        """A folder: Trainer's checkpoints and model folders are folders."""
        return path.is_dir()

    def user_system(self, options) -> UserSystem | None:
        """A local model folder evaluated as it is (``--hf-model``, with
        ``--hf-prompt``: ``\\n`` in it a newline), prompted where the study prompts its
        models (its ``toolkit_defaults.hf.prompting``) or where ``--shots``/``--demos``
        say how (over the study's prompting)."""
        from compsuite.models.prompting import prompting_overrides

        folder = getattr(options, "hf_model", None)
        if not folder:
            return None
        args: dict[str, Any] = {"model": folder, "train": False}
        if getattr(options, "hf_prompt", None):
            args["prompt"] = options.hf_prompt.replace("\\n", "\n")
        overrides = prompting_overrides(options)
        if overrides:   # how it was asked is named in reports from its results' usage
            args["prompting"] = overrides
        return UserSystem(args, f"a Hugging Face model folder ({folder})",
                          "transformers decodes it")

    def before_threads(self) -> None:
        import importlib

        importlib.import_module("transformers")  # once, before trainings run in threads

    def write_data(self, data: Dataset) -> Path:
        # a classifier's sentence pairs are read from the raw files by the study
        return plain(data) if data.layout == "text_to_text" else data.raw

    def trains(self, run) -> bool:
        return run.args.get("train", True) is not False

    def system(self, run, profile: str) -> dict | None:
        if self.trains(run):
            return None
        s = settings(run, profile)
        if s.prompting is None:
            return {"model": s.model, "kind": s.kind, "prompt": s.prompt}
        spec = s.spec()
        return {"model": s.model, "kind": "causal", "prompting": spec.label(),
                "template_sha256": spec.sha256(), "prompt_batch_size": s.prompt_batch_size}

    def saved_checkpoints(self, folder: Path) -> list[Checkpoint]:
        return saved(folder)

    def config(self, run, profile: str, data: Dataset, run_dir: Path, seed: int) -> dict:
        """The training process's whole config (what ``config.json`` holds)."""
        cuda = cuda_available()
        s = settings(run, profile, gpu=cuda)
        text = plain(data)
        base = s.model or str(build_folder(data, s.build, s.prompt))
        # train and labels are not the training's (left out: the hash of a run is kept)
        kept = {k: v for k, v in asdict(s).items()
                if k not in ("train", "labels", "prompting", "prompt_batch_size")
                and (k != "gpus" or v != 1)}   # one GPU: the config (and its hash) as before
        return {"settings": kept, "base": base, "seed": seed,
                "train": [str(text / "train.src"), str(text / "train.tgt")],
                "out": str(run_dir / CHECKPOINTS), "cuda": cuda}

    def distributed(self, run, profile: str, gpus: int, extra: dict | None = None) -> dict:
        """torchrun's processes, one per GPU of the node (Trainer's data-parallel
        training), an update's ``batch_size`` kept: each GPU its micro-batches
        (``batch_size / gpus`` where the run sets none), the accumulation steps divided."""
        s = settings(run, profile, gpu=True)
        at = f"{run.source or 'the study YAML'}: runs.{run.name}.args"
        if not s.train:
            raise ConfigError(f"{at}: an evaluate-only run trains nothing to spread over "
                              f"{gpus} GPUs (resources.gpus)")
        out: dict = {"gpus": gpus}
        if s.micro_batch_size is None and s.batch_size % gpus == 0:
            out["micro_batch_size"] = s.batch_size // gpus
        check(Settings, merge(merge(asdict(s), extra), out), at)   # refuses a batch it cannot split
        return out

    def train(self, run, profile: str, data: Dataset, run_dir: Path, seed: int, *,
              threads: int | None = None, extra: dict | None = None,
              show: bool = True) -> dict:
        if not self.trains(run):
            return evaluate_only(run, profile, Path(run_dir), threads)
        cfg = self.config(run, profile, data, run_dir, seed)
        if extra:
            cfg["settings"] = merge(cfg["settings"], extra)
        h = config_hash(cfg)
        done = begin_run(run_dir, h)
        if done is not None:
            return done
        s = check(Settings, cfg["settings"], f"{run.source or 'the study YAML'}: runs.{run.name}.args")
        stand_in = None
        if s.build is not None:
            stand_in = describe(build(data, s.build, s.prompt, show=show))
        config_path = run_dir / "config.json"
        with atomic_open(config_path) as fh:
            json.dump(cfg, fh, indent=2)
        cmd = [sys.executable, "-m", "compsuite.toolkits.hf.train", str(config_path)]
        if s.gpus > 1:   # one process per GPU (the Trainer's data-parallel training)
            cmd[1:2] = ["-m", "torch.distributed.run", "--standalone",
                        f"--nproc-per-node={s.gpus}", "-m"]
        start = time.time()
        run_with_progress(cmd, run_dir / "train.log", f"train {run.name}", None,
                          r"^step (\d+)/", show=show, env={**(thread_env(threads) or {}),
                                                             **OFFLINE})
        ckpts = checkpoints(run_dir)
        if not ckpts:
            raise ToolkitError(f"the hf training wrote no checkpoint; see {run_dir / 'train.log'}")
        return finish_run(run_dir, {"toolkit": self.name, "checkpoint": str(ckpts[-1][1]),
                                    "config_hash": h, "config": str(config_path),
                                    "base": cfg["base"], "stand_in": stand_in,
                                    "wall_s": round(time.time() - start, 1), "threads": threads})

    def source_text(self, data: Dataset) -> Path:
        return plain(data)

    def predict(self, trained: dict, data: Dataset, split: str, generation: Decoding,
                run_dir: Path, show: bool = True, wrap=None):
        return predict_split(self, trained, data, plain(data), split, generation, run_dir,
                             show, wrap=wrap)

    def load(self, checkpoint, data: Dataset | None, kind: str = "translator",
             generation: Decoding = Decoding()):
        if kind in ("translator", "classifier") and (Path(checkpoint) / META).is_file():
            meta = read_meta(Path(checkpoint))   # a folder of the backend's: how to prompt it
            if meta.get("prompting") is not None:   # an evaluate-only run, prompted
                from compsuite.models.prompting import prompt_spec
                from compsuite.toolkits.hf.prompted import PromptedLM

                where = str(Path(checkpoint) / META)
                spec = prompt_spec(meta["prompting"], f"{where}: prompting")
                return PromptedLM(checkpoint, spec, data,
                                  folder=Path(checkpoint).parent if meta.get("evaluate_only")
                                  else None, batch_size=int(meta.get("prompt_batch_size") or 1))
        if kind == "classifier":
            from compsuite.toolkits.hf.classifier import HFClassifier

            return HFClassifier(Path(checkpoint),
                                batch_size=generation.batch_or_auto(HFClassifier.BATCH_SIZE))
        if kind != "translator":
            raise self._unsupported(kind)
        from compsuite.toolkits.hf.translator import HFTranslator

        return HFTranslator(Path(checkpoint),
                            batch_size=generation.batch_or_auto(HFTranslator.BATCH_SIZE),
                            max_new_tokens=generation.max_new_tokens,
                            beam=generation.beam, references=dev_targets(data),
                            merge=generation.merge)


BACKEND = HFBackend()


def plain(data: Dataset) -> Path:
    """The dataset's plain-text folder (``{split}.src``, ``{split}.tgt``): its ``text``,
    else its raw folder where that holds ``.src`` files (raw text that is plain
    already)."""
    if data.text is not None:
        return data.text
    if any(data.raw.glob("*.src")):
        return data.raw
    raise ConfigError(f"{data.root}: the hf backend reads plain text (its model brings "
                      "its own tokenizer), and this dataset has none (no Dataset.text, no "
                      f"{{split}}.src in {data.raw})")


def dev_targets(data: Dataset | None) -> list[str] | None:
    """The development set's targets (``valid.tgt`` of the plain text), which size a
    translator's answers where the run sets no ``max_new_tokens``; None where there
    are none."""
    if data is None:
        return None
    try:
        path = plain(data) / "valid.tgt"
    except ConfigError:
        return None
    if not path.is_file():
        return None
    from compsuite.foundation.io import read_lines

    return read_lines(path)


# ----------------------------------------------------------------------------- evaluate-only runs
def model_kind(s: Settings, at: str) -> str:
    """An evaluate-only run's kind: the one its settings give, checked against the model
    folder's config (a kind the config contradicts is an error naming the key), else
    the config's."""
    folder = Path(s.model)
    if not (folder / "config.json").is_file():
        if s.kind and (folder / "adapter_config.json").is_file():
            return s.kind   # a LoRA adapter: its config.json is its base model's
        raise ConfigError(f"{at}.model: {folder} is not a Hugging Face model folder (no "
                          "config.json: save the model and its tokenizer there with "
                          "save_pretrained)")
    try:
        found = folder_kind(folder)
    except DataError as e:
        raise ConfigError(f"{at}.model: {e}") from None
    # "causal" is what a config that says nothing else gives: a seq2seq model may be one
    if s.kind is not None and s.kind != found and (found != "causal" or s.kind == "classifier"):
        raise ConfigError(f"{at}.kind: {s.kind}, but {folder / 'config.json'} describes a "
                          f"{found} model")
    return s.kind or found


def evaluate_only(run, profile: str, run_dir: Path, threads: int | None) -> dict:
    """Train nothing: write ``<run_dir>/model/compsuite_hf.json`` naming the model folder
    and how to prompt it (what :class:`~compsuite.toolkits.hf.translator.
    HFTranslator` and the hf classifier load), and say where it is."""
    s = settings(run, profile, gpu=cuda_available())
    at = f"{run.source or 'the study YAML'}: runs.{run.name}.args"
    kind = model_kind(s, at)
    meta = {"model": str(Path(s.model).resolve()), "kind": kind, "prompt": s.prompt,
            "stop": s.stop, "max_new_tokens": s.max_new_tokens, "evaluate_only": True}
    if s.prompting is not None:   # prompted as a served model is (compsuite.toolkits.hf.prompted)
        meta = {"model": meta["model"], "kind": kind, "prompting": s.spec(at).as_dict(),
                "prompt_batch_size": s.prompt_batch_size, "evaluate_only": True}
    if s.labels is not None:
        meta["labels"] = s.labels
    folder = run_dir / EVALUATE_ONLY
    with atomic_open(folder / META) as fh:
        json.dump(meta, fh, indent=2)
    return {"toolkit": BACKEND.name, "checkpoint": str(folder), "evaluate_only": True,
            "base": meta["model"], "kind": kind, "stand_in": None, "wall_s": 0.0,
            "threads": threads}


def saved(folder: Path) -> list[Checkpoint]:
    """The ``checkpoint-N`` folders in ``folder`` that hold a model, in step order."""
    found = []
    for p in Path(folder).glob(PREFIX + "*"):
        step = p.name[len(PREFIX):]
        if p.is_dir() and step.isdigit() and (p / META).is_file():
            found.append(Checkpoint("step", int(step), p))
    return in_order(found)


def checkpoints(run_dir: Path) -> list[tuple[int, Path]]:
    """``checkpoints/checkpoint-N`` folders that hold a model, as (step, folder) in
    step order."""
    return [(c.at, c.path) for c in saved(Path(run_dir) / CHECKPOINTS)]


# ----------------------------------------------------------------------------- stand-in models
def build_folder(data: Dataset, spec: Build, prompt: str) -> Path:
    """Where the stand-in of ``spec`` (its tokenizer trained with ``prompt``) for this
    dataset lives."""
    return data.root / "hf" / f"{spec.architecture}-{config_hash([asdict(spec), prompt])}"


def build(data: Dataset, spec: Build, prompt: str, show: bool = True) -> Path:
    """A stand-in model (``spec``) with a BPE tokenizer trained on the dataset's training
    text (the sources inside ``prompt``, and the targets), written once (atomically)
    and reused: the same bytes for the same data, spec and prompt."""
    out = build_folder(data, spec, prompt)
    if (out / "config.json").is_file():
        return out
    import torch
    from transformers import AutoConfig

    text = plain(data)
    lines = [prompt.format(input=x) for x in read_lines(text / "train.src")]
    tok = train_tokenizer(lines + read_lines(text / "train.tgt"), spec.tokenizer_vocab)
    cfg = AutoConfig.for_model(spec.architecture, vocab_size=len(tok), pad_token_id=tok.pad_token_id,
                               bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                               decoder_start_token_id=tok.bos_token_id, **spec.config)
    torch.manual_seed(spec.seed)
    model = model_class("seq2seq" if cfg.is_encoder_decoder else "causal").from_config(cfg)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    with atomic_open(tmp / "compsuite_build.json") as fh:
        json.dump({"spec": asdict(spec), "trained_on": [str(text / "train.src"),
                                                       str(text / "train.tgt")],
                   "parameters": sum(p.numel() for p in model.parameters()),
                   "note": "a stand-in built from a config: random weights, not a "
                           "pretrained model"}, fh, indent=2)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    if show:
        print(f"hf: built a {spec.architecture} stand-in in {out}", file=sys.stderr, flush=True)
    return out


def describe(folder: Path) -> str:
    """What a built stand-in is, in a few words (for reports)."""
    info = json.loads((folder / "compsuite_build.json").read_text(encoding="utf-8"))
    spec, cfg = info["spec"], json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return (f"a {spec['architecture']} model built from a config: "
            f"{cfg.get('num_hidden_layers', '?')} layers, d {cfg.get('hidden_size', '?')}, "
            f"{info['parameters']:,} parameters, random weights trained on this dataset; "
            f"byte-level BPE tokenizer of {cfg.get('vocab_size')} trained on its training text")


def train_tokenizer(lines: list[str], vocab: int):
    """A byte-level BPE tokenizer trained on ``lines`` (Llama's special tokens: ``<unk>``
    0, also the padding, as Alpaca-LoRA pads; ``<s>`` 1, ``</s>`` 2)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=["<unk>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(lines, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>",
                                   eos_token="</s>", pad_token="<unk>")

