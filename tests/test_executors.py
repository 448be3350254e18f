"""Where units execute, without a cluster (tests/test_slurm.py runs a real one): a Slurm
job's resources from the user config, the profile, the run and the options, each over
the one before, and their mistakes named by file and key; the executor chosen by a
profile or the user config; a job that refuses data that are missing or differ; what
Ctrl-C does to the jobs of a stopped command; and several GPUs for one unit as the
toolkits' own distributed training, the batch of an update kept or refused."""
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from compsuite import executors, resources
from compsuite.resources import Resources, UserConfig, executor_name, resources_for
from compsuite.foundation.errors import ConfigError, DataError
from compsuite.processes import Stopped
from compsuite.registry import load_study
from compsuite.studies.base import Run
from compsuite.toolkits import get_backend

from conftest import EXAMPLE_STUDY, ROOT

STUDY = (EXAMPLE_STUDY / "majority.yaml").read_text().replace(
    "include: ../../compsuite/experiments/_base.yaml",
    f"include: {ROOT / 'compsuite' / 'experiments' / '_base.yaml'}")


def study_with(tmp_path: Path, run: str = "", profile: str = ""):
    """The example study with ``run`` lines under its run and ``profile`` lines under
    its paper profile."""
    text = STUDY.replace("    args: {C: 1.0, max_iter: 1000}\n",
                         "    args: {C: 1.0, max_iter: 1000}\n" + run)
    text = text.replace('    description: "the largest data, five seeds"\n',
                        '    description: "the largest data, five seeds"\n' + profile)
    path = tmp_path / "majority.yaml"
    path.write_text(text)
    return load_study(path), path


def test_resources_are_layered_user_config_profile_run_options(tmp_path):
    study, _ = study_with(tmp_path, run="    resources: {paper: {gpus: 1, time_min: 240}}\n",
                          profile="    resources: {cpus: 2, time_min: 90, mem_gb: 16}\n")
    user = UserConfig(resources={"partition": "gpu", "time_min": 30, "cpus": 8})
    paper, quick = study.profile("paper"), study.profile("quick")
    assert resources_for(study, paper, "bow-sklearn", user, {"cpus": 4}) == Resources(
        gpus=1, cpus=4, mem_gb=16, time_min=240, partition="gpu")
    assert resources_for(study, quick, "bow-sklearn", user, {}) == Resources(
        gpus=0, cpus=8, mem_gb=None, time_min=30, partition="gpu")
    assert resources_for(study, quick, "bow-sklearn", UserConfig(), {}) == Resources()
    params = Resources(gpus=2, cpus=4, mem_gb=8, time_min=5, partition="p").parameters()
    assert params == {"timeout_min": 5, "cpus_per_task": 4, "tasks_per_node": 1, "nodes": 1,
                      "gpus_per_node": 2, "mem_gb": 8, "slurm_partition": "p"}


@pytest.mark.parametrize("run, profile, message", [
    ("    resources: {paper: {cpus: two}}\n", "",
     "runs.bow-sklearn.resources.paper.cpus: an integer, not 'two'"),
    ("    resources: {paper: {gpus: -1}}\n", "",
     "runs.bow-sklearn.resources.paper.gpus: a number of GPUs (0 or more), not -1"),
    ("    resources: {papr: {gpus: 1}}\n", "",
     "runs.bow-sklearn.resources: unknown key 'papr'"),
    ("", "    resources: {time: 60}\n", "profiles.paper.resources: unknown key 'time'"),
    ("", "    resources: {mem_gb: 0}\n", "profiles.paper.resources.mem_gb: a number in (0"),
    ("", "    executor: pbs\n", "profiles.paper.executor: one of local, slurm, not 'pbs'"),
])
def test_resources_that_are_not_numbers_name_the_file_and_key(tmp_path, run, profile, message):
    with pytest.raises(ConfigError) as e:
        study_with(tmp_path, run=run, profile=profile)
    assert message in str(e.value) and "majority.yaml" in str(e.value)


