"""Where a run's time goes (compsuite/timings.py): each step of ``compsuite run`` recorded
by phase in the profile's timings.jsonl, a second run's steps recorded as skipped, and
the table ``compsuite times`` prints.  The example study (docs/example_study) is the run:
its tiny profile trains two units side by side in seconds."""
import json
import signal

import pytest

from compsuite import timings
from compsuite.cli import main
from compsuite.processes import Stopped


def roots(tmp_path, *extra: str) -> list[str]:
    return ["--profile", "tiny", "--data-root", str(tmp_path / "DATA"), "--runs-root",
            str(tmp_path / "runs"), "--results-root", str(tmp_path / "results"), *extra]


def lines(tmp_path) -> list[dict]:
    return timings.read(tmp_path / "runs" / "majority" / "tiny" / timings.FILE)


def by_phase(rows: list[list]) -> dict[str, list]:
    return {row[0]: row[1:] for row in rows}


def test_a_run_records_every_phase_and_a_second_run_its_skipped_steps(tmp_path, capsys):
    assert main(["run", "majority", "--quiet", *roots(tmp_path, "--jobs", "2")]) == 0
    first = lines(tmp_path)
    done = [r for r in first if r["status"] == "done"]
    assert {r["phase"] for r in done} == {*timings.PHASES, timings.COMMAND}
    assert all(r["wall_s"] > 0 for r in done)
    units = ["bow-sklearn/seed1", "bow-sklearn/seed2"]
    for phase in ("train", "evaluate"):
        assert sorted(r["unit"] for r in done if r["phase"] == phase) == units
    assert sorted(r["seed"] for r in done if r["phase"] == "data") == [1, 2]
    assert len({r["git"] for r in first}) == 1
    assert all(r["threads"] == 1 and r["jobs"] == 2 for r in first)
    command = [r for r in first if r["phase"] == timings.COMMAND]
    assert len(command) == 1 and command[0]["status"] == "done"
    assert 0 < command[0]["startup_s"] < command[0]["wall_s"]
    assert command[0]["wall_s"] >= timings.covered(done[:-1])   # it holds its steps

    assert main(["run", "majority", "--quiet", *roots(tmp_path, "--jobs", "2")]) == 0
    second = lines(tmp_path)
    assert second[:len(first)] == first   # the earlier lines are kept
    again = second[len(first):]
    assert {r["phase"] for r in again if r["status"] == "done"} == {"report", timings.COMMAND}
    assert sorted(r["unit"] for r in again if r["phase"] == "evaluate") == units
    assert all(r["status"] == "skipped" for r in again if r["phase"] in ("data", "evaluate"))
    before, after = by_phase(timings.summary(first)), by_phase(timings.summary(second))
    for phase in ("data", "train", "evaluate"):   # not doubled: the skipped add nothing
        assert after[phase][0] == before[phase][0] and after[phase][2] == before[phase][2]
    assert after["evaluate"][1] == before["evaluate"][1] + 2
    assert after["report"][0] == 2   # each run writes its report again

    capsys.readouterr()
    assert main(["report", "majority", "--profile", "tiny", "--runs-root",
                 str(tmp_path / "runs"), "--results-root", str(tmp_path / "results")]) == 0
    assert lines(tmp_path) == second   # the steps of compsuite run only


def test_jobs_prepare_datasets_side_by_side_and_each_step_judges_its_own_folder(
        tmp_path, monkeypatch):
    """With ``--jobs 2`` two datasets are prepared at once: each seed's generator waits
    at a barrier for the other's (one at a time, it would time out and the run fail).
    A step that finds its own dataset stored is recorded as skipped even while the
    other dataset is written beside it, and the data are the bytes a one-at-a-time run
    writes."""
    import threading

    import majority_study

    barrier = threading.Barrier(2, timeout=20)
    real = majority_study.generate

    def generate(*args, **kwargs):
        barrier.wait()
        return real(*args, **kwargs)

    monkeypatch.setattr(majority_study, "generate", generate)
    side = tmp_path / "side"
    assert main(["run", "majority", "--quiet", *roots(side, "--jobs", "2")]) == 0
    data = [r for r in lines(side) if r["phase"] == "data"]
    assert sorted((r["seed"], r.get("toolkit") or "") for r in data) == [
        (1, ""), (1, "sklearn_bow"), (2, ""), (2, "sklearn_bow")]
    assert [r["status"] for r in data if "toolkit" not in r] == ["done", "done"]

    # one at a time, seed 1 first: the barrier would never open, so it goes
    monkeypatch.setattr(majority_study, "generate", real)
    alone = tmp_path / "alone"
    assert main(["run", "majority", "--quiet", *roots(alone, "--jobs", "1", "--seeds", "1")]) == 0
    assert main(["run", "majority", "--quiet", *roots(alone, "--jobs", "2")]) == 0
    data = [r for r in lines(alone) if r["phase"] == "data" and "toolkit" not in r]
    assert [(r["seed"], r["status"]) for r in data] == [(1, "done"), (1, "skipped"),
                                                        (2, "done")] or [
        (r["seed"], r["status"]) for r in data] == [(1, "done"), (2, "done"), (1, "skipped")]
    files = sorted(p.relative_to(side / "DATA") for p in (side / "DATA").rglob("*")
                   if p.is_file() and not p.name.startswith("."))
    assert files and files == sorted(p.relative_to(alone / "DATA")
                                     for p in (alone / "DATA").rglob("*")
                                     if p.is_file() and not p.name.startswith("."))
    for f in files:
        if f.name != "manifest.json":
            assert (side / "DATA" / f).read_bytes() == (alone / "DATA" / f).read_bytes(), f


