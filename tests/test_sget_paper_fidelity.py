"""SGET's paper profile against the authors' released code (ynklab/SGET at 747cf0b:
scripts/config_transformer.yaml, config_lstm.yaml, translate_{transformer,lstm}.sh,
lora_llama2.sh, lora.py, translate.py; OpenNMT-py 3.4.3's defaults for what their
configs leave out).  Each test reads the resolved paper profile (through OpenNMT-py's
own option parser where the toolkit fills in defaults) and fails if a setting drifts
from theirs.  The table: data_prep/sget/doc.md, "Paper profile against the authors'
code"."""
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from conftest import edited_study

from compsuite.foundation.errors import ConfigError
from compsuite.registry import get_study
from compsuite.studies.base import unit_decoding

STUDY = get_study("sget")

#: scripts/config_{transformer,lstm}.yaml (the same training block in both), with the
#: OpenNMT-py 3.4.3 defaults of what they leave out (onmt/opts.py at v3.4.3)
TRAINING = {
    "batch_type": "sents", "normalization": "sents", "batch_size": 256,
    "valid_batch_size": 256, "accum_count": [4], "accum_steps": [0],
    "optim": "adam", "learning_rate": 1e-4, "max_grad_norm": 0, "param_init": 0,
    "param_init_glorot": True, "dropout": [0.1], "dropout_steps": [0],
    "train_steps": 70000, "valid_steps": 500, "save_checkpoint_steps": 1000,
    "hidden_size": 512, "word_vec_size": 512,
    # defaults (not in their files)
    "adam_beta1": 0.9, "adam_beta2": 0.999, "label_smoothing": 0.0,
    "decay_method": "none", "start_decay_steps": 50000, "decay_steps": 10000,
    "learning_rate_decay": 0.5, "attention_dropout": [0.1], "keep_checkpoint": -1,
    "early_stopping": 0, "average_decay": 0, "share_embeddings": False,
    "share_decoder_embeddings": False, "copy_attn": False, "coverage_attn": False,
    "lambda_coverage": 0.0, "truncated_decoder": 0, "bucket_size": 262144,
}
MODEL = {
    "transformer-onmt": {"encoder_type": "transformer", "decoder_type": "transformer",
                         "enc_layers": 6, "dec_layers": 6, "heads": 8,
                         "transformer_ff": 2048, "max_relative_positions": 20,
                         "position_encoding": False, "layer_norm": "standard",
                         "add_qkvbias": False, "add_ffnbias": False},
    "lstm-onmt": {"encoder_type": "rnn", "decoder_type": "rnn", "rnn_type": "LSTM",
                  "enc_layers": 4, "dec_layers": 4, "global_attention": "dot",
                  "global_attention_function": "softmax", "input_feed": 1,
                  "bridge": False, "context_gate": None},
}


def parsed_options(run_name, tmp_path, monkeypatch, gpu: bool):
    """The run's paper config as the suite writes it, read by onmt_train's own parser
    (the toolkit's defaults filled in)."""
    from compsuite.foundation.dataset import Dataset
    from compsuite.toolkit_noise import import_toolkit
    from compsuite.toolkits.onmt import backend as onmt

    monkeypatch.setattr(onmt, "cuda_available", lambda: gpu)
    data = Dataset(tmp_path, ("train", "valid"), formats={"onmt": tmp_path})
    cfg = onmt.BACKEND.config(STUDY.run(run_name), "paper", data, tmp_path / "run", 1)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    import_toolkit("onmt")
    from onmt.bin.train import _get_parser

    opt, unknown = _get_parser().parse_known_args(["-config", str(path)])
    assert unknown == []
    return opt


@pytest.mark.parametrize("run_name", ["transformer-onmt", "lstm-onmt"])
def test_opennmt_paper_configs_are_the_authors(run_name, tmp_path, monkeypatch):
    opt = parsed_options(run_name, tmp_path, monkeypatch, gpu=False)
    want = {**TRAINING, **MODEL[run_name]}
    got = {k: getattr(opt, k) for k in want}
    assert got == want
    assert opt.model_dtype == "fp32"   # fp16 is a GPU setting
    gpu = parsed_options(run_name, tmp_path, monkeypatch, gpu=True)
    # config_*.yaml: model_dtype "fp16", world_size 1, gpu_ranks [0]
    assert (gpu.model_dtype, gpu.world_size, gpu.gpu_ranks) == ("fp16", 1, [0])
    assert {k: getattr(gpu, k) for k in want} == want


@pytest.mark.parametrize("run_name", ["transformer-onmt", "lstm-onmt"])
def test_the_learning_rate_is_halved_from_update_50000_as_theirs(run_name, tmp_path,
                                                                 monkeypatch):
    """decay_method none leaves OpenNMT-py's exponential decay on (start_decay_steps
    50000): the authors' models trained at 1e-4, then 5e-5, 2.5e-5, 1.25e-5."""
    from onmt.utils.optimizers import make_learning_rate_decay_fn

    opt = parsed_options(run_name, tmp_path, monkeypatch, gpu=False)
    scale = make_learning_rate_decay_fn(opt)
    assert [scale(step) for step in (1, 49999, 50000, 59999, 60000, 70000)] == [
        1.0, 1.0, 0.5, 0.5, 0.25, 0.125]


