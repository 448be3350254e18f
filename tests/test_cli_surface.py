"""The command line as a user meets it (issue 37, point 7): options given without the
option they belong to, system names, another system's results under a name, a data
folder inside one a run holds, the CTranslate2 notice, and what run, report, score and
export print."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

import pytest

from compsuite.cli import main
from compsuite.foundation.errors import ToolkitError
from compsuite.locks import FolderBusy, folder_lock
from compsuite.runner import Runner


@pytest.fixture
def planned(monkeypatch):
    """What ``compsuite run`` would run (nothing runs, no report is made)."""
    import compsuite.cli as cli

    units: list[list[str]] = []
    monkeypatch.setattr(Runner, "run", lambda self, us: units.append([u.path for u in us]))
    monkeypatch.setattr(cli, "cmd_report", lambda a, study=None: 0)
    return units


def run_ctlpp(tmp_path, *extra: str) -> int:
    return main(["run", "ctlpp", "--profile", "tiny", "--quiet", "--runs-root",
                 str(tmp_path / "runs"), "--data-root", str(tmp_path / "DATA"), *extra])


@pytest.mark.parametrize("extra,message", [
    (["--hf-prompt", "Q: {input}"], "--hf-prompt goes with --hf-model, which is not given"),
    (["--model-timeout", "5"], "--model-timeout goes with --model-cmd, which is not given"),
    (["--name", "mine"], "--name goes with --model-cmd or --hf-model or --model-url, "
                         "which is not given"),
    (["--model-cmd", "python m.py", "--hf-prompt", "Q: {input}"],
     "--hf-prompt goes with --hf-model"),
    (["--hf-model", "/models/m", "--model-timeout", "5"], "--model-timeout goes with "
                                                          "--model-cmd"),
])
def test_a_system_option_without_its_system_is_refused(tmp_path, planned, capsys, extra,
                                                       message):
    """Before: ignored, and the whole profile trained instead."""
    assert run_ctlpp(tmp_path, *extra) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert planned == []


@pytest.mark.parametrize("option", ["--model-cmd", "--hf-model"])
def test_an_empty_model_command_or_folder_is_refused(tmp_path, planned, capsys, option):
    with pytest.raises(SystemExit) as e:
        run_ctlpp(tmp_path, option, "")
    assert e.value.code == 2
    assert f"argument {option}: expected a" in capsys.readouterr().err
    assert planned == []


def test_eval_commands_refuse_an_empty_command_and_a_timeout_without_one(capsys):
    with pytest.raises(SystemExit):
        main(["eval", "pcfgset", "embeddings", "--model-cmd", " "])
    assert "argument --model-cmd: expected a command" in capsys.readouterr().err
    assert main(["eval", "pcfgset", "embeddings", "--checkpoint", "ck.pt",
                 "--model-timeout", "5"]) == 1
    assert "--model-timeout is the time a program may take: give it with --model-cmd" in \
        capsys.readouterr().err


def test_the_system_options_still_add_the_system(tmp_path, planned):
    assert run_ctlpp(tmp_path, "--model-cmd", "python m.py", "--model-timeout", "5",
                     "--name", "mine") == 0
    assert planned and all(p.split("/")[1] == "mine" for p in planned[0])
    planned.clear()
    assert run_ctlpp(tmp_path, "--model-cmd", "python m.py") == 0
    assert all(p.split("/")[1] == "system" for p in planned[0])   # the default name


@pytest.mark.parametrize("name,why", [
    ("../../../../esc", "it holds a path separator"), ("a/b", "it holds a path separator"),
    ("..", "it starts with '.'"), (".hidden", "it starts with '.'"), ("", "it is empty"),
    ("tab\there", "it holds a control character"),
    ("n" * 300, "it is 300 bytes, more than the 200 a name may have"),   # was: OSError
])
def test_a_name_is_one_plain_folder_name(tmp_path, planned, capsys, name, why):
    """Before: ``--name ../../../../esc`` wrote outside the runs root."""
    assert run_ctlpp(tmp_path, "--model-cmd", "python m.py", "--name", name) == 1
    err = capsys.readouterr().err
    assert f"--name {name!r}: {why}; a name is one plain folder name" in err
    assert planned == [] and not (tmp_path / "runs").exists()
    assert main(["score", "ctlpp", "--profile", "tiny", "--from", str(tmp_path), "--hyps",
                 str(tmp_path), "--name", name, "--runs-root", str(tmp_path / "runs")]) == 1
    assert why in capsys.readouterr().err


def fake_export(tmp_path, name: str) -> tuple:
    """An export folder of ctlpp's tiny profile (its manifest: the units score plans),
    and the folder where score keeps the results of the system ``name``."""
    from compsuite.export import system_run
    from compsuite.registry import get_study

    study = get_study("ctlpp")
    system_run(study, "export", "files", {"mode": "record", "inputs": str(tmp_path)})
    units = Runner(study, "tiny", show=False).plan(runs=["export"])
    export = tmp_path / "export"
    export.mkdir()
    (export / "manifest.json").write_text(json.dumps({
        "study": "ctlpp", "profile": "tiny",
        "units": [{"unit": u.path, "part": u.part, "dataset": u.dataset, "seed": u.seed}
                  for u in units]}))
    return export, tmp_path / "runs" / "scored" / "ctlpp" / "tiny" / units[0].dataset / name


def test_score_refuses_another_systems_results_under_its_name(tmp_path, monkeypatch):
    """As run does: each stored result records its system (here its answers folder);
    before, score deleted another system's results and stored its own under the name."""
    import compsuite.export as export_module
    from compsuite.foundation.errors import DataError
    from compsuite.registry import get_study

    export, unit = fake_export(tmp_path, "mine")
    stored = {"run": "mine", "system": {"answers": str((tmp_path / "theirs").resolve())}}
    (unit / "seed1").mkdir(parents=True)
    (unit / "seed1" / "result.json").write_text(json.dumps(stored))
    (tmp_path / "mine").mkdir()
    evaluated = []   # a stand-in: scores nothing
    monkeypatch.setattr(export_module, "evaluate",
                        lambda *a, **k: evaluated.append(a) or ({}, {"all": "stand-in"}))

    def score():
        return export_module.score(get_study("ctlpp"), "tiny", export, tmp_path / "mine",
                                   runs_root=tmp_path / "runs", results_root=tmp_path / "res",
                                   data_root=tmp_path / "DATA", name="mine", show=False)

    with pytest.raises(ToolkitError, match="holds the results of another system under the "
                                           "run name 'mine'"):
        score()
    assert evaluated == []
    assert json.loads((unit / "seed1" / "result.json").read_text()) == stored   # kept
    # its own earlier results (the same answers folder): scored afresh
    stored["system"]["answers"] = str((tmp_path / "mine").resolve())
    (unit / "seed1" / "result.json").write_text(json.dumps(stored))
    with pytest.raises(DataError, match="no unit could be scored: all: stand-in"):
        score()
    assert evaluated and not (unit / "seed1").exists()   # cleared for the new answers


