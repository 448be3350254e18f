"""Section 6.1.2: "we make sure that the same string arguments are never repeated".

Every string argument of a generated corpus, and of every test's corpus built from the
base sampler, occurs once over all its splits; the released data (dev + test) repeats
none either.  The scaled-down alphabet (26 symbols, strings of 2-4) makes repeats
frequent, so a sampler that only avoided repeats within one input fails these tests.
"""
import random
from dataclasses import replace

import pytest

from compsuite.data_prep.pcfgset import FULL, SMALL, generate
from compsuite.data_prep.pcfgset.generate import StringPool, repeated_strings, sample_pairs
from compsuite.data_prep.pcfgset.splits import (localism, overgeneralisation, per_function,
                                                  productivity, substitutivity, systematicity)
from compsuite.foundation.errors import ConfigError

from conftest import reference_path

SIZES = dict(n_train=3000, n_valid=200, n_test=400)


def corpus(folder, splits=("train", "valid", "test")):
    return [line for s in splits for line in (folder / f"{s}.src").read_text().splitlines()]


def test_base_corpus_never_repeats_a_string(tmp_path):
    m = generate(tmp_path, replace(SMALL, n_pairs=6000), seed=7)
    counts = repeated_strings(corpus(tmp_path))
    assert counts["string_arguments"] > 10_000
    assert counts["repeated"] == 0, counts
    s = m["string_arguments"]
    # 26 symbols give only 676 strings of length 2: most of them get taken, and many
    # draws repeat one and are redrawn; the manifest counts them
    assert s["distinct"] == counts["distinct"] and s["redrawn"] > 1000


def test_a_length_that_runs_out_leaves_the_choice():
    cfg = replace(SMALL, n_letters=3, max_string_length=3, string_length_weights=(0.5, 0.5))
    pool = StringPool(cfg, random.Random(1))
    drawn = [pool.draw() for _ in range(30)]
    assert len(set(drawn)) == 30 and pool.summary()["exhausted_lengths"] == [2]
    assert sum(len(s) == 2 for s in drawn) == 9          # all 3 x 3 strings of length 2
    pool.release([next(s for s in drawn if len(s) == 2)])
    assert pool.summary()["exhausted_lengths"] == []


def test_full_config_stream_never_repeats():
    pool = StringPool(FULL, random.Random(7))
    srcs = [p[0] for _, p in zip(range(20_000), sample_pairs(FULL, 7, pool=pool))]
    assert repeated_strings(srcs)["repeated"] == 0
    assert pool.summary()["distinct"] == repeated_strings(srcs)["distinct"]


@pytest.mark.parametrize("build, extra", [
    (systematicity, {}), (productivity, {}), (localism, {"n_samples": 100}),
    (overgeneralisation, {}), (per_function, {"n_templates": 50}),
    (substitutivity, {"condition": "equally_distributed"}),
    (substitutivity, {"condition": "primitive", "primitive_rate": 0.01}),
])
def test_every_test_corpus_never_repeats(tmp_path, build, extra):
    m = build(tmp_path, SMALL, seed=5, **SIZES, **extra)
    counts = repeated_strings(corpus(tmp_path))
    assert counts["repeated"] == 0, (build.__name__, extra, counts)
    assert "redrawn" in m["string_arguments"]


def test_exhausted_alphabet_is_a_config_error():
    tiny = replace(SMALL, n_letters=3, max_string_length=2, string_length_weights=(1.0,))
    with pytest.raises(ConfigError, match="cannot give that many pairs"):
        list(zip(range(100), sample_pairs(tiny, 1)))


def test_repeated_strings_counts_and_names_bad_line():
    counts = repeated_strings(["copy A1 B1", "append A1 B1 , C1 D1", "reverse C1 D1 E1"])
    assert counts == {"string_arguments": 4, "distinct": 3, "repeated": 1,
                      "repeat_occurrences": 1}
    with pytest.raises(Exception, match="line 2"):
        repeated_strings(["copy A1 B1", "copy copy"])


def test_released_data_never_repeats():
    srcs = []
    for split in ("dev", "test"):
        srcs += reference_path("pcfgset", "pcfgset", f"{split}.src").read_text().splitlines()
    counts = repeated_strings(srcs)
    assert counts["string_arguments"] > 40_000 and counts["repeated"] == 0
