"""Contract tests for the compositionality tests' splits, and the released data."""
from dataclasses import replace

import pytest

from compsuite.foundation.errors import ConfigError
from compsuite.data_prep.pcfgset import FULL, interpret, parse
from compsuite.data_prep.pcfgset.grammar import TWIN_SUFFIX, base_function
from compsuite.data_prep.pcfgset.splits import (
    SUBSTITUTED, SYSTEMATICITY_PAIRS, function_pairs, localism, productivity, substitutivity,
    systematicity, unroll)

from conftest import reference_path

SIZES = dict(n_train=3000, n_valid=200, n_test=400)


def lines(path):
    return path.read_text().splitlines()


def test_systematicity_held_out_pairs(tmp_path):
    m = systematicity(tmp_path, FULL, seed=4, **SIZES)
    held = set(SYSTEMATICITY_PAIRS)
    for split in ("train", "valid"):
        for src in lines(tmp_path / f"{split}.src"):
            assert not function_pairs(parse(src)) & held, (split, src)
    tags = lines(tmp_path / "test.category")
    for src, tag in zip(lines(tmp_path / "test.src"), tags, strict=True):
        found = function_pairs(parse(src)) & held
        assert found and tag == ",".join(f"{o}>{i}" for o, i in SYSTEMATICITY_PAIRS if (o, i) in found)
    assert m["counts"] == {"train": 3000, "valid": 200, "test": 400}
    assert {t.split(",")[0] for t in tags} == {f"{o}>{i}" for o, i in SYSTEMATICITY_PAIRS}


def test_systematicity_pair_definition_matches_released_test():
    held = set(SYSTEMATICITY_PAIRS)
    srcs = lines(reference_path("pcfgset", "systematicity", "test.src"))
    assert all(function_pairs(parse(s)) & held for s in srcs)
    base = lines(reference_path("pcfgset", "pcfgset", "test.src"))
    assert sum(bool(function_pairs(parse(s)) & held) for s in base) > 0  # base test has them


def test_productivity_split_by_number_of_functions(tmp_path):
    m = productivity(tmp_path, FULL, seed=4, **SIZES)
    assert max(parse(s).n_functions for s in lines(tmp_path / "train.src")) <= 8
    assert min(parse(s).n_functions for s in lines(tmp_path / "test.src")) >= 9
    assert m["statistics"]["test"]["n_functions"]["min"] == 9
    assert lines(tmp_path / "test.category") == [str(parse(s).n_functions)
                                                 for s in lines(tmp_path / "test.src")]


def _replaced_function(a: str, b: str) -> str:
    """The one function whose every occurrence in a is its synonym in b."""
    at, bt = a.split(), b.split()
    assert len(at) == len(bt)
    diffs = {(x, y) for x, y in zip(at, bt) if x != y}
    assert len(diffs) == 1, diffs
    (fn, twin), = diffs
    assert twin == fn + TWIN_SUFFIX and fn not in bt
    return fn


@pytest.mark.parametrize("condition", ["equally_distributed", "primitive"])
def test_substitutivity(tmp_path, condition):
    substitutivity(tmp_path, FULL, seed=4, condition=condition, **SIZES)
    test, twin = lines(tmp_path / "test.src"), lines(tmp_path / "test_twin.src")
    tags = lines(tmp_path / "test.category")
    for a, b, tag in zip(test, twin, tags, strict=True):
        assert _replaced_function(a, b) == tag and tag in SUBSTITUTED
        assert interpret(b) == interpret(a)
    assert lines(tmp_path / "test_twin.tgt") == lines(tmp_path / "test.tgt")
    assert not any(TWIN_SUFFIX in s for s in test)
    train = lines(tmp_path / "train.src")
    assert len(train) == 3000
    if condition == "equally_distributed":
        for fn in SUBSTITUTED:
            plain = sum(s.split().count(fn) for s in train)
            syn = sum(s.split().count(fn + TWIN_SUFFIX) for s in train)
            assert 0.4 < syn / (plain + syn) < 0.6, fn
    else:
        with_twin = [s for s in train if TWIN_SUFFIX in s]
        assert len(with_twin) == 4  # max(4, 0.1% of 3,000)
        assert all(parse(s).n_functions == 1 for s in with_twin)
        assert {base_function(s.split()[0]) for s in with_twin} == set(SUBSTITUTED)
    for src, tgt in zip(train, lines(tmp_path / "train.tgt")):
        assert interpret(src) == tgt