def unit(profile: str, run: str) -> SimpleNamespace:
    """What the runner's Context gives the study: the profile, the run, the unit's
    decoding settings (the study's, the profile's, the run's)."""
    p = STUDY.profile(profile)
    return SimpleNamespace(profile=p, run=STUDY.run(run),
                           decoding=unit_decoding(p, STUDY.run(run)))


def test_paper_decoding_is_the_authors():
    """translate_{transformer,lstm}.sh: onmt_translate with its default beam (5) and
    max_length (250), -batch_size 128; translate.py: Llama 2 greedy."""
    for run in ("transformer-onmt", "lstm-onmt"):
        g = unit("paper", run).decoding
        assert (g.beam, g.max_length, g.batch_size) == (5, 250, 128), run
    g = unit("paper", "llama2-hf").decoding   # greedy, batches sized to the device
    assert (g.beam, g.batch_size) == (1, "auto")
    # the scaled-down profiles decode greedily, as before, in the study's batches
    for profile in ("quick", "tiny"):
        for run in STUDY.profile(profile).runs:
            g = unit(profile, run).decoding
            assert (g.beam, g.batch_size) == (1, 128), (profile, run)


def test_beam_search_options_are_onmt_translates_defaults_of_3_4_3():
    """Beyond the beam the authors passed nothing: length penalty 'avg' with alpha 1,
    no coverage penalty, no minimum length, no n-gram blocking (OpenNMT-py 3.4.3's
    defaults, which the installed toolkit must still have)."""
    from compsuite.toolkit_noise import import_toolkit

    import_toolkit("onmt")
    from onmt.bin.translate import _get_parser

    opt = _get_parser().parse_args(["-model", "m.pt", "-src", "s", "-beam_size", "5"])
    assert (opt.length_penalty, opt.alpha, opt.coverage_penalty, opt.beta, opt.min_length,
            opt.ratio, opt.block_ngram_repeat, opt.n_best, opt.max_length) == (
        "avg", 1.0, "none", 0.0, 0, 0.0, 0, 1, 250)


def test_onmt_translate_is_called_with_the_paper_decoding(tmp_path, monkeypatch):
    from compsuite.foundation.dataset import Dataset
    from compsuite.toolkits.onmt import backend as onmt

    seen = []

    def fake_run(cmd, log, name, **kw):
        seen.append(cmd)
        out = Path(cmd[cmd.index("-output") + 1])
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("x\n")

    monkeypatch.setattr(onmt, "run_logged", fake_run)
    monkeypatch.setattr(onmt, "cuda_available", lambda: False)
    ctx = unit("paper", "transformer-onmt")
    data = Dataset(tmp_path, ("test",), formats={"onmt": tmp_path})
    data.raw.mkdir(parents=True, exist_ok=True)
    for side in ("src", "tgt"):
        (data.raw / f"test.{side}").write_text("x\n")
    onmt.BACKEND.predict({"checkpoint": "model_step_1000.pt"}, data, "test",
                         ctx.decoding, tmp_path / "out", show=False)
    cmd = seen[0]
    assert [cmd[cmd.index(k) + 1] for k in ("-beam_size", "-max_length", "-batch_size")] == [
        "5", "250", "128"]


def test_evaluate_decodes_each_run_with_its_own_settings(tmp_path, monkeypatch):
    """Checkpoint selection and the test and gen sets use the run's decoding (beam 5
    for OpenNMT-py, 1 for Llama 2 in the paper profile), and the result records it."""
    import compsuite.eval.sget.scoring as scoring
    import compsuite.eval.sget.selection as selection

    used = []

    def fake_select(backend, run_dir, data, generation, refs, **kw):
        used.append(("valid", generation.beam))
        return {"checkpoint": "ck", "best_step": 1}

    class Backend:
        def trains(self, run):
            return True

        def predict(self, trained, data, split, generation, out_dir, show=True, wrap=None):
            used.append((split, generation.beam))
            return SimpleNamespace(path=tmp_path / f"{split}.txt")

    monkeypatch.setattr(selection, "select_checkpoint", fake_select)
    monkeypatch.setattr(scoring, "score_split", lambda *a, **k: {})
    for run, beam in (("transformer-onmt", 5), ("llama2-hf", 1)):
        used.clear()
        ctx = unit("paper", run)
        ctx.__dict__.update(data=SimpleNamespace(root=tmp_path), backend=Backend(),
                            run_dir=tmp_path / run, trained={}, show=False, checkpoint=None,
                            threads=1)
        ctx.predict = lambda split, trained, generation, out_dir, b=ctx.backend: b.predict(
            trained, ctx.data, split, generation, out_dir)
        STUDY.evaluate(ctx)
        assert used == [("valid", beam), ("test", beam), ("gen", beam)]


