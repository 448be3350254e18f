"""The PCFG SET paper profile against the authors' released code (issue 36; the table in
data_prep/pcfgset/doc.md, "Paper profile against the authors' code").

Reference: i-machine-think/am-i-compositional@4f75bdd (src/train/OpenNMT/
train_lstms2s_opennmt.sh, train_transformer_opennmt.sh, select_model.py,
src/train/Fairseq/train_convs2s_fairseq.sh), with the defaults of the toolkits they
ran: OpenNMT-py of November 2018 (@4726621, onmt/opts.py) and fairseq of late 2018
(@9dd8724, fairseq/options.py).  Each test reads the resolved paper profile (the
config the suite hands to the toolkit) and fails if a setting drifts from the authors'.
"""
from pathlib import Path

import pytest

from compsuite.foundation.dataset import Dataset
from compsuite.registry import get_study
from compsuite.toolkits import Checkpoint, get_backend

STUDY = get_study("pcfgset")
PAPER = STUDY.profile("paper")


def fake_data() -> Dataset:
    data = Dataset(Path("/nonexistent/pcfgset"), label="paths only")
    data.formats.update(onmt=Path("/nonexistent/onmt"), fairseq=Path("/nonexistent/fb"))
    return data


def onmt_config(run: str, profile: str = "paper") -> dict:
    return get_backend("onmt").config(STUDY.run(run), profile, fake_data(), Path("/tmp/run"),
                                      seed=1)


def fairseq_args(run: str, profile: str = "paper") -> dict:
    return get_backend("fairseq").train_args(STUDY.run(run), profile)


# ----------------------------------------------------------------------- LSTMS2S (OpenNMT-py)
def test_lstms2s_follows_the_authors_script_and_2018_defaults():
    c = onmt_config("lstms2s-onmt")
    # train_lstms2s_opennmt.sh:73-75
    assert (c["encoder_type"], c["word_vec_size"], c["batch_size"], c["batch_type"]) == (
        "brnn", 512, 64, "sents")
    # OpenNMT-py@4726621 onmt/opts.py defaults the script leaves in place
    assert (c["enc_layers"], c["dec_layers"], c["rnn_type"]) == (2, 2, "LSTM")
    assert c["hidden_size"] == 500            # enc_rnn_size / dec_rnn_size 500 (not 512)
    assert c["global_attention"] == "general" and c["input_feed"] == 1
    assert c["dropout"] == [0.3] and c["param_init"] == 0.1
    assert not c.get("param_init_glorot")
    assert c["optim"] == "sgd" and c["learning_rate"] == 1.0   # no -learning_rate: 1.0
    assert c["max_grad_norm"] == 5.0 and c["normalization"] == "sents"
    assert not c.get("label_smoothing")
    # the default decay starts after the last step: a constant learning rate
    assert c["start_decay_steps"] > c["train_steps"]


# ------------------------------------------------------------------ Transformer (OpenNMT-py)
def test_transformer_follows_the_authors_script():
    c = onmt_config("transformer-onmt")
    # train_transformer_opennmt.sh:73-78
    assert (c["enc_layers"], c["dec_layers"], c["heads"]) == (6, 6, 8)
    assert (c["hidden_size"], c["word_vec_size"], c["transformer_ff"]) == (512, 512, 2048)
    assert c["position_encoding"] is True
    assert c["dropout"] == [0.1] and c["attention_dropout"] == [0.1]
    assert (c["optim"], c["adam_beta1"], c["adam_beta2"]) == ("adam", 0.9, 0.998)
    assert (c["decay_method"], c["warmup_steps"]) == ("noam", 8000)
    assert c["learning_rate"] == 1.0          # -learning_rate 1 (OpenNMT-py's FAQ has 2)
    assert c["label_smoothing"] == 0.0        # not set by the script: 0.0
    assert c["max_grad_norm"] == 0.0 and c["param_init"] == 0.0 and c["param_init_glorot"]
    assert (c["batch_size"], c["batch_type"], c["normalization"]) == (64, "sents", "sents")
    assert c.get("accum_count", 1) in (1, [1])