@pytest.mark.parametrize("condition", ["equally_distributed", "primitive"])
def test_released_substitutivity_follows_the_same_contract(condition):
    test = lines(reference_path("pcfgset", "substitutivity", condition, "test.src"))
    twin = lines(reference_path("pcfgset", "substitutivity", condition, "test_twin.src"))
    assert {_replaced_function(a, b) for a, b in zip(test, twin)} == set(SUBSTITUTED)


def test_localism_unrolled_file(tmp_path):
    localism(tmp_path, FULL, seed=4, n_samples=300, **SIZES)
    train = set(lines(tmp_path / "train.src"))
    rows = [l.split("\t") for l in lines(tmp_path / "unrolled_test.tsv")]
    samples, run = [], []
    for label, src, tgt in rows:
        if label == "unrolled":
            run.append((src, tgt))
        else:
            assert label == "original" and run
            samples.append((src, tgt, run))
            run = []
    assert len(samples) == 300 and not run
    for src, tgt, steps in samples:
        assert src in train
        # with gold intermediate outputs, the unrolled program computes the original target
        memory = {}
        for k, (s, t) in enumerate(steps, start=1):
            filled = " ".join(memory.get(tok, tok) for tok in s.split())
            out = interpret(filled)
            if k < len(steps):
                assert t == f"*{k}"
                memory[t] = out
            else:
                assert out == t == tgt
    assert len(lines(tmp_path / "unrolled_test.category")) == 300


def test_unroll_reproduces_released_localism_file():
    rows = [l.split("\t") for l in lines(reference_path("pcfgset", "localism", "unrolled_test.tsv"))]
    run, n = [], 0
    for label, src, tgt in rows:
        if label == "unrolled":
            run.append((src, tgt))
        else:
            assert unroll(parse(src)) == run, src
            run, n = [], n + 1
    assert n == 9567


def test_splits_are_deterministic(tmp_path):
    a = systematicity(tmp_path / "a", FULL, seed=9, **SIZES)
    b = systematicity(tmp_path / "b", FULL, seed=9, **SIZES)
    assert a["sha256"] == b["sha256"]
    c = substitutivity(tmp_path / "c", FULL, seed=9, condition="primitive", **SIZES)
    d = substitutivity(tmp_path / "d", FULL, seed=9, condition="primitive", **SIZES)
    assert c["sha256"] == d["sha256"]


def test_overgeneralisation_exceptions(tmp_path):
    from compsuite.data_prep.pcfgset.splits import exception_pairs, overgeneralisation

    m = overgeneralisation(tmp_path, FULL, seed=4, exception_rate=0.005, **SIZES)
    stem = "test_pcfg_ratio=0.005"
    exc_src = lines(tmp_path / f"{stem}_exception.src")
    assert exc_src == lines(tmp_path / f"{stem}_original.src")
    assert len(exc_src) == m["n_exceptions"]
    # section 6.2.5: per pair, 0.5% of the training occurrences of the pair's less
    # frequent function; an input with two pairs counts for both
    counts = m["function_counts_train"]
    from compsuite.data_prep.pcfgset.grammar import EXCEPTIONS
    for outer, inner in EXCEPTIONS:
        want = max(1, round(0.005 * min(counts[outer], counts[inner])))
        holding = sum((outer, inner) in exception_pairs(parse(s)) for s in exc_src)
        assert m["wanted_per_pair"][f"{outer} {inner}"] == want
        assert holding == m["exceptions_per_pair"][f"{outer} {inner}"] >= want
    assert len(exc_src) >= max(m["wanted_per_pair"].values())
    for s, e, o in zip(exc_src, lines(tmp_path / f"{stem}_exception.tgt"),
                       lines(tmp_path / f"{stem}_original.tgt")):
        assert exception_pairs(parse(s)) and e == interpret(s, exceptions=True) and o == interpret(s)
    train = dict(zip(lines(tmp_path / "train.src"), lines(tmp_path / "train.tgt")))
    assert len(train) == 3000
    with_pair = {s: t for s, t in train.items() if exception_pairs(parse(s))}
    assert set(with_pair) == set(exc_src)                      # exceptions only where chosen
    assert all(t == interpret(s, exceptions=True) for s, t in with_pair.items())
    for split in ("valid", "test"):
        assert not any(exception_pairs(parse(s)) for s in lines(tmp_path / f"{split}.src"))