def test_the_user_config_is_read_checked_and_can_be_switched_off(tmp_path, monkeypatch):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("executor: slurm\nresources: {partition: gpu, time_min: 120}\n")
    monkeypatch.setenv("COMPSUITE_CONFIG", str(cfg))
    user = resources.user_config()
    assert user.executor == "slurm" and user.resources == {"partition": "gpu", "time_min": 120}
    cfg.write_text("resources: {time_min: soon}\n")
    with pytest.raises(ConfigError, match=r"config.yaml: resources.time_min: an integer"):
        resources.user_config()
    monkeypatch.setenv("COMPSUITE_CONFIG", str(tmp_path / "absent.yaml"))
    with pytest.raises(ConfigError, match="absent.yaml: no such file"):
        resources.user_config()
    monkeypatch.setenv("COMPSUITE_CONFIG", "")   # none
    assert resources.user_config() == UserConfig()
    monkeypatch.delenv("COMPSUITE_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "compsuite").mkdir()
    (tmp_path / "compsuite" / "config.yaml").write_text("executor: local\n")
    assert resources.user_config().executor == "local"


def test_a_malformed_user_config_is_one_line_naming_line_and_column(tmp_path, monkeypatch):
    """PyYAML's several-line message becomes one line: the file, where, the problem; a
    key given twice is refused rather than the last one kept."""
    cfg = tmp_path / "config.yaml"
    cfg.write_text("executor: slurm\nresources: {cpus: 2\n")
    monkeypatch.setenv("COMPSUITE_CONFIG", str(cfg))
    with pytest.raises(ConfigError) as e:
        resources.user_config()
    assert str(e.value) == (f"{cfg}: malformed YAML: line 3, column 1: expected ',' or '}}', "
                            "but got '<stream end>' (while parsing a flow mapping from line 2, "
                            "column 12)")
    cfg.write_text("executor: local\nresources: {cpus: 2}\nexecutor: slurm\n")
    with pytest.raises(ConfigError) as e:
        resources.user_config()
    assert str(e.value) == (f"{cfg}: malformed YAML: line 3, column 1: the key 'executor' is "
                            "given twice in one mapping (first on line 1); keep one")


def test_the_executor_is_the_options_then_the_profiles_then_the_users(tmp_path):
    study, _ = study_with(tmp_path, profile="    executor: slurm\n")
    paper, quick = study.profile("paper"), study.profile("quick")
    assert executor_name(None, paper, UserConfig()) == "slurm"
    assert executor_name("local", paper, UserConfig(executor="slurm")) == "local"
    assert executor_name(None, quick, UserConfig(executor="slurm")) == "slurm"
    assert executor_name(None, quick, UserConfig()) == "local"


def compsuite(*args, env=None):
    return subprocess.run([sys.executable, "-m", "compsuite.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def folders(tmp: Path) -> list[str]:
    return ["--runs-root", str(tmp / "runs"), "--data-root", str(tmp / "DATA"),
            "--results-root", str(tmp / "results")]


def test_a_user_config_executor_takes_the_slurm_options(tmp_path):
    """executor: slurm in the user config: the Slurm options are taken without
    --executor (here it then stops at the missing sbatch, before any work)."""
    cfg = tmp_path / "config.yaml"
    cfg.write_text("executor: slurm\n")
    bare = tmp_path / "bin"
    bare.mkdir()
    out = compsuite("run", "ctlpp", "--profile", "tiny", *folders(tmp_path),
                    "--slurm-partition", "gpu",
                    env={"COMPSUITE_CONFIG": str(cfg), "PATH": str(bare)})
    assert out.returncode != 0 and "no sbatch on the PATH" in out.stderr, out.stderr
    assert not (tmp_path / "DATA").exists()


def fake_sbatch(tmp_path: Path) -> str:
    """A PATH whose ``sbatch`` only records that it was called."""
    bin_ = tmp_path / "bin"
    bin_.mkdir(exist_ok=True)
    (bin_ / "sbatch").write_text(f"#!/bin/sh\necho called >> {tmp_path / 'sbatch.calls'}\n"
                                 "exit 1\n")
    (bin_ / "sbatch").chmod(0o755)
    return f"{bin_}{os.pathsep}{os.environ['PATH']}"


def test_gpus_that_cannot_share_the_batch_are_refused_before_any_work(tmp_path):
    # CTL++ tiny: fairseq batch_size 64, no update_freq: 3 GPUs cannot share it
    out = compsuite("run", "ctlpp", "--profile", "tiny", "--runs", "bilstm-fairseq",
                    *folders(tmp_path), "--executor", "slurm", "--slurm-gpus", "3",
                    env={"PATH": fake_sbatch(tmp_path)})
    assert out.returncode != 0, out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert "3 GPUs (resources.gpus) cannot share the batch of an update (batch_size 64" in last
    assert not (tmp_path / "DATA").exists() and not (tmp_path / "sbatch.calls").exists()


# ----------------------------------------------------------------------------- multi-GPU
def test_fairseq_spreads_a_unit_over_gpus_keeping_the_update():
    fairseq = get_backend("fairseq")
    run = Run("t", "transformer", "fairseq", args={"max_tokens": 4096, "update_freq": 8})
    assert fairseq.distributed(run, "paper", 4) == {"distributed_world_size": 4,
                                                    "update_freq": 2}
    run = Run("t", "transformer", "fairseq", args={"batch_size": 128})
    assert fairseq.distributed(run, "paper", 2) == {"distributed_world_size": 2,
                                                    "batch_size": 64}
    # the unit's own options count: its batch_size is the one split
    assert fairseq.distributed(run, "paper", 2, {"batch_size": 6})["batch_size"] == 3
    with pytest.raises(ConfigError, match=r"3 GPUs .*\(batch_size 128, update_freq 1\)"):
        fairseq.distributed(run, "paper", 3)


def test_onmt_spreads_a_unit_over_gpus_keeping_the_update(tmp_path):
    onmt = get_backend("onmt")
    run = Run("t", "transformer", "onmt", args={"batch_size": 4096, "accum_count": [4]})
    assert onmt.distributed(run, "paper", 2) == {"world_size": 2, "gpu_ranks": [0, 1],
                                                 "accum_count": [2]}
    run = Run("t", "transformer", "onmt", args={"batch_size": 96, "accum_count": [1]})
    assert onmt.distributed(run, "paper", 3)["batch_size"] == 32
    with pytest.raises(ConfigError, match="5 GPUs"):
        onmt.distributed(run, "paper", 5)
    # SGET's paper Transformer (batch 256 x accum_count 4): 4 GPUs, one step each
    from compsuite.registry import get_study

    sget = get_study("sget")
    out = onmt.distributed(sget.run("transformer-onmt"), "paper", 4)
    assert out["accum_count"] == [1] and out["world_size"] == 4


def test_hf_spreads_a_unit_over_gpus_with_torchrun(tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    hf = get_backend("hf")
    build = {"architecture": "llama", "tokenizer_vocab": 300,
             "config": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                        "num_attention_heads": 2, "num_key_value_heads": 2,
                        "max_position_embeddings": 128}}
    run = Run("l", "llama", "hf", args={"build": build, "batch_size": 64})
    assert hf.distributed(run, "paper", 4) == {"gpus": 4, "micro_batch_size": 16}
    run = Run("l", "llama", "hf", args={"build": build, "batch_size": 64,
                                        "micro_batch_size": 8})
    assert hf.distributed(run, "paper", 4) == {"gpus": 4}   # accumulation 2 per GPU
    with pytest.raises(ConfigError, match="3 GPUs .* batch_size 64"):
        hf.distributed(run, "paper", 3)
    # the training starts under torchrun, one process per GPU
    from compsuite.toolkits.hf import backend as hf_backend

    seen = []

    class Started(Exception):
        pass

    def started(cmd, *a, **k):
        seen.append(cmd)
        raise Started

    monkeypatch.setattr(hf_backend, "run_with_progress", started)
    from compsuite.foundation.dataset import Dataset

    text = tmp_path / "plain"
    text.mkdir()
    for split in ("train", "valid", "test"):
        (text / f"{split}.src").write_text("a b\nb a\n")
        (text / f"{split}.tgt").write_text("b a\na b\n")
    data = Dataset(tmp_path, ("train", "valid", "test"), text=text)
    with pytest.raises(Started):
        hf.train(run, "paper", data, tmp_path / "run", 1, extra={"gpus": 2}, show=False)
    cmd = seen[0]
    assert cmd[1:6] == ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
                        "-m"] and cmd[6] == "compsuite.toolkits.hf.train", cmd


def test_a_backend_without_multi_gpu_training_refuses_gpus():
    with pytest.raises(ConfigError, match="trains on one device, not 2 GPUs"):
        get_backend("command").distributed(Run("c", "x", "command"), "paper", 2)


# ----------------------------------------------------------------------------- in the job
def test_a_job_refuses_data_that_are_missing_or_differ(tmp_path):
    from compsuite.foundation.manifest import write_manifest

    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "train.src").write_text("a\n")
    spec = {"study": "ctlpp", "profile": "tiny", "unit": "A/bilstm-fairseq/seed1",
            "data_root": str(tmp_path), "runs_root": str(tmp_path / "runs"),
            "data": {"A/1": {"raw": str(raw), "sha256": "0" * 64}}}
    with pytest.raises(DataError, match="raw: no manifest, though the submitting command "
                                        "prepared data there"):
        executors.run_unit(spec)
    write_manifest(raw, generator="test", generator_version="1", seed=1, args={},
                   files=[raw / "train.src"])
    with pytest.raises(DataError, match="raw: other data than the submitting command prepared"
                                        r" \(A/1\); a job does not prepare data"):
        executors.run_unit(spec)
    assert sorted(p.name for p in raw.iterdir()) == ["manifest.json", "train.src"]
    assert not (tmp_path / "runs").exists()


# ----------------------------------------------------------------------------- Ctrl-C
@pytest.fixture
def queue(monkeypatch):
    """Two jobs in a fake queue; ``scancel`` calls recorded."""
    calls = []
    monkeypatch.setattr(executors, "_queue", lambda ids: {"7_0": "RUNNING", "7_1": "PENDING"})
    real = subprocess.run

    def run(cmd, *a, **k):
        if cmd[0] == "scancel":
            calls.append(cmd)
            return subprocess.CompletedProcess(cmd, 0, "", "")
        return real(cmd, *a, **k)

    monkeypatch.setattr(subprocess, "run", run)
    return calls


def test_ctrl_c_asks_and_cancels_the_jobs(queue, tmp_path, capsys):
    asked = []
    assert executors.on_stop(["7_0", "7_1"], tmp_path, Stopped(signal.SIGINT),
                             ask=lambda q: asked.append(q) or "c")
    assert "2 Slurm job(s) still queued or running" in asked[0]
    assert queue == [["scancel", "7_0", "7_1"]]
    assert "cancelled 2 job(s) of array(s) 7" in capsys.readouterr().err


@pytest.mark.parametrize("answer", ["", "l", KeyboardInterrupt])
def test_ctrl_c_leaves_the_jobs_running_unless_told(queue, tmp_path, capsys, answer):
    def ask(_):
        if answer is KeyboardInterrupt:
            raise KeyboardInterrupt
        return answer

    assert not executors.on_stop(["7_0", "7_1"], tmp_path, Stopped(signal.SIGINT), ask=ask)
    assert queue == []
    err = capsys.readouterr().err
    assert "2 job(s) left running (7_0, 7_1" in err and "compsuite status" in err


def test_sigterm_or_no_terminal_leaves_the_jobs_without_asking(queue, tmp_path, capsys):
    assert not executors.on_stop(["7_0"], tmp_path, Stopped(signal.SIGTERM))
    assert queue == [] and "left running" in capsys.readouterr().err


# ----------------------------------------------------------------------------- submitting
def test_waves_are_submitted_at_once_by_resources_with_their_dependencies(tmp_path,
                                                                           monkeypatch):
    """Without a cluster (submitit's executor faked): a finished unit is not sent, a
    unit whose job of before is still queued is waited for, each wave is one array per
    set of resources, and a wave waits (afterok) for the jobs of the units it needs."""
    import submitit

    from compsuite.studies.base import Unit

    arrays = []

    class FakeJob:
        def __init__(self, job_id):
            self.job_id = job_id

    class FakeExecutor:
        def __init__(self, folder, cluster, slurm_max_num_timeout):
            assert cluster == "slurm" and slurm_max_num_timeout == executors.TIME_LIMIT_REQUEUES
            self.params = {}

        def update_parameters(self, **params):
            self.params.update(params)

        def map_array(self, fn, specs):
            n = 100 + len(arrays)
            arrays.append((self.params, [s["unit"] for s in specs]))
            return [FakeJob(f"{n}_{i}") for i in range(len(specs))]

    monkeypatch.setattr(submitit, "AutoExecutor", FakeExecutor)
    monkeypatch.setattr(executors, "_queue", lambda ids: {"9_0": "RUNNING"})
    units = [Unit("t", "small", 1, "d", "a/small"), Unit("t", "big", 1, "d", "a/big"),
             Unit("t", "small", 1, "d", "b/small"), Unit("t", "small", 1, "d", "c/small"),
             Unit("e", "small", 1, "d", "a/eval", model_from="a/small"),
             Unit("e", "big", 1, "d", "a/eval-big", model_from="a/big"),
             Unit("e", "small", 1, "d", "b/eval", model_from="b/small")]
    runs = tmp_path / "runs"
    (runs / "c/small").mkdir(parents=True)
    (runs / "c/small/result.json").write_text("{}")   # finished: never sent
    folder = runs / ".slurm"
    ex = executors.SlurmExecutor(folder, lambda u: Resources(gpus=2 if u.run == "big" else 0))
    ex.record({"b/small": "9_0"})   # from an earlier command, still running

    class Runner:
        runs_dir = runs
        show = False

        class study:
            name = "s"

    waves = {"a/small": 0, "a/big": 0, "b/small": 0, "c/small": 0,
             "a/eval": 1, "a/eval-big": 1, "b/eval": 1}
    pending = ex.submit(Runner, units, waves, lambda u: {"unit": u.path})
    sent = [(p["gpus_per_node"] if "gpus_per_node" in p else 0,
             p["slurm_additional_parameters"].get("dependency"), paths)
            for p, paths in arrays]
    assert sent == [(0, None, ["a/small"]), (2, None, ["a/big"]),
                    (0, "afterok:100_0:9_0", ["a/eval", "b/eval"]),
                    (2, "afterok:101_0", ["a/eval-big"])]
    assert all(p["slurm_additional_parameters"]["kill_on_invalid_dep"] == "yes"
               for p, _ in arrays)
    assert sorted(u.path for u, _ in pending.values()) == sorted(
        u.path for u in units if u.path != "c/small")
    assert pending["9_0"][1] is None   # waited for, not sent again
    assert executors.submitted(folder) == {"b/small": "9_0", "a/small": "100_0",
                                           "a/big": "101_0", "a/eval": "102_0",
                                           "b/eval": "102_1", "a/eval-big": "103_0"}


def test_ctrl_c_after_the_jobs_have_ended_asks_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(executors, "_queue", lambda ids: {})   # all have left the queue
    asked = []
    assert not executors.on_stop(["7_0"], tmp_path, Stopped(signal.SIGINT),
                                 ask=lambda q: asked.append(q) or "c")
    assert asked == []


# ----------------------------------------------------------------------------- waiting
class WaitRunner:
    show = False

    def __init__(self, runs_dir):
        self.runs_dir = runs_dir


def test_squeue_not_answering_is_one_line_then_an_error_naming_the_resume(
        monkeypatch, tmp_path, capsys):
    """While squeue does not answer, the wait says so once and goes on; squeue that
    answers again resets it; silent past SQUEUE_PATIENCE_S, it is a one-line error
    naming the command that resumes."""
    from compsuite.foundation.errors import ToolkitError

    answers = iter([None, None, {"7_0": "RUNNING"}, None, {}])
    monkeypatch.setattr(executors, "_queue", lambda ids: next(answers))
    monkeypatch.setattr(executors, "_squeue_said", {"why": "squeue: error: Socket timed out"})
    runs = tmp_path / "runs"
    (runs / "u").mkdir(parents=True)
    (runs / "u" / "result.json").write_text("{}")
    ex = executors.SlurmExecutor(runs / ".slurm", None, poll_s=0.01)
    assert ex.ended(WaitRunner(runs), {"7_0": (executors.Waiting("u"), None)}) == {}
    err = capsys.readouterr().err
    assert err.count("slurm: squeue does not answer (Socket timed out): waiting; Ctrl-C "
                     "and the same command resumes") == 2   # once each time it stops
    monkeypatch.setattr(executors, "_queue", lambda ids: None)
    monkeypatch.setattr(executors, "SQUEUE_PATIENCE_S", 0.2)
    monkeypatch.setattr(sys, "argv", ["compsuite", "report", "s", "--profile", "quick"])
    with pytest.raises(ToolkitError) as e:
        ex.ended(WaitRunner(runs), {"7_1": (executors.Waiting("v"), None)})
    assert "squeue has not answered" in str(e.value) and "\n" not in str(e.value)
    assert "compsuite report s --profile quick waits for them" in str(e.value)
    assert capsys.readouterr().err.count("squeue does not answer") == 1


@pytest.mark.parametrize("log, why", [
    ("slurmstepd: error: Job 12 exceeded memory limit (2100000 > 2048000), being killed\n",
     "over its memory"),
    ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=12.batch.\n",
     "over its memory"),
    ("slurmstepd: error: Detected 1 oom_kill event(s) in StepId=12.batch.\n",
     "over its memory"),
    # cgroup's note on a job that went on: not a kill
    ("slurmstepd: error: Exceeded job memory limit at some point.\n", "cancelled or killed"),
    ("loaded the room-kill table\nzoom killed\n", "cancelled or killed"),
    # the unit raised: its traceback, whatever the log says of memory
    ("Exceeded job memory limit at some point.\nTraceback (most recent call last):\n"
     '  File "x.py", line 1\ncompsuite.foundation.errors.DataError: no manifest\n'
     "slurmstepd: error: Detected 1 oom-kill event(s)\n", "DataError: no manifest"),
    ("slurmstepd: error: *** JOB 12 ON n1 CANCELLED AT 2026-11-29T10:00:00 ***\n",
     "cancelled"),
])
def test_why_a_job_ended_reads_kills_over_memory_only_after_a_traceback(tmp_path, log, why):
    (tmp_path / "log.err").write_text(log)
    said = executors.ended_why(tmp_path / "log.err")
    assert (why in said) if why == "over its memory" else said == why