def test_a_stopped_run_keeps_its_lines_and_the_resumed_one_skips_the_finished_training(
        tmp_path, monkeypatch, capsys):
    """A step that a stop cuts short is recorded as stopped, as is the command; resumed, the trainings train.json holds are skipped, the evaluations done."""
    from compsuite.registry import get_study

    def stop(self, ctx):
        raise Stopped(signal.SIGTERM)

    study = type(get_study("majority"))
    evaluate = study.evaluate
    monkeypatch.setattr(study, "evaluate", stop)
    assert main(["run", "majority", "--quiet", *roots(tmp_path, "--jobs", "1")]) == 143
    first = lines(tmp_path)
    assert [(r["phase"], r["status"]) for r in first if r["phase"] != "data"] == [
        ("train", "done"), ("evaluate", "stopped"), ("command", "stopped")]

    monkeypatch.setattr(study, "evaluate", evaluate)
    assert main(["run", "majority", "--quiet", *roots(tmp_path, "--jobs", "1")]) == 0
    again = lines(tmp_path)[len(first):]
    steps = [(r["phase"], r.get("unit"), r["status"]) for r in again
             if r["phase"] in ("train", "evaluate")]
    assert steps == [("train", "bow-sklearn/seed1", "skipped"),
                     ("evaluate", "bow-sklearn/seed1", "done"),
                     ("train", "bow-sklearn/seed2", "done"),
                     ("evaluate", "bow-sklearn/seed2", "done")]


@pytest.mark.parametrize("study", ["ctlpp"])   # the session's tiny run, two side by side
def test_a_studys_tiny_run_records_every_phase_and_its_table(study, tiny_study, capsys):
    """A suite study's tiny run: every phase done in positive time; one training step
    per unit that trains, holding the toolkit's own training time (result.json's
    train_wall_s), one evaluation per unit; the command's interval holds its steps."""
    t = tiny_study(study)
    assert t.returncode == 0
    records = timings.read(t.runs / timings.FILE)
    # the first command's lines (it writes its own line last): other tests run the
    # session's tiny study again, which adds a second command's skipped steps
    first = [i for i, r in enumerate(records) if r["phase"] == timings.COMMAND][0]
    records = records[:first + 1]
    done = [r for r in records if r["status"] == "done"]
    assert {r["phase"] for r in done} == {*timings.PHASES, timings.COMMAND}
    assert all(r["wall_s"] > 0 for r in done)
    results = {p.parent.relative_to(t.runs).as_posix(): json.loads(p.read_text())
               for p in t.runs.rglob("result.json")}
    assert sorted(r["unit"] for r in done if r["phase"] == "evaluate") == sorted(results)
    trained = {r["unit"]: r["wall_s"] for r in done if r["phase"] == "train"}
    assert sorted(trained) == sorted(u for u, res in results.items() if res["train_wall_s"])
    # (a backend rounds train_wall_s to a tenth of a second)
    assert all(trained[u] >= results[u]["train_wall_s"] - 0.05 for u in trained)
    (command,) = [r for r in records if r["phase"] == timings.COMMAND]
    assert all(command["start"] <= r["start"] and r["start"] + r["wall_s"] <=
               command["start"] + command["wall_s"] + 0.01 for r in done)
    assert main(["times", study, "--profile", "tiny", "--runs-root", str(t.root / "runs")]) == 0
    table = [line.split("|")[1].strip() for line in capsys.readouterr().out.splitlines()
             if line.startswith("|")]
    assert table[2:] == [*timings.PHASES, "start-up", "other", "total"]


def at(t: float) -> str:
    return timings.utc(1_800_000_000 + t)


