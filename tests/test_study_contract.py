"""One contract for every registered study (the suite's and the example study of
docs/adding_a_study.md; a study added later is covered without editing this file):

* its YAML loads, with paper, quick and tiny profiles, and every profile plans a
  non-empty list of units, each in one of the study's parts;
* its subcommands (``compsuite data <study> ...``, ``compsuite eval <study> ...``)
  print their help;
* an unknown key in its YAML, at the top or in a profile, is an error naming the file;
* its tiny profile runs end to end: a result for every unit with the runner's
  provenance record, a report in Markdown and JSON, and a second run skips everything.
"""
import argparse

import pytest
import yaml

from compsuite.foundation.errors import ConfigError
from compsuite.registry import get_study, load_study, studies
from compsuite.runner import Runner

from compsuite import timings
from conftest import ROOT, stored_stamps

STUDIES = list(studies())
PROVENANCE = {"study", "profile", "part", "unit", "run", "architecture", "toolkit", "seed",
              "dataset", "dataset_label", "data_sha256", "checkpoint", "config_version", "git"}


def test_the_registry_has_the_suites_studies_and_the_example():
    assert {"pcfgset", "ctlpp", "majority"} <= set(STUDIES)


@pytest.mark.parametrize("name", STUDIES)
def test_yaml_loads_and_every_profile_plans_units(name):
    study = get_study(name)
    assert {"paper", "quick", "tiny"} <= set(study.profiles)
    for profile_name, profile in study.profiles.items():
        units = Runner(study, profile_name, show=False).plan()
        assert units, profile_name
        parts = study.parts(profile)
        assert {u.part for u in units} <= set(parts), profile_name
        assert len({u.path for u in units}) == len(units)
        for u in units:
            study.run(u.run)   # a known run


def _subcommands(name: str) -> list[list[str]]:
    """Every `compsuite <group> <study> [<action>]` the study adds, from the parser."""
    from compsuite.cli import build_parser

    def children(parser):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                return action.choices
        return {}

    found = []
    top = children(build_parser())
    for group in ("data", "eval"):
        study_parser = children(top[group]).get(name)
        if study_parser is not None:
            found.append([group, name])
            found += [[group, name, action] for action in children(study_parser)]
    return found


@pytest.mark.parametrize("name", STUDIES)
def test_subcommands_print_help(name, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    commands = _subcommands(name)
    assert any(c[0] == "data" for c in commands), "every study generates its data"
    from test_readme import help_of

    for words in commands:
        code, out, err = help_of(words, capsys)
        assert code == 0 and "usage" in out, (words, err[-2000:])


@pytest.mark.parametrize("where", ["top", "profile"])
@pytest.mark.parametrize("name", STUDIES)
def test_unknown_yaml_key_is_an_error_naming_the_file(name, where, tmp_path):
    source = get_study(name).source
    raw = yaml.safe_load(source.read_text())
    if isinstance(raw.get("include"), str):   # keep the include reachable from the copy
        raw["include"] = str((source.parent / raw["include"]).resolve())
    if where == "top":
        raw["unknwon_key"] = 1
    else:
        raw["profiles"]["quick"]["unknwon_key"] = 1
    copy = tmp_path / source.name
    copy.write_text(yaml.safe_dump(raw, allow_unicode=True))
    with pytest.raises(ConfigError, match="unknown key 'unknwon_key'") as e:
        load_study(copy)
    assert str(copy) in str(e.value)
    if where == "profile":
        assert "profiles.quick" in str(e.value)


@pytest.mark.parametrize("name", STUDIES)
def test_tiny_profile_runs_end_to_end(name, tiny_study):
    t = tiny_study(name)
    assert t.returncode == 0
    study = get_study(name)
    units = Runner(study, "tiny", show=False).plan()
    for u in units:
        result = t.result(u.path)
        assert PROVENANCE <= set(result), set(PROVENANCE) - set(result)
        assert (result["unit"], result["part"], result["seed"]) == (u.path, u.part, u.seed)
        assert result["git"] and result["data_sha256"]
    assert (t.results / "report.md").read_text().strip()
    assert (t.results / "report.json").read_text().strip().startswith("{")
    stamps = stored_stamps(t.runs)
    logged = len(timings.read(t.runs / timings.FILE))
    assert t.run() == 0                               # a second run skips every unit
    assert stored_stamps(t.runs) == stamps
    # ... and says so in the timings it appends: every step found stored, none done
    again = timings.read(t.runs / timings.FILE)[logged:]
    assert {r["status"] for r in again if r["phase"] in ("data", "train", "evaluate")} \
        == {"skipped"}
