"""CTL++ data: determinism, the tables, and the sampling graphs' contracts, checked
mechanically on the generated files and their manifest; and the sampling of the
authors' released code (RobertCsordas/ctlpp@1b5ab28, dataset/): lengths 2 and up (no
single applications), at most half of each length's space, no repeated input, the
IID test held out of the same draw, every length-2 training composition added once
more, the OOD test spread over the lengths."""
import json
from collections import Counter

import pytest

from compsuite.data_prep.ctlpp import CTLConfig, generate
from compsuite.data_prep.ctlpp.generate import (World, exact_counts, length_counts, quotas,
                                                read_tsv)

SMALL = dict(n_train=4000, n_test=200)


def _gen(tmp_path, variant, seed=1, **kw):
    out = tmp_path / f"{variant}{seed}"
    m = generate(out, CTLConfig(variant=variant, **{**SMALL, **kw}), seed=seed)
    data = {s: read_tsv(out / f"{s}.tsv") for s in ("train", "valid", "test_iid", "test_ood")}
    return out, m, data


def _groups(m, fns):
    """Group of each function, in application order (the input is right to left)."""
    of = {f: g for g, fs in m["groups"].items() for f in fs}
    return [of[f] for f in reversed(fns)]


def _transitions(m, rows):
    out = set()
    for tokens, _ in rows:
        gs = ["IN"] + _groups(m, tokens[:-1]) + ["OUT"]
        out |= set(zip(gs, gs[1:]))
    return out


@pytest.mark.parametrize("variant", ["A", "R", "S"])
def test_targets_are_the_composition_of_the_tables(tmp_path, variant):
    _, m, data = _gen(tmp_path, variant)
    symbols = m["symbols"]
    for rows in data.values():
        for tokens, target in rows:
            x = tokens[-1]
            for f in reversed(tokens[:-1]):       # c b a 3 = c(b(a(3)))
                x = m["functions"][f][symbols.index(x)]
            assert x == target
    for f, outs in m["functions"].items():       # bijective, all different
        assert sorted(outs) == symbols
    assert len({tuple(o) for o in m["functions"].values()}) == 32 and len(symbols) == 8


@pytest.mark.parametrize("variant", ["A", "R", "S"])
def test_ood_patterns_never_in_training_and_iid_follows_the_graph(tmp_path, variant):
    _, m, data = _gen(tmp_path, variant)
    train = _transitions(m, data["train"])
    assert train == {tuple(e) for e in m["edges"]["train"]}
    ood = _transitions(m, data["test_ood"])
    assert ood <= {tuple(e) for e in m["edges"]["test_ood"]}
    for row in data["test_ood"]:    # every OOD input has a transition training never has
        assert _transitions(m, [row]) - train, row
    assert _transitions(m, data["test_iid"]) <= train
    assert _transitions(m, data["valid"]) <= train


@pytest.mark.parametrize("variant", ["A", "R", "S"])
def test_no_single_applications_and_no_repeats(tmp_path, variant):
    """The authors draw depth 2 to max_depth (the paper's appendix says singles are in
    training; the code has none), without replacement; the IID sets are held out of
    the same draw, so they meet training only through the added length-2 pairs."""
    _, m, data = _gen(tmp_path, variant)
    for split, rows in data.items():
        assert min(len(t) - 1 for t, _ in rows) >= 2, split
        inputs = [" ".join(t) for t, _ in rows]
        if split != "train":
            assert len(set(inputs)) == len(inputs), split
    train = [" ".join(t) for t, _ in data["train"]]
    repeated = {x for x, c in Counter(train).items() if c > 1}
    assert repeated and all(len(x.split()) == 3 for x in repeated)   # only length-2 pairs
    assert all(c == 2 for c in Counter(train).values() if c > 1)
    held = {" ".join(t) for s in ("test_iid", "valid") for t, _ in data[s]}
    assert all(len(x.split()) == 3 for x in held & set(train))


