"""CTL++ data: determinism, the tables, and the sampling graphs' contracts, checked
mechanically on the generated files and their manifest."""
import json

import pytest

from compsuite.data_prep.ctlpp import CTLConfig, generate
from compsuite.data_prep.ctlpp.generate import read_tsv

SMALL = dict(n_train=4000, n_test=200)


def _gen(tmp_path, variant, seed=1, **kw):
    out = tmp_path / f"{variant}{seed}"
    m = generate(out, CTLConfig(variant=variant, **{**SMALL, **kw}), seed=seed)
    data = {s: read_tsv(out / f"{s}.tsv") for s in ("train", "test_iid", "test_ood")}
    return out, m, data


def _groups(m, fns):
    """Group of each function, in application order (the input is right to left)."""
    of = {f: g for g, fs in m["groups"].items() for f in fs}
    return [of[f] for f in reversed(fns)]


def _transitions(m, rows):
    out = set()
    for tokens, _ in rows:
        gs = _groups(m, tokens[:-1])
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
    for f, outs in m["functions"].items():       # bijective
        assert sorted(outs) == symbols
    assert len(m["functions"]) == 32 and len(symbols) == 8


@pytest.mark.parametrize("variant", ["A", "R", "S"])
def test_ood_patterns_never_in_training_and_iid_follows_the_graph(tmp_path, variant):
    _, m, data = _gen(tmp_path, variant)
    train = _transitions(m, data["train"])
    assert train == {tuple(t) for t in m["transitions"]["train"]}
    ood = _transitions(m, data["test_ood"])
    assert ood and not (ood & train)
    assert _transitions(m, data["test_iid"]) <= train
    assert all(len(t) >= 3 for t, _ in data["test_ood"])     # compositions, not singles


def test_same_seed_same_bytes_other_seed_other_tables(tmp_path):
    a, m1, _ = _gen(tmp_path, "A", seed=3)
    b, m2, _ = _gen(tmp_path / "again", "A", seed=3)
    c, m3, _ = _gen(tmp_path, "A", seed=4)
    for s in ("train", "test_iid", "test_ood"):
        assert (a / f"{s}.tsv").read_bytes() == (b / f"{s}.tsv").read_bytes()
    assert m1["sha256"] == m2["sha256"] and m1["functions"] != m3["functions"]


@pytest.mark.parametrize("variant", ["A", "R"])
def test_every_single_application_in_training_and_equal_lengths(tmp_path, variant):
    _, m, data = _gen(tmp_path, variant)
    singles = {(t[0], t[1]) for t, _ in data["train"] if len(t) == 2}
    assert singles == {(f, x) for f in m["functions"] for x in m["symbols"]}
    assert set(m["groups"]) == {"a", "b"} and all(len(g) == 16 for g in m["groups"].values())
    for split in ("test_iid", "test_ood"):
        assert m["statistics"][split]["per_length"] == {str(n): 40 for n in range(2, 7)}
    per = m["statistics"]["train"]["per_length"]
    assert per["1"] == 256 and max(per.values()) - min(v for k, v in per.items() if k != "1") <= 1


def test_s_variant_groups_symbol_sets_and_path_constraint(tmp_path):
    _, m, data = _gen(tmp_path, "S", shared_functions=8, shared_symbols=4)
    g = m["groups"]
    assert len(g["o"]) == 8 and all(len(g[k]) == 6 for k in ("a1", "a2", "b1", "b2"))
    for f, sets in m["S"]["symbol_sets"].items():
        assert set(sets["a"]) | set(sets["b"]) == set(m["symbols"])
        assert len(set(sets["a"]) & set(sets["b"])) == 4
    of = {f: k for k, fs in g.items() for f in fs}
    symbols = m["symbols"]
    for tokens, _ in data["train"] + data["test_iid"]:
        if len(tokens) == 3 and of[tokens[0]] == "o":      # o(s1(x)): s1(x) in o's path set
            mid = m["functions"][tokens[1]][symbols.index(tokens[2])]
            assert mid in m["S"]["symbol_sets"][tokens[0]][of[tokens[1]][0]]
    assert {tuple(map(tuple, [t]))[0] for t in m["transitions"]["test_ood"]} == {
        ("a1", "b2"), ("b1", "a2")}
    assert m["unavailable_lengths"]["test_ood"] == [3, 4, 5, 6]   # reported, not faked


@pytest.mark.parametrize("kw,msg", [
    (dict(variant="X"), "variant must be one of A, R, S"),
    (dict(variant="S", shared_functions=6), "must be a positive multiple of 4"),
    (dict(variant="S", shared_symbols=3), "must be even"),
])
def test_bad_configs_are_clear(kw, msg):
    with pytest.raises(ValueError, match=msg):
        CTLConfig(**kw)


def test_malformed_tsv_names_the_line(tmp_path):
    from compsuite.data_prep.common.io import DataError

    f = tmp_path / "x.tsv"
    f.write_text("a 1\t2\nb 3\n")
    with pytest.raises(DataError, match=r"x.tsv:2: expected"):
        read_tsv(f)


def test_manifest_is_json_with_seed_and_counts(tmp_path):
    out, m, _ = _gen(tmp_path, "R", seed=2)
    on_disk = json.loads((out / "manifest.json").read_text())
    assert on_disk["seed"] == 2 and on_disk["counts"]["train"] == 4000
    assert on_disk["args"]["variant"] == "R" and "shared_functions" not in on_disk["args"]


@pytest.mark.parametrize("k,m", [(0, 0), (16, 8), (4, 6)])
def test_s_grid_corners(tmp_path, k, m):
    """Every cell of the S grid generates: no shared functions (the paths never meet)
    up to half the functions shared on all symbols."""
    _, man, data = _gen(tmp_path, "S", shared_functions=k, shared_symbols=m)
    assert len(man["groups"]["o"]) == k
    train = _transitions(man, data["train"])
    assert (("a1", "o") in train) == (k > 0)
    assert not (_transitions(man, data["test_ood"]) & train)
