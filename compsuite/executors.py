"""Where a run's units execute: on this machine (``local``: ``jobs`` at a time, in
threads; the default), or on a Slurm cluster (``slurm``: each wave of units one job
array, submitted through submitit).

The runner (:mod:`compsuite.runner`) prepares the data where the command runs (on the
shared file system), then hands each wave of units to its executor; the wave's results
are read back from the units' ``result.json`` before the next wave starts.  A unit's
Slurm job rebuilds the runner from the study's name and the profile (with the runs the
submitting command added to the study: a system of the user's), checks that the
data it finds is the data the submitting command prepared (its checksum), reads the
results of the units it needs, and executes the one unit, exactly as a local run does:
a finished unit (its ``result.json``) is never sent again, and a job that is requeued
resumes its training from its last checkpoint (the backends resume).

Nothing here names a study or a toolkit.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from compsuite import kernels
from compsuite.foundation.errors import ConfigError, DataError, ToolkitError
from compsuite.resources import Resources

#: the folder of a profile's runs folder that holds submitit's job files and logs
JOBS_FOLDER = ".slurm"
#: how often a unit's job may reach its time limit and be requeued, resuming each
#: time (submitit's ``max_num_timeout``; preemptions do not count)
TIME_LIMIT_REQUEUES = 20
#: how long a command waiting for its jobs goes on while squeue does not answer (each
#: round in a row failing) before it gives up, naming the command that resumes
SQUEUE_PATIENCE_S = 30 * 60


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
    folders, decoding options; the runs the submitting command added to the study, a
    system of the user's, as it resolved them), the data the submitting command
    prepared checked (a job refuses data that are missing or differ: it never
    generates them), the needed units' results read back, then the unit executed (its
    ``result.json`` written) with ``spec["threads"]`` threads and ``spec["gpus"]``
    GPUs, in the folder the submitting command ran in (``spec["cwd"]``).  Its steps are
    recorded in a file of its own (:func:`compsuite.timings.job_file`), the data it
    only finds not at all.  Returns the unit's path."""
    import os

    from compsuite import timings
    from compsuite.foundation.dataset import digest, read_manifest
    from compsuite.processes import child_threads
    from compsuite.registry import get_study
    from compsuite.runner import Runner, with_requirements

    if spec.get("cwd"):
        try:
            os.chdir(spec["cwd"])
        except OSError as e:
            raise ToolkitError(f"{spec['cwd']}: the folder the submitting command ran in "
                               f"cannot be entered on this node ({e.strerror}); run it "
                               "from a folder the nodes share") from None
    print(f"compsuite: {spec['study']} ({spec['profile']}) unit {spec['unit']}", flush=True)
    for key, want in spec["data"].items():
        m = read_manifest(Path(want["raw"]))
        found = None if m is None else digest(m)
        if found != want["sha256"]:
            why = ("no manifest, though the submitting command prepared data there"
                   if m is None else "other data than the submitting command prepared")
            raise DataError(f"{want['raw']}: {why} ({key}); a job does not prepare data: "
                            "rerun the compsuite run command, which prepares them before "
                            "it submits")
    study = get_study(spec["study"])
    for run, architecture in spec.get("given_runs", ()):
        if run.name not in study.runs:   # a system of the user's, added by the command
            study.architectures.setdefault(run.architecture, architecture)
            study.runs.register(run.name, run)
    runner = Runner(study, spec["profile"],
                    data_root=Path(spec["data_root"]), runs_root=Path(spec["runs_root"]),
                    show=False, jobs=1, threads=spec.get("threads"),
                    decoding=spec.get("generation"))
    threads = runner.cpu_threads()
    if threads is not None:   # as a local run's: the training's and the evaluation's
        kernels.set_threads(threads)
    by_path = {u.path: u for u in runner.study.plan(runner.profile, seeds=spec.get("seeds"),
                                                    runs=spec.get("runs"))}
    unit = by_path[spec["unit"]]
    needed = with_requirements(by_path, list(unit.requires))
    closure = [by_path[p] for p in by_path if p in needed] + [unit]
    runner.timings = None   # the submitting command recorded the data steps
    runner.prepare(closure)   # finds them: their manifests match
    runner.timings = timings.job_file(runner.runs_dir)   # the job's own file
    for u in closure:
        data = runner.dataset(u)
        if data.checksum() != spec["data"][f"{u.dataset}/{u.seed}"]["sha256"]:
            raise DataError(f"{data.root}: the data differ from those the submitting "
                            "command prepared; rerun compsuite run to prepare them again")
    for u in closure[:-1]:
        if not (runner.runs_dir / u.path / "result.json").is_file():
            raise ToolkitError(f"{unit.path} needs {u.path}, which has no result.json")
    with child_threads(threads):   # its decoders' threads too (compsuite.processes)
        for u in closure[:-1]:
            runner.execute(u)
        runner.execute(unit, threads, gpus=spec.get("gpus") or 0)
    return unit.path


