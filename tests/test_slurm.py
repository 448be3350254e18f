"""``compsuite run --executor slurm`` against a real one-node Slurm cluster on this
machine (scripts/slurm_local.sh: Debian's slurm-wlm and munge): the units run as Slurm
jobs and give the local run's result.json values; a job cancelled while it runs fails
the command with the unit, its log and how to resume, and the same command resumes it;
a second submission into the same runs folder is refused; a system of the user's runs
as it runs here; report waits for the jobs still out; under faults (the node drained, the
controller restarted, a job over its memory) a run ends with the local values or in one
line and a command that resumes.  Skipped, with the reason,
where the machine cannot run Slurm (not root, no packages); `.ci/run` installs them.

The options' mistakes are checked without a cluster."""
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "slurm_local.sh"
#: two CTL++ tiny units (A and R of the Bi-LSTM), a thread each, as in the local run
SELECT = ["--profile", "tiny", "--runs", "bilstm-fairseq", "--parts", "table1", "--quiet"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """SLURM_CONF of a running one-node cluster (started if it is not)."""
    if os.geteuid() != 0:
        pytest.skip("Slurm's daemons need root here")
    if not all(shutil.which(c) for c in ("slurmctld", "slurmd", "sbatch", "munged")):
        pytest.skip("Slurm is not installed (scripts/slurm_local.sh up --install)")
    out = subprocess.run(["bash", str(SCRIPT), "up"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    conf = out.stdout.strip().rsplit("SLURM_CONF=", 1)[1]
    old = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = conf
    yield conf
    if old is None:
        os.environ.pop("SLURM_CONF", None)
    else:
        os.environ["SLURM_CONF"] = old


def compsuite(*args, cwd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "compsuite.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600, **kw)


def values(runs: Path) -> dict:
    """Every unit's result.json without what names its folders or the machine."""
    out = {}
    for f in sorted(runs.rglob("result.json")):
        r = json.loads(f.read_text())
        for key in ("checkpoint", "git", "train_wall_s"):
            r.pop(key, None)
        out[f.parent.relative_to(runs).as_posix()] = r
    return out


def folders(tmp: Path, name: str) -> list[str]:
    return ["--runs-root", str(tmp / name / "runs"), "--data-root", str(tmp / "DATA"),
            "--results-root", str(tmp / name / "results")]


def recorded(tmp: Path, name: str) -> dict[str, str]:
    """unit path -> job id, as the run ``name``'s jobs.json records them."""
    try:
        return json.loads((tmp / name / "runs" / "ctlpp" / "tiny" / ".slurm" / "jobs.json")
                          .read_text())
    except (OSError, ValueError):
        return {}


def leave_nothing(tmp: Path, name: str, *procs: subprocess.Popen | None, jobs=()) -> None:
    """A test's last word, passed or failed: its compsuite processes that still run
    killed, and the jobs of the run ``name`` (its jobs.json) and ``jobs`` cancelled,
    so that no later test finds them in the queue."""
    for proc in procs:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    ids = [*recorded(tmp, name).values(), *jobs] if name else list(jobs)
    if ids:
        subprocess.run(["scancel", *ids], capture_output=True)


def preempted_and_cancelled(first: subprocess.Popen, tmp_path: Path) -> None:
    """While ``first`` (the two units as Slurm jobs) runs: a second command into its
    runs folder is refused; one job is cancelled as it runs, the other preempted; the
    command fails naming the cancelled unit, its log and how to resume."""
    lock = tmp_path / "slurm" / "runs" / "ctlpp" / ".tiny.lock"
    for _ in range(600):   # the runs folder is locked from the start
        if lock.is_file() and lock.read_text().strip():
            break
        time.sleep(0.1)
    second = compsuite("run", "ctlpp", *SELECT, *folders(tmp_path, "slurm"), "--executor",
                       "slurm", cwd=ROOT)   # the same runs folder, meanwhile: refused
    assert second.returncode != 0 and "the runs folder is in use by PID" in second.stderr, \
        second.stderr
    running: list[str] = []
    for _ in range(1200):   # both units' jobs running
        q = subprocess.run(["squeue", "-h", "-r", "-t", "R", "-o", "%i"],
                           capture_output=True, text=True)
        running = sorted(q.stdout.split())
        if len(running) == 2:
            break
        time.sleep(0.1)
    assert len(running) == 2, f"the two jobs did not start: {running}"
    preempted, cancelled = running
    subprocess.run(["scancel", cancelled], check=True)   # at once: before it can finish
    # the other preempted (the signal Slurm sends before a time limit or a preemption:
    # submitit requeues the job) once its job has set its signal handlers up
    jobs = tmp_path / "slurm" / "runs" / "ctlpp" / "tiny" / ".slurm"
    log = jobs / preempted / f"{preempted}_0_log.err"
    out = log.with_suffix(".out")
    for _ in range(600):   # run_unit has begun: the handlers are set
        if out.is_file() and "compsuite: ctlpp (tiny) unit " in out.read_text():
            break
        time.sleep(0.05)
    subprocess.run(["scancel", "--signal=USR2", preempted], check=True)
    _, err = first.communicate(timeout=300)
    assert first.returncode != 0
    assert f"job {cancelled}" in err and "log:" in err, err[-2000:]
    assert "rerun to resume: finished units are kept: compsuite run ctlpp --profile tiny" in err
    assert f"job {preempted}" not in err.split("failed:")[-1], err[-2000:]
    text = log.read_text()
    assert "this job is preempted" in text, text[-3000:]


@pytest.mark.parametrize("study", ["ctlpp"])   # its tiny run: the session's, local
def test_units_run_as_slurm_jobs_with_the_local_values_and_resume(study, cluster, tiny_study,
                                                                  tmp_path):
    local = tiny_study(study)   # every unit, two side by side, a thread each
    assert local.returncode == 0
    # a job cancelled as it runs: the command fails naming the unit and its log
    cmd = [sys.executable, "-m", "compsuite.cli", "run", "ctlpp", *SELECT,
           *folders(tmp_path, "slurm"), "--executor", "slurm"]
    # the jobs inherit no thread limit (a job's training still gets the profile's one
    # thread, as each of the local run's two side by side)
    bare = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    first = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=bare)
    try:
        preempted_and_cancelled(first, tmp_path)
        runs = tmp_path / "slurm" / "runs" / "ctlpp" / "tiny"
        assert len(list(runs.rglob("result.json"))) == 1   # the requeued job ran to the end
        # the same command, detached: the cancelled unit's job is submitted, the command
        # returns; status shows it; the same command again waits for it and collects
        detached = compsuite("run", "ctlpp", *SELECT, *folders(tmp_path, "slurm"), "--executor",
                             "slurm", "--detach", cwd=ROOT)
        assert detached.returncode == 0 and "compsuite status ctlpp" in detached.stderr, \
            detached.stderr[-2000:]
        status = compsuite("status", "ctlpp", *SELECT[:6], "--runs-root",
                           str(tmp_path / "slurm" / "runs"), cwd=ROOT)
        states = dict(line.split()[:2] for line in status.stdout.splitlines())
        assert sorted(states.values()) in (["done", "queued"], ["done", "running"],
                                           ["done", "done"]), status.stdout
        again = compsuite("run", "ctlpp", *SELECT, *folders(tmp_path, "slurm"), "--executor",
                          "slurm", cwd=ROOT)
        assert again.returncode == 0, again.stderr[-2000:]
        assert "submitted" not in again.stdout, again.stdout   # it waited for the job of before
        slurm = values(tmp_path / "slurm" / "runs")
        assert len(slurm) == 2
        assert slurm == {k: v for k, v in values(local.root / "runs").items() if k in slurm}
    finally:
        leave_nothing(tmp_path, "slurm", first)


#: a program of the user's (the CTL++ oracle, a share of its answers corrupted) that
#: answers after $ORACLE_SLEEP seconds: one command line for every run, so that the
#: runs' result.json are alike
ORACLE = (f"sh -c 'sleep ${{ORACLE_SLEEP:-0}}; exec {sys.executable} "
          f"{ROOT}/examples/systems/ctlpp_oracle.py --corrupt 30'")
BROUGHT = ["run", "ctlpp", "--profile", "tiny", "--parts", "table1", "--quiet",
           "--model-cmd", ORACLE, "--name", "oracle"]


@pytest.fixture(scope="module")
def oracle_here(tmp_path_factory):
    """The values of the program's two units run here (the local executor)."""
    tmp = tmp_path_factory.mktemp("oracle")
    here = compsuite(*BROUGHT, *folders(tmp, "here"), cwd=ROOT)
    assert here.returncode == 0, here.stderr[-2000:]
    local = values(tmp / "here" / "runs")
    assert len(local) == 2
    return local


def test_a_system_of_the_users_runs_as_slurm_jobs_and_says_why_it_failed(cluster, tmp_path):
    """Before (issue 51): every job rebuilt the study without the user's system
    ("unknown run ... 'oracle'"), and the command's error named only the logs.  (That
    it gives the values it gives here, and the first line of a Slurm run, the fault
    tests show.)"""
    broken = compsuite(*BROUGHT[:-1], "broken", "--model-cmd",
                       f"{sys.executable} -c 'import sys; sys.exit(3)'",
                       *folders(tmp_path, "broken"), "--executor", "slurm", cwd=ROOT)
    assert broken.returncode == 1, broken.stderr[-2000:]
    error = broken.stderr.strip().splitlines()[-1]
    assert error.count("exited without answering a classify request (exit 3)") == 2, error
    assert "Traceback" not in broken.stderr and "  - " not in error


def test_a_hugging_face_folder_of_the_users_runs_as_slurm_jobs_as_it_runs_here(cluster,
                                                                             tmp_path):
    """``--hf-model`` given as a folder relative to the command's folder (the job works
    there, whatever folder Slurm starts it in): the values of the local run."""
    from compsuite.registry import get_study
    from test_hf_models_in_studies import tiny_bert_classifier

    study = get_study("ctlpp")
    data = study.prepare("A", 1, study.profile("tiny"), tmp_path / "DATA", show=False)
    m = json.loads((data.raw / "manifest.json").read_text())
    lines = (data.raw / "train.src").read_text().splitlines()
    tiny_bert_classifier(tmp_path / "bert", lines, dict(enumerate(m["symbols"])))
    brought = ["run", "ctlpp", "--profile", "tiny", "--parts", "table1", "--quiet",
               "--hf-model", "bert", "--name", "bert"]
    here = compsuite(*brought, *folders(tmp_path, "here"), cwd=tmp_path)
    assert here.returncode == 0, here.stderr[-2000:]
    there = compsuite(*brought, *folders(tmp_path, "slurm"), "--executor", "slurm",
                      cwd=tmp_path)
    assert there.returncode == 0, there.stderr[-2000:]
    assert len(recorded(tmp_path, "slurm")) == 2   # each unit was a Slurm job
    local = values(tmp_path / "here" / "runs")
    assert len(local) == 2 and values(tmp_path / "slurm" / "runs") == local


def squeue_state(job: str) -> str:
    q = subprocess.run(["squeue", "-h", "-j", job, "-o", "%T"], capture_output=True, text=True)
    return q.stdout.strip()


def sbatch_blocker() -> str:
    """The id of a job that holds every CPU of the node (the jobs after it wait), once
    it runs."""
    job = subprocess.run(["sbatch", "--parsable", "-c", str(os.cpu_count()), "-o",
                          "/dev/null", "--wrap", "sleep 300"], capture_output=True,
                         text=True, check=True).stdout.strip()
    until(lambda: squeue_state(job) == "RUNNING", f"the blocker (job {job}) running", 60)
    return job


def test_report_waits_for_the_jobs_still_out_or_names_them(cluster, tmp_path):
    """Before (issue 51): report said "no results" (or wrote a partial report) while
    the jobs of a detached run were still queued or running, and took no --no-wait;
    status called a job cancelled before it started failed, naming a log folder with no
    log."""
    where = ["--profile", "tiny", "--runs-root", str(tmp_path / "r" / "runs"),
             "--results-root", str(tmp_path / "r" / "results")]
    told = compsuite("report", "ctlpp", *where, "--executor", "slurm", cwd=ROOT)
    assert told.returncode == 2 and "report takes no --executor" in told.stderr, told.stderr
    blocker = sbatch_blocker()   # the jobs wait until it is cancelled
    try:
        for name, program in (("oracle", ORACLE), ("broken", "sh -c 'exit 3'")):
            detached = compsuite(*BROUGHT[:-3], program, "--name", name,
                                 *folders(tmp_path, "r"), "--executor", "slurm", "--detach",
                                 cwd=ROOT)
            assert detached.returncode == 0, detached.stderr[-2000:]
        assert "collect them with: compsuite report ctlpp --profile tiny" in detached.stderr
        # status, as the message says, names the systems' units too (before: not planned)
        status = compsuite("status", "ctlpp", *where[:4], cwd=ROOT)
        states = dict(ln.split()[:2] for ln in status.stdout.splitlines())
        assert [states.get(f"{part}/{name}/seed1") for part in "AR" for name in (
            "oracle", "broken")] == ["queued"] * 4, status.stdout
        now = compsuite("report", "ctlpp", *where, "--no-wait", cwd=ROOT)
        assert now.returncode == 2, now.stderr
        assert "4 unit(s) still queued or running as Slurm jobs" in now.stderr.splitlines()[-1]
        # said once (before, issue 51: a note that they were left out, then the error)
        assert len(now.stderr.strip().splitlines()) == 1 and "waits for them" in now.stderr
        # one unit's job cancelled while it waits: status names no log
        job = recorded(tmp_path, "r")["R/broken/seed1"]
        subprocess.run(["scancel", job], check=True)
        status = compsuite("status", "ctlpp", *where[:4], cwd=ROOT)
        assert status.returncode == 0, status.stderr
        line = next(ln for ln in status.stdout.splitlines() if ln.startswith("R/broken/"))
        assert line.split()[1] == "cancelled" and f"job {job}, before it started: no " \
            "log" in line, status.stdout
        assert "log:" not in status.stdout
        subprocess.run(["scancel", blocker])
        waited = compsuite("report", "ctlpp", *where, cwd=ROOT)
    finally:
        leave_nothing(tmp_path, "r", jobs=[blocker])
    assert waited.returncode == 0, waited.stderr[-2000:]
    assert "slurm: waiting for 3 unit(s) still queued or running" in waited.stderr
    assert "| oracle " in waited.stdout and "done (job " in waited.stderr
    assert len(list((tmp_path / "r" / "runs").rglob("result.json"))) == 2
    # the failed job of the earlier command: what it raised, not "cancelled or killed"
    note = next(ln for ln in waited.stderr.splitlines() if "ended without a result" in ln)
    assert note.count("(exit 3); it wrote nothing to stderr); log: ") == 1, note
    assert note.count("_log.err") == 1 and "R/broken" not in note, note


# ----------------------------------------------------------------------------- faults
def oracle_on_slurm(tmp_path: Path, name: str, *options, sleep: int = 0) -> subprocess.Popen:
    """The program's run as Slurm jobs, started, its stderr to a file (:func:`said`);
    each answers after ``sleep`` s."""
    (tmp_path / name).mkdir(parents=True, exist_ok=True)
    with open(tmp_path / name / "stderr.txt", "w") as err:
        return subprocess.Popen([sys.executable, "-m", "compsuite.cli", *BROUGHT,
                                 *folders(tmp_path, name), "--executor", "slurm", *options],
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, text=True,
                                env={**os.environ, "ORACLE_SLEEP": str(sleep)})


def said(tmp_path: Path, name: str) -> str:
    """What the run ``name`` (:func:`oracle_on_slurm`) has written to stderr so far."""
    return (tmp_path / name / "stderr.txt").read_text()


def until(check, what: str, timeout: float = 120.0):
    """``check()``'s first true value, polled; fails after ``timeout`` s naming ``what``."""
    for _ in range(int(timeout / 0.2)):
        got = check()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"after {timeout:.0f} s: not {what}")


def jobs_of(tmp_path: Path, name: str) -> dict[str, str]:
    """job id -> Slurm state of the jobs the run ``name`` submitted that are in the
    queue (once both are submitted; else {})."""
    ids = set(recorded(tmp_path, name).values())
    q = subprocess.run(["squeue", "-h", "-r", "-o", "%i %T"], capture_output=True, text=True)
    queue = dict(ln.split()[:2] for ln in q.stdout.splitlines() if len(ln.split()) >= 2)
    return {j: queue[j] for j in ids if j in queue} if len(ids) == 2 else {}


def restart_slurmctld(cluster: str, tmp_path: Path, name: str) -> None:
    """slurmctld stopped until the run ``name`` says squeue does not answer, then
    started again with the state it saved."""
    pidfile = Path(cluster).parent / "slurmctld.pid"
    pid = int(pidfile.read_text())
    os.kill(pid, 15)
    try:
        until(lambda: not Path(f"/proc/{pid}").exists(), "slurmctld stopped", 60)
        until(lambda: "slurm: squeue does not answer (" in said(tmp_path, name),
              "the command saying squeue does not answer", 120)
    finally:
        if not Path(f"/proc/{pid}").exists():
            subprocess.run(["slurmctld"], check=True)   # no -c: the state it saved
        until(lambda: subprocess.run(["squeue"], capture_output=True).returncode == 0,
              "slurmctld answering", 60)


def node_state(node: str) -> str:
    """The node's state as sinfo says it (idle, drained, ...)."""
    return subprocess.run(["sinfo", "-h", "-n", node, "-o", "%T"], capture_output=True,
                          text=True).stdout.strip()


def test_the_controller_restarted_and_a_node_drained_hold_the_jobs_lose_nothing(
        cluster, oracle_here, tmp_path):
    """Issue 51, one submission (each unit's job asks for all the CPUs): slurmctld
    stopped and started again (its state kept) while both jobs wait behind another
    job: the command says once that squeue does not answer and waits through it, the
    jobs are kept; then the node drained while one job runs and the other waits: the
    running job ends well, the waiting one waits, and so does the command; the node
    resumed, the run ends with the local values."""
    node = subprocess.run(["hostname", "-s"], capture_output=True, text=True).stdout.strip()
    blocker = sbatch_blocker()
    run = oracle_on_slurm(tmp_path, "faults", "--slurm-cpus", str(os.cpu_count()), sleep=5)
    try:
        until(lambda: sorted(jobs_of(tmp_path, "faults").values()) == ["PENDING"] * 2,
              "both jobs queued")
        restart_slurmctld(cluster, tmp_path, "faults")
        assert sorted(jobs_of(tmp_path, "faults").values()) == ["PENDING"] * 2   # kept
        assert run.poll() is None, said(tmp_path, "faults")[-2000:]   # the command waits
        subprocess.run(["scancel", blocker], check=True)
        # a job started: the node has registered with the restarted controller
        states = until(lambda: (q := jobs_of(tmp_path, "faults")) and sorted(q.values()) == [
            "PENDING", "RUNNING"] and q, "one job running, one waiting")
        subprocess.run(["scontrol", "update", f"nodename={node}", "state=drain",
                        "reason=compsuite-test"], check=True)
        first = next(j for j, state in states.items() if state == "RUNNING")
        until(lambda: first not in jobs_of(tmp_path, "faults"), "the running job ended")
        until(lambda: node_state(node) == "drained", "the node drained", 30)
        assert list(jobs_of(tmp_path, "faults").values()) == ["PENDING"]
        assert run.poll() is None, said(tmp_path, "faults")[-2000:]   # the command waits
        subprocess.run(["scontrol", "update", f"nodename={node}", "state=resume"], check=True)
        run.wait(timeout=180)
    finally:
        if node_state(node).startswith("drain"):
            subprocess.run(["scontrol", "update", f"nodename={node}", "state=resume"])
        leave_nothing(tmp_path, "faults", run, jobs=[blocker])
    err = said(tmp_path, "faults")
    assert run.returncode == 0, err[-2000:]
    assert err.count("squeue does not answer") == 1, err[-2000:]
    assert values(tmp_path / "faults" / "runs") == oracle_here


def test_a_job_over_its_memory_is_one_line_and_the_command_resumes(cluster, oracle_here,
                                                                    tmp_path):
    """Issue 51: a job Slurm kills over its memory (scripts/slurm_local.sh enforces it;
    the program waits 3 s, so the job stays over it for several samples) is named with
    the option to raise; the command again, without it, ends well with the local values,
    each unit a Slurm job."""
    config = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True)
    if "OverMemoryKill" not in config.stdout:
        pytest.skip("this cluster does not kill a job over its memory (started before "
                    "scripts/slurm_local.sh did: its down, then up)")
    try:
        small = compsuite(*BROUGHT, *folders(tmp_path, "memory"), "--executor", "slurm",
                          "--slurm-mem-gb", "0.1", cwd=ROOT,
                          env={**os.environ, "ORACLE_SLEEP": "3"})
        assert small.returncode == 1, small.stderr[-2000:]
        errors = [ln for ln in small.stderr.splitlines() if ln.startswith("compsuite: error:")]
        assert len(errors) == 1 and errors[0].count(
            "Slurm killed it: over its memory; ask for more with --slurm-mem-gb") == 2, \
            small.stderr
        # not --quiet: its first line (before, issue 51: the local executor's "2 at a time")
        again = compsuite(*[b for b in BROUGHT if b != "--quiet"],
                          *folders(tmp_path, "memory"), "--executor", "slurm", cwd=ROOT)
    finally:
        leave_nothing(tmp_path, "memory")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "2 units, 0 already done; each unit a Slurm job, as many at a time as the " \
        "cluster runs" in again.stdout, again.stdout
    assert values(tmp_path / "memory" / "runs") == oracle_here


@pytest.mark.parametrize("options, message", [
    (["--slurm-partition", "gpu"], "--slurm-partition goes with --executor slurm"),
    (["--executor", "slurm", "--slurm-gpus", "-1"], "--slurm-gpus: gpus: a number of GPUs"),
    (["--detach"], "--detach goes with --executor slurm"),
    # before (issue 51): "--executor slurm, which is not given"
    (["--executor", "local", "--slurm-cpus", "2"],
     "--slurm-cpus goes with --executor slurm, not --executor local"),
    (["--executor", "slurm", "--slurm-time", "ten"], "--slurm-time: expected a positive"),
    (["--executor", "pbs"], "invalid choice: 'pbs'"),
])
def test_executor_options_are_checked_before_any_work(options, message, tmp_path):
    out = compsuite("run", "ctlpp", "--profile", "tiny", *folders(tmp_path, "x"), *options,
                    cwd=ROOT, env={**os.environ, "PATH": os.environ["PATH"]})
    assert out.returncode != 0, out.stderr
    assert message in out.stderr.strip().splitlines()[-1], out.stderr   # no traceback
    assert not (tmp_path / "x" / "runs").exists() and not (tmp_path / "DATA").exists()


def test_no_sbatch_on_the_path_is_one_line(tmp_path):
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    out = compsuite("run", "ctlpp", "--profile", "tiny", *folders(tmp_path, "x"),
                    "--executor", "slurm", cwd=ROOT, env={**os.environ, "PATH": str(bare)})
    assert out.returncode != 0 and "no sbatch on the PATH" in out.stderr, out.stderr
    assert not (tmp_path / "DATA").exists()


@pytest.mark.parametrize("options, option", [
    (["--slurm-partition", "nosuch"], "--slurm-partition"),
    (["--slurm-mem-gb", "5000"], "--slurm-mem-gb"),
])
def test_a_submission_sbatch_refuses_is_one_line_and_leaves_nothing(options, option, cluster,
                                                                    tmp_path):
    """Before (issue 51): a submitit FailedJobError traceback."""
    before = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True)
    run = compsuite("run", "ctlpp", *SELECT, *folders(tmp_path, "refused"), "--executor",
                    "slurm", *options, cwd=ROOT)
    assert run.returncode == 1, run.stderr[-2000:]
    lines = [ln for ln in run.stderr.splitlines() if ln.startswith("compsuite: error:")]
    assert len(lines) == 1 and "sbatch refused the jobs (" in lines[0], run.stderr[-2000:]
    assert f"change {option}" in lines[0] and "Traceback" not in run.stderr
    after = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True)
    assert sorted(after.stdout.split()) == sorted(before.stdout.split())   # nothing queued
    jobs = tmp_path / "refused" / "runs" / "ctlpp" / "tiny" / ".slurm" / "jobs.json"
    assert not jobs.is_file() or json.loads(jobs.read_text()) == {}


def test_a_controller_that_does_not_answer_a_submission_is_one_line(cluster, tmp_path):
    """Before (issue 51): "sbatch refused the jobs (... Unable to contact slurm
    controller ...): change the --slurm-* options", which had asked for nothing wrong."""
    elsewhere = tmp_path / "slurm.conf"   # the cluster's, its controller's port unused
    elsewhere.write_text(re.sub(r"(?m)^SlurmctldPort=\d+$", "SlurmctldPort=1",
                                Path(cluster).read_text()) + "MessageTimeout=2\n")
    run = compsuite(*BROUGHT, *folders(tmp_path, "nowhere"), "--executor", "slurm", cwd=ROOT,
                    env={**os.environ, "SLURM_CONF": str(elsewhere)})
    assert run.returncode == 1, run.stderr[-2000:]
    lines = [ln for ln in run.stderr.splitlines() if ln.startswith("compsuite: error:")]
    assert len(lines) == 1 and "sbatch could not reach the Slurm controller" in lines[0] \
        and "change" not in lines[0] and "Traceback" not in run.stderr, run.stderr[-2000:]
