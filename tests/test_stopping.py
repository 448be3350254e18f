"""Stopping a run (SIGINT/SIGTERM) and one run per folder: the toolkit processes go with
the suite, nothing half-done is kept, a stopped run resumes to the numbers of an
uninterrupted one, and a second process is refused a folder that is in use."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

from compsuite.locks import FolderBusy, folder_lock, lock_path
from compsuite.processes import complete_checkpoint, set_aside_incomplete
from compsuite.toolkits.fairseq.backend import set_aside_cut_short


def _processes_with(text: str, exact: bool = False) -> list[int]:
    """PIDs of the processes whose command line contains (or is) ``text``."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            except OSError:
                continue
            if (cmd == text if exact else text in cmd) and str(os.getpid()) != d.name:
                found.append(int(d.name))
    return found


def _wait_for(check, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("timed out")


SCRIPT = textwrap.dedent("""
    import sys
    import compsuite.processes as p
    p.GRACE_S = float(sys.argv[1])
    with p.handlers():
        try:
            p.run(["sh", "-c", sys.argv[2]])
        except p.Stopped as e:
            print("stopped", e, e.stopped, flush=True)
            sys.exit(e.exit_code)
""")


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_ends_the_childs_whole_process_group(tmp_path, sig, code):
    marker = f"sleep 61.{sig.value}"
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, "10", f"{marker} & {marker}; wait"],
                            stdout=subprocess.PIPE, text=True)
    _wait_for(lambda: len(_processes_with(marker, exact=True)) == 2)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == code and out.startswith(f"stopped {sig.name} ['sh (pid")
    assert _processes_with(marker, exact=True) == []   # the grandchild too


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace_period():
    marker = "sleep 62"
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, "1",
                             f"trap '' TERM; {marker}; {marker}"], stdout=subprocess.PIPE, text=True)
    _wait_for(lambda: _processes_with(marker, exact=True))
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == 143 and time.monotonic() - t0 < 8
    assert _processes_with(marker, exact=True) == []


def _checkpoint(path: Path, complete: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", b"x" * 1000)
    if not complete:
        path.write_bytes(path.read_bytes()[:500])
    return path


def test_checkpoints_a_kill_cut_short_are_set_aside(tmp_path):
    good = _checkpoint(tmp_path / "model_step_10.pt")
    cut = _checkpoint(tmp_path / "model_step_20.pt", complete=False)
    assert complete_checkpoint(good) and not complete_checkpoint(cut)
    assert set_aside_incomplete([good, cut]) == [cut]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model_step_10.pt",
                                                          "model_step_20.pt.incomplete"]
    # fairseq: a cut-short checkpoint_best.pt takes checkpoint_last.pt with it (the run
    # starts again rather than finish without its best model)
    ck = tmp_path / "fs"
    _checkpoint(ck / "checkpoint_last.pt")
    _checkpoint(ck / "checkpoint_1_6.pt")
    _checkpoint(ck / "checkpoint_best.pt", complete=False)
    set_aside_cut_short(ck)
    assert sorted(p.name for p in ck.iterdir()) == [
        "checkpoint_1_6.pt", "checkpoint_best.pt.incomplete", "checkpoint_last.pt.incomplete"]


