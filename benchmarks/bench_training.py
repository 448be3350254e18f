"""Where the time of a training goes: one quick model per toolkit, trained for a fixed
number of updates as the suite trains it, against a bare PyTorch loop of the same model.

    .venv/bin/python benchmarks/bench_training.py [--updates 300] [--rounds 3]
        [--events 5] [--toolkits fairseq onmt] [--profile quick] [--data-root DIR] [--json F]
        [--fairseq STUDY/RUN] [--onmt STUDY/RUN]

The models are by default PCFG SET's quick ``transformer-fairseq`` (fairseq) and
``lstms2s-onmt`` (OpenNMT-py), on the data the profile's first unit that trains each
trains it on (generated and written by the suite's runner into ``--data-root``, a
temporary folder by default; not timed).  Each training is the suite's own: the
backend's ``train`` (the ``fairseq-train`` command it writes to ``command.txt``, the
``onmt_train`` config it writes to ``config.yaml``), one CPU thread (the suite's
``--threads 1``), the kernels pinned as ``compsuite`` pins them (compsuite/kernels.py),
with a test's training options (``extra``) to set the updates and, in the measuring
variants, the validations and checkpoints.  Each round runs, per toolkit, in this order:

* ``suite``: ``--updates`` updates with the profile's validation and checkpoint settings;
* ``off``: the same without validation and with one checkpoint, at the end;
* ``validation``: ``off`` with a validation every N / ``--events`` updates: one
  validation's time is the difference of the loops (below) from ``off``'s / the
  validations the log shows;
* ``checkpoints``: ``off`` with a checkpoint every N / ``--events`` updates, likewise;
* ``start-up``: the suite's command with ``--help`` (python, the toolkit's imports, its
  options parsed);
* ``bare``: a process of its own that builds the same model with the toolkit's own model
  builder from the suite's command or config, the same batches (the toolkit's batch
  iterator, collated before the loop), the same optimiser (torch's Adam, or AdamW where
  the run decays weights, with the run's lr, betas and gradient clipping), one thread,
  and runs N updates (forward, the toolkit's loss, backward, step).

The suite's parts are medians over the rounds: start-up; validation and checkpoint
writing (the suite run's count from its log x the time of one); updates, the rest of
the training's loop as the toolkit's log times it (fairseq-train's "done training in";
onmt_train's "Start training loop" to its last checkpoint: the loop in which OpenNMT-py
also starts its batch loader's processes and fills its buckets); data loading and
set-up, the rest of the ``suite`` run's wall time (reading the data, building the
model, the process's exit).  The bare loop times its own parts.  Printed: the table of
parts, the ratio suite / bare of the wall times and of one update (the toolkit's own
cost per update).  Nothing is compared with a threshold: it measures (figures in
docs/benchmarks.md).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: toolkit -> study/run: the models measured by default
MODELS = {"fairseq": "pcfgset/transformer-fairseq", "onmt": "pcfgset/lstms2s-onmt"}
#: the parts of a training, in the table's order
PARTS = ("start-up", "data loading and set-up", "validation", "checkpoint writing", "updates")
#: an interval no training of this benchmark reaches
NEVER = 10 ** 9


# ----------------------------------------------------------------- the toolkits' options
def options(toolkit: str, variant: str, n: int, events: int) -> dict:
    """The training options (a test's ``extra``) of a variant at ``n`` updates."""
    every = max(1, n // events)
    if toolkit == "fairseq":
        off = {"disable_validation": True, "save_interval_updates": 0, "save_interval": NEVER,
               "no_epoch_checkpoints": True, "score_checkpoint": "last"}
        steps = "max_update"
        more = {"validation": {"disable_validation": None, "validate_interval_updates": every,
                               "validate_interval": NEVER},
                "checkpoints": {"save_interval_updates": every}}
    else:
        off = {"valid_steps": NEVER, "save_checkpoint_steps": NEVER}
        steps = "train_steps"
        more = {"validation": {"valid_steps": every},
                "checkpoints": {"save_checkpoint_steps": every}}
    if variant == "suite":
        return {steps: n}
    return {**off, **more.get(variant, {}), steps: n}


#: toolkit -> (a validation's log line, a checkpoint's log line)
EVENTS = {"fairseq": (re.compile(r"valid on '([^']+)' subset"), re.compile(r"Saved checkpoint")),
          "onmt": (re.compile(r"Validation perplexity"), re.compile(r"Saving checkpoint"))}


#: onmt_train's log lines: their time, and what they say
ONMT_LINE = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) INFO\] (.*)")


