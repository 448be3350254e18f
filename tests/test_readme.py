"""The README and the docs name only paths that exist; the README's commands run
(their --help). A path written `repo:path` names a file of another
repository (an original study's code) and is not checked."""
import re

import pytest

from conftest import ROOT

README = (ROOT / "README.md").read_text()
DOCS = [README] + [p.read_text() for p in sorted(ROOT.rglob("doc.md")) + sorted(
    (ROOT / "docs").rglob("*.md")) if ".venv" not in p.parts]
TOP = ("compsuite", "data_prep", "eval", "fairseq_plugins", "onmt_configs", "benchmarks", "docs",
       "scripts", "tests", ".ci")


def _paths():
    found = set()
    for text in DOCS:
        for m in re.finditer(r"(?<![\w/.:-])((?:%s)/[\w./<>-]*)" % "|".join(map(re.escape, TOP)), text):
            path = m.group(1).rstrip(".,:)")
            if "<" in path or "*" in path:  # a pattern such as experiments/<study>.yaml
                path = path.split("<")[0].split("*")[0]
            found.add(path)
    for name in ("run_all.sh", "setup.py", "constraints.txt"):
        if name in README:
            found.add(name)
    return sorted(found)


@pytest.mark.parametrize("path", _paths())
def test_documented_path_exists(path):
    assert (ROOT / path).exists(), path


def _commands():
    cmds = set()
    for block in re.findall(r"```(?:bash)?\n(.*?)```", README, re.S):
        for line in block.splitlines():
            line = line.strip()
            m = re.match(r"(?:\.venv/bin/)?compsuite ((?:[a-z]+ ?)+)", line)
            if m:
                words = [w for w in m.group(1).split() if not w.isupper()]
                # drop positional study names etc. only where the parser has no such subcommand
                cmds.add(tuple(words))
    return sorted(cmds)


def help_of(words, capsys) -> tuple[int, str, str]:
    """``compsuite <words> --help`` in this process (the command line's own parser, with
    no interpreter to start per command): its exit code, stdout and stderr."""
    from compsuite.cli import main

    with pytest.raises(SystemExit) as e:
        main([*words, "--help"])
    out = capsys.readouterr()
    return (e.value.code or 0), out.out, out.err


@pytest.mark.parametrize("words", _commands())
def test_documented_command_has_help(words, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, _, err = help_of(words, capsys)
    assert code == 0, (words, err)


def test_readme_starts_with_the_two_commands():
    first_block = re.search(r"```(?:bash)?\n(.*?)```", README, re.S).group(1)
    commands = [l.split("#")[0].strip() for l in first_block.splitlines() if l.strip()]
    assert commands == ["./run_all.sh", "./scripts/test.sh"]
    assert README.lstrip().startswith("```")
    assert "./scripts/test.sh" in (ROOT / ".ci" / "run").read_text()
