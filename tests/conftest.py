import os
from pathlib import Path

import pytest

from compsuite.data_prep.common.writers import write_fairseq, write_onmt
from compsuite.registry import Run
from compsuite.toolkits import TRAIN, DataPaths

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = Path(os.environ.get("COMPSUITE_REFERENCE", ROOT.parent / "shared" / "reference"))


def reference_path(*parts: str) -> Path:
    """A path in the studies' reference data; skips the test (naming it) when absent."""
    p = REFERENCE.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"reference data not available: {p}")
    return p


@pytest.fixture(scope="session")
def small_corpus(tmp_path_factory):
    """A small scaled-down PCFG SET corpus (raw text), generated once per session."""
    from dataclasses import replace

    from compsuite.data_prep.pcfgset import SMALL, generate

    out = tmp_path_factory.mktemp("pcfg_small")
    generate(out, replace(SMALL, n_pairs=2000), seed=3)
    return out


# ---------------------------------------------------------------- tiny toolkit runs
TINY_FAIRSEQ = {
    "arch": "transformer", "encoder_layers": 1, "decoder_layers": 1,
    "encoder_embed_dim": 16, "decoder_embed_dim": 16, "encoder_ffn_embed_dim": 32,
    "decoder_ffn_embed_dim": 32, "encoder_attention_heads": 2, "decoder_attention_heads": 2,
    "optimizer": "adam", "lr": 0.005, "max_tokens": 2048, "max_update": 12,
    "num_workers": 0, "log_interval": 4,
}
TINY_ONMT = {
    "enc_layers": 1, "dec_layers": 1, "hidden_size": 16, "word_vec_size": 16,
    "optim": "adam", "learning_rate": 0.005, "train_steps": 12, "valid_steps": 6,
    "save_checkpoint_steps": 6, "keep_checkpoint": 2, "report_every": 4, "batch_size": 32,
    "bucket_size": 2048, "num_workers": 0,  # fast start-up on a tiny corpus
}


@pytest.fixture(scope="session")
def tiny_data(small_corpus, tmp_path_factory):
    base = tmp_path_factory.mktemp("tiny_data")
    paths = DataPaths(small_corpus, base / "fairseq-bin", base / "onmt")
    write_fairseq(small_corpus, paths.fairseq_bin)
    write_onmt(small_corpus, paths.onmt)
    return paths


@pytest.fixture(scope="session")
def tiny_runs(tiny_data, tmp_path_factory):
    """Train one tiny model per toolkit; returns {toolkit: (run_dir, train_info)}."""
    root = tmp_path_factory.mktemp("tiny_runs")
    runs = {
        "fairseq": Run("tiny-fairseq", "transformer", "fairseq", False, args=TINY_FAIRSEQ),
        "onmt": Run("tiny-onmt", "lstms2s", "onmt", False, config="onmt_configs/pcfgset/lstm.yaml",
                    profiles={"tiny": TINY_ONMT}),
    }
    out = {}
    for toolkit, run in runs.items():
        run_dir = root / toolkit
        info = TRAIN[toolkit](run, "tiny", tiny_data, run_dir, seed=1, show=False)
        out[toolkit] = (run, run_dir, info)
    return out


