"""The toy systems of examples/systems/ on their own: the corruption rule, a request a
program cannot answer, and SGET's gold lookup for what its rules miss.  Their scores
through every study, perfect and corrupted, are tests/test_any_system.py's."""
from __future__ import annotations

import sys

import pytest

from compsuite.toolkits.command.model import CommandError, CommandModel
from compsuite.foundation.checkout import ROOT

SYSTEMS = ROOT / "examples" / "systems"
sys.path.insert(0, str(SYSTEMS))

from toy import corrupted, next_class  # noqa: E402

PERCENT = 30


def program(name: str, *args: str) -> str:
    return f"{sys.executable} {SYSTEMS / name}.py {' '.join(args)}"


def test_the_corruption_rule_is_stable_and_bounded():
    xs = [f"copy A{i} B1" for i in range(2000)] + [["a premise", f"hypothesis {i}"]
                                                   for i in range(2000)]
    assert not any(corrupted(x, 0) for x in xs) and all(corrupted(x, 100) for x in xs)
    assert [corrupted(x, PERCENT) for x in xs] == [corrupted(x, PERCENT) for x in xs]
    share = sum(corrupted(x, PERCENT) for x in xs) / len(xs)
    assert 0.25 < share < 0.35
    assert next_class("neutral", ["neutral", "entailment", "contradiction"]) == "contradiction"


def test_a_program_refuses_a_task_it_does_not_do_and_goes_on():
    with CommandModel(program("pcfgset_oracle")) as m:
        with pytest.raises(CommandError, match="cannot classify: unsupported task 'classify'"):
            m.classify(["copy A1"])
    with CommandModel(program("pcfgset_oracle", "--corrupt", "100")) as m:
        assert m.translate(["copy A1 B1", "reverse A1 B1"]) == ["A1 B1 X0", "B1 A1 X0"]


def test_sget_gold_lookup_for_what_the_rules_miss(tmp_path):
    (tmp_path / "test.src").write_text("The dog barked loudly at noon yesterday.\n")
    (tmp_path / "test.tgt").write_text("犬が昨日の正午に大声で吠えた。\n")
    with CommandModel(program("sget_oracle"), env={"COMPSUITE_TEXT": str(tmp_path)}) as m:
        assert m.translate(["The dog barked loudly at noon yesterday.", "Hello there."]) == \
            ["犬が昨日の正午に大声で吠えた。", ""]