def loop_time(toolkit: str, log: Path) -> float:
    """The seconds of a training's loop (updates, validations, checkpoints), by the
    toolkit's own log: fairseq-train's "done training in S seconds" (its timer around
    the loop over epochs); onmt_train's time from "Start training loop" to its last
    "Saving checkpoint" (OpenNMT-py starts its batch loader's processes inside it)."""
    from datetime import datetime

    text = log.read_text(encoding="utf-8", errors="replace")
    if toolkit == "fairseq":
        found = re.findall(r"done training in ([\d.]+) seconds", text)
        if not found:
            raise SystemExit(f"bench_training: {log} says no 'done training in'")
        return float(found[-1])
    start = end = None
    for line in text.splitlines():
        if m := ONMT_LINE.match(line):
            at = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S").timestamp() \
                + int(m.group(2)) / 1000
            if m.group(3).startswith("Start training loop"):
                start = at
            elif m.group(3).startswith("Saving checkpoint"):
                end = at
    if start is None or end is None:
        raise SystemExit(f"bench_training: {log} has no training loop and checkpoint")
    return end - start


def count_events(toolkit: str, log: Path) -> tuple[int, int]:
    """The validations and checkpoints a training's log shows (fairseq logs a line per
    validated subset: a validation is a line of the first subset)."""
    valid, saved = EVENTS[toolkit]
    first, validations, checkpoints = None, 0, 0
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if m := valid.search(line):
            subset = m.group(1) if m.groups() else ""
            first = subset if first is None else first
            validations += subset == first
        elif saved.search(line):
            checkpoints += 1
    return validations, checkpoints


# ----------------------------------------------------------------- the suite's trainings
def setup(models: dict[str, str], profile: str, data_root: Path) -> dict:
    """toolkit -> (run, data, seed): each model's run and the data it trains on in the
    profile's first task unit, prepared by the suite's runner."""
    from compsuite.registry import get_study
    from compsuite.runner import Runner

    out = {}
    for toolkit, name in models.items():
        study_name, run_name = name.split("/")
        study = get_study(study_name)
        run = study.run(run_name)
        if run.toolkit != toolkit:
            raise SystemExit(f"bench_training: {name} trains with {run.toolkit}, not {toolkit}")
        runner = Runner(study, profile, data_root=data_root, runs_root=data_root / "runs",
                        show=False)
        unit = next((u for u in runner.plan(runs=[run_name]) if u.trains), None)
        if unit is None:
            raise SystemExit(f"bench_training: {name} trains in no unit of the {profile} "
                             "profile")
        runner.prepare([unit])
        out[toolkit] = (run, runner.dataset(unit), unit.seed)
    return out


def train(toolkit: str, model, profile: str, run_dir: Path, extra: dict) -> float:
    """One training as the runner starts it; its wall time.  A fairseq-train that
    stops a few updates into an epoch without validating may abort on its way out
    ("terminate called without an active exception": its background batch thread is
    still at work) after "done training": that training counts, as it finished."""
    from compsuite.foundation.errors import ToolkitError
    from compsuite.toolkits import get_backend

    run, data, seed = model
    start = time.perf_counter()
    try:
        get_backend(toolkit).train(run, profile, data, run_dir, seed, threads=1,
                                   extra=extra, show=False)
    except ToolkitError:
        log = (run_dir / "train.log").read_text(encoding="utf-8", errors="replace")
        if toolkit != "fairseq" or "done training in" not in log:
            raise
    return time.perf_counter() - start


def command_of(toolkit: str, run_dir: Path) -> list[str]:
    """The command the backend ran in ``run_dir``."""
    if toolkit == "fairseq":
        return shlex.split((run_dir / "command.txt").read_text().strip())
    from compsuite.toolkits.writing import toolkit_command

    return toolkit_command("onmt_train") + ["-config", str(run_dir / "config.yaml")]


