"""Decoding settings from where they are given to what a toolkit is given: a batch size
and an engine, from a study YAML (the study's ``generation``, a profile's, a run's) and
from the command line (``compsuite run --engine``, an eval command's ``--batch-size``),
followed through the registry, the runner's Context and the backend to the command line
of fairseq-generate and onmt_translate and to the translators of the fairseq, OpenNMT-py,
Hugging Face and command backends.  Nothing decodes: each launch is faked and records
what it was given."""
from pathlib import Path

import pytest

from conftest import edited_study

from compsuite.foundation.dataset import Dataset
from compsuite.models.decoding import Decoding
from compsuite.studies.base import Context, Unit, unit_decoding

#: the batch size each layer of the edited study gives (None: the layer gives none)
LAYERS = {"study": {"study": 11, "profile": None, "run": None},
          "profile": {"study": 11, "profile": 22, "run": None},
          "run": {"study": 11, "profile": 22, "run": 33}}
#: the runs followed, one per backend that decodes by a command line or a translator
RUNS = {"fairseq": "transformer-fairseq", "onmt": "lstms2s-onmt", "hf": "hf-model"}


class Launched(Exception):
    """Raised by a faked toolkit command once it has recorded its command line."""


def study_with(tmp_path, layers: dict):
    """PCFG SET with the batch sizes of ``layers`` in its YAML (the tiny profile) and an
    hf run beside its own."""
    def edit(raw):
        raw["runs"]["hf-model"] = {"architecture": "transformer", "toolkit": "hf",
                                   "args": {"model": "m", "kind": "seq2seq", "train": False}}
        raw.setdefault("generation", {})["batch_size"] = layers["study"]
        if layers["profile"] is not None:
            raw["profiles"]["tiny"]["generation"] = {"batch_size": layers["profile"]}
        if layers["run"] is not None:
            for run in RUNS.values():
                raw["runs"][run]["generation"] = {"tiny": {"batch_size": layers["run"]}}
    return edited_study(tmp_path, "pcfgset", edit)


def runner_of(study, *options: str):
    """The runner ``compsuite run pcfgset --profile tiny OPTIONS`` builds."""
    from compsuite.cli import _runner, build_parser

    args = build_parser().parse_args(["run", "pcfgset", "--profile", "tiny", *options])
    return _runner(args, study)


def context(runner, toolkit: str, tmp_path: Path) -> Context:
    """A unit's Context as the runner builds it, over a dataset in every format."""
    data = Dataset(tmp_path / "data", ("train", "valid", "test"))
    data.raw.mkdir(parents=True)
    for side in ("src", "tgt"):
        (data.raw / f"test.{side}").write_text("a b\n")
    for fmt in ("fairseq", "onmt"):
        data.formats[fmt] = data.root / fmt
        data.formats[fmt].mkdir()
        (data.formats[fmt] / "test.src").write_text("a b\n")
    checkpoint = tmp_path / "checkpoint.pt"
    checkpoint.write_bytes(b"")
    run = runner.study.run(RUNS[toolkit])
    unit = Unit("test", run.name, 1, "full", f"test/{run.name}/seed1")
    return Context(runner.study, runner.profile, unit, run, tmp_path / "unit", data,
                   str(checkpoint), data, {"checkpoint": str(checkpoint)}, {}, False, None,
                   runner.decoding)


@pytest.fixture
def launches(monkeypatch):
    """What the toolkits are given: fairseq-generate's and onmt_translate's command
    lines, CTranslate2's settings, the translators' batch sizes."""
    import compsuite.models.ctranslate2 as ct2
    import compsuite.toolkits.fairseq.backend as fairseq
    import compsuite.toolkits.fairseq.translator as fairseq_translator
    import compsuite.toolkits.hf.translator as hf_translator
    import compsuite.toolkits.onmt.backend as onmt
    import compsuite.toolkits.onmt.translator as onmt_translator

    seen: dict = {}

    def command(cmd, *args, **kwargs):
        seen["command"] = cmd
        raise Launched

    def translator(conversion, checkpoint, settings, toolkit_loader=None):
        seen["ctranslate2"] = settings
        return None   # CTranslate2 declines: the toolkit decodes

    def recorder(cls, batch_at: int):
        class Recorded(cls):
            def __init__(self, *args, **kwargs):
                seen["translator"] = kwargs.get("batch_size", args[batch_at]
                                                if len(args) > batch_at else None)
        return Recorded

    for module in (fairseq, onmt):
        monkeypatch.setattr(module, "cuda_available", lambda: False)
    monkeypatch.setattr(fairseq, "run_to_file", command)
    monkeypatch.setattr(onmt, "run_logged", command)
    monkeypatch.setattr(ct2, "translator", translator)
    monkeypatch.setattr(fairseq_translator, "FairseqTranslator",
                        recorder(fairseq_translator.FairseqTranslator, 2))
    monkeypatch.setattr(onmt_translator, "OnmtTranslator",
                        recorder(onmt_translator.OnmtTranslator, 1))
    monkeypatch.setattr(hf_translator, "HFTranslator", recorder(hf_translator.HFTranslator, 1))
    return seen


