"""The registry of studies, runs and profiles; YAML includes and errors; the toolkit
backends' registry."""
import pytest

from compsuite.foundation.checkout import ROOT
from compsuite.foundation.errors import ConfigError, RegistryError
from compsuite.foundation.names import Registry
from compsuite.registry import deep_merge, get_study, load_study, read_yaml, studies


def test_registry_rejects_duplicates_and_suggests():
    r = Registry("thing")
    r.register("transformer", 1)
    with pytest.raises(RegistryError, match="already registered"):
        r.register("transformer", 2)
    with pytest.raises(RegistryError, match="did you mean 'transformer'"):
        r.get("transfomer")


def test_every_study_loads_and_its_files_exist():
    for name in studies():
        s = get_study(name)
        for run_name, run in s.runs.items():
            if run.config:
                assert (ROOT / run.config).is_file(), run.config
            for override in run.profiles.values():
                if isinstance(override, str):
                    assert (ROOT / override).is_file(), override
        assert {"paper", "quick", "tiny"} <= set(s.profiles)


def test_pcfgset_profiles():
    s = get_study("pcfgset")
    assert s.profile("paper").options["dataset"] == "full"
    assert s.profile("quick").options["dataset"] == "small"
    paper_runs = {s.run(r).architecture for r in s.profile("paper").runs if s.run(r).paper_setup}
    assert paper_runs == {"lstms2s", "convs2s", "transformer"}
    # quick: one run per architecture, in the toolkit that learns it fastest on 2 cores
    toolkits = {(s.run(r).architecture, s.run(r).toolkit) for r in s.profile("quick").runs}
    assert toolkits == {("lstms2s", "onmt"), ("convs2s", "fairseq"), ("transformer", "fairseq")}
    for name in ("paper", "quick"):   # the tests: every architecture once
        runs = [s.run(r) for r in s.test_runs(s.profile(name))]
        assert sorted(r.architecture for r in runs) == ["convs2s", "lstms2s", "transformer"]
    assert all(s.run(r).paper_setup for r in s.test_runs(s.profile("paper")))
    assert {t for t, spec in s.tests.items() if spec.model == "base"} == {
        "localism", "per_function", "increasing_string_length"}


def test_study_defaults_come_from_yaml_includes():
    """_base.yaml gives every study its generation settings and fairseq logging; the
    study file adds its own toolkit defaults (the fairseq task) and may override."""
    pcfg, ctl = get_study("pcfgset"), get_study("ctlpp")
    assert pcfg.generation.given == {"beam": 1, "batch_size": 256, "max_length": 1024}
    # a profile's generation goes over the study's (the scaled-down data is short)
    assert pcfg.profile("quick").generation.given == {
        "beam": 1, "batch_size": 256, "max_length": 100, "engine": "ctranslate2",
        "device": "auto"}
    assert ctl.generation.batch_size == 512 and ctl.generation.beam == 1
    assert pcfg.run("convs2s-fairseq").defaults == {
        "log_format": "simple", "log_interval": 50, "task": "translation_seq_acc",
        "eval_accuracy": True, "best_checkpoint_metric": "seq_acc",
        "maximize_best_checkpoint_metric": True}
    assert ctl.run("ndr-fairseq").defaults["task"] == "sequence_classification"
    assert pcfg.run("lstms2s-onmt").defaults == {}


def test_deep_merge_and_include_loops(tmp_path):
    assert deep_merge({"a": {"b": 1, "c": 2}, "d": [1]}, {"a": {"b": 3}, "d": [2]}) == {
        "a": {"b": 3, "c": 2}, "d": [2]}
    (tmp_path / "_x.yaml").write_text("include: y.yaml\n")
    (tmp_path / "y.yaml").write_text("include: _x.yaml\n")
    with pytest.raises(ConfigError, match="include loop"):
        read_yaml(tmp_path / "y.yaml")
    (tmp_path / "z.yaml").write_text("include: missing.yaml\n")
    with pytest.raises(ConfigError, match="missing.yaml: no such file"):
        read_yaml(tmp_path / "z.yaml")


_PCFG = """study: pcfgset
architectures: {a: {paper_name: A}, b: {paper_name: B}}
datasets: {d: {config: small, label: tiny}}
runs:
  a1: {architecture: a, toolkit: onmt, paper_setup: true, config: onmt_configs/pcfgset/lstm.yaml}
  b1: {architecture: b, toolkit: fairseq}
profiles:
  p: {dataset: d, runs: [a1, b1]%s}
"""


def test_test_runs_default_to_the_paper_setups_and_must_be_profile_runs(tmp_path):
    f = tmp_path / "pcfgset.yaml"
    f.write_text(_PCFG % "")
    s = load_study(f)
    assert s.test_runs(s.profile("p")) == ["a1"]
    f.write_text(_PCFG % ", test_runs: [b1]")
    s = load_study(f)
    assert s.test_runs(s.profile("p")) == ["b1"]
    f.write_text(_PCFG.replace("runs: [a1, b1]", "runs: [a1]") % ", test_runs: [b1]")
    with pytest.raises(ConfigError, match="test run 'b1' is not one of the profile's runs"):
        load_study(f)
    f.write_text(_PCFG % "" + "tests:\n  t: {split: localism, evaluation: localism, "
                 "model: shared}\n")
    with pytest.raises(ConfigError, match="model must be one of own, base"):
        load_study(f)
    f.write_text(_PCFG % "" + "tests:\n  t: {split: localism, evaluation: locallism}\n")
    with pytest.raises(ConfigError, match=r"tests.t: unknown evaluation 'locallism'.*did you "
                                          "mean 'localism'"):
        load_study(f)