def test_a_runs_generation_names_known_profiles(tmp_path):
    """``runs.<run>.generation`` (a key every study has) is keyed by profile, and its
    settings are checked alone and over the profile's."""
    def edit(r):
        r["runs"]["llama2-hf"]["generation"] = {"papr": {"beam": 1}}

    with pytest.raises(ConfigError, match=r"runs\.llama2-hf\.generation: unknown key "
                                          r"'papr'.*did you mean 'paper'"):
        edited_study(tmp_path, "sget", edit)

    def bad_beam(r):
        r["runs"]["llama2-hf"]["generation"] = {"paper": {"beam": 0}}

    with pytest.raises(ConfigError, match=r"runs\.llama2-hf\.generation\.paper\.beam"):
        edited_study(tmp_path, "sget", bad_beam)


# ----------------------------------------------------------------------------- Llama 2
def llama_settings(tmp_path, monkeypatch, gpu: bool):
    from compsuite.toolkits.hf.backend import settings

    monkeypatch.setenv("LLAMA2_DIR", str(tmp_path))
    return settings(STUDY.run("llama2-hf"), "paper", gpu=gpu)


def test_llama2_fine_tuning_is_the_authors(tmp_path, monkeypatch):
    """lora_llama2.sh + lora.py: LoRA r 8, alpha 32, dropout 0.1 on q_proj and v_proj;
    lr 1e-4, batch 64 (micro-batch 64), 8 epochs, 100 warm-up steps, linear decay,
    adamw_torch, no weight decay, examples cut at 256 tokens, a checkpoint every 200
    updates; fp16 training on an 8-bit model (on a GPU)."""
    from compsuite.toolkits.hf.train import accumulation, training_arguments

    s = llama_settings(tmp_path, monkeypatch, gpu=True)
    assert (s.lora.r, s.lora.alpha, s.lora.dropout, s.lora.target_modules) == (
        8, 32, 0.1, ["q_proj", "v_proj"])
    assert (s.learning_rate, s.batch_size, accumulation(s), s.epochs, s.max_steps,
            s.warmup_steps, s.weight_decay, s.max_length, s.save_steps) == (
        1e-4, 64, 1, 8, None, 100, 0.0, 256, 200)
    assert s.prompt == "### Input: {input} ### Output:\n" and s.kind == "causal"
    assert (s.precision, s.load_in_8bit) == ("fp16", True)
    cpu = llama_settings(tmp_path, monkeypatch, gpu=False)
    assert (cpu.precision, cpu.load_in_8bit) == ("fp32", False)
    args = training_arguments({"out": str(tmp_path / "ck"), "seed": 1, "cuda": False}, cpu)
    assert (str(args.lr_scheduler_type).split(".")[-1].lower(), str(args.optim).split(".")[-1].lower(),
            args.warmup_steps, args.per_device_train_batch_size,
            args.gradient_accumulation_steps, args.num_train_epochs, args.learning_rate,
            args.weight_decay, args.max_grad_norm, args.adam_beta1, args.adam_beta2,
            args.adam_epsilon, args.save_steps) == (
        "linear", "adamw_torch", 100, 64, 1, 8, 1e-4, 0.0, 1.0, 0.9, 0.999, 1e-8, 200)


def test_llama2_answers_are_read_as_translate_py_reads_them(tmp_path, monkeypatch):
    """translate.py keeps what follows the prompt's "### Output:\\n" up to the next one
    (and the end-of-sentence token), stripped; a newline does not end the answer."""
    from compsuite.toolkits.hf.translator import HFTranslator

    s = llama_settings(tmp_path, monkeypatch, gpu=False)
    assert s.stop == ["### Output:\n"] and s.max_new_tokens == 256
    model = SimpleNamespace(meta={"stop": s.stop})
    assert HFTranslator.answer(model, " 猫が走った。") == "猫が走った。"
    assert HFTranslator.answer(model, "猫が走った。\nA dog ran. ### Output:\n犬") == (
        "猫が走った。\nA dog ran.")
    # the stand-in profiles keep their newline stop
    for profile in ("quick", "tiny"):
        from compsuite.toolkits.hf.backend import settings

        assert settings(STUDY.run("llama2-hf"), profile).stop == ["\n"]


# ----------------------------------------------------------------------------- data
def test_paper_data_and_preprocessing_are_the_released_encodings():
    """Sudachi mode C (core dictionary) and sentencepiece BPE, 650 Japanese pieces at
    character coverage 0.995, 300 English at 1.0: what reproduces the released
    data/bpe/*_encoded_sp.txt (tests/test_sget_preprocess.py checks it against them; the
    paper's text swaps the two sizes).  The paper's sizes, one dataset for all seeds."""
    from compsuite.data_prep.sget import preprocess

    paper = STUDY.profile("paper")
    d = paper.settings.data
    assert (d.scale, d.en_vocab, d.ja_vocab, d.released) == (1.0, 300, 650, None)
    assert (preprocess.SUDACHI_MODE, preprocess.SUDACHI_DICT, preprocess.JA_COVERAGE,
            preprocess.EN_COVERAGE) == ("C", "core", 0.995, 1.0)
    assert paper.seeds == [1, 2, 3, 4, 5] and paper.settings.selection.keep == "best"