def test_transformer_peak_learning_rate_in_opennmt():
    from onmt.utils.optimizers import noam_decay

    c = onmt_config("transformer-onmt")
    peak = c["learning_rate"] * noam_decay(c["warmup_steps"], c["warmup_steps"],
                                           c["hidden_size"])
    assert peak == pytest.approx(512 ** -0.5 * 8000 ** -0.5)


# ------------------------------------------------------------ what every OpenNMT-py run shares
@pytest.mark.parametrize("run", ["lstms2s-onmt", "transformer-onmt"])
def test_onmt_runs_drop_pairs_over_50_tokens_as_the_2018_preprocess(run):
    """preprocess.py's -src_seq_length / -tgt_seq_length defaults (50) removed longer
    training and validation pairs; filtertoolong counts the target's BOS and EOS."""
    from argparse import Namespace

    from onmt.transforms.misc import FilterTooLongTransform

    c = onmt_config(run)
    for corpus in ("corpus_1", "valid"):
        assert "filtertoolong" in c["data"][corpus]["transforms"], corpus
    f = FilterTooLongTransform(Namespace(src_seq_length=c["src_seq_length"],
                                         tgt_seq_length=c["tgt_seq_length"]))
    f._parse_opts()

    def kept(n_src, n_tgt):
        return f.apply({"src": ["A1"] * n_src, "tgt": ["A1"] * n_tgt}) is not None

    assert kept(50, 50) and not kept(51, 10) and not kept(10, 51)


def test_the_cross_toolkit_convs2s_is_not_filtered():
    """The authors' ConvS2S (fairseq) trained on every pair."""
    c = onmt_config("convs2s-onmt")
    assert not any((e or {}).get("transforms") for e in c["data"].values())
    assert c["dropout"] == [0.1]              # train_convs2s_fairseq.sh:56


@pytest.mark.parametrize("run", ["lstms2s-onmt", "transformer-onmt", "convs2s-onmt"])
def test_onmt_runs_validate_and_keep_a_checkpoint_every_epoch_for_25_epochs(run):
    c = onmt_config(run)
    assert c["valid_steps"] == c["save_checkpoint_steps"]
    assert c["train_steps"] == 25 * c["valid_steps"]
    assert c["keep_checkpoint"] == -1         # every checkpoint, for select_model.py's choice
    over = STUDY.train_options("overgeneralisation", "paper", "onmt") or {}
    assert over.get("save_checkpoint_steps", c["valid_steps"]) == c["valid_steps"]


def test_paper_profile_scores_the_best_onmt_checkpoint_and_decodes_as_the_authors():
    assert PAPER.settings.onmt_checkpoint == "select_model_py"
    for name in ("quick", "tiny"):
        assert STUDY.profile(name).settings.onmt_checkpoint == "last"
    gen = PAPER.generation
    # OpenNMT-py 2018 translate defaults (opts.py:532, 536); fairseq --beam 5
    assert gen.beam == 5 and gen.max_length == 100


# ----------------------------------------------------------------------- ConvS2S (fairseq)
def test_convs2s_follows_the_authors_command_and_2018_fairseq_defaults():
    a = fairseq_args("convs2s-fairseq")
    # train_convs2s_fairseq.sh:55-58
    assert a["arch"] == "fconv_wmt_en_de"
    assert a["encoder_embed_dim"] == a["decoder_embed_dim"] == 512
    assert (a["lr"], a["clip_norm"], a["dropout"]) == (0.25, 0.1, 0.1)
    assert (a["max_tokens"], a["batch_size"], a["max_epoch"]) == (3000, 64, 25)
    # fairseq@9dd8724 options.py defaults: nag, reduce_lr_on_plateau (shrink 0.1),
    # --min-lr 1e-5 ends training; train.py: checkpoint_best.pt by validation loss
    assert a["optimizer"] == "nag"
    assert (a["lr_scheduler"], a["lr_shrink"], a["stop_min_lr"]) == (
        "reduce_lr_on_plateau", 0.1, 1e-5)
    assert a["best_checkpoint_metric"] == "loss"
    assert not a.get("maximize_best_checkpoint_metric")
    assert not a.get("label_smoothing") and a.get("criterion", "cross_entropy") == "cross_entropy"