#: what squeue said the last time it did not answer (:func:`_queue`)
_squeue_said = {"why": ""}


def _queue(job_ids: list[str]) -> dict[str, str] | None:
    """Which of ``job_ids`` (``<array>_<index>``) Slurm's queue still holds, with their
    state (PENDING, RUNNING, REQUEUED, ...), or None where squeue cannot tell (what it
    said kept for :func:`squeue_said`)."""
    if not job_ids:
        return {}
    arrays = sorted({j.split("_")[0] for j in job_ids})
    try:
        out = subprocess.run(["squeue", "-h", "-r", "-o", "%i %T", "-j", ",".join(arrays)],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        _squeue_said["why"] = str(e)
        return None
    if out.returncode != 0:
        # squeue refuses ids it no longer knows: all of them have left
        if "Invalid job id" in out.stderr:
            return {}
        lines = [ln.strip() for ln in out.stderr.splitlines() if ln.strip()]
        _squeue_said["why"] = (lines[-1] if lines else f"exit status {out.returncode}")
        return None
    return dict(line.split()[:2] for line in out.stdout.splitlines() if len(line.split()) >= 2)


def squeue_said() -> str:
    """What squeue said the last time it did not answer (its last line of error)."""
    return _squeue_said["why"].replace("squeue: error: ", "") or "no reason given"


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
    """A run's units as Slurm jobs (submitit): each wave one job array per set of
    resources, all submitted at once, a wave's jobs held by Slurm until the jobs of
    the units they need have ended well (``afterok``; a job whose need failed is
    dropped: ``kill-on-invalid-dep``).  ``resources_of``: a unit's
    :class:`Resources`; ``detach``: submit and return without waiting."""

    name = "slurm"
    #: how the units run, for the run's first line (``--jobs`` is the local executor's)
    how = "each unit a Slurm job, as many at a time as the cluster runs"

    def __init__(self, folder: Path, resources_of, poll_s: float = 2.0,
                 detach: bool = False):
        self.folder = Path(folder)
        self.resources_of = resources_of
        self.poll_s = poll_s
        self.detach = detach

    def check(self, runner, units: list) -> None:
        """Before any work: each unit's resources, and the toolkit's multi-GPU settings
        of a training on several GPUs (a batch they cannot share is refused)."""
        from compsuite.toolkits import get_backend

        for u in units:
            gpus = self.resources_of(u).gpus
            run = runner.study.run(u.run)
            backend = get_backend(run.toolkit)
            if gpus > 1 and u.trains and backend.trains(run):
                backend.distributed(run, runner.profile.name, gpus, u.train_options)

    def run(self, runner, units: list, waves: dict[str, int], spec_of) -> bool:
        """Submit the units that have no result yet, then wait for them (False,
        without waiting, when detached).  A unit whose job from an earlier command is
        still queued or running (that command was stopped, or detached) is waited for,
        not sent again."""
        pending = self.submit(runner, units, waves, spec_of)
        if self.detach:
            if runner.show:
                print(f"slurm: {len(pending)} unit(s) queued or running; this command "
                      "returns now (compsuite status shows them; the same compsuite run "
                      "command, or compsuite report, waits for them and collects)", flush=True)
            return False
        self.wait(runner, pending)
        return True

    def submit(self, runner, units: list, waves: dict[str, int], spec_of) -> dict[str, tuple]:
        """Submit, wave by wave; returns job id -> (unit, submitit job or None for a
        job of an earlier command) of every job to wait for."""
        import logging

        import submitit

        logging.getLogger("submitit").setLevel(logging.ERROR)   # sacct may be absent
        todo = [u for u in units if not (runner.runs_dir / u.path / "result.json").is_file()]
        known = self.submitted()
        queued = _queue([known[u.path] for u in todo if u.path in known]) or {}
        active = {u.path: known[u.path] for u in todo
                  if u.path in known and known[u.path] in queued}
        pending: dict[str, tuple] = {active[u.path]: (u, None) for u in todo
                                     if u.path in active}
        if active and runner.show:
            print(f"slurm: {len(active)} unit(s) still queued or running from before "
                  f"(jobs {', '.join(active.values())}): waiting for them", flush=True)
        send = [u for u in todo if u.path not in active]
        for wave in sorted({waves[u.path] for u in send}):
            groups: dict[Resources, list] = {}
            for u in send:
                if waves[u.path] == wave:
                    groups.setdefault(self.resources_of(u), []).append(u)
            for resources, group in groups.items():
                after = sorted({active[r] for u in group for r in u.requires if r in active})
                ex = submitit.AutoExecutor(folder=str(self.folder / "%j"), cluster="slurm",
                                           slurm_max_num_timeout=TIME_LIMIT_REQUEUES)
                extra = {"kill_on_invalid_dep": "yes"}
                if after:
                    extra["dependency"] = "afterok:" + ":".join(after)
                ex.update_parameters(name=f"compsuite-{runner.study.name}",
                                     slurm_array_parallelism=len(group),
                                     slurm_additional_parameters=extra,
                                     **resources.parameters())
                try:
                    jobs = ex.map_array(_job_class()(), [spec_of(u) for u in group])
                except submitit.core.utils.FailedJobError as e:
                    # sbatch refused: what this command submitted before goes too, so
                    # that nothing is left half-submitted
                    mine = sorted({j for p, j in active.items() if p not in known
                                   or known[p] != j})
                    raise refused(e, resources, left=cancel(mine)) from None
                for u, j in zip(group, jobs):
                    active[u.path] = j.job_id
                    pending[j.job_id] = (u, j)
                self.record({**known, **active})
                if runner.show:
                    print(f"slurm: {len(jobs)} unit(s) submitted as job array "
                          f"{jobs[0].job_id.split('_')[0]}"
                          + (f", after {len(after)} job(s) they need" if after else "")
                          + f" (logs: {self.folder})", flush=True)
        return pending

    def wait(self, runner, pending: dict[str, tuple]) -> None:
        """Until every job of ``pending`` has ended (:meth:`ended`); a unit left without
        its result is an error naming it, the job, why and its log."""
        failed = self.ended(runner, pending)
        if failed:
            raise ToolkitError("Slurm job(s) failed: " + "; ".join(failed.values())
                               + " (fix the cause, then rerun to resume: finished units are "
                                 f"kept: {resume_command()})")

    def ended(self, runner, pending: dict[str, tuple]) -> dict[str, str]:
        """Wait until every job of ``pending`` has ended (each line as it ends); returns
        unit path -> why, for each unit left without its result.  Ctrl-C asks whether
        to cancel the jobs or leave them running (:func:`on_stop`)."""
        from compsuite.processes import Stopped

        try:
            return self._wait(runner, pending)
        except Stopped as e:
            on_stop(sorted(pending), self.folder, e)
            raise

    def _wait(self, runner, pending: dict[str, tuple]) -> dict[str, str]:
        import time

        failed: dict[str, str] = {}
        silent = None   # since when squeue has not answered, each round in a row
        while pending:
            queued = _queue(list(pending))
            silent = self.unanswered(silent, queued is None)
            for jid in list(pending):
                unit, job_ = pending[jid]
                log = job_.paths.stderr if job_ is not None else (
                    job_log(self.folder, jid) or self.folder / jid)
                result = runner.runs_dir / unit.path / "result.json"
                if job_ is not None and job_.paths.result_pickle.exists():
                    pending.pop(jid)
                    try:
                        job_.result()
                    except Exception as e:   # submitit's FailedJobError: the unit raised
                        failed[unit.path] = f"{unit.path} (job {jid}): {cause(e)}; log: {log}"
                        continue
                elif queued is not None and jid not in queued:
                    # left the queue: with its result (a job of before) or without
                    # (cancelled, killed, out of memory, or a unit it needs failed)
                    time.sleep(1.0)   # a result written as it left
                    if job_ is not None and job_.paths.result_pickle.exists():
                        continue   # read on the next round
                    pending.pop(jid)
                    if not result.is_file():
                        need = [r for r in unit.requires if r in failed]
                        failed[unit.path] = (
                            f"{unit.path} (job {jid}): not run, it needs {need[0]}, which "
                            "failed" if need else f"{unit.path} (job {jid}): ended without a "
                            f"result ({ended_why(log)}); log: {log}")
                        continue
                else:
                    continue
                if runner.show:
                    print(f"slurm: {unit.path} done (job {jid})", file=sys.stderr, flush=True)
            if pending:
                time.sleep(self.poll_s)
        return failed

    @staticmethod
    def unanswered(since: float | None, silent: bool) -> float | None:
        """Since when squeue has not answered (None: it answers), given ``since`` of the
        round before and whether it was ``silent`` this round: the first time a line
        says the command waits; after :data:`SQUEUE_PATIENCE_S` an error naming the
        command that resumes."""
        import time

        if not silent:
            return None
        if since is None:
            print(f"slurm: squeue does not answer ({squeue_said()}): waiting; Ctrl-C and "
                  "the same command resumes", file=sys.stderr, flush=True)
            return time.monotonic()
        if time.monotonic() - since > SQUEUE_PATIENCE_S:
            raise ToolkitError(f"squeue has not answered for {SQUEUE_PATIENCE_S / 60:g} min "
                               f"({squeue_said()}): the jobs may still run; once "
                               f"'scontrol ping' answers, {resume_command()} waits for them "
                               "and collects")
        return since

    def submitted(self) -> dict[str, str]:
        """unit path -> the id of the last job submitted for it (``jobs.json``)."""
        return submitted(self.folder)

    def record(self, jobs: dict[str, str]) -> None:
        """Keep which job was submitted for each unit (``jobs.json``, atomically)."""
        import json

        from compsuite.foundation.io import atomic_open

        self.folder.mkdir(parents=True, exist_ok=True)
        with atomic_open(self.folder / "jobs.json") as fh:
            json.dump(jobs, fh, indent=1)


def cause(error: Exception) -> str:
    """What a unit's job raised, in one line: the last line of the job's traceback,
    which submitit's error carries between two rules of dashes (before the paths of
    the logs), its exception named without its module."""
    text = str(error)
    parts = re.split(r"^-{10,}$", text, flags=re.M)
    lines = [ln.strip() for ln in (parts[1] if len(parts) > 2 else text).splitlines()
             if ln.strip()]
    if not lines:
        return type(error).__name__
    return unqualified(lines[-1])


def unqualified(line: str) -> str:
    """A traceback's last line with its exception named without its module."""
    return re.sub(r"^(?:[A-Za-z_]\w*\.)+(?=\w+: )", "", line)


def job_log(folder: Path, jid: str) -> Path | None:
    """The log (stderr) of job ``jid`` in the jobs folder ``folder``; None: it has none
    (it never started)."""
    return next(iter(sorted((Path(folder) / jid).glob("*_log.err"))), None)


def ended_why(log: Path) -> str:
    """Why a job left the queue without a result, as far as its log tells: the unit
    raised (the last line of the traceback, as :func:`cause`), Slurm killed it over
    its memory, it was cancelled, or (the log says none of these, or there is
    none) it was cancelled or killed."""
    try:
        tail = Path(log).read_text(errors="replace")[-20000:]
    except OSError:
        tail = ""
    if "Traceback (most recent call last):" in tail:   # submitit logs what it raised
        said = [ln for ln in tail.rsplit("Traceback (most recent call last):", 1)[1]
                .splitlines() if ln.strip() and not ln.startswith((" ", "srun:", "slurmstepd"))]
        if said:
            return unqualified(said[-1].strip())
    # Slurm's kill messages only: cgroup's "Exceeded job memory limit at some point."
    # is said of jobs that went on and ended well
    if re.search(r"exceeded memory limit \(.*being killed|\boom[-_ ]kill", tail, re.I):
        return ("Slurm killed it: over its memory; ask for more with --slurm-mem-gb, or "
                "the resources' mem_gb")
    if re.search(r"\*\*\* JOB \S+ ON \S+ CANCELLED AT", tail):
        return "cancelled"
    return "cancelled or killed"


def cancel(job_ids: list[str]) -> str:
    """Cancel ``job_ids`` (``scancel``); returns "" where it did (or there were none),
    else a clause naming the jobs left and why."""
    if not job_ids:
        return ""
    try:
        done = subprocess.run(["scancel", *job_ids], capture_output=True, text=True,
                              timeout=60)
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    except (OSError, subprocess.TimeoutExpired) as e:
        done, why = None, str(e)
    if done is not None and done.returncode == 0:
        return ""
    return (f"this command's jobs of earlier waves are left queued or running "
            f"({', '.join(job_ids)}; scancel failed: {why}): jobs.json keeps them and the "
            "same command waits for them")


def refused(error: Exception, resources, left: str = "") -> ConfigError | ToolkitError:
    """One line for a submission sbatch refused: sbatch's reason and the options (or
    the profile's ``resources``) that asked for what it refused: the partition, the
    time limit, or (a node configuration no node has) the memory, GPUs and CPUs asked
    for; or, where sbatch could not reach the controller, no option but the command
    again (after a look at the queue where the controller did not answer in time:
    the jobs may have been queued).  ``left``: the jobs of the command's earlier waves
    that could not be cancelled (:func:`cancel`), said instead of "nothing was
    submitted"."""
    nothing = left or "nothing was submitted"
    lines = [ln.strip() for ln in str(error).splitlines() if "sbatch: error:" in ln]
    reason = (lines[-1] if lines else str(error).strip().splitlines()[-1]).replace(
        "sbatch: error: ", "")
    low = reason.lower()
    if any(s in low for s in ("unable to contact", "connect failure", "connection refused")):
        return ToolkitError(f"sbatch could not reach the Slurm controller ({reason}); "
                            f"{nothing}: run the command again once it answers "
                            "(scontrol ping tells)")
    if any(s in low for s in ("timed out", "standby")):   # it may have queued them
        return ToolkitError(f"the Slurm controller did not answer sbatch ({reason}): the "
                            "jobs may be queued all the same (squeue -u $USER shows them; "
                            "scancel them), then run the same command again once "
                            "'scontrol ping' answers" + (f"; {left}" if left else ""))
    if "partition" in low:
        options = ["--slurm-partition"]
    elif "time limit" in low:
        options = ["--slurm-time"]
    else:
        options = [o for o, asked in (("--slurm-mem-gb", resources.mem_gb is not None),
                                      ("--slurm-gpus", bool(resources.gpus)),
                                      ("--slurm-cpus", resources.cpus > 1)) if asked]
    asked = ", ".join(f"{k} {v}" for k, v in resources.parameters().items())
    where = (" or ".join(options) if options else "the --slurm-* options") + \
        " (or the profile's resources)"
    return ConfigError(f"sbatch refused the jobs ({reason}; asked: {asked}): change "
                       f"{where}; {nothing}")


def resume_command() -> str:
    """The command that resumes: the one that runs (``--detach`` left out)."""
    import shlex

    return shlex.join(["compsuite", *(a for a in sys.argv[1:] if a != "--detach")])


def submitted(folder: Path) -> dict[str, str]:
    """unit path -> the id of the last job submitted for it, from ``folder``'s
    ``jobs.json`` (none where there is none)."""
    import json

    try:
        return json.loads((Path(folder) / "jobs.json").read_text())
    except (OSError, ValueError):
        return {}


def on_stop(job_ids: list[str], folder: Path, stopped, ask=None) -> bool:
    """The submitting command was stopped while its jobs run: on Ctrl-C in a terminal,
    ask whether to cancel them (``scancel``) or leave them running; otherwise (SIGTERM,
    no terminal) leave them.  Says what it did; returns whether it cancelled."""
    import signal
    import subprocess

    queue = _queue(job_ids)   # None: squeue did not answer, so all may still run
    waiting = sorted(job_ids) if queue is None else sorted(j for j in job_ids if j in queue)
    if not waiting:
        return False
    if ask is None and stopped.signum == signal.SIGINT and sys.stdin.isatty():
        ask = input
    answer = ""
    if ask is not None:
        try:
            answer = ask(f"\n{len(waiting)} Slurm job(s) still queued or running. Cancel "
                         "them (c) or leave them running (l)? [l] ").strip().lower()
        except BaseException:   # end of input, a second Ctrl-C: leave them
            answer = ""
    if answer in ("c", "cancel", "y", "yes"):
        arrays = sorted({j.split("_")[0] for j in waiting})
        subprocess.run(["scancel", *waiting], capture_output=True, timeout=60)
        print(f"slurm: cancelled {len(waiting)} job(s) of array(s) {', '.join(arrays)}; "
              "finished units are kept", file=sys.stderr, flush=True)
        return True
    print(f"slurm: {len(waiting)} job(s) left running ({', '.join(waiting[:8])}"
          f"{' ...' if len(waiting) > 8 else ''}; logs: {folder}); compsuite status shows "
          "them, and the same compsuite run command waits for them and collects",
          file=sys.stderr, flush=True)
    return False


# ----------------------------------------------------------------------------- report
class Waiting(NamedTuple):
    """A unit as its job's record knows it (a report waits for it, status shows it):
    its path and the units it needs."""

    path: str
    requires: tuple = ()


def jobs_out(runs_dir: Path) -> dict[str, str] | None:
    """unit path -> job id of each unit without a result whose Slurm job (``jobs.json``
    of ``runs_dir``) is still queued or running; None where squeue cannot tell."""
    jobs = {p: j for p, j in submitted(runs_dir / JOBS_FOLDER).items()
            if not (runs_dir / p / "result.json").is_file()}
    queue = _queue(list(jobs.values())) if jobs else {}
    return None if queue is None else {p: j for p, j in jobs.items() if j in queue}


def before_report(runner, wait: bool = True, poll_s: float = 2.0) -> dict[str, str]:
    """Before a report of ``runner``'s runs folder, the units whose Slurm jobs are
    still queued or running: waited for (a line as each ends; those that end without
    a result named in a note), or, not ``wait``, returned for :func:`left_out` to name
    (where there is a report to leave them out of).  Returns unit path -> job id of the
    units left out because still out."""
    out = jobs_out(runner.runs_dir)
    if out is None:
        print("compsuite: note: squeue did not answer: units of this runs folder may "
              "still run as Slurm jobs (compsuite status shows them)", file=sys.stderr)
        return {}
    if not out:
        return {}
    if not wait:
        return out
    listed = listing(out)
    print(f"slurm: waiting for {len(out)} unit(s) still queued or running: {listed} "
          "(report --no-wait reports the finished units now)", file=sys.stderr, flush=True)
    planned = {u.path: u for u in runner.study.plan(runner.profile)}
    pending = {j: (Waiting(p, tuple(planned[p].requires) if p in planned else ()), None)
               for p, j in out.items()}
    failed = SlurmExecutor(runner.runs_dir / JOBS_FOLDER, None, poll_s).ended(runner, pending)
    if failed:
        print(f"compsuite: note: {len(failed)} unit(s) ended without a result, left out of "
              f"this report: {'; '.join(failed.values())}; the compsuite run command that "
              "submitted them resumes them", file=sys.stderr, flush=True)
    return {}


def listing(out: dict[str, str]) -> str:
    """Units and their jobs, the first eight."""
    return ", ".join(f"{p} (job {j})" for p, j in list(out.items())[:8]) + \
        (" ..." if len(out) > 8 else "")


def left_out(out: dict[str, str]) -> None:
    """The note of a report that leaves out the units ``out`` (unit path -> job id)
    whose Slurm jobs are still queued or running (:func:`before_report`)."""
    if out:
        print(f"compsuite: note: {len(out)} unit(s) still queued or running as Slurm jobs, "
              f"left out of this report: {listing(out)}; compsuite report without "
              "--no-wait waits for them and collects (compsuite status shows them)",
              file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- status
def unit_states(runs_dir: Path, units: list,
                recorded: bool = False) -> list[tuple[str, str, str]]:
    """Each unit's state: (path, state, detail): ``done``; ``queued`` / ``running``
    (the job id); ``failed`` (its job left the queue without a result: its log);
    ``cancelled`` (its job left the queue before it started, so without a log); ``not
    started``.  ``recorded``: after ``units``, the units they lack whose jobs the runs
    folder records (a system of the user's: only the command that brought it plans
    its units)."""
    folder = runs_dir / JOBS_FOLDER
    jobs = submitted(folder)
    if recorded:
        known = {u.path for u in units}
        units = [*units, *(Waiting(p) for p in jobs if p not in known)]
    queue = _queue([jobs[u.path] for u in units if u.path in jobs]) if jobs else {}
    out = []
    for u in units:
        jid = jobs.get(u.path)
        if (runs_dir / u.path / "result.json").is_file():
            out.append((u.path, "done", f"job {jid}" if jid else ""))
        elif jid is None:
            out.append((u.path, "not started", ""))
        elif queue is None:
            out.append((u.path, "unknown", f"job {jid} (squeue did not answer)"))
        elif jid in queue:
            state = "running" if queue[jid] in ("RUNNING", "COMPLETING") else "queued"
            out.append((u.path, state, f"job {jid} ({queue[jid].lower()})"))
        else:
            log = job_log(folder, jid)
            out.append((u.path, "failed", f"job {jid}; log: {log}") if log else
                       (u.path, "cancelled", f"job {jid}, before it started: no log (it was "
                        "cancelled, or a unit it needs failed)"))
    return out