@pytest.mark.parametrize("text,msg", [
    ("study: pcfgset\n  bad: [", "malformed YAML"),
    ("study: pcfgset\narchitectures: {}\nprofiles: {}\n"
     "runs:\n  r: {architecture: a, toolkit: onmt}\n", "runs.r: unknown architecture 'a'"),
    ("- just a list\n", "expected a mapping"),
    ("study: pcfgset\n", "missing required key 'architectures'"),
    ("study: pcfgset\narchitectures: {a: {}}\nprofiles: {}\n"
     "runs:\n  r: {architecture: a, toolkit: fairsq}\n",
     "runs.r: unknown toolkit 'fairsq'.*did you mean 'fairseq'"),
    ("study: pcfgset\narchitectures: {a: {}}\nprofiles: {p: {runs: [r]}}\n"
     "runs:\n  r: {architecture: a, toolkit: onmt, profiles: {qiuck: {}}}\n",
     "runs.r.profiles: unknown key 'qiuck'"),
    ("study: pcfgset\narchitectures: {a: {}}\nprofiles: {p: {runs: [r], seeds: 1}}\n"
     "runs:\n  r: {architecture: a, toolkit: onmt}\n", "seeds must be a non-empty list"),
    ("study: pcfgset\narchitectures: {a: {}}\nprofiles: {p: {runs: [r], generation: 100}}\n"
     "runs:\n  r: {architecture: a, toolkit: onmt}\n",
     "profiles.p.generation: expected a mapping"),
    ("study: other\n", "study 'other' must be named like its file"),
])
def test_malformed_study_files_are_clear(tmp_path, text, msg):
    f = tmp_path / "pcfgset.yaml"
    f.write_text(text.replace("study: other\n", "study: other\nmodule: compsuite.studies.pcfgset\n"))
    with pytest.raises(ConfigError, match=msg) as e:
        load_study(f)
    assert str(f) in str(e.value)


def test_a_key_given_twice_in_a_study_file_is_refused_naming_the_line(tmp_path):
    """PyYAML keeps the last of two equal keys; a study file (or a user config, read
    the same way) that gives one twice is refused, naming the file, line and key."""
    f = tmp_path / "pcfgset.yaml"
    f.write_text(_PCFG % ", seeds: [1], seeds: [2]")
    with pytest.raises(ConfigError) as e:
        load_study(f)
    assert str(e.value) == (f"{f}: malformed YAML: line 8, column 47: the key 'seeds' is given "
                            "twice in one mapping (first on line 8); keep one")
    f.write_text(_PCFG % "" + "runs:\n  c1: {architecture: a, toolkit: onmt}\n")
    with pytest.raises(ConfigError, match=r"line 9, column 1: the key 'runs' is given twice "
                                          r"in one mapping \(first on line 4\)"):
        load_study(f)
    f.write_text(_PCFG.replace("  p: {", "  q: &b {dataset: d, runs: [a1], seeds: [1]}\n"
                               "  p: {<<: *b, ") % ", seeds: [2]")   # merged keys: overridden
    assert load_study(f).profile("p").seeds == [2]


def test_a_study_module_must_export_a_study(tmp_path):
    f = tmp_path / "x.yaml"
    f.write_text("study: x\nmodule: compsuite.registry\n")
    with pytest.raises(ConfigError, match="defines no STUDY"):
        load_study(f)
    f.write_text("study: x\n")
    with pytest.raises(ConfigError, match="study module 'compsuite.studies.x' not found"):
        load_study(f)


def test_run_all_defaults_to_finished_studies(tmp_path, monkeypatch):
    """`./run_all.sh` without a study runs those not marked `run_all: false`."""
    import compsuite.registry as registry

    assert {"pcfgset", "ctlpp"} <= set(registry.default_studies())
    assert "majority" not in registry.default_studies()    # the example says run_all: false
    building = tmp_path / "building.yaml"
    building.write_text("study: building\nrun_all: false\n")
    paths = dict(studies().items())
    monkeypatch.setattr(registry, "studies", lambda: {**paths, "building": building})
    assert "building" not in registry.default_studies()
    assert "pcfgset" in registry.default_studies()


def test_toolkit_backends_are_registered_by_name():
    from compsuite.toolkits import backend_names, get_backend

    assert {"fairseq", "onmt"} <= set(backend_names())
    assert get_backend("onmt").name == "onmt" and get_backend("fairseq").data_folder == "fairseq-bin"
    with pytest.raises(RegistryError, match="unknown toolkit backend 'onnmt'.*did you mean 'onmt'"):
        get_backend("onnmt")