@pytest.mark.parametrize("variant", ["A", "R"])
def test_single_applications_the_papers_reading(tmp_path, variant):
    """single_applications: every function applied once to every symbol is in training
    once (the paper's text), the rest of the data as without it, byte for byte; the
    default keeps the released code's data and its folder name."""
    from compsuite.data_prep.ctlpp.dataset import size_name

    out, m, data = _gen(tmp_path, variant, single_applications=True)
    singles = [(t, y) for t, y in data["train"] if len(t) == 2]
    assert sorted(" ".join(t) for t, _ in singles) == sorted(
        f"{f} {x}" for f in m["functions"] for x in m["symbols"])
    assert all(y == m["functions"][t[0]][m["symbols"].index(t[1])] for t, y in singles)
    assert m["statistics"]["train"]["single_applications_added"] == 32 * 8
    assert m["args"]["single_applications"] is True
    base, m0, data0 = _gen(tmp_path / "base", variant)
    assert "single_applications" not in m0["args"]
    assert sorted(data["train"]) == sorted(data0["train"] + singles)
    for split in ("valid", "test_iid", "test_ood"):
        assert (out / f"{split}.tsv").read_bytes() == (base / f"{split}.tsv").read_bytes()
    assert size_name(CTLConfig(variant=variant, n_train=4000, single_applications=True)) \
        == "n4000-singles" and size_name(CTLConfig(variant=variant, n_train=4000)) == "n4000"
    with pytest.raises(ValueError, match="single_applications: A and R only"):
        CTLConfig(variant="S", single_applications=True)


def test_a_counts_follow_the_authors_fill_factor():
    """Variant A at the paper's size: 2 x 8 x 16^L compositions of length L; half of
    length 2 (2,048) and 3 (32,768), the rest split over 4-6; the OOD test 200 per
    length (the authors' sample())."""
    w = World(CTLConfig(variant="A"), 1)
    space = length_counts(w, "train")
    assert space == {n: 2 * 8 * 16 ** n for n in range(2, 7)} == exact_counts(w, "train")
    q = quotas(space, 300_000 + 1_000, 0.5)
    assert q == {2: 2048, 3: 32768, 4: 88728, 5: 88728, 6: 88728}
    assert quotas(length_counts(w, "test_ood"), 1000, 1.0) == {n: 200 for n in range(2, 7)}


@pytest.mark.parametrize("variant", ["A", "R"])
def test_every_length2_composition_added_to_training(tmp_path, variant):
    _, m, data = _gen(tmp_path, variant)
    pairs = {" ".join(t) for t, _ in data["train"] if len(t) == 3}
    assert len(pairs) == 2 * 8 * 16 * 16 == m["statistics"]["train"]["length2_pairs_added"]
    assert set(m["groups"]) == {"a", "b"} and all(len(g) == 16 for g in m["groups"].values())
    assert m["statistics"]["test_ood"]["per_length"] == {str(n): 40 for n in range(2, 7)}
    assert m["counts"]["train"] == 4000 + 4096


def test_same_seed_same_bytes_other_seed_other_tables(tmp_path):
    a, m1, _ = _gen(tmp_path, "A", seed=3)
    b, m2, _ = _gen(tmp_path / "again", "A", seed=3)
    c, m3, _ = _gen(tmp_path, "A", seed=4)
    for s in ("train", "test_iid", "test_ood"):
        assert (a / f"{s}.tsv").read_bytes() == (b / f"{s}.tsv").read_bytes()
    assert m1["sha256"] == m2["sha256"] and m1["functions"] != m3["functions"]


