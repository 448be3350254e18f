"""The command line: help for every subcommand, interpret, eval accuracy formats."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT, reference_path

CLI = [sys.executable, "-m", "compsuite.cli"]


def run(args, **kw):
    return subprocess.run(CLI + args, capture_output=True, text=True, cwd=ROOT, **kw)


@pytest.mark.parametrize("args", [   # the studies' own subcommands: test_study_contract.py
    [], ["data"], ["eval"], ["eval", "accuracy"], ["eval", "consistency"], ["run"], ["report"],
    ["list"], ["paths"],
])
def test_every_help_runs(args):
    r = run(args + ["--help"])
    assert r.returncode == 0 and "usage" in r.stdout


def test_interpret_stdin_and_error_line():
    r = run(["data", "pcfgset", "interpret"], input="copy A1 B1\nreverse A1 B1\n")
    assert r.returncode == 0 and r.stdout == "A1 B1\nB1 A1\n"
    r = run(["data", "pcfgset", "interpret"], input="copy A1\nappend A1 B1\n")
    assert r.returncode == 1
    assert "stdin: line 2" in r.stderr and "expects ','" in r.stderr
    assert "Traceback" not in r.stderr


def test_interpret_matches_reference_file():
    src = reference_path("pcfgset", "systematicity", "test.src")
    r = run(["data", "pcfgset", "interpret", "--input", str(src)])
    assert r.returncode == 0
    assert r.stdout == src.with_suffix(".tgt").read_text()


def test_eval_accuracy_json_all_formats(tmp_path):
    (tmp_path / "h").write_text("A1\nB1\n")
    (tmp_path / "r").write_text("A1\nC1\n")
    (tmp_path / "s").write_text("copy A1\ncopy C1\n")
    (tmp_path / "p.tsv").write_text("source\ttarget\tprediction\ncopy A1\tA1\tA1\n")
    (tmp_path / "gen").write_text("S-0\tcopy A1\nT-0\tA1\nH-0\t-0.1\tB1\n")
    for args, acc, n in [
        (["--hyp", "h", "--ref", "r"], 0.5, 2),
        (["--hyp", "h", "--ref", "r", "--src", "s", "--breakdown", "pcfgset"], 0.5, 2),
        (["--tsv", "p.tsv"], 1.0, 1),
        (["--fairseq", "gen"], 0.0, 1),
    ]:
        r = subprocess.run(CLI + ["eval", "accuracy", "--json"] + args, cwd=tmp_path,
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["accuracy"] == acc and out["n"] == n
        assert ("depth" in out["breakdown"]) == ("--breakdown" in args)


def test_eval_accuracy_breakdown_and_plot(tmp_path):
    (tmp_path / "h").write_text("A1\nB1 B1\n")
    (tmp_path / "r").write_text("A1\nB1 B1\n")
    (tmp_path / "s").write_text("copy A1\nrepeat copy B1\n")
    r = subprocess.run(CLI + ["eval", "accuracy", "--json", "--hyp", "h", "--ref", "r", "--src",
                              "s", "--breakdown", "pcfgset", "--plot", "f7.png", "--out", "res.json"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "res.json").read_text())
    assert out["breakdown"]["depth"] == {"1": {"accuracy": 1.0, "n": 1, "correct": 1},
                                         "2": {"accuracy": 1.0, "n": 1, "correct": 1}}
    assert (tmp_path / "f7.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("files,args,msg", [
    ({"h": "A1\nB1\n", "r": "A1\n"}, ["--hyp", "h", "--ref", "r"], "line counts differ"),
    ({"h": "", "r": "A1\n"}, ["--hyp", "h", "--ref", "r"], "empty"),
    ({"p.tsv": "copy A1\tA1\tA1\n"}, ["--tsv", "p.tsv"], "header"),
    ({}, ["--hyp", "h"], "give --fairseq"),
])
def test_eval_accuracy_errors_are_clear(tmp_path, files, args, msg):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    r = subprocess.run(CLI + ["eval", "accuracy"] + args, cwd=tmp_path, capture_output=True,
                       text=True)
    assert r.returncode != 0
    assert msg in r.stderr and "Traceback" not in r.stderr


def test_stats_names_the_bad_line(tmp_path):
    (tmp_path / "bad.src").write_text("copy A1\ncopy foo\n")
    r = run(["data", "pcfgset", "stats", str(tmp_path / "bad.src")])
    assert r.returncode == 1 and "line 2: unknown token 'foo'" in r.stderr


def test_eval_consistency_plain_and_tsv(tmp_path):
    (tmp_path / "a").write_text("A1 B1\nC1\nD1\n")
    (tmp_path / "b").write_text("A1 B1\nC1\nX1\n")
    (tmp_path / "r").write_text("A1 B1\nC2\nD1\n")
    (tmp_path / "c").write_text("repeat\nappend\nappend\n")
    r = subprocess.run(CLI + ["eval", "consistency", "--hyp-a", "a", "--hyp-b", "b", "--ref", "r",
                              "--categories", "c", "--json"], cwd=tmp_path, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["n"] == 3 and abs(out["consistency"] - 2 / 3) < 1e-9
    assert abs(out["consistent_correct"] - 1 / 3) < 1e-9
    assert abs(out["consistent_incorrect"] - 1 / 3) < 1e-9
    assert out["consistency_incorrect"] == 0.5
    assert out["breakdown"]["append"]["consistency"] == 0.5
    head = "source\ttarget\tprediction\n"
    (tmp_path / "a.tsv").write_text(head + "copy A1\tA1\tA1\nrepeat B1\tB1 B1\tB1\n")
    (tmp_path / "b.tsv").write_text(head + "copy A1\tA1\tA1\nrepeat_twin B1\tB1 B1\tB1 B1\n")
    r = subprocess.run(CLI + ["eval", "consistency", "--tsv-a", "a.tsv", "--tsv-b", "b.tsv",
                              "--json"], cwd=tmp_path, capture_output=True, text=True)
    out = json.loads(r.stdout)
    assert out["consistency"] == 0.5 and out["consistency_incorrect"] == 0.0  # its one wrong pair differs
    (tmp_path / "b.tsv").write_text(head + "copy A1\tA1\tA1\nrepeat_twin B1\tB2\tB1 B1\n")
    r = subprocess.run(CLI + ["eval", "consistency", "--tsv-a", "a.tsv", "--tsv-b", "b.tsv"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 1 and "targets differ at line 3" in r.stderr
    (tmp_path / "short").write_text("A1\n")
    r = subprocess.run(CLI + ["eval", "consistency", "--hyp-a", "a", "--hyp-b", "short"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 1 and "line counts differ" in r.stderr


def test_report_without_results_and_unknown_names_are_clear(tmp_path, capsys):
    from compsuite.cli import main

    for study in ("pcfgset", "ctlpp"):
        assert main(["report", study, "--runs-root", str(tmp_path / "runs"),
                     "--results-root", str(tmp_path / "res")]) == 2
        err = capsys.readouterr().err
        assert f"no results under {tmp_path / 'runs' / study / 'quick'}" in err
        assert f"run 'compsuite run {study} --profile quick' first" in err
    assert main(["run", "ctlpp", "--parts", "localism"]) == 1
    assert "unknown part 'localism' of study ctlpp (known: table1, grid)" in capsys.readouterr().err
    assert main(["run", "pcfgst"]) == 1
    err = capsys.readouterr().err
    assert "unknown study 'pcfgst'" in err and "did you mean 'pcfgset'" in err
    assert main(["report", "pcfgset", "--profile", "quik"]) == 1
    assert "did you mean 'quick'" in capsys.readouterr().err


def test_run_selects_runs_and_parts(monkeypatch, capsys):
    """`--runs` naming only task runs plans those and no test (not every test run);
    `--parts` selects parts with the units they need."""
    import compsuite.cli as cli
    from compsuite.runner import Runner

    planned = []
    monkeypatch.setattr(Runner, "run", lambda self, units: planned.append(
        [u.path for u in units]))
    monkeypatch.setattr(cli, "cmd_report", lambda a, study=None: 0)
    assert cli.main(["run", "pcfgset", "--runs", "transformer-onmt", "--quiet"]) == 0
    assert planned == [["task/transformer-onmt/seed1"]]
    assert ("with --runs transformer-onmt, no units of systematicity, productivity"
            in capsys.readouterr().err)
    planned.clear()
    assert cli.main(["run", "pcfgset", "--runs", "lstms2s-onmt", "--parts", "localism",
                     "--quiet"]) == 0
    assert planned == [["task/lstms2s-onmt/seed1", "localism/lstms2s-onmt/seed1"]]
    planned.clear()
    assert cli.main(["run", "ctlpp", "--parts", "grid", "--quiet"]) == 0
    # the quick grid: K in {4, 8} functions x M in {2, 4, 6} shared symbols, one run, one seed
    assert sorted(planned[0]) == ["S-f%d-s%d/bilstm-s-fairseq/seed1" % (k, m)
                                  for k in (4, 8) for m in (2, 4, 6)]


def test_status_calls_the_units_a_local_run_executes_running(tmp_path, monkeypatch, capsys):
    """While ``compsuite run`` executes a unit here, ``compsuite status`` says it runs
    (the run's PID, from the file the runner keeps in the unit's folder while it holds
    the runs folder's lock); a file a stopped run left is stale."""
    import os

    import compsuite.cli as cli
    from compsuite.registry import get_study
    from compsuite.runner import RUNNING, Runner

    status = ["status", "ctlpp", "--profile", "tiny", "--runs-root", str(tmp_path / "runs")]

    def states() -> dict[str, str]:
        capsys.readouterr()
        assert cli.main(status) == 0
        return {line.split()[0]: " ".join(line.split()[1:])
                for line in capsys.readouterr().out.splitlines()}

    seen = []
    monkeypatch.setattr(Runner, "prepare", lambda self, units: None)
    monkeypatch.setattr(Runner, "execute", lambda self, unit, threads=None, gpus=0:
                        seen.append((unit.path, states())) or {})
    runner = Runner(get_study("ctlpp"), "tiny", data_root=tmp_path / "DATA",
                    runs_root=tmp_path / "runs", show=False, jobs=1)
    first, second = runner.plan()[:2]
    runner.run([first, second])
    pid = f"running PID {os.getpid()} (a local run)"
    assert seen == [(first.path, {**states(), first.path: pid}),
                    (second.path, {**states(), second.path: pid})]
    assert set(states().values()) == {"not started"}
    assert not (tmp_path / "runs" / "ctlpp" / "tiny" / first.path).exists()   # left as found
    stale = tmp_path / "runs" / "ctlpp" / "tiny" / first.path / RUNNING
    stale.parent.mkdir(parents=True)
    stale.write_text(f"{os.getpid()}\n")   # the lock is not held
    assert states()[first.path] == "not started"


def test_a_bug_keeps_its_traceback(monkeypatch):
    """Only the suite's user-facing errors become one-line messages."""
    import compsuite.cli as cli

    def broken(a):
        return {}["missing"]

    monkeypatch.setattr(cli, "cmd_paths", broken)
    with pytest.raises(KeyError):
        cli.main(["paths"])


def test_a_missing_input_file_is_one_line(tmp_path):
    r = run(["data", "pcfgset", "interpret", "--input", str(tmp_path / "nope.src")])
    assert r.returncode == 1 and "nope.src: no such file" in r.stderr
    assert "Traceback" not in r.stderr


def test_ctlpp_generate_cli_scaled_task_and_bad_config(tmp_path):
    """`compsuite data ctlpp generate` takes the scaled-down task's sizes; a config the
    generator refuses is a one-line error, not a traceback."""
    out = tmp_path / "A"
    r = run(["data", "ctlpp", "generate", "--variant", "A", "--seed", "3", "--out", str(out),
             "--n-train", "200", "--n-test", "20", "--n-functions", "16", "--max-length", "3",
             "--quiet"])
    assert r.returncode == 0, r.stderr
    m = json.loads((out / "manifest.json").read_text())
    assert len(m["functions"]) == 16 and m["args"]["max_length"] == 3 and m["seed"] == 3
    assert {len(line.split("\t")[0].split()) - 1
            for line in (out / "train.tsv").read_text().splitlines()} == {2, 3}   # no singles
    r = run(["data", "ctlpp", "generate", "--variant", "A", "--out", str(tmp_path / "B"),
             "--n-functions", "15", "--quiet"])
    assert r.returncode != 0 and "n_functions must be even" in r.stderr
    assert "Traceback" not in r.stderr
    r = run(["data", "ctlpp", "generate", "--variant", "A", "--out", str(tmp_path / "C"),
             "--n-train", "20000", "--n-functions", "8", "--max-length", "3", "--quiet"])
    assert r.returncode != 0 and "holds at most" in r.stderr and "Traceback" not in r.stderr


def test_ctlpp_bad_jobs_fails_before_any_work(tmp_path):
    r = run(["run", "ctlpp", "--jobs", "0", "--quiet", "--data-root", str(tmp_path / "DATA"),
             "--runs-root", str(tmp_path / "runs")])
    assert r.returncode == 2 and "argument --jobs: expected a positive integer, not 0" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "DATA").exists() and not (tmp_path / "runs").exists()
    r = run(["run", "ctlpp", "--threads", "-1", "--quiet", "--data-root", str(tmp_path / "DATA"),
             "--runs-root", str(tmp_path / "runs")])
    assert r.returncode == 2 and "argument --threads: expected a positive integer, not -1" in r.stderr
    assert not (tmp_path / "DATA").exists() and not (tmp_path / "runs").exists()


def test_a_lock_left_by_a_killed_run_is_not_a_holder_once_its_pid_is_reused(tmp_path):
    """A run killed without releasing leaves its PID in the lock file; a live process
    given that PID since, running something else, does not hold the folder (status would
    call its units running)."""
    import os

    from compsuite.locks import holder, lock_path

    folder = tmp_path / "runs"
    lock_path(folder).write_text(f"{os.getpid()}\ncompsuite run nosuch --profile tiny\n")
    assert holder(folder) is None   # this process is alive, but runs no such command
    argv = open(f"/proc/{os.getpid()}/cmdline", "rb").read().decode().rstrip("\0").split("\0")
    lock_path(folder).write_text(f"{os.getpid()}\ncompsuite {' '.join(argv[1:])}\n")
    assert holder(folder) == os.getpid()