def test_the_files_backend_names_its_system():
    from compsuite.studies.base import Run
    from compsuite.toolkits import get_backend

    files = get_backend("files")
    replay = Run(name="s", architecture="s", toolkit="files",
                 args={"mode": "replay", "inputs": "/e", "answers": "/a"})
    assert files.system(replay, "tiny") == {"answers": "/a"}
    assert files.system(Run(name="s", architecture="s", toolkit="files",
                            args={"mode": "record", "inputs": "/e"}), "tiny") is None


HOLDER = textwrap.dedent("""
    import sys, time
    from compsuite.locks import folder_lock
    with folder_lock(sys.argv[1], "data"):
        print("locked", flush=True)
        time.sleep(60)
""")


def test_export_and_score_take_the_data_folders_lock_as_run_does(tmp_path, capsys):
    """Before (issue 51): ``compsuite export`` generated a dataset inside the data folder
    a running ``compsuite run`` held, and ``score`` likewise."""
    data = tmp_path / "DATA"
    held = data / "ctlpp"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(held)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        assert main(["export", "ctlpp", "--profile", "tiny", "--out", str(tmp_path / "ex"),
                     "--data-root", str(data), "--quiet"]) == 1
        err = capsys.readouterr().err
        assert f"{held}: the data folder is in use by PID {holder.pid}" in err
        assert "Traceback" not in err and not (tmp_path / "ex").exists()
        assert not any(p.name != ".ctlpp.lock" for p in data.iterdir())   # nothing generated
    finally:
        holder.kill()
        holder.wait()