def start_up(cmd: list[str]) -> float:
    """The wall time of the command with ``--help``: python, imports, options parsed."""
    from compsuite.processes import thread_env

    start = time.perf_counter()
    subprocess.run(cmd + ["--help"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, **thread_env(1)}, check=True)
    return time.perf_counter() - start


def bare(toolkit: str, run_dir: Path, n: int) -> dict:
    """The bare loop in a process of its own, on the suite run's command or config."""
    from compsuite.processes import thread_env

    spec = run_dir / ("command.txt" if toolkit == "fairseq" else "config.yaml")
    start = time.time()
    out = subprocess.run([sys.executable, __file__, "--worker", toolkit, str(spec),
                          "--updates", str(n)], env={**os.environ, **thread_env(1)},
                         capture_output=True, text=True)
    wall = time.time() - start
    if out.returncode != 0:
        raise SystemExit(f"bench_training: the bare {toolkit} loop failed:\n{out.stderr[-3000:]}")
    marks = json.loads(out.stdout.strip().splitlines()[-1])
    return {"wall": wall, "start-up": marks["imported"] - start,
            "data loading and set-up": marks["loaded"] - marks["imported"],
            "validation": 0.0, "checkpoint writing": 0.0,
            "updates": marks["updated"] - marks["loaded"],
            "exit": wall - (marks["updated"] - start)}


def round_of(toolkit: str, model, profile: str, n: int, events: int, folder: Path) -> dict:
    """One round of every variant of one toolkit: wall times and the logs' event counts."""
    out = {}
    for variant in ("suite", "off", "validation", "checkpoints"):
        run_dir = folder / variant
        wall = train(toolkit, model, profile, run_dir, options(toolkit, variant, n, events))
        out[variant] = {"wall": wall, "events": count_events(toolkit, run_dir / "train.log"),
                        "loop": loop_time(toolkit, run_dir / "train.log")}
    out["start-up"] = start_up(command_of(toolkit, folder / "suite"))
    out["bare"] = bare(toolkit, folder / "suite", n)
    return out


# ----------------------------------------------------------------- the parts
def parts(rounds: list[dict], n: int) -> dict:
    """The suite run's parts and the bare loop's, medians over the rounds."""
    med = lambda f: statistics.median(f(r) for r in rounds)   # noqa: E731
    wall, loop = med(lambda r: r["suite"]["wall"]), med(lambda r: r["suite"]["loop"])
    off = med(lambda r: r["off"]["loop"])
    validations, checkpoints = rounds[0]["suite"]["events"]

    def per_event(variant: str, i: int) -> float:   # by the loops: start-ups vary more
        extra = rounds[0][variant]["events"][i] - rounds[0]["off"]["events"][i]
        return (med(lambda r: r[variant]["loop"]) - off) / extra if extra > 0 else 0.0

    one_validation, one_checkpoint = per_event("validation", 0), per_event("checkpoints", 1)
    suite = {"start-up": med(lambda r: r["start-up"]),
             "validation": validations * one_validation,
             "checkpoint writing": checkpoints * one_checkpoint}
    suite["updates"] = loop - suite["validation"] - suite["checkpoint writing"]
    suite["data loading and set-up"] = wall - loop - suite["start-up"]
    bare_parts = {p: med(lambda r: r["bare"][p]) for p in (*PARTS, "exit", "wall")}
    bare_parts["data loading and set-up"] += bare_parts.pop("exit")   # as in the suite's
    bare_wall = bare_parts.pop("wall")
    update, bare_update = suite["updates"] / n, bare_parts["updates"] / n
    return {"updates": n, "suite": {"wall": wall, "loop": loop, "parts": suite,
                                    "validations": validations, "checkpoints": checkpoints,
                                    "one_validation_s": one_validation,
                                    "one_checkpoint_s": one_checkpoint,
                                    "one_update_s": update},
            "bare": {"wall": bare_wall, "parts": bare_parts, "one_update_s": bare_update},
            "ratio": wall / bare_wall, "update_ratio": update / bare_update}


