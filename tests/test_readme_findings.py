"""The README's table of headline findings (section "Headline findings on the quick
profile") against the code: a row for every finding a study's findings.py decides on the
quick profile, and none for a finding the code does not have; each row cites the paper
where the finding does; a finding that does not hold on all three seeds gives a command
that checks it at paper size, and every `compsuite run` command in the section names
options, parts and runs that exist."""
import re
import shlex

import pytest

from compsuite.cli import build_parser, main
from compsuite.registry import default_studies, get_study
from conftest import ROOT

TITLE = "## Headline findings on the quick profile"
HOLDS = "holds on seeds 1, 2, 3"


def section(readme: str) -> str:
    """The section's text, from its title to the next section."""
    assert TITLE in readme, f"README.md has no section '{TITLE[3:]}'"
    start = readme.index(TITLE)
    end = readme.find("\n## ", start + len(TITLE))
    return readme[start:] if end == -1 else readme[start:end]


def rows(text: str) -> dict[tuple[str, str], list[str]]:
    """(study, finding) -> the row's cells (study, finding, paper, verdict, why), from
    the section's table."""
    out = {}
    for line in text.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 5, f"a row of five cells: {line}"
        key = (cells[0].strip("`"), cells[1].strip("*"))
        assert key not in out, f"two rows for {key}"
        out[key] = cells
    return out


README_ROWS = rows(section((ROOT / "README.md").read_text()))


def findings() -> dict[tuple[str, str], object]:
    """(study, finding key) -> the Finding, for every study ./run_all.sh runs, as its
    quick profile checks them."""
    out = {}
    for name in default_studies():
        study = get_study(name)
        for f in study.findings(study.profile("quick")):
            out[(name, f.key)] = f
    return out


FINDINGS = findings()


def _id(key: tuple[str, str]) -> str:
    return " ".join(key)


@pytest.mark.parametrize("key", sorted(FINDINGS), ids=_id)
def test_every_finding_has_a_row(key):
    assert key in README_ROWS, f"README.md's headline findings have no row for {key}"


def test_no_row_without_a_finding():
    assert sorted(set(README_ROWS) - set(FINDINGS)) == []


@pytest.mark.parametrize("key", sorted(FINDINGS), ids=_id)
def test_row_cites_the_paper_as_the_finding_does(key):
    if key in README_ROWS:
        assert f"({FINDINGS[key].source}" in README_ROWS[key][2], (key, FINDINGS[key].source)


@pytest.mark.parametrize("key", sorted(README_ROWS), ids=_id)
def test_a_finding_short_of_three_seeds_says_why_and_how_to_check(key):
    _, _, _, verdict, why = README_ROWS[key]
    if not verdict.startswith(HOLDS):
        assert "`compsuite run " in why, key


def commands(text: str) -> list[str]:
    return sorted(set(re.findall(r"`(compsuite run [^`]+)`", text)))


def test_rows_and_commands_are_read():
    """The parsing above finds the table and its commands (a test that reads nothing
    would pass whatever the README says)."""
    assert len(README_ROWS) >= 20 and len(commands(section((ROOT / "README.md").read_text()))) >= 10
    assert rows("| `s` | **a: b (c)** | p | v | w |") == {("s", "a: b (c)"): ["`s`", "**a: b (c)**",
                                                                               "p", "v", "w"]}


@pytest.mark.parametrize("command", commands(section((ROOT / "README.md").read_text())))
def test_command_is_valid(command, tmp_path, capsys):
    """Its options are `compsuite run`'s, and its parts and runs the profile's: the same
    selection through `compsuite status` lists at least one unit without training."""
    try:
        a = build_parser().parse_args(shlex.split(command)[1:])
    except SystemExit:
        pytest.fail(f"`{command}`: {capsys.readouterr().err.strip().splitlines()[-1]}")
    argv = ["status", a.study, "--profile", a.profile, "--runs-root", str(tmp_path)]
    for option, values in (("--parts", a.parts), ("--runs", a.runs), ("--seeds", a.seeds)):
        if values:
            argv += [option, *map(str, values)]
    assert main(argv) == 0, capsys.readouterr().err
    assert "not started" in capsys.readouterr().out, command
