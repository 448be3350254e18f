"""Train and predict with fairseq or OpenNMT-py through their own commands.

Everything toolkit-specific in the pipelines lives here (and in the data writers):
config assembly, the training command, resuming, and the prediction command.  The
toolkits' own loops do the work: ``fairseq-train``/``fairseq-generate`` with
``--user-dir fairseq_plugins``, ``onmt_train``/``onmt_translate`` with a YAML config
assembled from ``onmt_configs/`` and written beside the run.

Resuming: fairseq resumes from ``checkpoint_last.pt`` in its save dir by itself;
for OpenNMT-py the newest ``model_step_N.pt`` is passed as ``train_from``.  A
finished training leaves ``train.json`` (with a hash of the config that produced it);
a run folder whose config changed is refused rather than silently mixed.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from compsuite.data_prep.common.io import atomic_open
from compsuite.data_prep.common.writers import run_logged, toolkit_command
from compsuite.registry import ROOT, Run

FAIRSEQ_USER_DIR = ROOT / "fairseq_plugins"


@dataclass
class DataPaths:
    raw: Path
    fairseq_bin: Path
    onmt: Path


def cuda_available() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # pragma: no cover - torch is a dependency
        return False


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
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"# {' '.join(cmd)}\n")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, bufsize=1,
                                env={**os.environ, **env} if env else None)
        assert proc.stdout is not None
        for line in proc.stdout:
            fh.write(line)
            m = rx.search(line)
            if m:
                step = int(m.group(1))
                if step > bar.n:
                    bar.update(step - bar.n)
        rc = proc.wait()
    bar.close()
    if rc != 0:
        tail = "".join(log.read_text(encoding="utf-8", errors="replace").splitlines(True)[-20:])
        raise RuntimeError(f"{desc}: '{Path(cmd[0]).name}' failed (exit {rc}); log {log}:\n{tail}")


def _merge(base: dict, override: dict | None) -> dict:
    """Shallow merge; an override value of ``None`` removes the key."""
    out = dict(base)
    for k, v in (override or {}).items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def _config_hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _check_run_dir(run_dir: Path, config_hash: str) -> bool:
    """True if training already finished with this config; raise if another config did."""
    marker = run_dir / "train.json"
    if not marker.is_file():
        cfg_file = run_dir / "config_hash"
        if cfg_file.is_file() and cfg_file.read_text().strip() != config_hash:
            raise RuntimeError(f"{run_dir} holds an unfinished run with another configuration; "
                               "delete the folder to start again")
        return False
    done = json.loads(marker.read_text())
    if done.get("config_hash") != config_hash:
        raise RuntimeError(f"{run_dir} was trained with another configuration "
                           f"({done.get('config_hash')} != {config_hash}); delete it to retrain")
    return True


def _trained_checkpoint(run_dir: Path) -> str:
    """The checkpoint a finished training recorded in ``train.json``."""
    return json.loads((run_dir / "train.json").read_text())["checkpoint"]


def _finish(run_dir: Path, info: dict) -> dict:
    with atomic_open(run_dir / "train.json") as fh:
        json.dump(info, fh, indent=2)
    return info


def _to_cli(args: dict[str, Any]) -> list[str]:
    out = []
    for key, val in args.items():
        flag = "--" + key.replace("_", "-")
        if val is True:
            out.append(flag)
        elif val is False or val is None:
            continue
        elif isinstance(val, (list, tuple)):
            out += [flag] + [str(v) for v in val]
        else:
            out += [flag, str(val)]
    return out


# --------------------------------------------------------------------------- fairseq
FAIRSEQ_TASK_ARGS = {
    "task": "pcfgset_translation",
    "eval_accuracy": True,
    "best_checkpoint_metric": "seq_acc",
    "maximize_best_checkpoint_metric": True,
    "log_format": "simple",
    "log_interval": 50,
}


def fairseq_train_args(run: Run, profile: str) -> dict[str, Any]:
    override = run.profiles.get(profile)
    if isinstance(override, str):
        raise ValueError(f"run {run.name}: fairseq profile overrides are argument mappings")
    return _merge(_merge(FAIRSEQ_TASK_ARGS, run.args), override)


def thread_env(threads: int | None) -> dict[str, str] | None:
    """Environment that limits a training process to ``threads`` CPU threads (for
    trainings that run side by side); None leaves the defaults."""
    if not threads:
        return None
    return {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}


def fairseq_train(run: Run, profile: str, data: DataPaths, run_dir: Path, seed: int,
                  show: bool = True, extra: dict | None = None,
                  threads: int | None = None) -> dict:
    """``extra``: options a test adds to this run's training (merged last);
    ``threads``: CPU threads for the training process (default: torch's)."""
    args = _merge(fairseq_train_args(run, profile), extra)
    args.update(seed=seed, save_dir=str(run_dir / "checkpoints"))
    if not cuda_available():
        args["cpu"] = True
    h = _config_hash(args)
    if _check_run_dir(run_dir, h):
        return json.loads((run_dir / "train.json").read_text())
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config_hash").write_text(h + "\n")
    cmd = toolkit_command("fairseq-train") + [str(data.fairseq_bin), "--user-dir",
                                              str(FAIRSEQ_USER_DIR)] + _to_cli(args)
    with atomic_open(run_dir / "command.txt") as fh:
        fh.write(" ".join(cmd) + "\n")
    total = args.get("max_update")
    start = time.time()
    run_with_progress(cmd, run_dir / "train.log", f"train {run.name}", total,
                      r"num_updates[= ](\d+)", show=show, env=thread_env(threads))
    ckpt = run_dir / "checkpoints" / "checkpoint_best.pt"
    if not ckpt.is_file():
        raise RuntimeError(f"fairseq-train finished without {ckpt}; see {run_dir / 'train.log'}")
    return _finish(run_dir, {"toolkit": "fairseq", "checkpoint": str(ckpt), "config_hash": h,
                             "args": args, "wall_s": round(time.time() - start, 1),
                             "threads": threads})


def fairseq_predict(run_dir: Path, data: DataPaths, split: str, generation: dict,
                    show: bool = True) -> Path:
    out = run_dir / f"generate-{split}.txt"
    if out.is_file():
        return out
    ckpt = _trained_checkpoint(run_dir)
    cmd = toolkit_command("fairseq-generate") + [
        str(data.fairseq_bin), "--user-dir", str(FAIRSEQ_USER_DIR), "--task", "pcfgset_translation",
        "--path", ckpt, "--gen-subset", split, "--beam", str(generation.get("beam", 1)),
        "--batch-size", str(generation.get("batch_size", 256)),
        "--max-len-a", "0", "--max-len-b", str(generation.get("max_length", 512)),
    ]
    if not cuda_available():
        cmd.append("--cpu")
    if show:
        print(f"fairseq-generate: {split} -> {out}", flush=True)
    _run_to_file(cmd, out, run_dir / f"generate-{split}.log")
    return out


# --------------------------------------------------------------------------- OpenNMT-py
def onmt_config(run: Run, profile: str, data: DataPaths, run_dir: Path, seed: int) -> dict:
    if not run.config:
        raise ValueError(f"run {run.name}: OpenNMT-py runs need a base config")
    cfg = _load_yaml(ROOT / run.config)
    override = run.profiles.get(profile)
    if isinstance(override, str):
        override = _load_yaml(ROOT / override)
    cfg = _merge(cfg, override)
    cfg.update({
        "data": {
            "corpus_1": {"path_src": str(data.onmt / "train.src"),
                         "path_tgt": str(data.onmt / "train.tgt")},
            "valid": {"path_src": str(data.onmt / "valid.src"),
                      "path_tgt": str(data.onmt / "valid.tgt")},
        },
        "src_vocab": str(data.onmt / "src.vocab"),
        "tgt_vocab": str(data.onmt / "tgt.vocab"),
        "save_model": str(run_dir / "checkpoints" / "model"),
        "seed": seed,
    })
    if cuda_available():
        cfg.setdefault("world_size", 1)
        cfg.setdefault("gpu_ranks", [0])
    return cfg


def _load_yaml(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"config file {path} not found") from None
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: malformed YAML: {e}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of OpenNMT-py options")
    return data


def _onmt_checkpoints(run_dir: Path) -> list[Path]:
    def step(p: Path) -> int:
        return int(re.search(r"_step_(\d+)\.pt$", p.name).group(1))

    return sorted((run_dir / "checkpoints").glob("model_step_*.pt"), key=step)


def onmt_train(run: Run, profile: str, data: DataPaths, run_dir: Path, seed: int,
               show: bool = True, extra: dict | None = None) -> dict:
    """``extra``: options a test adds to this run's training (merged last)."""
    cfg = _merge(onmt_config(run, profile, data, run_dir, seed), extra)
    h = _config_hash(cfg)
    if _check_run_dir(run_dir, h):
        return json.loads((run_dir / "train.json").read_text())
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config_hash").write_text(h + "\n")
    existing = _onmt_checkpoints(run_dir)
    final = dict(cfg)
    if existing:  # resume an interrupted run
        final["train_from"] = str(existing[-1])
    config_path = run_dir / "config.yaml"
    with atomic_open(config_path) as fh:
        fh.write(f"# written by compsuite from {run.config} (+ {profile} profile); "
                 f"run: onmt_train -config {config_path}\n")
        yaml.safe_dump(final, fh, sort_keys=False)
    cmd = toolkit_command("onmt_train") + ["-config", str(config_path)]
    start = time.time()
    run_with_progress(cmd, run_dir / "train.log", f"train {run.name}", cfg.get("train_steps"),
                      r"Step (\d+)/", show=show)
    ckpts = _onmt_checkpoints(run_dir)
    if not ckpts:
        raise RuntimeError(f"onmt_train wrote no checkpoint; see {run_dir / 'train.log'}")
    return _finish(run_dir, {"toolkit": "onmt", "checkpoint": str(ckpts[-1]), "config_hash": h,
                             "config": str(config_path), "wall_s": round(time.time() - start, 1)})


def onmt_predict(run_dir: Path, data: DataPaths, split: str, generation: dict,
                 show: bool = True) -> Path:
    out = run_dir / f"pred-{split}.txt"
    if out.is_file():
        return out
    ckpt = _trained_checkpoint(run_dir)
    tmp = out.with_name(out.name + ".tmp")
    cmd = toolkit_command("onmt_translate") + [
        "-model", ckpt, "-src", str(data.onmt / f"{split}.src"), "-output", str(tmp),
        "-beam_size", str(generation.get("beam", 1)),
        "-batch_size", str(generation.get("batch_size", 256)),
        "-max_length", str(generation.get("max_length", 512)),
    ]
    if cuda_available():
        cmd += ["-gpu", "0"]
    log = run_dir / f"translate-{split}.log"
    if show:
        print(f"onmt_translate: {split} -> {out}", flush=True)
    run_logged(cmd, log, "onmt_translate")
    if not tmp.is_file():
        raise RuntimeError(f"onmt_translate wrote no {tmp}; see {log}")
    tmp.rename(out)
    return out


def _run_to_file(cmd: list[str], out: Path, log: Path) -> None:
    """Run ``cmd`` with stdout into ``out`` (atomically) and stderr into ``log``."""
    with atomic_open(out) as fh, open(log, "w", encoding="utf-8") as err:
        proc = subprocess.run(cmd, stdout=fh, stderr=err, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"'{Path(cmd[0]).name}' failed (exit {proc.returncode}); see {log}")


TRAIN = {"fairseq": fairseq_train, "onmt": onmt_train}
PREDICT = {"fairseq": fairseq_predict, "onmt": onmt_predict}
