"""Tiny end-to-end runs through both toolkit backends: data writers, training with the
toolkit's own loop (fairseq with --user-dir fairseq_plugins), prediction with
fairseq-generate / onmt_translate read by each backend's own reader, resume, and
scoring."""

from pathlib import Path

import pytest

from compsuite.eval.metrics.accuracy import accuracy_with_breakdown
from compsuite.eval.pcfgset.evaluations import structure_features
from compsuite.foundation.errors import ToolkitError
from compsuite.models.decoding import Decoding, decoding
from compsuite.studies.base import Run
from compsuite.toolkits import get_backend

from conftest import FAIRSEQ_TASK, TINY_ONMT

GENERATION = {"beam": 1, "batch_size": 64}


def _predict(toolkit, info, data, run_dir, split="test", beam=1):
    return get_backend(toolkit).predict(info, data, split,
                                        decoding({**GENERATION, "beam": beam}),
                                        run_dir / f"beam{beam}" if beam != 1 else run_dir,
                                        show=False)


def _score(toolkit, preds, data, split="test", breakdown=True):
    features = structure_features(preds.sources) if breakdown else None
    return accuracy_with_breakdown(preds.hypotheses, preds.references, features).as_dict()

@pytest.mark.parametrize("toolkit", ["fairseq", "onmt"])
def test_train_generate_score(toolkit, tiny_runs, tiny_data):
    run, run_dir, info = tiny_runs[toolkit]
    assert info["toolkit"] == toolkit
    res = _score(toolkit, _predict(toolkit, info, tiny_data, run_dir), tiny_data)
    assert res["n"] == 200 and 0.0 <= res["accuracy"] <= 1.0
    assert set(res["breakdown"]) == {"length", "n_functions", "depth"}
    assert sum(v["n"] for v in res["breakdown"]["depth"].values()) == 200


def test_fairseq_keeps_every_evaluation_sentence(tiny_runs, tiny_data):
    """fairseq drops a last batch that is not a multiple of 8 (fairseq#5036); the
    plugin task must not: the valid split has 100 sentences."""
    run, run_dir, info = tiny_runs["fairseq"]
    pred = _predict("fairseq", info, tiny_data, run_dir, "valid")
    assert _score("fairseq", pred, tiny_data, "valid", breakdown=False)["n"] == 100


def test_fairseq_task_logs_sequence_accuracy(tiny_runs, tiny_data):
    """The task's validation seq_acc is the suite's accuracy of greedy decoding of
    the valid split with the same weights (the tiny run validates once, at its end)."""
    import re

    run, run_dir, info = tiny_runs["fairseq"]
    log = (run_dir / "train.log").read_text()
    logged = re.findall(r"valid on 'valid' subset .*\| seq_acc ([0-9.]+)", log)
    assert len(logged) == 1, "expected one validation with seq_acc"
    pred = _predict("fairseq", info, tiny_data, run_dir, "valid")
    res = _score("fairseq", pred, tiny_data, "valid", breakdown=False)
    assert float(logged[0]) == round(100 * res["accuracy"], 2)


def test_finished_training_is_skipped_and_changed_config_refused(tiny_runs, tiny_data):
    run, run_dir, info = tiny_runs["onmt"]
    onmt = get_backend("onmt")
    again = onmt.train(run, "tiny", tiny_data, run_dir, seed=1, show=False)
    assert again == info
    with pytest.raises(ToolkitError, match="another configuration"):
        onmt.train(run, "tiny", tiny_data, run_dir, seed=2, show=False)


def test_onmt_resumes_from_last_checkpoint(tiny_data, tmp_path):
    """An interrupted OpenNMT-py run (checkpoints but no train.json) continues with
    train_from the newest checkpoint instead of starting over."""
    run = Run("r", "lstms2s", "onmt", False, config="onmt_configs/pcfgset/lstm.yaml",
              profiles={"tiny": TINY_ONMT})  # 12 steps, a checkpoint every 6
    run_dir = tmp_path / "run"
    onmt = get_backend("onmt")
    onmt.train(run, "tiny", tiny_data, run_dir, seed=1, show=False)
    # simulate an interruption after step 6: no final checkpoint, no train.json
    (run_dir / "checkpoints" / "model_step_12.pt").unlink()
    (run_dir / "train.json").unlink()
    info = onmt.train(run, "tiny", tiny_data, run_dir, seed=1, show=False)
    config = (run_dir / "config.yaml").read_text()
    assert "train_from:" in config and "model_step_6.pt" in config
    assert info["checkpoint"].endswith("model_step_12.pt")
    log = (run_dir / "train.log").read_text()
    assert "model_step_6.pt" in log.split("# ")[-1]  # the second run loaded step 6