def test_a_data_command_inside_a_folder_a_run_holds_is_refused(tmp_path, capsys):
    """A run holds ``DATA/<study>``; before, a data command's --out inside it was not
    refused (it held only its own folder's lock)."""
    held = tmp_path / "DATA" / "ctlpp"
    out = held / "A" / "mine"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(held)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        assert main(["data", "ctlpp", "generate", "--variant", "A", "--out", str(out),
                     "--quiet"]) == 1
        err = capsys.readouterr().err
        assert f"{out}: inside {held}, which is in use by PID {holder.pid}" in err
        assert "Traceback" not in err and not out.exists()
    finally:
        holder.kill()
        holder.wait()
    # the run is gone (its lock file stays): the folder inside is free
    from compsuite.locks import inside_lock

    with inside_lock(out), folder_lock(out, "data"):
        # and while the data command writes there, no run takes the folder above it
        with pytest.raises(FolderBusy, match=f"{held}: the data folder is in use"):
            with folder_lock(held, "data"):
                pass
    with folder_lock(held, "data"):   # free again afterwards
        pass


def test_ctranslate2_with_a_program_or_a_model_folder_is_a_notice(tmp_path, planned, capsys,
                                                                  monkeypatch):
    """docs/fast_decoding.md: what CTranslate2 cannot decode is decoded otherwise, with a
    one-line notice (before: silently)."""
    assert run_ctlpp(tmp_path, "--model-cmd", "python m.py", "--engine", "ctranslate2") == 0
    err = capsys.readouterr().err
    assert err.count("CTranslate2 cannot decode a program (--model-cmd)") == 1
    assert run_ctlpp(tmp_path, "--hf-model", str(tmp_path), "--engine", "ctranslate2") == 0
    assert f"CTranslate2 cannot decode a Hugging Face model folder ({tmp_path})" in \
        capsys.readouterr().err
    assert run_ctlpp(tmp_path, "--model-cmd", "python m.py") == 0
    assert "CTranslate2" not in capsys.readouterr().err
    # an eval command: the notice, and the folder loaded without the engine settings
    import compsuite.toolkits as toolkits
    from compsuite.commands import load_model_from_options

    loaded, owners = [], []
    monkeypatch.setattr(toolkits, "load_checkpoint",
                        lambda ck, data, kind, toolkit, generation:
                        owners.append(toolkit) or loaded.append(generation))
    a = argparse.Namespace(checkpoint=str(tmp_path), data=None, batch_size=8, model_cmd=None,
                           model_timeout=None, engine="ctranslate2", compute_type="int8",
                           device=None)
    load_model_from_options(a)
    assert [(g.given, g.engine, g.max_length) for g in loaded] == [
        ({"batch_size": 8}, "toolkit", 512)]
    assert owners == ["hf"]   # the owner found once, for the notice, and handed on
    assert "CTranslate2 cannot decode a Hugging Face model folder" in capsys.readouterr().err
    a = argparse.Namespace(**{**vars(a), "checkpoint": None, "model_cmd": "python m.py"})
    load_model_from_options(a)
    assert "CTranslate2 cannot decode a program (--model-cmd)" in capsys.readouterr().err