def test_a_finished_training_whose_checkpoint_is_cut_short_trains_again(tmp_path,
                                                                       monkeypatch, capsys):
    """A run folder whose training finished (train.json) but whose checkpoint_best.pt is
    truncated: before, fairseq-generate failed and named only its log, run after run;
    now the unit trains again, with one line saying why (issue 51)."""
    import compsuite.toolkits.fairseq.backend as fairseq
    from compsuite.foundation.dataset import Dataset
    from compsuite.registry import get_study

    run = get_study("pcfgset").run("transformer-fairseq")
    data = Dataset(tmp_path / "data", formats={"fairseq": tmp_path / "data" / "fairseq-bin"})
    unit = tmp_path / "unit"
    trained = []

    def train(cmd, log, *args, **kwargs):   # a stand-in for fairseq-train
        trained.append(cmd)
        for name in ("checkpoint_best.pt", "checkpoint_last.pt"):
            _checkpoint(unit / "checkpoints" / name)

    monkeypatch.setattr(fairseq, "run_with_progress", train)
    first = fairseq.BACKEND.train(run, "tiny", data, unit, 1, show=False)
    assert len(trained) == 1 and fairseq.BACKEND.train(run, "tiny", data, unit, 1) == first
    best = Path(first["checkpoint"])
    assert best.name == "checkpoint_best.pt"
    best.write_bytes(best.read_bytes()[:500])
    again = fairseq.BACKEND.train(run, "tiny", data, unit, 1, show=False)
    assert len(trained) == 2 and complete_checkpoint(again["checkpoint"])
    assert capsys.readouterr().err == (f"compsuite: note: {best} is missing or not a whole "
                                       "checkpoint (truncated?): transformer-fairseq trains "
                                       "again\n")
    assert sorted(p.name for p in best.parent.iterdir()) == [
        "checkpoint_best.pt", "checkpoint_best.pt.incomplete", "checkpoint_last.pt",
        "checkpoint_last.pt.incomplete"]


def test_a_truncated_checkpoint_beside_epoch_snapshots_is_named_not_retrained(tmp_path,
                                                                             monkeypatch):
    """With save_epochs, whose snapshots a new training would keep (every segment
    skipped, so no new checkpoint_best.pt), a truncated checkpoint is named with the
    folder to delete, not retrained into a unit that could never finish."""
    import shutil

    import compsuite.toolkits.fairseq.backend as fairseq
    from compsuite.foundation.dataset import Dataset
    from compsuite.foundation.errors import DataError
    from compsuite.registry import get_study

    run = get_study("pcfgset").run("transformer-fairseq")
    data = Dataset(tmp_path / "data", formats={"fairseq": tmp_path / "data" / "fairseq-bin"})
    trained = []

    def train(cmd, log, *args, **kwargs):   # a stand-in for fairseq-train
        trained.append(cmd)
        save = Path(cmd[cmd.index("--save-dir") + 1])
        for name in ("checkpoint_best.pt", "checkpoint_last.pt"):
            _checkpoint(save / name)

    monkeypatch.setattr(fairseq, "run_with_progress", train)
    monkeypatch.setattr(fairseq, "keep_epoch", lambda folder, epoch: shutil.copy(
        folder / "checkpoint_last.pt", folder / f"checkpoint{epoch}.pt"))
    epochs = {"save_epochs": [1]}
    fairseq.BACKEND.train(run, "tiny", data, tmp_path / "e", 1, show=False, extra=epochs)
    best = tmp_path / "e" / "checkpoints" / "checkpoint_best.pt"
    best.write_bytes(best.read_bytes()[:500])
    with pytest.raises(DataError, match=f"delete {tmp_path / 'e'} and run again"):
        fairseq.BACKEND.train(run, "tiny", data, tmp_path / "e", 1, show=False, extra=epochs)
    assert len(trained) == 1