def batch_option(cmd: list[str]) -> int:
    """The batch size on fairseq-generate's or onmt_translate's command line."""
    flag = "--batch-size" if "--batch-size" in cmd else "-batch_size"
    return int(cmd[cmd.index(flag) + 1])


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("toolkit", ["fairseq", "onmt"])
def test_a_batch_size_from_the_yaml_reaches_the_toolkit_command(toolkit, layer, tmp_path,
                                                                launches):
    """The study's, the profile's, the run's: the last given is fairseq-generate's
    ``--batch-size`` (onmt_translate's ``-batch_size``), and what the result records."""
    layers = LAYERS[layer]
    want = layers["run"] or layers["profile"] or layers["study"]
    ctx = context(runner_of(study_with(tmp_path, layers)), toolkit, tmp_path)
    with pytest.raises(Launched):
        ctx.predict("test")
    assert batch_option(launches["command"]) == want
    assert ctx.generation["batch_size"] == want
    assert "ctranslate2" not in launches


@pytest.mark.parametrize("toolkit", ["fairseq", "onmt"])
def test_the_engine_from_the_command_line_reaches_ctranslate2(toolkit, tmp_path, launches):
    """``--engine ctranslate2`` over the YAML's batch size: CTranslate2 is asked with
    both (here it declines, and the toolkit's command decodes with the same batch)."""
    runner = runner_of(study_with(tmp_path, LAYERS["run"]), "--engine", "ctranslate2")
    ctx = context(runner, toolkit, tmp_path)
    with pytest.raises(Launched):
        ctx.predict("test")
    settings = launches["ctranslate2"]
    assert (settings.engine, settings.batch_size) == ("ctranslate2", 33)
    assert batch_option(launches["command"]) == 33
    assert ctx.generation == {"beam": 1, "batch_size": 33, "max_length": 1024,
                              "engine": "ctranslate2"}


def test_engine_toolkit_on_the_command_line_turns_the_yaml_engine_off(tmp_path, launches):
    """The command line comes last: over a profile's CTranslate2 settings,
    ``--engine toolkit`` decodes with the toolkit, its CTranslate2 keys dropped."""
    def edit(raw):
        raw["profiles"]["tiny"]["generation"] = {"engine": "ctranslate2", "device": "auto"}
    runner = runner_of(edited_study(tmp_path, "pcfgset", edit), "--engine", "toolkit")
    ctx = context(runner, "fairseq", tmp_path)
    with pytest.raises(Launched):
        ctx.predict("test")
    assert "ctranslate2" not in launches
    assert ctx.generation == {"beam": 1, "batch_size": 256, "max_length": 1024,
                              "engine": "toolkit"}


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("toolkit", ["fairseq", "onmt", "hf"])
def test_a_batch_size_from_the_yaml_reaches_the_translator(toolkit, layer, tmp_path,
                                                           launches):
    """A model in the loop (``ctx.load()``) is built with the unit's batch size."""
    layers = LAYERS[layer]
    want = layers["run"] or layers["profile"] or layers["study"]
    context(runner_of(study_with(tmp_path, layers)), toolkit, tmp_path).load()
    assert launches["translator"] == want


@pytest.mark.parametrize("toolkit", ["fairseq", "onmt", "hf"])
def test_a_batch_size_from_an_eval_command_reaches_the_translator(toolkit, tmp_path,
                                                                  launches):
    """An eval command's ``--batch-size`` (or, left out, the model's own batch size, a
    class constant) is what the translator is built with."""
    import argparse

    from compsuite.commands import load_model_from_options, model_arguments
    from compsuite.toolkits import load_translator
    from compsuite.toolkits.fairseq.translator import FairseqTranslator
    from compsuite.toolkits.hf.translator import HFTranslator
    from compsuite.toolkits.onmt.translator import OnmtTranslator

    own = {"fairseq": FairseqTranslator, "onmt": OnmtTranslator, "hf": HFTranslator}
    checkpoint = tmp_path / "model"
    if toolkit == "hf":   # a model folder: the command's own options
        checkpoint.mkdir()
        p = argparse.ArgumentParser()
        model_arguments(p)
        load_model_from_options(p.parse_args(["--checkpoint", str(checkpoint),
                                              "--batch-size", "7"]))
        assert launches["translator"] == 7
        load_model_from_options(p.parse_args(["--checkpoint", str(checkpoint)]))
    else:   # what the studies' eval commands call with their --batch-size
        checkpoint.write_bytes(b"")
        load_translator(checkpoint, tmp_path, batch_size=7, toolkit=toolkit)
        assert launches["translator"] == 7
        load_translator(checkpoint, tmp_path, toolkit=toolkit)
    assert launches["translator"] == own[toolkit].BATCH_SIZE


