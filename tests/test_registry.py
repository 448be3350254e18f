"""The experiment registry and the files it points to."""
import pytest

from compsuite.registry import ROOT, Registry, RegistryError, get_study, load_study, studies


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
            if run.toolkit == "onmt":
                assert (ROOT / run.config).is_file(), run.config
            for override in run.profiles.values():
                if isinstance(override, str):
                    assert (ROOT / override).is_file(), override
        assert {"paper", "quick"} <= set(s.profiles)


def test_pcfgset_profiles():
    s = get_study("pcfgset")
    assert s.profile("paper").dataset == "full" and s.profile("quick").dataset == "small"
    paper_runs = {s.run(r).architecture for r in s.profile("paper").runs if s.run(r).paper_setup}
    assert paper_runs == {"lstms2s", "convs2s", "transformer"}
    toolkits = {(s.run(r).architecture, s.run(r).toolkit) for r in s.profile("quick").runs}
    assert toolkits == {(a, t) for a in ("lstms2s", "transformer") for t in ("fairseq", "onmt")
                        } | {("convs2s", "fairseq")}
    for name in ("paper", "quick"):   # the tests: every architecture once, in the paper's toolkit
        runs = [s.run(r) for r in s.profile(name).test_runs]
        assert sorted(r.architecture for r in runs) == ["convs2s", "lstms2s", "transformer"]
        assert all(r.paper_setup for r in runs)
    assert {t for t, spec in s.tests.items() if spec.get("model") == "base"} == {
        "localism", "per_function", "increasing_string_length"}


_PROFILES = """study: x
architectures: {a: {paper_name: A}, b: {paper_name: B}}
datasets: {d: {generator: pcfgset, config: small}}
runs:
  a1: {architecture: a, toolkit: onmt, paper_setup: true}
  b1: {architecture: b, toolkit: fairseq}
profiles:
  p: {dataset: d, runs: [a1, b1]%s}
"""


def test_test_runs_default_to_the_paper_setups_and_must_be_profile_runs(tmp_path):
    f = tmp_path / "x.yaml"
    f.write_text(_PROFILES % "")
    assert load_study(f).profile("p").test_runs == ["a1"]
    f.write_text(_PROFILES % ", test_runs: [b1]")
    assert load_study(f).profile("p").test_runs == ["b1"]
    f.write_text(_PROFILES.replace("runs: [a1, b1]", "runs: [a1]") % ", test_runs: [b1]")
    with pytest.raises(ValueError, match="test run 'b1' is not one of the profile's runs"):
        load_study(f)
    f.write_text(_PROFILES % "" + "tests:\n  t: {split: localism, evaluation: localism, "
                 "model: shared}\n")
    with pytest.raises(ValueError, match="model must be one of own, base"):
        load_study(f)


@pytest.mark.parametrize("text,msg", [
    ("study: x\n  bad: [", "malformed YAML"),
    ("study: x\narchitectures: {}\ndatasets: {}\nruns:\n  r: {architecture: a, toolkit: onmt}\n",
     "unknown architecture 'a'"),
    ("- just a list\n", "expected a mapping"),
    ("study: x\n", "missing required key 'architectures'"),
])
def test_malformed_study_files_are_clear(tmp_path, text, msg):
    f = tmp_path / "x.yaml"
    f.write_text(text)
    with pytest.raises(ValueError, match=msg):
        load_study(f)


def test_run_all_defaults_to_finished_studies(tmp_path, monkeypatch):
    """`./run_all.sh` without a study runs those not marked `run_all: false`."""
    import compsuite.registry as registry

    assert {"pcfgset", "ctlpp"} <= set(registry.default_studies())
    building = tmp_path / "building.yaml"
    building.write_text("study: building\nrun_all: false\n")
    paths = dict(studies().items())
    monkeypatch.setattr(registry, "studies", lambda: {**paths, "building": building})
    assert "building" not in registry.default_studies()
    assert "pcfgset" in registry.default_studies()
