"""Where a run's units execute: on this machine (``local``: ``jobs`` at a time, in
threads; the default), or on a Slurm cluster (``slurm``: each wave of units one job
array, submitted through submitit).

The runner (:mod:`compsuite.runner`) prepares the data where the command runs (on the
shared file system), then hands each wave of units to its executor; the wave's results
are read back from the units' ``result.json`` before the next wave starts.  A unit's
Slurm job rebuilds the runner from the study's name and the profile, checks that the
data it finds is the data the submitting command prepared (its checksum), reads the
results of the units it needs, and executes the one unit, exactly as a local run does:
a finished unit (its ``result.json``) is never sent again, and a job that is requeued
resumes its training from its last checkpoint (the backends resume).

Nothing here names a study or a toolkit.
"""
from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from compsuite.foundation.errors import ConfigError, DataError, ToolkitError

EXECUTORS = ("local", "slurm")
#: the folder of a profile's runs folder that holds submitit's job files and logs
JOBS_FOLDER = ".slurm"


@dataclass(frozen=True)
class Resources:
    """What one unit's Slurm job asks for: ``gpus`` per node, ``cpus`` per task (the
    threads its training gets), ``mem_gb``, ``time_min`` (its time limit; a job that
    reaches it is requeued and resumes), ``partition`` (the cluster's default where
    absent)."""

    gpus: int = 0
    cpus: int = 1
    mem_gb: float | None = None
    time_min: int = 60
    partition: str | None = None

    def parameters(self) -> dict[str, Any]:
        """submitit's ``update_parameters`` for these resources."""
        out: dict[str, Any] = {"timeout_min": self.time_min, "cpus_per_task": self.cpus,
                               "tasks_per_node": 1, "nodes": 1}
        if self.gpus:
            out["gpus_per_node"] = self.gpus
        if self.mem_gb is not None:
            out["mem_gb"] = self.mem_gb
        if self.partition:
            out["slurm_partition"] = self.partition
        return out


def check_slurm() -> None:
    """Slurm's ``sbatch`` on the PATH and submitit importable, or a one-line error."""
    if shutil.which("sbatch") is None:
        raise ConfigError("--executor slurm: no sbatch on the PATH (run where Slurm's "
                          "commands are, e.g. a cluster's login node; scripts/slurm_local.sh "
                          "starts a one-node cluster on this machine)")
    import importlib.util

    if importlib.util.find_spec("submitit") is None:
        raise ConfigError("--executor slurm needs submitit (pip install submitit; "
                          "./scripts/setup_env.sh installs it)")


# ----------------------------------------------------------------------------- in the job
def run_unit(spec: dict) -> str:
    """One unit, in its Slurm job: the runner rebuilt from ``spec`` (study, profile,
    folders, decoding options), the data checked against the submitting command's
    checksum, the needed units' results read back, then the unit executed (its
    ``result.json`` written).  Returns the unit's path."""
    from compsuite.registry import get_study
    from compsuite.runner import Runner, with_requirements

    runner = Runner(get_study(spec["study"]), spec["profile"],
                    data_root=Path(spec["data_root"]), runs_root=Path(spec["runs_root"]),
                    show=False, jobs=1)
    if spec.get("generation"):
        runner.profile = replace(runner.profile, generation=spec["generation"])
    by_path = {u.path: u for u in runner.study.plan(runner.profile, seeds=spec.get("seeds"),
                                                    runs=spec.get("runs"))}
    unit = by_path[spec["unit"]]
    needed = with_requirements(by_path, list(unit.requires))
    closure = [by_path[p] for p in by_path if p in needed] + [unit]
    runner.prepare(closure)
    for u in closure:
        data = runner.dataset(u)
        want = spec["data_sha256"].get(f"{u.dataset}/{u.seed}")
        if want is not None and data.checksum() != want:
            raise DataError(f"{data.root}: the data differ from those the submitting "
                            "command prepared; rerun compsuite run to prepare them again")
    for u in closure[:-1]:
        if not (runner.runs_dir / u.path / "result.json").is_file():
            raise ToolkitError(f"{unit.path} needs {u.path}, which has no result.json")
        runner.execute(u)
    runner.execute(unit, spec.get("threads"))
    return unit.path