def test_a_program_gets_the_eval_commands_batch_size(tmp_path):
    """A program (``--model-cmd``) is sent ``--batch-size`` inputs a request (at most
    256, also when it is left out); a study's generation does not reach it (its batch
    size is its run's ``batch_size``)."""
    import argparse

    from compsuite.commands import PROGRAM_BATCH, load_model_from_options, model_arguments

    p = argparse.ArgumentParser()
    model_arguments(p)
    model = load_model_from_options(p.parse_args(["--model-cmd", "python m.py",
                                                  "--batch-size", "7"]))
    assert model.batch_size == 7
    model = load_model_from_options(p.parse_args(["--model-cmd", "python m.py"]))
    assert model.batch_size == PROGRAM_BATCH == 256


def test_the_run_layer_is_recorded_and_the_command_line_comes_last(tmp_path):
    """study < profile < run < command line, each key as given recorded in order."""
    study = study_with(tmp_path, LAYERS["run"])
    runner = runner_of(study, "--engine", "ctranslate2", "--compute-type", "int8")
    got = unit_decoding(runner.profile, study.run(RUNS["onmt"]), runner.decoding)
    assert got.given == {"beam": 1, "batch_size": 33, "max_length": 1024,
                         "engine": "ctranslate2", "compute_type": "int8"}
    assert got == Decoding(batch_size=33, max_length=1024, engine="ctranslate2",
                           compute_type="int8")


def test_the_report_names_how_each_run_decoded(tmp_path, monkeypatch):
    """report.md ends with the engine and the settings each run's results record, in a
    study whose models decode; before, no report named the engine (issue 51).  A
    classifier's study (CTL++) has no such section."""
    from compsuite.registry import get_study

    study = get_study("pcfgset")
    base = {"study": "pcfgset", "profile": "tiny", "part": "task", "paper_setup": False,
            "dataset": "small", "dataset_label": "tiny test", "seed": 1, "accuracy": 0.5,
            "n": 10, "signature": "metric:seq_acc",
            "breakdown": {"depth": {"1": {"accuracy": 0.5, "n": 10}}}}
    results = [
        {**base, "run": "transformer-fairseq", "architecture": "transformer",
         "toolkit": "fairseq", "generation": {"beam": 5, "max_length": 100,
                                              "engine": "ctranslate2", "device": "auto"}},
        {**base, "run": "lstms2s-onmt", "architecture": "lstms2s", "toolkit": "onmt",
         "generation": {"max_length": 100}},
        {**base, "run": "lstms2s-onmt", "architecture": "lstms2s", "toolkit": "onmt",
         "part": "localism", "evaluation": "localism", "generation": {"max_length": 100},
         "consistency": {"consistency": 0.5, "consistent_correct": 0.4,
                         "consistent_incorrect": 0.1, "consistency_incorrect": 0.2,
                         "n": 10, "signature": "metric:consistency",
                         "breakdown": {"repeat": {"consistency": 0.5, "n": 10}}}},
        {**base, "run": "mine", "architecture": "transformer", "toolkit": "command",
         "generation": {"max_length": 100}}]
    study.write_reports(study.profile("tiny"), results, tmp_path)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    section = md[md.index("\n## Decoding\n"):]
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| --")]
    assert rows == [
        ["run", "decoded by", "settings", "parts"],
        ["transformer-fairseq", "CTranslate2 (float32, device auto) where it decodes as "
         "fairseq does, else fairseq", "beam 5, at most 100 tokens", "task"],
        ["lstms2s-onmt", "OpenNMT-py", "greedy, at most 100 tokens", "task, localism"],
        ["mine", "a program (command protocol)", "its own (the suite's decoding settings "
         "do not reach it)", "task"]]
    ctlpp = get_study("ctlpp")
    monkeypatch.setattr(ctlpp, "report", lambda profile, results, out: [
        (out / "report.md").write_text("# CTL++\n") and out / "report.md"])
    monkeypatch.setattr(ctlpp, "findings", lambda profile: [])
    ctlpp.write_reports(ctlpp.profile("tiny"), [{**base, "toolkit": "fairseq"}], tmp_path)
    assert (tmp_path / "report.md").read_text() == "# CTL++\n"
