"""Generator: determinism, manifest, split rules and Table 1 statistics."""
import json
from dataclasses import replace

import pytest

from compsuite.data_prep.pcfgset import FULL, SMALL, describe, generate, interpret, parse
from compsuite.data_prep.pcfgset.generate import sample_pairs
from compsuite.data_prep.pcfgset.grammar import FUNCTIONS
from compsuite.foundation.io import sha256_file

from conftest import reference_path

FILES = [f"{s}.{x}" for s in ("train", "valid", "test") for x in ("src", "tgt")]


def test_byte_for_byte_reproducible(tmp_path):
    cfg = replace(FULL, n_pairs=3000)
    a = generate(tmp_path / "a", cfg, seed=7)
    b = generate(tmp_path / "b", cfg, seed=7)
    c = generate(tmp_path / "c", cfg, seed=8)
    for f in FILES:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
    assert a["sha256"] == b["sha256"] != c["sha256"]


def test_manifest_records_counts_stats_checksums(tmp_path):
    m = generate(tmp_path, replace(FULL, n_pairs=2000), seed=1)
    on_disk = json.loads((tmp_path / "manifest.json").read_text())
    assert on_disk["seed"] == 1 and on_disk["args"]["n_pairs"] == 2000
    assert on_disk["counts"] == {"train": 1700, "valid": 100, "test": 200}
    for f in FILES:
        assert on_disk["sha256"][f] == sha256_file(tmp_path / f)
    assert set(on_disk["statistics"]["train"]) >= {"length", "n_functions", "depth"}
    assert "python" in on_disk["versions"] and "compsuite" in on_disk["versions"]
    assert m["alphabet_size"] == 520


def test_split_rules(small_corpus):
    srcs = {s: (small_corpus / f"{s}.src").read_text().splitlines() for s in ("train", "valid", "test")}
    tgts = {s: (small_corpus / f"{s}.tgt").read_text().splitlines() for s in srcs}
    everything = [x for s in srcs.values() for x in s]
    assert len(everything) == len(set(everything)) == 2000, "pairs are distinct across splits"
    for split in srcs:
        for s, t in zip(srcs[split], tgts[split]):
            assert interpret(s) == t
            strings = parse(s).strings()
            assert len(set(strings)) == len(strings), "a string argument repeats"
            assert parse(s).depth <= SMALL.max_depth
            assert all(len(x) <= SMALL.max_string_length for x in strings)


def test_full_config_alphabet_and_limits():
    pairs = [p for _, p in zip(range(3000), sample_pairs(FULL, seed=2))]
    symbols = {t for src, _, _ in pairs for t in src.split() if t not in FUNCTIONS and t != ","}
    assert len(symbols) > 500  # drawn from all 520 symbols A1..Z20
    assert all(len(src.split()) <= 71 for src, _, _ in pairs)


# Table 1 row of the released PCFG SET: eval/pcfgset/paper_numbers.yaml.  A 20k sample
# must match min/max exactly where the grammar bounds them and averages within 6%.
def test_statistics_close_to_table1():
    from compsuite.eval.reports.tables import paper_numbers

    target = paper_numbers("pcfgset")["released_statistics"]
    pairs = [p for _, p in zip(range(20000), sample_pairs(FULL, seed=11))]
    stats = describe([p[0] for p in pairs], [p[1] for p in pairs])
    for key in ("length", "n_functions", "depth", "target_length"):
        assert stats[key]["avg"] == pytest.approx(target[key]["avg"], rel=0.06), key
    assert stats["length"]["min"] == 3 and stats["length"]["max"] <= 71
    assert stats["depth"]["min"] == 1 and stats["depth"]["max"] == 17
    counts = stats["function_counts"]
    mean = sum(counts.values()) / len(counts)
    assert all(abs(c - mean) / mean < 0.1 for c in counts.values()), "functions not uniform"


def test_statistics_against_released_test_split():
    """The same comparison, computed afresh from the released data."""
    ref = reference_path("pcfgset", "pcfgset", "test.src").read_text().splitlines()
    ref_stats = describe(ref)
    pairs = [p for _, p in zip(range(len(ref)), sample_pairs(FULL, seed=5))]
    ours = describe([p[0] for p in pairs])
    for key in ("length", "n_functions", "depth"):
        assert ours[key]["avg"] == pytest.approx(ref_stats[key]["avg"], rel=0.06), key
        assert ours[key]["min"] == ref_stats[key]["min"], key