def test_s_variant_groups_symbol_sets_and_path_constraint(tmp_path):
    """The authors' 2-stage graph: G_o first (K functions), the rest in equal blocks;
    a shared function's two symbol sets share M symbols and hold all of them; a
    shared function follows a1 (b1) only on its a (b) set."""
    _, m, data = _gen(tmp_path, "S", shared_functions=8, shared_symbols=4)
    g = m["groups"]
    assert len(g["o"]) == 8 and all(len(g[k]) == 6 for k in ("a1", "a2", "b1", "b2"))
    for f, sets in m["S"]["symbol_sets"].items():
        assert set(sets["a"]) | set(sets["b"]) == set(m["symbols"])
        assert len(set(sets["a"]) & set(sets["b"])) == 4
    of = {f: k for k, fs in g.items() for f in fs}
    symbols = m["symbols"]
    checked = 0
    for tokens, _ in data["train"] + data["test_iid"]:
        fns = list(reversed(tokens[:-1]))            # application order
        x = tokens[-1]
        for f, nxt in zip(fns, fns[1:] + [None]):
            x = m["functions"][f][symbols.index(x)]
            if nxt is not None and of[nxt] == "o":
                assert x in m["S"]["symbol_sets"][nxt][of[f][0]]
                checked += 1
    assert checked > 100
    assert {tuple(e) for e in m["edges"]["test_ood"]} >= {("a1", "b2"), ("b1", "a2")}
    # the OOD graph ends only after a2 or b2: even lengths only, as in the authors' code
    assert set(m["statistics"]["test_ood"]["per_length"]) == {"2", "4", "6"}


def test_s_symbol_sets_slide_over_the_symbols():
    """The shared symbols of consecutive shared functions are consecutive windows of M
    symbols over one order, so each symbol is shared equally often within a pass."""
    w = World(CTLConfig(variant="S", shared_functions=4, shared_symbols=2), 1)
    shared = [set(s["a"]) & set(s["b"]) for s in w.symbol_sets.values()]
    assert [len(s) for s in shared] == [2] * 4 and set().union(*shared) == set(w.symbols)


@pytest.mark.parametrize("kw,msg", [
    (dict(variant="X"), "variant must be one of A, R, S"),
    (dict(variant="S", shared_functions=30), "at least one function for each"),
    (dict(variant="S", shared_symbols=0), "shared_symbols must be between 1"),
    (dict(max_length=1), "max_length must be at least 2"),
])
def test_bad_configs_are_clear(kw, msg):
    with pytest.raises(ValueError, match=msg):
        CTLConfig(**kw)


def test_too_many_examples_for_the_graph_is_an_error(tmp_path):
    from compsuite.foundation.errors import ConfigError

    with pytest.raises(ConfigError, match=r"holds at most \d+ compositions at fill factor"):
        generate(tmp_path, CTLConfig(n_functions=8, max_length=3, n_train=20000, n_test=10))


def test_malformed_tsv_names_the_line(tmp_path):
    from compsuite.foundation.errors import DataError

    f = tmp_path / "x.tsv"
    f.write_text("a 1\t2\nb 3\n")
    with pytest.raises(DataError, match=r"x.tsv:2: expected"):
        read_tsv(f)


def test_manifest_is_json_with_seed_and_counts(tmp_path):
    out, m, _ = _gen(tmp_path, "R", seed=2)
    on_disk = json.loads((out / "manifest.json").read_text())
    assert on_disk["seed"] == 2 and on_disk["counts"]["train"] == 4000 + 4096
    assert on_disk["args"]["variant"] == "R" and "shared_functions" not in on_disk["args"]
    assert on_disk["sampling"]["fill_factor"] == 0.5


@pytest.mark.parametrize("k,m", [(4, 2), (16, 6), (8, 8)])
def test_s_grid_corners(tmp_path, k, m):
    """The paper's S grid corners (K 4-16 shared functions, M 2-6 shared symbols) and all
    symbols shared generate; the OOD patterns never occur in training."""
    _, man, data = _gen(tmp_path, "S", shared_functions=k, shared_symbols=m)
    assert len(man["groups"]["o"]) == k
    train = _transitions(man, data["train"])
    assert ("a1", "o") in train and ("b1", "o") in train
    assert not ({t for t in _transitions(man, data["test_ood"]) if t[1] in ("a2", "b2")}
                & train)