def table(report: dict) -> str:
    """The printed report: a table of parts per toolkit, then the ratios."""
    tks = list(report["toolkits"])
    head = "| part | " + " | ".join(f"{t} suite (s) | {t} bare (s)" for t in tks) + " |"
    lines = [head, "|" + " --- |" * (1 + 2 * len(tks))]
    for p in (*PARTS, "wall"):
        cells = []
        for t in tks:
            r = report["toolkits"][t]
            get = (lambda side: r[side]["wall"]) if p == "wall" else \
                (lambda side: r[side]["parts"][p])
            cells += [f"{get('suite'):.2f}", f"{get('bare'):.2f}"]
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    for t in tks:
        r = report["toolkits"][t]
        s = r["suite"]
        lines.append(
            f"{t} ({report['models'][t]}): suite / bare {r['ratio']:.2f} (wall), "
            f"{r['update_ratio']:.2f} (one update: {1000 * s['one_update_s']:.1f} ms against "
            f"{1000 * r['bare']['one_update_s']:.1f} ms); {s['validations']} validation(s) of "
            f"{s['one_validation_s']:.2f} s, {s['checkpoints']} checkpoint(s) of "
            f"{s['one_checkpoint_s']:.3f} s in the suite's run")
    return "\n".join(lines)


# ----------------------------------------------------------------- the bare loops
def optimiser(params, lr: float, betas, eps: float, weight_decay: float):
    """torch's Adam with the run's settings (AdamW, decoupled decay, where it decays)."""
    import torch

    cls = torch.optim.AdamW if weight_decay else torch.optim.Adam
    return cls(params, lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)


def fairseq_worker(spec: Path, n: int) -> tuple:
    """The model, the batches, the optimiser and the loss of a fairseq-train command."""
    import ast

    from fairseq import options as fairseq_options
    from fairseq import tasks, utils
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf

    argv = shlex.split(spec.read_text().strip())[1:]
    args = fairseq_options.parse_args_and_arch(fairseq_options.get_training_parser(),
                                               input_args=argv)
    imported = time.time()
    cfg = convert_namespace_to_omegaconf(args)
    utils.set_torch_seed(cfg.common.seed)
    task = tasks.setup_task(cfg.task)
    task.load_dataset(cfg.dataset.train_subset, combine=False, epoch=1)
    model, criterion = task.build_model(cfg.model), task.build_criterion(cfg.criterion)
    epochs = task.get_batch_iterator(
        dataset=task.dataset(cfg.dataset.train_subset), max_tokens=cfg.dataset.max_tokens,
        max_sentences=cfg.dataset.batch_size,
        max_positions=utils.resolve_max_positions(task.max_positions(), model.max_positions(),
                                                  cfg.dataset.max_tokens),
        ignore_invalid_inputs=True,
        required_batch_size_multiple=cfg.dataset.required_batch_size_multiple,
        seed=cfg.common.seed, num_workers=0, epoch=1)
    batches = []
    while len(batches) < n:
        batches += list(epochs.next_epoch_itr(shuffle=True))[:n - len(batches)]
    o = cfg.optimizer
    if o._name != "adam":
        raise SystemExit(f"bench_training: the bare loop runs Adam, not {o._name}")
    betas = ast.literal_eval(o.adam_betas) if isinstance(o.adam_betas, str) else o.adam_betas
    opt = optimiser(model.parameters(), cfg.optimization.lr[0], betas, o.adam_eps,
                    o.weight_decay)
    model.train()

    def loss(sample):
        return criterion(model, sample)[0]

    return imported, model, batches, opt, loss, cfg.optimization.clip_norm


