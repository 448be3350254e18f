"""The runner: what every study shares when it runs (:class:`Runner`; "engine" in this
suite names only a decoding engine, ``generation.engine``).

A study (``compsuite/studies/<study>/``) plans its units of work; the runner

1. selects them (``--parts``) with the units they need;
2. prepares each unit's dataset once (the study generates the raw text; each backend
   whose runs use it writes its own format; both are skipped when their manifest
   matches);
3. executes the units in waves (a unit runs after the units it needs), ``jobs`` at a
   time, each training with the profile's ``threads`` on a CPU whatever runs beside it
   (``--jobs`` changes no result): train the unit's run with its toolkit backend (skipped when ``train.json`` matches) or take
   the model of the unit it evaluates, then let the study evaluate it;
4. stores each result with one provenance record (seed, git revision, config version,
   data checksum, checkpoint) atomically in ``result.json``: a unit whose result is
   stored is skipped, so an interrupted run resumes (a stopped run stores nothing
   more: :mod:`compsuite.processes`);
5. collects the stored results for the study's report;
6. records each step's wall time by phase (data, train, evaluate, report) in the
   profile's ``timings.jsonl`` (:mod:`compsuite.timings`; ``compsuite times`` prints it).

Layout::

    DATA/<study>/...                          (the study decides; raw/ + toolkit folders)
    runs/<study>/<profile>/<unit path>/       (config, logs, checkpoints, result.json)
    runs/<study>/<profile>/timings.jsonl      (each step's wall time: compsuite/timings.py)
    runs/<study>/<profile>/timings.d/         (each Slurm job's steps, a file per job)
    results/<study>/<profile>/                (the report: report.md, report.json, *.png)
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterator

from compsuite import kernels, timings
from compsuite.foundation.checkout import ROOT
from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import ConfigError, ToolkitError
from compsuite.foundation.io import atomic_open
from compsuite.foundation.names import near
from compsuite.locks import folder_lock, holder
from compsuite.processes import Stopped, check_stop, child_threads
from compsuite.schema import positive
from compsuite.studies.base import Context, Finished, Run, Study, Unit, unit_decoding
from compsuite.toolkits import get_backend


#: the file a local run keeps in a unit's folder while it executes the unit: its PID
#: (``compsuite status`` calls the unit running)
RUNNING = ".running"


def running_locally(runs_dir: Path, path: str) -> int | None:
    """The PID of the local run (``compsuite run``, this machine) that executes the unit
    at ``path`` now: the PID in the unit's :data:`RUNNING` file, while that process
    holds the runs folder's lock; None otherwise (a file a stopped run left is stale)."""
    try:
        pid = int((Path(runs_dir) / path / RUNNING).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if holder(runs_dir) == pid else None


@contextlib.contextmanager
def running_file(run_dir: Path) -> Iterator[None]:
    """Keep :data:`RUNNING` in ``run_dir`` for the block (and the folder, only if the
    block left something in it)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    marker = run_dir / RUNNING
    marker.write_text(f"{os.getpid()}\n")
    try:
        yield
    finally:
        marker.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            run_dir.rmdir()   # only where it is empty


def git_revision() -> str | None:
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, capture_output=True, text=True).stdout.strip()
        return rev + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def stored(result_file: Path, compute: Callable[[], dict]) -> dict:
    """A result: read back when ``result_file`` exists (the step is done); otherwise
    computed, written atomically and read back (one form: what is on disk)."""
    if not result_file.is_file():
        result = compute()
        check_stop()  # a step that ended because the suite is stopping is not a result
        with atomic_open(result_file) as fh:
            json.dump(result, fh, indent=2)
    return json.loads(result_file.read_text())


def wave_of(units: list[Unit]) -> dict[str, int]:
    """Each unit's wave (by path): 0 for a unit that requires none, else one more than
    the latest wave of the units it requires."""
    waves: dict[str, int] = {}
    by_path = {u.path: u for u in units}

    def depth(u: Unit) -> int:
        if u.path not in waves:
            waves[u.path] = 1 + max((depth(by_path[d]) for d in u.requires), default=-1)
        return waves[u.path]

    for u in units:
        depth(u)
    return waves


def with_requirements(by_path: dict[str, Unit], paths: list[str]) -> set[str]:
    """``paths`` and every unit path they require, directly or not (``by_path``: the
    planned units by path)."""
    keep: set[str] = set()
    todo = list(paths)
    while todo:
        path = todo.pop()
        if path not in keep:
            keep.add(path)
            todo += by_path[path].requires
    return keep


def execute_parallel(tasks: list[Callable[[int | None], Any]], jobs: int,
                     threads: int | None = 1) -> list:
    """Run ``tasks`` ``jobs`` at a time, results in the order given.  Each task is
    called with ``threads``, the CPU threads its training uses whatever runs beside it
    (None: the toolkit's default, on a GPU)."""
    if jobs <= 1 or len(tasks) <= 1:
        return [t(threads) for t in tasks]
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = [pool.submit(t, threads) for t in tasks]
        return [f.result() for f in futures]
    finally:
        # on an error or a stop, the tasks not started yet never start
        pool.shutdown(wait=True, cancel_futures=True)


class Runner:
    """Runs one profile of one study (see the module docstring)."""

    def __init__(self, study: Study, profile: str, data_root: Path = Path("DATA"),
                 runs_root: Path = Path("runs"), show: bool = True, jobs: int | None = None,
                 threads: int | None = None, decoding: dict[str, Any] | None = None):
        self.study = study
        self.profile = study.profile(profile)
        #: the command line's decoding settings (``--engine`` ...), over every unit's;
        #: checked with each run's before any work
        self.decoding = dict(decoding or {})
        for name in self.profile.runs if self.decoding else ():
            unit_decoding(self.profile, study.run(name), self.decoding)
        self.data_root = Path(data_root)
        self.runs_root = Path(runs_root)
        self.runs_dir = Path(runs_root) / study.name / self.profile.name
        self.show = show
        # a bad value fails before any work, naming where it came from
        if jobs is not None:
            positive(jobs, "--jobs")
        self.jobs = jobs if jobs is not None else self.profile.jobs
        if threads is not None:
            positive(threads, "--threads")
        #: every training's CPU threads, and the in-process evaluation's
        self.threads = threads if threads is not None else self.profile.threads
        self._data: dict[tuple[str, int], Dataset] = {}
        self._finished: dict[str, Finished] = {}
        self._revision: str | None = None
        #: where each step's wall time is recorded (:mod:`compsuite.timings`; a Slurm
        #: job's own file: :func:`compsuite.timings.job_file`); None: not
        self.timings: Path | None = self.runs_dir / timings.FILE
        #: when this runner began to run units (holding the locks); None: it has not
        self.began: float | None = None
        #: unit -> what the unit's models are wrapped in before they are asked (see
        #: ``Context.wrap``; ``compsuite export`` and ``score`` set it), or None
        self.wrap_model: Callable[[Unit], Callable | None] | None = None
        #: where the units execute: None here (``jobs`` at a time), else an executor
        #: with ``run`` and ``how`` (:class:`compsuite.executors.SlurmExecutor`)
        self.executor = None
        self._selection: dict[str, Any] = {}

    # ------------------------------------------------------------------ planning
    def plan(self, seeds: list[int] | None = None, runs: list[str] | None = None,
             parts: list[str] | None = None) -> list[Unit]:
        """The study's units for this profile (``seeds``/``runs`` override the
        profile's), restricted to ``parts`` and the units those need, in plan order."""
        for r in runs or []:
            run = self.study.run(r)  # unknown names fail here
            if self.decoding:   # the command line's settings over it, checked
                unit_decoding(self.profile, run, self.decoding)
        self._selection = {"seeds": seeds, "runs": runs}
        units = self.study.plan(self.profile, seeds=seeds, runs=runs)
        by_path: dict[str, Unit] = {}
        for u in units:
            if u.path in by_path:
                raise AssertionError(f"{self.study.name}: two units share the folder {u.path}")
            by_path[u.path] = u
        for u in units:
            for need in u.requires:
                if need not in by_path:
                    raise AssertionError(f"{self.study.name}: unit {u.path} needs {need}, "
                                         "which is not planned")
        if not parts:
            return units
        known = self.study.parts(self.profile)
        for p in parts:
            if p not in known:
                raise ConfigError(f"unknown part '{p}' of study {self.study.name} (known: "
                                  f"{', '.join(known)}){near(p, known)}")
        keep = with_requirements(by_path, [u.path for u in units if u.part in parts])
        return [u for u in units if u.path in keep]

    # ------------------------------------------------------------------ running
    def run(self, units: list[Unit]) -> list[dict] | None:
        """Prepare every unit's data, then execute the units; returns their results
        in plan order (None when an executor was told to submit and not wait).  The profile's runs folder and the study's data folder are
        locked meanwhile (one run per folder: :mod:`compsuite.locks`)."""
        if self.executor is not None:
            self.executor.check(self, units)   # before any work
        else:
            self.check_devices(units)
        with folder_lock(self.runs_dir, "runs"), \
                folder_lock(self.data_root / self.study.name, "data"), \
                child_threads(self.cpu_threads() if self.executor is None else None):
            return self._run(units)

    def check_devices(self, units: list[Unit]) -> None:
        """CTranslate2's device for the units to do here is on this machine: ``device:
        cuda`` (``--device cuda``) where CTranslate2 finds no CUDA device is refused
        before any work, not when the first trained model is decoded.  A system the user
        brings (evaluate-only) is not decoded by CTranslate2, and not checked."""
        todo = [u for u in units if not (self.runs_dir / u.path / "result.json").is_file()]
        for run in (self.study.run(name) for name in dict.fromkeys(u.run for u in todo)):
            settings = unit_decoding(self.profile, run, self.decoding)
            if settings.fast and self.system(run) is None:
                from compsuite.models.ctranslate2 import check_device

                check_device(settings, option="device" in self.decoding)

    def cpu_threads(self) -> int | None:
        """The threads each training gets: the profile's ``threads`` (``--threads``) on
        a CPU, None (the toolkit's default) on a GPU, whose arithmetic they do not
        change."""
        from compsuite.devices import cuda_available

        return None if cuda_available() else self.threads

    def _run(self, units: list[Unit]) -> list[dict] | None:
        start = self.began = time.time()
        threads = self.cpu_threads()
        if threads is not None and self.executor is None:
            kernels.set_threads(threads)   # the in-process evaluation's threads too
            if self.show and self.jobs * threads > (os.cpu_count() or 1):
                print(f"note: {self.jobs} trainings at a time x {threads} threads each is "
                      f"more than the {os.cpu_count()} CPUs", file=sys.stderr, flush=True)
        self.prepare(units)
        waves = wave_of(units)
        results: dict[str, dict] = {}
        done_before = sum((self.runs_dir / u.path / "result.json").is_file() for u in units)
        if self.show:
            print(f"{self.study.name} ({self.profile.name}): {len(units)} units, "
                  f"{done_before} already done; "
                  + (f"{self.jobs} at a time" if self.executor is None else self.executor.how),
                  flush=True)
        counter = iter(range(1, len(units) + 1))
        if self.executor is not None:   # elsewhere; then read back here
            if not self.executor.run(self, units, waves, self.job_spec):
                return None   # detached: the jobs run on
        for wave in sorted(set(waves.values())):
            batch = [u for u in units if waves[u.path] == wave]
            if self.executor is not None:
                for u in batch:
                    results[u.path] = self.execute(u)
                continue
            self._before_threads(batch)
            tasks = [partial(self._execute_counted, u, counter, len(units)) for u in batch]
            for u, res in zip(batch, execute_parallel(tasks, self.jobs, self.cpu_threads())):
                results[u.path] = res
        if self.show:
            print(f"{self.study.name} ({self.profile.name}): finished in "
                  f"{time.time() - start:.0f} s", flush=True)
        return [results[u.path] for u in units]

    def prepare(self, units: list[Unit]) -> None:
        """Each unit's dataset, with the toolkit formats of the runs that train on it:
        ``jobs`` datasets at a time (each dataset's steps in order).  A study's data is
        a function of its seed and settings alone (no generator draws from a global
        random state), so the order in which datasets are written changes no byte; the
        toolkits' binarisers run as processes of their own, so two of them use two
        cores."""
        toolkits: dict[tuple[str, int], list[str]] = {}
        for u in units:
            key = (u.dataset, u.seed)
            need = toolkits.setdefault(key, [])
            tk = self.study.run(u.run).toolkit
            if u.trains and tk not in need:
                need.append(tk)
        tasks = [partial(self._prepare_one, dataset, seed, tks)
                 for (dataset, seed), tks in toolkits.items()]
        for key, data in zip(toolkits, execute_parallel(tasks, self.jobs, None)):
            self._data[key] = data

    def _prepare_one(self, dataset: str, seed: int, toolkits: list[str],
                     _threads: int | None = None) -> Dataset:
        """One dataset (generated, or found already prepared) and its ``toolkits``'
        formats, each a timed data step."""
        data = self._data.get((dataset, seed))
        if data is None:
            box: dict[str, Dataset] = {}
            with self.timed("data", self.data_written(box), dataset=dataset, seed=seed):
                data = box["data"] = self.study.prepare(dataset, seed, self.profile,
                                                        self.data_root, self.show)
        for tk in sorted(toolkits):
            if tk not in data.formats:
                with self.timed("data", self.data_written(root=data.root), dataset=dataset,
                                seed=seed, toolkit=tk):
                    data.formats[tk] = get_backend(tk).write_data(data)
        return data

    # ------------------------------------------------------------------ timings
    def timed(self, phase: str, did_work: Callable[[], bool] | None = None,
              **what: Any) -> contextlib.AbstractContextManager:
        """The block, a step of ``phase`` on ``what``, timed and recorded in
        :attr:`timings` with the git revision, ``threads`` (by default this process's:
        :meth:`cpu_threads`) and ``jobs``; ``did_work`` (asked after the block): whether
        it did its work, else it is recorded as skipped (:func:`compsuite.timings.step`)."""
        if self.timings is None:
            return contextlib.nullcontext()
        return timings.step(self.timings, phase, did_work,
                            **{"threads": self.cpu_threads(), **what},
                            git=self.revision(), jobs=self.jobs)

    def data_written(self, box: dict[str, Dataset] | None = None,
                     root: Path | None = None) -> Callable[[], bool]:
        """Whether a data step begun now wrote anything in its own dataset's folder (a
        manifest new or rewritten since): ``root``, where the folder is known before
        the step, or else that of the dataset ``box`` holds once the step has made it
        (``box["data"]``; the study's whole data folder is stamped before).  Steps run
        beside another dataset's, so each is judged by its own folder alone.  Asked only
        after a step that succeeded (:func:`compsuite.timings.step`)."""
        before = timings.stamps(
            (Path(root) if root is not None else self.data_root / self.study.name).resolve())

        def wrote() -> bool:
            own = Path(root if root is not None else box["data"].root).resolve()
            return timings.stamps(own) != {
                k: v for k, v in before.items() if k.startswith(str(own) + os.sep)}

        return wrote

    @contextlib.contextmanager
    def command(self, started: float | None = None) -> Iterator[dict]:
        """The block, the rest of a command that began at ``started`` (default: now),
        recorded in :attr:`timings` as its phase ``command`` (done, stopped or failed;
        ``startup_s``: its time before this runner began) once this runner has begun to
        run units.  It yields a dict whose ``code`` the block sets to the command's
        return code (0 unless set): a command that returns another is failed."""
        started = time.time() if started is None else started
        status, outcome = "failed", {"code": 0}
        try:
            yield outcome
            status = "done" if outcome["code"] == 0 else "failed"
        except (Stopped, KeyboardInterrupt):
            status = "stopped"
            raise
        finally:
            if self.timings is not None and self.began is not None:
                timings.record(self.timings, timings.COMMAND, started,
                               time.time() - started, status, command="run",
                               startup_s=round(self.began - started, 6),
                               git=self.revision(), threads=self.cpu_threads(),
                               jobs=self.jobs)

    def write_reports(self, results: list[dict], out_dir: Path) -> list[Path]:
        """The study's report of ``results`` in ``out_dir`` (:meth:`Study.write_reports`),
        timed as the step ``report``."""
        with self.timed("report", results=str(out_dir)):
            return self.study.write_reports(self.profile, results, out_dir)

    def revision(self) -> str:
        """The checkout's git revision, as results record it."""
        if self._revision is None:
            self._revision = git_revision() or "unknown"
        return self._revision

    def job_spec(self, unit: Unit) -> dict:
        """What a unit's job elsewhere needs to execute it as this runner would
        (:func:`compsuite.executors.run_unit`)."""
        data = {f"{d}/{s}": {"raw": str(ds.raw.resolve()), "sha256": ds.checksum()}
                for (d, s), ds in self._data.items()}
        resources = self.executor.resources_of(unit)
        # the selection's runs as this command resolved them: a system of the user's
        # (--model-cmd, ...) is a run the study's files do not declare, which the job
        # adds to the study it rebuilds
        runs = [self.study.run(r) for r in self._selection.get("runs") or []]
        given = [(r, self.study.architectures.get(r.architecture)) for r in runs]
        return {"study": self.study.name, "profile": self.profile.name, "unit": unit.path,
                "data_root": str(self.data_root.resolve()),
                "runs_root": str(self.runs_root.resolve()),
                "generation": self.decoding,   # the command line's; the YAML's are read again
                **self._selection,
                "threads": self.threads, "gpus": resources.gpus, "data": data,
                "given_runs": given,
                # the job works where this command does: relative paths (a model folder,
                # a program) hold whatever folder Slurm starts the job in
                "cwd": os.getcwd()}

    def dataset(self, unit: Unit) -> Dataset:
        """The prepared dataset of ``unit`` (after :meth:`prepare`)."""
        return self._data[(unit.dataset, unit.seed)]

    def _before_threads(self, units: list[Unit]) -> None:
        """Let each backend do once, in this thread, what its models would otherwise
        do in several threads at once (importing the toolkit)."""
        if self.jobs > 1 and len(units) > 1:
            for tk in sorted({self.study.run(u.run).toolkit for u in units}):
                get_backend(tk).before_threads()

    def _execute_counted(self, unit: Unit, counter, total: int, threads: int | None) -> dict:
        check_stop()
        n = next(counter)
        run_dir = self.runs_dir / unit.path
        if (run_dir / "result.json").is_file():
            with self.timed("evaluate", lambda: False, unit=unit.path, threads=threads):
                return self.execute(unit, threads)
        if self.show:
            print(f"[{n}/{total}] {unit.part}: {unit.path}", file=sys.stderr, flush=True)
        with running_file(run_dir):
            return self.execute(unit, threads)

    def execute(self, unit: Unit, threads: int | None = None, gpus: int = 0) -> dict:
        """Train (or find) the unit's model, evaluate it, store the result; a stored
        result is read back instead.  ``gpus`` above 1: the training is the toolkit's
        own multi-GPU one (a Slurm job's ``resources.gpus``)."""
        run_dir = self.runs_dir / unit.path
        data = self._data[(unit.dataset, unit.seed)]
        self.check_system(unit, run_dir / "result.json")
        result = stored(run_dir / "result.json", partial(self._compute, unit, data, run_dir,
                                                          threads, gpus))
        self._finished[unit.path] = Finished(unit, result, data)
        return result

    def system(self, run: Run) -> dict | None:
        """What identifies an evaluate-only run's model or program (None: trained)."""
        return get_backend(run.toolkit).system(run, self.profile.name)

    def check_system(self, unit: Unit, result_file: Path) -> None:
        """A stored result of an evaluate-only run is another system's when its command
        or model folder differs: refused, not reused."""
        if not result_file.is_file():
            return
        run = self.study.run(unit.run)
        now = self.system(run)
        if now is None:
            return
        before = json.loads(result_file.read_text()).get("system")
        if not get_backend(run.toolkit).same_system(before, now):
            raise ToolkitError(f"{result_file.parent} holds the results of another system "
                               f"under the run name '{run.name}' ({before}, now {now}): "
                               "choose another name (--name) or delete that folder")

    def _compute(self, unit: Unit, data: Dataset, run_dir: Path, threads: int | None,
                 gpus: int = 0) -> dict:
        run = self.study.run(unit.run)
        trained = None
        if unit.trains:
            backend = get_backend(run.toolkit)
            extra = unit.train_options
            if gpus > 1 and backend.trains(run):   # the toolkit's multi-GPU settings
                extra = {**(extra or {}), **backend.distributed(run, self.profile.name,
                                                                 gpus, extra)}
            finished = run_dir / "train.json"   # a finished training (re)writes it
            before = timings.stamp(finished)
            with (self.timed("train", lambda: timings.stamp(finished) != before,
                             unit=unit.path, threads=threads)
                  if backend.trains(run) else contextlib.nullcontext()):
                trained = backend.train(
                    run, self.profile.name, data, run_dir, unit.seed, threads=threads,
                    extra=extra, show=self.show)
            checkpoint, model_data = trained["checkpoint"], data
        else:
            source = self._finished[unit.model_from]
            checkpoint, model_data = source.result["checkpoint"], source.data
        deps = {p: self._finished[p] for p in unit.needs}
        wrap = self.wrap_model(unit) if self.wrap_model is not None else None
        ctx = Context(self.study, self.profile, unit, run, run_dir, data, checkpoint, model_data,
                      trained, deps, self.show, wrap, self.decoding, threads)
        with self.timed("evaluate", unit=unit.path, threads=threads):
            evaluated = self.study.evaluate(ctx)
        backend = get_backend(run.toolkit)
        usage = backend.usage(run_dir)   # what asking the model cost
        if usage is None and unit.model_from:   # asked of another unit's model: counted
            usage = backend.usage(self.runs_dir / unit.model_from)
            if usage is not None:               # there, with that unit's own questions
                usage = {**usage, "counted_in": unit.model_from}
        return {**self.provenance(unit, run, data, checkpoint, trained),
                **({"usage": usage} if usage is not None else {}), **evaluated}

    def provenance(self, unit: Unit, run: Run, data: Dataset, checkpoint: str,
                   trained: dict | None) -> dict:
        """The record every result starts with."""
        return {"study": self.study.name, "profile": self.profile.name, "part": unit.part,
                "unit": unit.path, "run": run.name, "architecture": run.architecture,
                "toolkit": run.toolkit, "paper_setup": run.paper_setup, "seed": unit.seed,
                "dataset": unit.dataset, "dataset_label": data.label,
                "data_sha256": data.checksum(), "model_from": unit.model_from,
                "checkpoint": checkpoint,
                "train_wall_s": trained.get("wall_s") if trained else None,
                "threads": trained.get("threads") if trained else self.cpu_threads(),
                "kernels": kernels.describe(),
                # a model or program brought to the suite, evaluated as it is (in this
                # unit, or in the unit whose model this one evaluates)
                "evaluate_only": bool(trained.get("evaluate_only") if trained else
                                      self._finished[unit.model_from].result.get(
                                          "evaluate_only")),
                "system": self.system(run),
                "generation": dict(unit_decoding(self.profile, run, self.decoding).given),
                "config_version": self.study.config_version, "git": self.revision(),
                **unit.params}

    # ------------------------------------------------------------------ results
    def collect(self) -> list[dict]:
        """Every stored result of this profile, in plan order (results of other seeds
        or runs after them, by folder)."""
        order = {u.path: i for i, u in enumerate(self.study.plan(self.profile))}
        files = sorted(self.runs_dir.rglob("result.json"))
        keyed = []
        for f in files:
            path = f.parent.relative_to(self.runs_dir).as_posix()
            keyed.append((order.get(path, len(order)), path, f))
        return [json.loads(f.read_text()) for _, _, f in sorted(keyed)]