def test_released_exception_inputs_contain_a_table2_pair():
    from compsuite.data_prep.pcfgset.splits import exception_pairs

    src = lines(reference_path("pcfgset", "overgeneralisation",
                               "test_pcfg_ratio=0.005_exception.src"))
    assert all(exception_pairs(parse(s)) for s in src)


def test_increasing_string_length(tmp_path):
    from compsuite.data_prep.pcfgset.splits import increasing_string_length

    m = increasing_string_length(tmp_path, FULL, seed=4, per_length=3)
    srcs, cats = lines(tmp_path / "increasing_length.src"), lines(tmp_path / "increasing_length.category")
    assert m["counts"]["increasing_length"] == len(srcs) == 10 * 19 * 3
    for s, t, c in zip(srcs, lines(tmp_path / "increasing_length.tgt"), cats):
        tree = parse(s)
        assert tree.n_functions == 1 and interpret(s) == t
        assert max(len(x) for x in tree.strings()) == int(c)
    assert {int(c) for c in cats} == set(range(2, 21))


def test_per_function_corpora(tmp_path):
    from compsuite.data_prep.pcfgset.grammar import FUNCTIONS, UNARY
    from compsuite.data_prep.pcfgset.splits import per_function

    per_function(tmp_path, FULL, seed=4, n_templates=50, **SIZES)
    unary = [l.split(" ", 1)[1] for l in lines(tmp_path / "test_unary.txt")]
    for fn in FUNCTIONS:
        srcs = lines(tmp_path / f"test_{fn}.src")
        assert len(srcs) == 50 and all(s.split()[0] == fn for s in srcs)
        assert lines(tmp_path / f"test_{fn}.tgt") == [interpret(s) for s in srcs]
        if fn in UNARY:
            assert [s.split(" ", 1)[1] for s in srcs] == unary   # same arguments for every function


def test_every_split_of_the_scaled_down_task_generates(tmp_path):
    """The quick profile's config can produce every test's split (depth <= 3 allows at
    most 7 functions, so its productivity limit is 3, not the paper's 8)."""
    from compsuite.data_prep.pcfgset import SMALL
    from compsuite.data_prep.pcfgset.splits import TESTS

    assert SMALL.productivity_max_train_functions == 3
    for name, make in TESTS.items():
        kw = {} if name == "increasing_string_length" else dict(SIZES)
        if name in ("localism", "per_function"):
            kw["n_train"] = 3000
        m = make(tmp_path / name, SMALL, seed=1, **kw)
        assert m["sha256"], name
    prod = (tmp_path / "productivity" / "test.category").read_text().split()
    assert min(map(int, prod)) == 4 and max(map(int, prod)) <= 7


def test_an_impossible_split_is_a_clear_error(tmp_path):
    """A limit the config's depth cannot exceed fails with a message, not a hang."""
    from compsuite.data_prep.pcfgset import SMALL

    with pytest.raises(ConfigError, match="cannot produce them"):
        productivity(tmp_path, replace(SMALL, productivity_max_train_functions=8), seed=1,
                     n_train=100, n_valid=10, n_test=10)