def onmt_worker(spec: Path, n: int) -> tuple:
    """The model, the batches, the optimiser and the loss of an onmt_train config."""
    from onmt.bin.train import _get_parser
    from onmt.constants import CorpusTask
    from onmt.inputters import build_vocab
    from onmt.inputters.dynamic_iterator import build_dynamic_dataset_iter
    from onmt.model_builder import build_model
    from onmt.transforms import get_specials, get_transforms_cls
    from onmt.utils.loss import LossCompute
    from onmt.utils.misc import set_random_seed
    from onmt.utils.parse import ArgumentParser

    opt, _ = _get_parser().parse_known_args(["-config", str(spec)])
    imported = time.time()
    ArgumentParser.validate_train_opts(opt)
    ArgumentParser.update_model_opts(opt)
    ArgumentParser.validate_model_opts(opt)
    ArgumentParser.validate_prepare_opts(opt)
    set_random_seed(opt.seed, False)
    transforms = get_transforms_cls(opt._all_transform)
    vocabs = build_vocab(opt, get_specials(opt, transforms))
    model = build_model(opt, opt, vocabs, None, -1)
    opt.num_workers = 0   # the batches are collated before the loop
    batches = []
    for batch, _ in build_dynamic_dataset_iter(opt, transforms, vocabs, task=CorpusTask.TRAIN,
                                               copy=opt.copy_attn):
        batches.append(batch)
        if len(batches) == n:
            break
    if opt.optim != "adam":
        raise SystemExit(f"bench_training: the bare loop runs Adam, not {opt.optim}")
    opt_ = optimiser(model.parameters(), opt.learning_rate, (opt.adam_beta1, opt.adam_beta2),
                     1e-8, 0.0)   # onmt_train's Adam: eps 1e-8, no decay
    compute = LossCompute.from_opts(opt, model, vocabs["tgt"])
    model.train()

    def loss(batch):
        out, attns = model(batch["src"], batch["tgt"], batch["srclen"])
        return compute(batch, out, attns)[0]

    return imported, model, batches, opt_, loss, opt.max_grad_norm


def worker(toolkit: str, spec: Path, n: int) -> dict:
    """The bare loop: ``n`` updates; the times its stages ended."""
    import torch

    from compsuite.toolkit_noise import import_toolkit

    import_toolkit(toolkit)
    imported, model, batches, opt, loss, clip = \
        (fairseq_worker if toolkit == "fairseq" else onmt_worker)(spec, n)
    loaded = time.time()
    for batch in batches:
        opt.zero_grad()
        loss(batch).backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
    return {"imported": imported, "loaded": loaded, "updated": time.time(),
            "threads": torch.get_num_threads()}


# ----------------------------------------------------------------- main
def measure(a) -> dict:
    """Every round of every toolkit, then the parts."""
    from compsuite.kernels import cpu_model

    with tempfile.TemporaryDirectory(prefix="bench_training-") as tmp:
        data_root = Path(a.data_root) if a.data_root else Path(tmp) / "DATA"
        models = setup({t: getattr(a, t) for t in a.toolkits}, a.profile, data_root)
        rounds: dict[str, list] = {t: [] for t in a.toolkits}
        for i in range(a.rounds):
            for t in a.toolkits:   # the toolkits alternate, a round each at a time
                rounds[t].append(round_of(t, models[t], a.profile, a.updates, a.events,
                                          Path(tmp) / f"r{i}" / t))
    return {"cpu": cpu_model(), "profile": a.profile, "rounds": a.rounds,
            "events": a.events, "threads": 1,
            "models": {t: f"{getattr(a, t)} ({a.profile})" for t in a.toolkits},
            "toolkits": {t: parts(rounds[t], a.updates) for t in a.toolkits},
            "raw": rounds}


def main(argv: list[str] | None = None) -> dict | None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--updates", type=int, default=300)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--events", type=int, default=5,
                   help="validations and checkpoints of the measuring variants")
    p.add_argument("--toolkits", nargs="+", choices=list(MODELS), default=list(MODELS))
    p.add_argument("--profile", default="quick", help="the study profile of the models")
    for t, name in MODELS.items():
        p.add_argument(f"--{t}", default=name, metavar="STUDY/RUN",
                       help=f"the {t} model (default {name})")
    p.add_argument("--data-root", help="the data's folder (kept; default: a temporary one)")
    p.add_argument("--json", help="write the report here too")
    p.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if a.worker:
        print(json.dumps(worker(a.worker[0], Path(a.worker[1]), a.updates)))
        return None
    if a.updates < 1 or a.rounds < 1 or not 1 <= a.events <= a.updates:
        p.error("--updates and --rounds must be positive, --events from 1 to --updates")
    from compsuite import kernels

    kernels.setup()   # before torch is imported: every process started inherits it
    report = measure(a)
    print(f"CPU: {report['cpu']}; 1 thread per process, {a.rounds} round(s) of {a.updates} "
          f"updates, medians")
    print(table(report))
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=1) + "\n")
    return report


if __name__ == "__main__":
    main()