def _in_queue(job_ids: list[str]) -> set[str] | None:
    """Which of ``job_ids`` (``<array>_<index>``) Slurm's queue still holds (pending,
    running, requeued), or None where squeue cannot tell."""
    import subprocess

    arrays = sorted({j.split("_")[0] for j in job_ids})
    try:
        out = subprocess.run(["squeue", "-h", "-r", "-o", "%i", "-j", ",".join(arrays)],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        # squeue refuses ids it no longer knows: all of them have left
        return set() if "Invalid job id" in out.stderr else None
    return set(out.stdout.split())


def _job_class():
    import submitit

    class UnitJob(submitit.helpers.Checkpointable):
        """A unit as a Slurm job; preempted or at its time limit, it is requeued with
        the same spec and resumes (the training from its last checkpoint)."""

        def __call__(self, spec: dict) -> str:
            return run_unit(spec)

    return UnitJob


# ----------------------------------------------------------------------------- submitting
class SlurmExecutor:
    """Each wave of units as one Slurm job array (submitit's ``map_array``), waited for;
    ``resources``: what each unit's job asks for."""

    name = "slurm"

    def __init__(self, folder: Path, resources: Resources, poll_s: float = 2.0):
        self.folder = Path(folder)
        self.resources = resources
        self.poll_s = poll_s

    def run_wave(self, runner, units, spec_of) -> None:
        """Submit the wave's units that have no result yet as one job array, and wait
        for them.  A unit whose job from an earlier command is still in the queue (the
        command was stopped, its jobs left running) is waited for, not sent again."""
        import logging

        import submitit

        logging.getLogger("submitit").setLevel(logging.ERROR)   # sacct may be absent
        todo = [u for u in units if not (runner.runs_dir / u.path / "result.json").is_file()]
        if not todo:
            return
        known = self.submitted()
        queued = _in_queue(list(known.values())) if known else set()
        waiting = {u.path: known[u.path] for u in todo
                   if u.path in known and queued is not None and known[u.path] in queued}
        send = [u for u in todo if u.path not in waiting]
        pending: dict[str, tuple] = {waiting[u.path]: (u, None) for u in todo
                                     if u.path in waiting}
        if waiting and runner.show:
            print(f"slurm: {len(waiting)} unit(s) still queued or running from before "
                  f"(jobs {', '.join(waiting.values())}): waiting for them", flush=True)
        if send:
            ex = submitit.AutoExecutor(folder=str(self.folder / "%j"), cluster="slurm")
            ex.update_parameters(name=f"compsuite-{runner.study.name}",
                                 slurm_array_parallelism=max(1, len(send)),
                                 **self.resources.parameters())
            jobs = ex.map_array(_job_class()(), [spec_of(u) for u in send])
            self.record({**known, **{u.path: j.job_id for u, j in zip(send, jobs)}})
            if runner.show:
                print(f"slurm: {len(jobs)} unit(s) submitted as job array "
                      f"{jobs[0].job_id.split('_')[0]} (logs: {self.folder}; scancel it "
                      "to stop them)", flush=True)
            pending.update({j.job_id: (u, j) for u, j in zip(send, jobs)})
        self.wait(runner, pending)

    def wait(self, runner, pending: dict[str, tuple]) -> None:
        """Until every job of ``pending`` (job id -> (unit, submitit job, or None for a
        job of an earlier command)) has ended; a unit left without its result is an
        error naming it, the job and its log."""
        import time

        failed = []
        while pending:
            queued = _in_queue(list(pending))
            for jid in list(pending):
                unit, job_ = pending[jid]
                log = job_.paths.stderr if job_ is not None else self.folder / jid
                result = runner.runs_dir / unit.path / "result.json"
                if job_ is not None and job_.paths.result_pickle.exists():
                    pending.pop(jid)
                    try:
                        job_.result()
                    except Exception as e:   # submitit's FailedJobError: the unit raised
                        last = str(e).strip().splitlines()[-1:] or [type(e).__name__]
                        failed.append(f"{unit.path} (job {jid}): {last[0]}; log: {log}")
                        continue
                elif queued is not None and jid not in queued:
                    # left the queue: with its result (a job of before) or without
                    # (cancelled, killed, out of memory)
                    time.sleep(1.0)   # a result written as it left
                    if job_ is not None and job_.paths.result_pickle.exists():
                        continue   # read on the next round
                    pending.pop(jid)
                    if not result.is_file():
                        failed.append(f"{unit.path} (job {jid}): ended without a result "
                                      f"(cancelled or killed); log: {log}")
                        continue
                else:
                    continue
                if runner.show:
                    print(f"slurm: {unit.path} done (job {jid})", file=sys.stderr, flush=True)
            if pending:
                time.sleep(self.poll_s)
        if failed:
            raise ToolkitError("Slurm job(s) failed: " + "; ".join(failed)
                               + " (fix the cause and rerun the same compsuite run command: "
                                 "finished units are kept)")

    def submitted(self) -> dict[str, str]:
        """unit path -> the id of the last job submitted for it (``jobs.json``)."""
        import json

        try:
            return json.loads((self.folder / "jobs.json").read_text())
        except (OSError, ValueError):
            return {}

    def record(self, jobs: dict[str, str]) -> None:
        """Keep which job was submitted for each unit (``jobs.json``, atomically)."""
        import json

        from compsuite.foundation.io import atomic_open

        self.folder.mkdir(parents=True, exist_ok=True)
        with atomic_open(self.folder / "jobs.json") as fh:
            json.dump(jobs, fh, indent=1)
