"""The interpreter: Figure 3's functions on hand-made cases, errors, and the
released PCFG SET data."""
import glob
import os

import pytest

from compsuite.data_prep.pcfgset.grammar import (
    EXCEPTIONS, PCFGSyntaxError, interpret, parse, structure)

from conftest import reference_path

CASES = [
    ("copy A1 B1 C1", "A1 B1 C1"),
    ("reverse A1 B1 C1", "C1 B1 A1"),
    ("shift A1 B1 C1", "B1 C1 A1"),
    ("echo A1 B1 C1", "A1 B1 C1 C1"),
    ("swap_first_last A1 B1 C1 D1", "D1 B1 C1 A1"),
    ("swap_first_last A1", "A1"),
    ("repeat A1 B1", "A1 B1 A1 B1"),
    ("append A1 B1 , C1", "A1 B1 C1"),
    ("prepend A1 B1 , C1", "C1 A1 B1"),
    ("remove_first A1 B1 , C1", "C1"),
    ("remove_second A1 B1 , C1", "A1 B1"),
    # the paper's example of nesting: functions apply right to left
    ("reverse repeat remove_second A1 B1 , C1", "B1 A1 B1 A1"),
    ("repeat reverse remove_second A1 B1 , C1", "B1 A1 B1 A1"),
    ("append append A1 , B1 , C1", "A1 B1 C1"),
    ("append A1 , append B1 , C1", "A1 B1 C1"),
    ("prepend copy A1 B1 , shift C1 D1 E1", "D1 E1 C1 A1 B1"),
    ("repeat_twin A1 B1", "A1 B1 A1 B1"),  # substitutivity synonyms mean their base
]


@pytest.mark.parametrize("src,tgt", CASES)
def test_interpretation_functions(src, tgt):
    assert interpret(src) == tgt


@pytest.mark.parametrize("bad,where", [
    ("", "empty"),
    ("append A1 B1", "expects ','"),
    ("copy", "end of input"),
    ("A1 , B1", "unexpected token ','"),
    ("copy , A1", "expected a string symbol"),
    ("copy A1 foo", "unknown token 'foo' at token 3"),
    ("reverse_twin_twin A1", "unknown token"),
])
def test_malformed_sources_raise_with_position(bad, where):
    with pytest.raises(PCFGSyntaxError, match=where):
        interpret(bad)


def test_structure_counts_length_functions_depth():
    assert structure("append copy A1 , reverse echo B1 C1") == {
        "length": 8, "n_functions": 4, "depth": 3}
    assert parse("copy A1").depth == 1


@pytest.mark.parametrize("src,exc", [
    ("reverse echo A1 B1", "A1 B1 B1"),                 # echo, not reversed
    ("prepend remove_first A1 , B1 , C1", "A1 B1"),    # append of the inner arguments
    ("echo remove_first A1 , B1 C1", "A1 B1 C1"),
    ("prepend reverse A1 B1 , C1", "A1 B1 B1"),        # echo of the inner argument
    ("copy reverse echo A1 B1", "A1 B1 B1"),
    ("reverse copy echo A1 B1", "B1 B1 A1"),           # not adjacent: no exception
])
def test_table2_exceptions(src, exc):
    assert interpret(src, exceptions=True) == exc
    assert len(EXCEPTIONS) == 4


def _reference_pairs():
    root = reference_path("pcfgset")
    for tgt in sorted(glob.glob(str(root / "**" / "*.tgt"), recursive=True)):
        src = tgt[:-4] + ".src"
        if os.path.exists(src):
            yield src, tgt


def test_reproduces_every_released_target():
    """Every target beside a source in the released data, except the exception files."""
    checked = 0
    for src, tgt in _reference_pairs():
        if "_exception" in tgt:
            continue
        with open(src) as fs, open(tgt) as ft:
            for i, (s, t) in enumerate(zip(fs, ft), start=1):
                assert interpret(s) == t.strip(), f"{src}:{i}"
                checked += 1
    assert checked > 100_000


def test_exception_files_follow_table2():
    """The `*_exception` targets follow the Table 2 remapping.  Where two exception
    pairs overlap or nest, the released data resolves them in an order we do not
    reproduce (10 of 747 inputs, all in the 0.5% file); see data_prep/pcfgset/doc.md."""
    total = agree = 0
    for src, tgt in _reference_pairs():
        if "_exception" not in tgt:
            continue
        with open(src) as fs, open(tgt) as ft:
            for s, t in zip(fs, ft):
                total += 1
                agree += interpret(s, exceptions=True) == t.strip()
                assert interpret(s) != t.strip(), "an exception target equals the original"
    assert total == 747
    assert agree >= total - 10