def test_convs2s_arguments_mean_the_same_to_fairseq():
    """fairseq-train parses the run's options to the values of the 2018 command (an
    option name fairseq renamed would fail here)."""
    from fairseq import options

    from compsuite.toolkits.base import to_cli
    from compsuite.toolkits.fairseq.backend import USER_DIR

    parser = options.get_training_parser()
    args = options.parse_args_and_arch(parser, ["/nonexistent", "--user-dir", str(USER_DIR)]
                                       + to_cli(fairseq_args("convs2s-fairseq")))
    assert args.arch == "fconv_wmt_en_de" and args.optimizer == "nag"
    assert args.momentum == 0.99 and args.weight_decay == 0.0   # 2018 defaults too
    assert args.lr == [0.25] and args.lr_scheduler == "reduce_lr_on_plateau"
    assert args.lr_shrink == 0.1 and args.lr_patience == 0 and args.stop_min_lr == 1e-5
    assert args.best_checkpoint_metric == "loss" and not args.maximize_best_checkpoint_metric
    assert args.encoder_embed_dim == 512 and args.dropout == 0.1
    assert args.max_tokens == 3000 and args.batch_size == 64 and not args.sentence_avg


# ------------------------------------------------------------ the cross-toolkit fairseq runs
def test_fairseq_lstm_mirrors_the_authors_lstms2s():
    a = fairseq_args("lstms2s-fairseq")
    assert a["encoder_bidirectional"] and 2 * a["encoder_hidden_size"] == 500
    assert a["decoder_hidden_size"] == 500 and a["encoder_embed_dim"] == 512
    assert (a["dropout"], a["optimizer"], a["lr"], a["clip_norm"]) == (0.3, "sgd", 1.0, 5.0)


def test_fairseq_transformer_mirrors_the_authors_transformer():
    a = fairseq_args("transformer-fairseq")
    assert a["lr"] == pytest.approx(512 ** -0.5 * 8000 ** -0.5, rel=1e-3)
    assert (a["lr_scheduler"], a["warmup_updates"]) == ("inverse_sqrt", 8000)
    assert not a.get("label_smoothing")
    assert a.get("criterion", "cross_entropy") == "cross_entropy"
    assert a["encoder_normalize_before"] and a["decoder_normalize_before"]
    assert a["dropout"] == a["attention_dropout"] == a["activation_dropout"] == 0.1


def test_quick_and_tiny_keep_their_own_settings():
    """The paper-only settings above do not reach the quick and tiny profiles."""
    q = fairseq_args("convs2s-fairseq", "quick")
    assert (q["lr_scheduler"], q["best_checkpoint_metric"]) == ("fixed", "seq_acc")
    assert q["maximize_best_checkpoint_metric"] and "stop_min_lr" not in q
    for profile in ("quick", "tiny"):
        t = fairseq_args("transformer-fairseq", profile)
        assert t["criterion"] == "label_smoothed_cross_entropy" and t["label_smoothing"] == 0.1
        assert "encoder_normalize_before" not in t and "attention_dropout" not in t
        c = onmt_config("lstms2s-onmt", profile)
        assert not any((e or {}).get("transforms") for e in c["data"].values())
    assert "stop_min_lr" not in fairseq_args("lstms2s-fairseq", "quick")
    assert "dropout" not in fairseq_args("lstms2s-fairseq", "quick")
    assert onmt_config("transformer-onmt", "quick")["label_smoothing"] == 0.1