def test_a_truncated_checkpoint_another_unit_decodes_is_named(tmp_path, monkeypatch):
    """A unit that evaluates another unit's model (its result stored, so not trained
    again): fairseq-generate's failure is the checkpoint named, and what to delete."""
    import compsuite.toolkits.fairseq.backend as fairseq
    from compsuite.foundation.dataset import Dataset
    from compsuite.foundation.errors import DataError, ToolkitError
    from compsuite.models.decoding import Decoding

    best = _checkpoint(tmp_path / "task" / "checkpoints" / "checkpoint_best.pt")
    (tmp_path / "task" / "train.json").write_text("{}")
    data = Dataset(tmp_path / "data", formats={"fairseq": tmp_path / "data" / "fairseq-bin"})

    def generate(cmd, out, log, **kwargs):   # a stand-in for fairseq-generate, failing
        raise ToolkitError(f"'fairseq-generate' failed (exit 1); see {log}")

    monkeypatch.setattr(fairseq, "run_to_file", generate)
    monkeypatch.setattr(fairseq, "cuda_available", lambda: False)
    decode = lambda: fairseq.BACKEND.predict(  # noqa: E731
        {"checkpoint": str(best)}, data, "test", Decoding(), tmp_path / "test", show=False)
    with pytest.raises(ToolkitError, match="'fairseq-generate' failed"):
        decode()   # a whole checkpoint: the toolkit's own failure
    best.write_bytes(best.read_bytes()[:500])
    with pytest.raises(DataError) as e:
        decode()
    said = (f"checkpoint {best} is unreadable (truncated?): delete {tmp_path / 'task'} and "
            "run again (its model is trained again)")
    assert str(e.value) == said
    # loaded in the suite's process (a model in the loop): the same line
    from compsuite.toolkits.fairseq.checkpoints import load_fairseq

    (tmp_path / "data" / "fairseq-bin").mkdir(parents=True)
    with pytest.raises(DataError) as e:
        load_fairseq(best, tmp_path / "data" / "fairseq-bin")
    assert str(e.value) == said


def _numbers(result: dict, root: Path) -> dict:
    """A result without what differs between two run folders (paths, times)."""
    drop = {"checkpoint", "train_wall_s", "git"}
    return {k: v for k, v in result.items()
            if k not in drop and not (isinstance(v, str) and str(root) in v)}