def test_run_and_report_print_the_headline_not_the_whole_report(tmp_path, monkeypatch,
                                                                capsys):
    from compsuite.registry import get_study

    runs = tmp_path / "runs" / "ctlpp" / "tiny" / "A" / "mine" / "seed1"
    runs.mkdir(parents=True)
    (runs / "result.json").write_text(json.dumps({"architecture": "mine"}))
    body = ["# CTL++: tiny profile", "", "Some words.", "", "## Table 1", "",
            "| model | A |", "| --- | --- |"] + [f"| m{i} | 0.{i} |" for i in range(15)] + \
        ["", "## Later", "", "| x |", "| - |", "| later-table |", "", "much more text"]

    def report(self, profile, results, out):
        (out / "report.md").write_text("\n".join(body) + "\n")
        return [out / "report.md"]

    monkeypatch.setattr(type(get_study("ctlpp")), "report", report)
    assert main(["report", "ctlpp", "--profile", "tiny", "--runs-root", str(tmp_path / "runs"),
                 "--results-root", str(tmp_path / "res")]) == 0
    out = capsys.readouterr().out
    md = tmp_path / "res" / "ctlpp" / "tiny" / "report.md"
    assert out.startswith("# CTL++: tiny profile\n## Table 1\n\n| model | A |\n| --- | --- |\n"
                          "| m0 | 0.0 |\n")
    assert "| m11 | 0.11 |\n(3 more rows in report.md)\n" in out and "m12" not in out
    assert "later-table" not in out and "much more text" not in out
    assert (f"the whole report: {md}; results in {md.parent}/ (report.md, findings.json, "
            "findings.md)") in out   # the paper's findings, seed by seed


def test_export_says_what_score_cannot_take_from_files():
    from compsuite.cli import export_summary

    counts = {"inputs": 120, "files": 6, "units": 2, "model_in_the_loop": 0,
              "analyses_needing_the_model": 2}
    text = export_summary("OUT", counts)
    assert text.startswith("wrote OUT/: 120 inputs in 6 files for 2 units")
    assert "2 analyses need the model itself (not from files)" in text
    assert "0 units" not in text   # before: "0 units need the model in the loop"
    text = export_summary("OUT", {**counts, "model_in_the_loop": 1,
                                  "analyses_needing_the_model": 0})
    assert "1 unit needs the model in the loop: use a program (--model-cmd)" in text
    text = export_summary("OUT", {**counts, "analyses_needing_the_model": 0})
    assert text.endswith("score takes every test from these files")


def test_the_pcfgset_report_names_its_profile_and_a_system_has_no_paper_column():
    from compsuite.eval.pcfgset.report import header, table3
    from compsuite.eval.pcfgset.report import paper_numbers
    from compsuite.registry import get_study

    study = get_study("pcfgset")
    paper = paper_numbers("pcfgset")["table3"]
    md = "\n".join(header(study, "tiny", [], {}, paper))
    assert "The tiny profile trains" in md and "quick" not in md
    study.architectures["mine"] = {"paper_name": "mine", "evaluate_only": True}
    task = [{"architecture": "mine", "toolkit": "command", "run": "mine", "seed": 1,
             "accuracy": 0.5}]
    md = "\n".join(table3(study, "tiny", task, {}, paper, {"table3": {}}))
    head = next(line for line in md.splitlines() if line.startswith("| row"))
    assert "mine (ours)" in head and "mine (paper)" not in head
    assert "LSTMS2S (paper)" in head
    row = next(line for line in md.splitlines() if line.startswith("| task accuracy"))
    assert len(row.split("|")) == len(head.split("|"))


def test_a_programs_wrong_embed_output_is_an_embed_output(tmp_path):
    """Before: "a embed output is ..."."""
    from compsuite.toolkits.command.model import CommandError, CommandModel

    prog = tmp_path / "prog.py"
    prog.write_text("import json, sys\nfor line in sys.stdin:\n"
                    "    print(json.dumps({'outputs': ['x' for _ in json.loads(line)"
                    "['inputs']]}), flush=True)\n")
    with CommandModel(f"{sys.executable} {prog}") as model:
        with pytest.raises(CommandError, match=r": an embed output is \"x\", not a list"):
            model.embed(["copy"])