# ------------------------------------------------------------------ checkpoint selection
LOG = """\
# onmt_train -config config.yaml
[2024-01-01 10:00:00,000 INFO] Step 1200/3741; acc: 40.0; ppl: 3.2
[2024-01-01 10:00:01,000 INFO] Train perplexity: 3.1
[2024-01-01 10:00:01,000 INFO] Validation perplexity: 2.5
[2024-01-01 10:00:01,000 INFO] Validation accuracy: 61.5
[2024-01-01 10:00:01,000 INFO] Saving checkpoint /r/checkpoints/model_step_1247.pt
[2024-01-01 10:01:00,000 INFO] Step 2400/3741; acc: 70.0; ppl: 2.0
[2024-01-01 10:01:01,000 INFO] Validation accuracy: 88.25
[2024-01-01 10:01:01,000 INFO] Saving checkpoint /r/checkpoints/model_step_2494.pt
# onmt_train -config config.yaml
[2024-01-01 11:00:00,000 INFO] Loading checkpoint from /r/checkpoints/model_step_2494.pt
[2024-01-01 11:01:01,000 INFO] Validation accuracy: 88.25
[2024-01-01 11:01:01,000 INFO] Saving checkpoint /r/checkpoints/model_step_3741.pt
[2024-01-01 11:01:02,000 INFO] Validation accuracy: 12.0
[2024-01-01 11:01:03,000 INFO] Step 3741/3741; acc: 90.0; ppl: 1.5
[2024-01-01 11:01:04,000 INFO] Saving checkpoint /r/checkpoints/model_step_3745.pt
"""


def test_validation_accuracy_belongs_to_the_checkpoint_saved_next():
    from compsuite.toolkits.onmt.validation import validation_accuracies

    accs = validation_accuracies(LOG.splitlines())
    # the last save follows a later step's report, not a validation: no accuracy
    assert accs == {1247: 61.5, 2494: 88.25, 3741: 88.25}


def test_the_first_of_equal_best_checkpoints_is_scored(tmp_path):
    from compsuite.eval.pcfgset.checkpoint_selection import best_onmt_checkpoint
    from compsuite.foundation.errors import ConfigError

    (tmp_path / "train.log").write_text(LOG)
    ckpts = [Checkpoint("step", s, tmp_path / f"model_step_{s}.pt")
             for s in (1247, 2494, 3741, 3745)]
    onmt = get_backend("onmt")
    sel = best_onmt_checkpoint(onmt, tmp_path, ckpts)
    assert sel["step"] == 2494 and sel["checkpoint"].endswith("model_step_2494.pt")
    assert sel["valid_accuracy"] == 88.25
    assert sel["signature"] == ("metric:onmt_valid_accuracy|tokens:teacher-forced|scale:percent"
                                "|read:train.log|rule:best_valid_accuracy|version:1")
    with pytest.raises(ConfigError, match="keep_checkpoint"):
        best_onmt_checkpoint(onmt, tmp_path, [c for c in ckpts if c.at != 2494])


def test_select_model_py_keeps_the_checkpoint_before_the_best(tmp_path):
    """select_model.py:43 takes np.argmax(val_accs) * steps: with validations at 1247,
    2494 and 3741 and the best at 2494 (index 1), it keeps step 1247; a best at the
    first validation (index 0, no step-0 model) keeps the first."""
    from compsuite.eval.pcfgset.checkpoint_selection import best_onmt_checkpoint

    (tmp_path / "train.log").write_text(LOG)
    ckpts = [Checkpoint("step", s, tmp_path / f"model_step_{s}.pt")
             for s in (1247, 2494, 3741, 3745)]
    onmt = get_backend("onmt")
    sel = best_onmt_checkpoint(onmt, tmp_path, ckpts, "select_model_py")
    assert (sel["step"], sel["best_step"], sel["valid_accuracy"]) == (1247, 2494, 61.5)
    first = LOG.replace("61.5", "99.0")
    (tmp_path / "train.log").write_text(first)
    assert best_onmt_checkpoint(onmt, tmp_path, ckpts, "select_model_py")["step"] == 1247


def test_selection_reads_a_real_opennmt_log(tiny_runs):
    """OpenNMT-py's own log (the session's tiny LSTMS2S: the paper's lstm.yaml, with its
    50-token filter on training and validation data, shrunk to 12 steps with a
    validation and a checkpoint every 6): every checkpoint saved after a validation is
    found, and the one scored exists."""
    from compsuite.eval.pcfgset.checkpoint_selection import best_onmt_checkpoint

    run, run_dir, info = tiny_runs["onmt"]
    log = (run_dir / "train.log").read_text()
    assert "filtertoolong" in log
    backend = get_backend("onmt")
    sel = best_onmt_checkpoint(backend, run_dir, backend.checkpoints(run_dir, "step"))
    assert set(sel["by_step"]) == {"6", "12"}
    assert Path(sel["checkpoint"]).is_file() and info["checkpoint"].endswith("_step_12.pt")