@pytest.mark.parametrize("said, submitted", [
    ("sbatch: error: Batch job submission failed: Unable to contact slurm controller "
     "(connect failure)", False),
    ("sbatch: error: slurm_persist_conn_open: Connection refused", False),
    ("sbatch: error: Batch job submission failed: Socket timed out on send/recv "
     "operation", None),
    ("sbatch: error: Batch job submission failed: Slurm controller is in standby mode",
     None),
])
def test_a_controller_that_does_not_answer_sbatch_asks_for_no_option(said, submitted):
    """Not reached: nothing was submitted; reached but silent (a timeout, a controller
    on standby): the jobs may be queued, so the queue is named, not 'nothing was
    submitted'.  Neither blames an option."""
    from compsuite.foundation.errors import ToolkitError

    e = executors.refused(RuntimeError("Could not submit:\n" + said), Resources())
    assert isinstance(e, ToolkitError) and "--slurm" not in str(e) and "\n" not in str(e)
    assert ("nothing was submitted" in str(e)) == (submitted is False)
    if submitted is None:
        assert "may be queued" in str(e) and "squeue" in str(e)


@pytest.mark.parametrize("scancel_rc", [0, 1])
def test_a_refused_later_wave_cancels_the_earlier_or_names_them(tmp_path, monkeypatch,
                                                                scancel_rc):
    """sbatch refuses the second wave: the first wave's jobs are cancelled ("nothing was
    submitted"), or, where scancel fails, named as left (jobs.json keeps them)."""
    import submitit

    from compsuite.studies.base import Unit

    class FakeJob:
        def __init__(self, job_id):
            self.job_id = job_id

    class FakeExecutor:
        def __init__(self, folder, cluster, slurm_max_num_timeout):
            pass

        def update_parameters(self, **params):
            pass

        def map_array(self, fn, specs):
            if specs[0]["unit"] == "a/eval":
                raise submitit.core.utils.FailedJobError(
                    "sbatch: error: Batch job submission failed: Requested partition "
                    "configuration not available now")
            return [FakeJob(f"100_{i}") for i in range(len(specs))]

    cancelled = []

    def run(cmd, *a, **k):
        assert cmd[0] == "scancel"
        cancelled.append(cmd[1:])
        return subprocess.CompletedProcess(cmd, scancel_rc, "",
                                           "scancel: error: Socket timed out" * scancel_rc)

    monkeypatch.setattr(submitit, "AutoExecutor", FakeExecutor)
    monkeypatch.setattr(executors, "_queue", lambda ids: {})
    monkeypatch.setattr(subprocess, "run", run)
    units = [Unit("t", "small", 1, "d", "a/small"),
             Unit("e", "small", 1, "d", "a/eval", model_from="a/small")]
    runs = tmp_path / "runs"
    ex = executors.SlurmExecutor(runs / ".slurm", lambda u: Resources())

    class Runner:
        runs_dir = runs
        show = False

        class study:
            name = "s"

    with pytest.raises(ConfigError) as e:
        ex.submit(Runner, units, {"a/small": 0, "a/eval": 1}, lambda u: {"unit": u.path})
    assert cancelled == [["100_0"]] and "\n" not in str(e.value)
    if scancel_rc == 0:
        assert str(e.value).endswith("; nothing was submitted")
    else:
        assert "nothing was submitted" not in str(e.value)
        assert ("jobs of earlier waves are left queued or running (100_0; scancel failed: "
                "scancel: error: Socket timed out): jobs.json keeps them and the same "
                "command waits for them") in str(e.value)
        assert executors.submitted(runs / ".slurm") == {"a/small": "100_0"}