@pytest.mark.parametrize("beam", [1, 5])
@pytest.mark.parametrize("toolkit", ["fairseq", "onmt"])
def test_translator_backend_matches_the_toolkit_command(toolkit, beam, tiny_runs, tiny_data):
    """The in-memory backend gives exactly what fairseq-generate / onmt_translate give
    (same checkpoint, same inputs in one batch-able list), greedy and with beam 5."""
    from compsuite.toolkits import load_translator

    run, run_dir, info = tiny_runs[toolkit]
    pred = _predict(toolkit, info, tiny_data, run_dir, beam=beam)
    expected = pred.hypotheses
    before = sorted(p.name for p in Path.cwd().iterdir())
    tr = load_translator(info["checkpoint"], tiny_data.folder("fairseq"), batch_size=64,
                         beam=beam)
    srcs = (tiny_data.raw / "test.src").read_text().splitlines()
    assert tr.translate(srcs) == expected
    assert tr.calls == 1 and tr.batches >= 200 // 64
    assert sorted(p.name for p in Path.cwd().iterdir()) == before, "the backend wrote files"


@pytest.mark.parametrize("toolkit", ["fairseq", "onmt"])
def test_translator_moves_a_bar_batch_by_batch(toolkit, tiny_runs, tiny_data, capsys):
    """Each backend tells the bar of a long translation how many sentences each batch
    translated (the bar's total is reached, batch by batch); no toolkit noise on stderr."""
    from compsuite.models.protocol import BAR, progress
    from compsuite.toolkits import load_translator

    run, run_dir, info = tiny_runs[toolkit]
    capsys.readouterr()
    tr = load_translator(info["checkpoint"], tiny_data.folder("fairseq"), batch_size=64)
    srcs = (tiny_data.raw / "test.src").read_text().splitlines()
    moved = []
    with progress(tr, len(srcs), "translate test", show=True):
        update = BAR.get()
        BAR.set(lambda n: (moved.append(n), update(n)))
        tr.translate(srcs)
    assert sum(moved) == len(srcs) and len(moved) == tr.batches >= 2 and max(moved) <= 64
    err = capsys.readouterr().err
    assert f"{len(srcs)}/{len(srcs)}" in err
    for noise in ("pin_memory", "tensorboardX", "custom_fwd", "Loading checkpoint"):
        assert noise not in err


def test_convs2s_backend_matches_fairseq_generate(tiny_data, tmp_path):
    """ConvS2S sizes its BeamableMM by the checkpoint's generation.beam (5 by default):
    the backend must decode greedily with beam 1 like fairseq-generate --beam 1, also on
    batches that do not divide by 5 (this failed with "shape '[64, 1, -1]' is invalid")."""
    from compsuite.toolkits import load_translator

    run = Run("tiny-fconv", "convs2s", "fairseq", False, args={**FAIRSEQ_TASK,
        "arch": "fconv", "encoder_layers": "[(16, 3)] * 2", "decoder_layers": "[(16, 3)] * 2",
        "encoder_embed_dim": 16, "decoder_embed_dim": 16, "decoder_out_embed_dim": 16,
        "optimizer": "nag", "lr": 0.25, "clip_norm": 0.1, "max_tokens": 2048, "max_update": 12,
        "num_workers": 0, "log_interval": 4})
    run_dir = tmp_path / "fconv"
    info = get_backend("fairseq").train(run, "tiny", tiny_data, run_dir, seed=1, show=False)
    pred = _predict("fairseq", info, tiny_data, run_dir)
    tr = load_translator(info["checkpoint"], tiny_data.folder("fairseq"), batch_size=64)
    srcs = (tiny_data.raw / "test.src").read_text().splitlines()
    assert len(srcs) % 64 and tr.translate(srcs) == pred.hypotheses


def test_fairseq_generate_shows_a_bar_over_the_sentences(tiny_runs, tiny_data, tmp_path,
                                                         capsys):
    """The toolkit's own prediction command: a bar moved by each H- line it writes,
    to the split's size; the output file is the same as without it."""
    run, run_dir, info = tiny_runs["fairseq"]
    backend = get_backend("fairseq")
    quiet = backend.predict(info, tiny_data, "valid", Decoding(), tmp_path / "q", show=False)
    assert capsys.readouterr().err == ""
    shown = backend.predict(info, tiny_data, "valid", Decoding(), tmp_path / "s", show=True)
    err = capsys.readouterr().err
    assert "fairseq-generate valid" in err and "100/100" in err
    assert shown.path.read_text() == quiet.path.read_text()