def write(path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


#: a run with two trainings side by side (10 s each, 5 s apart) and a resumed command
RECORDS = [
    {"phase": "command", "status": "stopped", "wall_s": 30.0, "startup_s": 1.0,
     "started_at": at(0), "git": "abc", "threads": 1, "jobs": 2},
    {"phase": "data", "dataset": "d", "seed": 1, "status": "done", "wall_s": 4.0,
     "started_at": at(1)},
    {"phase": "train", "unit": "a", "status": "done", "wall_s": 10.0, "started_at": at(5)},
    {"phase": "train", "unit": "b", "status": "done", "wall_s": 10.0, "started_at": at(10)},
    {"phase": "evaluate", "unit": "a", "status": "done", "wall_s": 3.0, "started_at": at(15)},
    {"phase": "command", "status": "done", "wall_s": 10.0, "startup_s": 2.0,
     "started_at": at(100), "git": "abc", "threads": 1, "jobs": 2},
    {"phase": "data", "dataset": "d", "seed": 1, "status": "skipped", "wall_s": 0.5,
     "started_at": at(102)},
    {"phase": "evaluate", "unit": "a", "status": "skipped", "wall_s": 0.0, "started_at": at(103)},
    {"phase": "evaluate", "unit": "b", "status": "done", "wall_s": 2.0, "started_at": at(104)},
    {"phase": "report", "results": "r", "status": "done", "wall_s": 1.0, "started_at": at(107)},
]


def test_times_prints_step_time_and_elapsed_wall_by_phase(tmp_path, capsys):
    write(tmp_path / "runs" / "majority" / "quick" / timings.FILE, RECORDS)
    assert main(["times", "majority", "--runs-root", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("majority (quick): 2 compsuite run command(s)")
    table = [line for line in out.splitlines() if line.startswith("|")]
    # the trainings overlap from 10 s to 15 s; other: the commands' 40 s less their 3 s
    # of start-up and the 22 s the steps done cover (evaluate a lies within train b)
    assert [[c.strip() for c in line.strip("|").split("|")] for line in table[2:]] == [
        ["data", "1", "1", "4.0", "4.0"],
        ["train", "2", "0", "20.0", "15.0"],
        ["evaluate", "2", "1", "5.0", "5.0"],
        ["report", "1", "0", "1.0", "1.0"],
        ["start-up", "–", "–", "3.0", "3.0"],
        ["other", "–", "–", "15.0", "15.0"],
        ["total", "6", "2", "48.0", "40.0"],
    ]


@pytest.mark.parametrize("line, why", [
    ("{not json", "not JSON"),
    ("[1, 2]", "not a JSON object"),
    ('{"phase": "training", "status": "done", "wall_s": 1, "started_at": "%s"}' % at(0),
     "phase 'training'"),
    ('{"phase": "train", "status": "done", "wall_s": -1, "started_at": "%s"}' % at(0),
     "wall_s -1"),
    ('{"phase": "train", "status": "done", "wall_s": 1}', "started_at None"),
    ('{"phase": "command", "status": "done", "wall_s": 9, "startup_s": "2", "started_at": '
     '"%s"}' % at(0), "startup_s '2'"),
    ('{"phase": "train", "status": "done", "wall_s": 1, "started_at": "2026-01-01T00:00"}',
     "started_at '2026-01-01T00:00' has no time zone"),
    ('{"phase": "train", "status": "done", "wall_s": 1e999, "started_at": "%s"}' % at(0),
     "wall_s inf is not a number of seconds"),
    ('{"phase": "train", "status": "done", "wall_s": NaN, "started_at": "%s"}' % at(0),
     "wall_s nan is not a number of seconds"),
    ('{"phase": "command", "status": "done", "wall_s": 2, "startup_s": 9, "started_at": '
     '"%s"}' % at(0), "startup_s 9 is more than wall_s 2"),
    (b'{"phase": "train", "status": "done", "unit": "\xe9", "wall_s": 1}', "not UTF-8"),
])
def test_a_malformed_timings_line_is_one_line_naming_file_and_line(tmp_path, capsys, line,
                                                                    why):
    path = tmp_path / "runs" / "majority" / "quick" / timings.FILE
    write(path, RECORDS[:1])
    raw = line if isinstance(line, bytes) else line.encode("utf-8")
    path.write_bytes(path.read_bytes() + raw + b"\n")
    assert main(["times", "majority", "--runs-root", str(tmp_path / "runs")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}, line 2: {why}" in err, err


def test_times_without_a_run_says_what_to_run(tmp_path, capsys):
    assert main(["times", "majority", "--runs-root", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert "no timings under" in err and "compsuite run majority --profile quick" in err


@pytest.mark.parametrize("error, status", [(ValueError, "failed"),
                                           (KeyboardInterrupt, "stopped"),
                                           (SystemExit, "stopped"),
                                           (lambda: Stopped(signal.SIGTERM), "stopped")])
def test_a_step_that_raises_is_recorded_stopped_or_failed_and_the_error_goes_on(
        tmp_path, error, status):
    path = tmp_path / timings.FILE
    with pytest.raises(BaseException) as raised:
        with timings.step(path, "train", unit="a"):
            raise error()
    assert not isinstance(raised.value, AssertionError)
    (r,) = timings.read(path)
    assert (r["phase"], r["unit"], r["status"]) == ("train", "a", status) and r["wall_s"] >= 0


def test_the_time_of_steps_cut_short_counts_in_their_phase_not_in_other(tmp_path):
    """A training stopped after 20 s and an evaluation that failed after 3 s: their
    phases' rows, not other, hold that time."""
    write(tmp_path / timings.FILE, [
        {"phase": "command", "status": "stopped", "wall_s": 30.0, "startup_s": 1.0,
         "started_at": at(0)},
        {"phase": "train", "unit": "a", "status": "stopped", "wall_s": 20.0,
         "started_at": at(2)},
        {"phase": "evaluate", "unit": "b", "status": "failed", "wall_s": 3.0,
         "started_at": at(23)}])
    rows = by_phase(timings.summary(timings.read(tmp_path / timings.FILE)))
    assert rows["train"] == [1, 0, 20.0, 20.0] and rows["evaluate"] == [1, 0, 3.0, 3.0]
    assert rows["other"] == [None, None, 6.0, 6.0]


def test_a_run_whose_report_fails_records_its_command_failed(tmp_path, monkeypatch, capsys):
    from compsuite import cli

    monkeypatch.setattr(cli, "cmd_report", lambda a, study=None: cli._fail("no report"))
    assert main(["run", "majority", "--quiet", *roots(tmp_path, "--jobs", "1")]) == 1
    (command,) = [r for r in lines(tmp_path) if r["phase"] == timings.COMMAND]
    assert command["status"] == "failed"


@pytest.mark.parametrize("env, name", [
    ({"SLURM_JOB_ID": "12", "SLURM_ARRAY_JOB_ID": "7", "SLURM_ARRAY_TASK_ID": "3"}, "7_3"),
    ({"SLURM_JOB_ID": "12"}, "12"),
    ({}, None)])
def test_a_job_records_its_steps_in_a_file_of_its_own(tmp_path, monkeypatch, env, name):
    import os
    import socket

    for key in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    name = name or f"{socket.gethostname()}-{os.getpid()}"
    assert timings.job_file(tmp_path) == tmp_path / timings.JOBS_DIR / f"{name}.jsonl"


def test_times_reads_the_main_file_and_the_jobs_files(tmp_path, capsys):
    """The submitting command's lines in timings.jsonl, each Slurm job's beside it."""
    runs = tmp_path / "runs" / "majority" / "quick"
    write(runs / timings.FILE, RECORDS[:2])
    write(runs / timings.JOBS_DIR / "7_0.jsonl", RECORDS[2:3])
    write(runs / timings.JOBS_DIR / "7_1.jsonl", RECORDS[3:5])
    records = timings.read(runs / timings.FILE)
    assert [r["started_at"] for r in records] == [r["started_at"] for r in RECORDS[:5]]
    assert main(["times", "majority", "--runs-root", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert "and 2 Slurm job file(s) in timings.d" in out.splitlines()[0]
    table = [[c.strip() for c in line.strip("|").split("|")]
             for line in out.splitlines() if line.startswith("|")]
    assert table[3] == ["train", "2", "0", "20.0", "15.0"]
    (runs / timings.FILE).unlink()   # the jobs' files alone
    assert main(["times", "majority", "--runs-root", str(tmp_path / "runs")]) == 0


def test_a_slurm_job_records_its_units_steps_not_the_data_it_finds(tmp_path, monkeypatch):
    """run_unit (a unit's Slurm job, here in this process): its train and evaluate steps
    in its own file; the data steps are the submitting command's, not recorded again."""
    from compsuite import executors
    from compsuite.registry import get_study
    from compsuite.resources import Resources
    from compsuite.runner import Runner

    monkeypatch.setenv("SLURM_JOB_ID", "42")
    runner = Runner(get_study("majority"), "tiny", data_root=tmp_path / "DATA",
                    runs_root=tmp_path / "runs", show=False)
    runner.executor = executors.SlurmExecutor(tmp_path / ".slurm", lambda u: Resources())
    units = runner.plan(seeds=[1])
    runner.prepare(units)
    main_file = runner.runs_dir / timings.FILE
    before = timings.read(main_file)
    assert {r["phase"] for r in before} == {"data"}
    executors.run_unit(runner.job_spec(units[-1]))
    assert len(main_file.read_text().splitlines()) == len(before)   # nothing added
    job = [(r["phase"], r["status"]) for r in timings.read(main_file)[len(before):]]
    assert job == [("train", "done"), ("evaluate", "done")]
    assert [p.name for p in (runner.runs_dir / timings.JOBS_DIR).iterdir()] == ["42.jsonl"]
