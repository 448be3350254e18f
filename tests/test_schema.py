"""compsuite.schema: study options declared as dataclasses, read by one function whose
errors name the file and the key path (and the nearest valid key or choice)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

import pytest

from compsuite.foundation.errors import ConfigError
from compsuite.schema import PositiveInt, check, each, increasing, keys, within

WHERE = "x.yaml: profiles.quick"


@dataclass
class Part:
    runs: list[str] = field(default_factory=list)
    seeds: list[int] | None = None


@dataclass
class Data:
    corpus: Literal["generated", "files"] = "generated"
    scale: Annotated[float, within(0, 1, low_open=True)] = 1.0
    seed: PositiveInt = 1
    path: str | None = None
    epochs: Annotated[list[int], each(lambda v, w: None), increasing] = field(
        default_factory=lambda: [1, 2])

    def check(self, where: str) -> None:
        if self.path is not None and self.corpus != "files":
            raise ConfigError(f"{where}.path: only for corpus: files")


@dataclass
class Options:
    data: Data
    parts: dict[Literal["main", "extra"], Part | None] = field(
        default_factory=lambda: {"main": None})
    keep: Literal["all", "best"] = "all"
    lambdas: Annotated[list[float], each(within(0, 1))] = field(
        default_factory=lambda: [0.5])
    verbose: bool = False


def test_defaults_and_types_are_read():
    o = check(Options, {"data": {"scale": 0.5, "seed": 3}, "parts": {"extra": {"runs": ["a"]}}},
              WHERE)
    assert o.data == Data(scale=0.5, seed=3)
    assert o.parts == {"extra": Part(runs=["a"], seeds=None)}
    assert (o.keep, o.lambdas, o.verbose) == ("all", [0.5], False)
    assert check(Data, None, WHERE) == Data()          # an absent mapping: all defaults
    assert check(Data, {"scale": 1}, WHERE).scale == 1  # an int is a number
    assert keys(Options) == {"data", "parts", "keep", "lambdas", "verbose"}


@pytest.mark.parametrize("value, message", [
    ({"data": {}, "kep": "all"}, r"^x.yaml: profiles.quick: unknown key 'kep' \(allowed: data, "
                                 r"keep, lambdas, parts, verbose\); did you mean 'keep'\?$"),
    ({}, r"^x.yaml: profiles.quick: missing required key 'data'$"),
    ({"data": {"scale": 0}}, r"^x.yaml: profiles.quick.data.scale: a number in \(0, 1\], not 0$"),
    ({"data": {"scale": "big"}}, r"profiles.quick.data.scale: a number, not 'big'"),
    ({"data": {"seed": 0}}, r"^x.yaml: profiles.quick.data.seed must be a positive integer, "
                            r"not 0$"),
    ({"data": {"seed": True}}, r"data.seed: an integer, not True"),
    ({"data": {"corpus": "generatd"}}, r"^x.yaml: profiles.quick.data.corpus: one of "
                                       r"generated, files, not 'generatd'; did you mean "
                                       r"'generated'\?$"),
    ({"data": {"path": "a"}}, r"^x.yaml: profiles.quick.data.path: only for corpus: files$"),
    ({"data": {"epochs": [2, 1]}}, r"data.epochs: increasing values, not \[2, 1\]"),
    ({"data": {"epochs": 3}}, r"data.epochs: expected a list, not 3"),
    ({"data": [1]}, r"profiles.quick.data: expected a mapping, found list"),
    ({"data": {}, "parts": {"mian": None}}, r"profiles.quick.parts: unknown key 'mian'.*did "
                                            r"you mean 'main'"),
    ({"data": {}, "parts": {"main": {"runs": "a"}}}, r"parts.main.runs: expected a list"),
    ({"data": {}, "parts": {"main": {"seeds": ["1"]}}}, r"parts.main.seeds: an integer, not '1'"),
    ({"data": {}, "lambdas": [0.5, 2]}, r"profiles.quick.lambdas: a number in \[0, 1\], not 2"),
    ({"data": {}, "verbose": "yes"}, r"profiles.quick.verbose: true or false, not 'yes'"),
])
def test_every_mistake_names_the_file_and_the_key(value, message):
    with pytest.raises(ConfigError, match=message):
        check(Options, value, WHERE)


@dataclass
class Row:
    variant: Literal["original", "bow"] = "original"


@dataclass
class Top:
    rows: dict[str, Row] = field(default_factory=dict)


def test_top_level_keys_are_named_after_the_file():
    assert check(Top, {"rows": {"r1": {"variant": "bow"}}}, "s.yaml").rows == {
        "r1": Row("bow")}
    with pytest.raises(ConfigError, match=r"^s.yaml: rows.r1.variant: one of original, bow, "
                                          r"not 'bwo'; did you mean 'bow'\?$"):
        check(Top, {"rows": {"r1": {"variant": "bwo"}}}, "s.yaml")


@dataclass
class TwoTypes:
    x: int | str = 1


def test_several_types_take_the_first_that_fits():
    assert check(TwoTypes, {"x": 2}, WHERE).x == 2
    assert check(TwoTypes, {"x": "two"}, WHERE).x == "two"

    @dataclass
    class SizeOrAuto:
        n: PositiveInt | Literal["auto"] | None = None

    assert check(SizeOrAuto, {"n": "auto"}, WHERE).n == "auto"
    assert check(SizeOrAuto, {"n": None}, WHERE).n is None
    with pytest.raises(ConfigError, match=r"\.n: an integer or one of auto, not 'big'$"):
        check(SizeOrAuto, {"n": "big"}, WHERE)
    with pytest.raises(ConfigError, match=r"\.n: .*positive.* or one of auto, not 0$"):
        check(SizeOrAuto, {"n": 0}, WHERE)


def test_an_unsupported_type_is_a_bug_not_a_user_error():
    @dataclass
    class Odd:
        x: complex = 1j

    with pytest.raises(TypeError, match="unsupported type"):
        check(Odd, {"x": 2j}, WHERE)