def test_the_study_scores_and_records_the_selected_checkpoint(tmp_path, monkeypatch):
    import compsuite.eval.pcfgset.evaluations as evaluations
    from compsuite.studies.base import Context, Unit

    (tmp_path / "train.log").write_text(LOG)
    (tmp_path / "checkpoints").mkdir()
    for s in (1247, 2494, 3741):
        (tmp_path / "checkpoints" / f"model_step_{s}.pt").write_bytes(b"")
    seen = {}

    def fake_task_accuracy(ctx):
        seen.update(checkpoint=ctx.checkpoint, trained=ctx.trained["checkpoint"])
        return {"accuracy": 0.5}

    monkeypatch.setattr(evaluations, "task_accuracy", fake_task_accuracy)
    unit = Unit("task", "lstms2s-onmt", 1, "full", "task/lstms2s-onmt/seed1")
    last = str(tmp_path / "checkpoints" / "model_step_3741.pt")
    ctx = Context(STUDY, PAPER, unit, STUDY.run("lstms2s-onmt"), tmp_path, fake_data(), last,
                  fake_data(), {"checkpoint": last}, {}, False)
    result = STUDY.evaluate(ctx)
    # select_model.py's pick: the checkpoint validated before the best (2494)
    kept = str(tmp_path / "checkpoints" / "model_step_1247.pt")
    assert seen == {"checkpoint": kept, "trained": kept}
    assert result["checkpoint"] == kept and result["checkpoint_selection"]["step"] == 1247
    assert result["checkpoint_selection"]["best_step"] == 2494
    quick = Context(STUDY, STUDY.profile("quick"), unit, STUDY.run("lstms2s-onmt"), tmp_path,
                    fake_data(), last, fake_data(), {"checkpoint": last}, {}, False)
    assert "checkpoint" not in STUDY.evaluate(quick)
    assert seen["checkpoint"] == last


def test_paper_decoding_has_the_2018_length_penalty(tmp_path):
    """OpenNMT-py of November 2018 ranked beam hypotheses without a length penalty
    (onmt/opts.py:546 'none'); 3.5's default is 'avg': the paper profile asks for
    none, onmt_translate is told so, and a wrong value is refused by name."""
    from compsuite.toolkits.onmt.translator import length_penalty_args
    from compsuite.foundation.errors import ConfigError

    assert PAPER.generation.length_penalty == "none"
    assert length_penalty_args("none") == ["-length_penalty", "none"]
    assert length_penalty_args(None) == []
    with pytest.raises(ConfigError, match="generation.length_penalty must be one of"):
        length_penalty_args("average")


def test_onmt_translate_is_told_the_length_penalty(tmp_path, monkeypatch):
    import compsuite.toolkits.onmt.backend as onmt
    from compsuite.foundation.dataset import Dataset
    from compsuite.toolkits import get_backend

    seen = []

    def fake_run(cmd, log, what):
        seen.append(cmd)
        (Path(cmd[cmd.index("-output") + 1])).write_text("x\n")
    monkeypatch.setattr(onmt, "run_logged", fake_run)
    data = Dataset(tmp_path / "d", ("train", "test"), "fake")
    (data.root / "onmt").mkdir(parents=True)
    data.formats["onmt"] = data.root / "onmt"
    data.raw.mkdir(parents=True)
    for side in ("src", "tgt"):
        (data.raw / f"test.{side}").write_text("x\n")
    generation = PAPER.generation
    (tmp_path / "m.pt").write_bytes(b"")   # not read: CTranslate2 leaves a beam to OpenNMT-py
    get_backend("onmt").predict({"checkpoint": str(tmp_path / "m.pt")}, data, "test",
                                generation, tmp_path, show=False)
    cmd = seen[0]
    assert cmd[cmd.index("-length_penalty") + 1] == "none"
    assert cmd[cmd.index("-beam_size") + 1] == "5"