def test_a_stopped_tiny_run_leaves_nothing_running_and_resumes_to_the_same_numbers(
        tiny_study, tmp_path):
    """SIGTERM during training: every fairseq-train ends, no result is stored, one
    line says how to resume; the resumed run's numbers are the uninterrupted run's."""
    from compsuite.cli import main

    ref = tiny_study("ctlpp")   # the uninterrupted run (same data, same threads)
    runs = tmp_path / "runs"
    args = ["run", "ctlpp", "--profile", "tiny", "--parts", "table1", "--runs",
            "bilstm-fairseq", "--data-root", str(ref.root / "DATA"), "--runs-root", str(runs),
            "--results-root", str(tmp_path / "results"), "--quiet"]
    proc = subprocess.Popen([sys.executable, "-m", "compsuite.cli", *args],
                            stderr=subprocess.PIPE, text=True)
    trainers = _wait_for(lambda: [p for p in _processes_with(str(runs))
                                  if "fairseq-train" in Path(f"/proc/{p}/cmdline").read_text()])
    time.sleep(1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143
    last = err.strip().splitlines()[-1]
    assert last.startswith("compsuite: stopped by SIGTERM: ended fairseq-train (pid")
    assert last.endswith("resume with: compsuite " + " ".join(args))
    assert _processes_with(str(runs)) == [] and not any(os.path.exists(f"/proc/{p}")
                                                        for p in trainers)
    assert list(runs.rglob("result.json")) == [] and list(runs.rglob("train.json")) == []
    assert main(args) == 0
    for unit in ("A/bilstm-fairseq/seed1", "R/bilstm-fairseq/seed1"):
        resumed = json.loads((runs / "ctlpp/tiny" / unit / "result.json").read_text())
        assert _numbers(resumed, tmp_path) == _numbers(ref.result(unit), ref.root)


LOCKER = textwrap.dedent("""
    import sys, time
    from compsuite.locks import folder_lock
    with folder_lock(sys.argv[1]), folder_lock(sys.argv[2]):
        print("locked", flush=True)
        time.sleep(60)
""")


def test_one_process_per_folder_and_the_second_is_told_who_holds_it(tmp_path, capsys):
    from compsuite.cli import main

    runs = tmp_path / "runs"
    gen = tmp_path / "generated"
    holder = subprocess.Popen([sys.executable, "-c", LOCKER, str(runs / "ctlpp" / "tiny"),
                               str(gen)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        with pytest.raises(FolderBusy, match=rf"in use by PID {holder.pid} \(compsuite "):
            with folder_lock(runs / "ctlpp" / "tiny"):
                pass
        rc = main(["run", "ctlpp", "--profile", "tiny", "--data-root", str(tmp_path / "D"),
                   "--runs-root", str(runs), "--quiet"])
        err = capsys.readouterr().err
        assert rc == 1 and f"the runs folder is in use by PID {holder.pid}" in err
        assert not (tmp_path / "D" / "ctlpp").exists()   # refused before any work
        # a data command holds the folder it writes
        assert main(["data", "ctlpp", "generate", "--variant", "A", "--out", str(gen)]) == 1
        assert f"{gen}: the data folder is in use by PID {holder.pid}" in capsys.readouterr().err
        assert not gen.exists()
    finally:
        holder.kill()
        holder.wait()
    # the holder died without releasing: its PID is left in the file, the lock is not
    messages = []
    with folder_lock(runs / "ctlpp" / "tiny", note=messages.append) as path:
        assert path == lock_path(runs / "ctlpp" / "tiny")
        assert path.read_text().startswith(f"{os.getpid()}\n")
    assert messages == [f"compsuite: note: taking over the lock of {runs / 'ctlpp' / 'tiny'} "
                        f"left by PID {holder.pid} (no longer running)"]
    assert path.read_text() == ""   # released in order: nothing to take over
    with folder_lock(runs / "ctlpp" / "tiny", note=messages.append):
        pass
    assert len(messages) == 1


def _child_env(names=("OMP_NUM_THREADS", "MKL_NUM_THREADS")) -> list[str]:
    """What a :func:`compsuite.processes.child` sees of ``names``."""
    import compsuite.processes as p

    code = "import os,sys; print(' '.join(os.environ.get(n, '-') for n in sys.argv[1:]))"
    with p.child([sys.executable, "-c", code, *names], stdout=subprocess.PIPE,
                 text=True) as proc:
        out, _ = proc.communicate()
    return out.split()


def test_children_run_with_the_runs_threads(monkeypatch):
    """Inside child_threads(N), every toolkit process (a decoder too) gets N threads,
    over the caller's environment and an env of its own; outside, nothing is set."""
    import compsuite.processes as p

    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    assert _child_env() == ["7", "-"]
    with p.child_threads(1):
        assert _child_env() == ["1", "1"]
        with p.child(["sh", "-c", "echo $OMP_NUM_THREADS $X"], stdout=subprocess.PIPE,
                     text=True, env={"PATH": os.environ["PATH"], "X": "kept",
                                     "OMP_NUM_THREADS": "3"}) as proc:
            assert proc.communicate()[0].split() == ["1", "kept"]
        with p.child_threads(None):
            assert _child_env() == ["7", "-"]
        assert _child_env() == ["1", "1"]
    assert _child_env() == ["7", "-"]


def test_a_local_run_limits_its_decoders_threads(tmp_path, monkeypatch):
    """compsuite run --threads N: the processes its units start (fairseq-generate,
    onmt_translate) run with N threads, as its trainings do."""
    from compsuite.registry import get_study
    from compsuite.runner import Runner

    seen = []
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(Runner, "prepare", lambda self, units: None)
    monkeypatch.setattr(Runner, "execute", lambda self, unit, threads=None, gpus=0:
                        seen.append(_child_env()) or {})
    monkeypatch.setattr("compsuite.devices.cuda_available", lambda: False)
    for threads, want in ((1, ["1", "1"]), (2, ["2", "2"])):
        runner = Runner(get_study("ctlpp"), "tiny", data_root=tmp_path / "DATA",
                        runs_root=tmp_path / "runs", show=False, jobs=1, threads=threads)
        runner.run(runner.plan()[:1])
        assert seen.pop() == want
    assert _child_env(("OMP_NUM_THREADS",)) == ["-"]   # the limit ends with the run