def test_report_no_wait_without_results_says_it_once(tmp_path, monkeypatch, capsys):
    """Before (issue 51): a note that the units were left out of the report, then the
    error that no report was written."""
    from compsuite.cli import main

    study_with(tmp_path)
    monkeypatch.setenv("COMPSUITE_EXPERIMENTS", str(tmp_path))
    monkeypatch.setattr(executors, "_queue", lambda ids: {"7_0": "PENDING"})
    slurm = tmp_path / "runs" / "majority" / "paper" / ".slurm"
    slurm.mkdir(parents=True)
    (slurm / "jobs.json").write_text('{"a/seed1": "7_0"}')
    assert main(["report", "majority", "--profile", "paper", "--runs-root",
                 str(tmp_path / "runs"), "--results-root", str(tmp_path / "results"),
                 "--no-wait"]) == 2
    err = capsys.readouterr().err
    assert err.count("still queued or running as Slurm jobs") == 1, err
    assert "left out of this report" not in err and "a/seed1 (job 7_0)" not in err


def test_a_job_works_in_the_folder_its_command_ran_in(tmp_path, monkeypatch):
    """Relative paths (a model folder, a program, the runs folder) hold in the job
    whatever folder Slurm starts it in: the spec carries the command's folder."""
    from compsuite.runner import Runner

    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    runner = Runner(study_with(tmp_path)[0], "paper", data_root=Path("DATA"),
                    runs_root=Path("runs"))
    runner.executor = executors.SlurmExecutor(tmp_path / ".slurm", lambda u: Resources())
    unit = runner.plan()[0]
    assert runner.job_spec(unit)["cwd"] == str(here)
    monkeypatch.chdir(tmp_path)   # where Slurm started the job
    spec = {"cwd": str(here), "data": {"d/1": {"raw": "raw", "sha256": "0" * 64}}}
    with pytest.raises(DataError, match="raw: no manifest"):
        executors.run_unit({"study": "s", "profile": "p", "unit": "u", **spec})
    assert Path.cwd() == here
    with pytest.raises(Exception, match="gone: the folder the submitting command ran in "
                                        "cannot be entered on this node"):
        executors.run_unit({**spec, "cwd": str(tmp_path / "gone")})
