"""The hf toolkit backend (compsuite/toolkits/hf/) on tiny models built from a config:
training a few steps (LoRA and full), adapter-only checkpoints that reload, batched
generation equal to one-at-a-time generation, the prompt and the answer cut where they
should be, and configuration errors that name the key.  Nothing is downloaded."""
import json
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("peft")

from compsuite.foundation.dataset import Dataset  # noqa: E402
from compsuite.foundation.errors import ConfigError  # noqa: E402
from compsuite.models.protocol import counted  # noqa: E402
from compsuite.models.decoding import Decoding, decoding  # noqa: E402
from compsuite.studies.base import Run  # noqa: E402
from compsuite.toolkits import get_backend  # noqa: E402
from compsuite.toolkits.hf.train import Examples
from compsuite.toolkits.hf.backend import Settings, settings  # noqa: E402

PROMPT = "### Input: {input} ### Output:\n"
NAMES = {"Emma": "エマ", "Liam": "リアム", "Noah": "ノア", "Mia": "ミア"}
VERBS = {"saw": "見た", "found": "見つけた"}
TINY = {"architecture": "llama", "tokenizer_vocab": 300,
        "config": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                   "num_attention_heads": 2, "num_key_value_heads": 2,
                   "max_position_embeddings": 128, "tie_word_embeddings": True}}


def pairs() -> list[tuple[str, str]]:
    return [(f"{a} {v} {b}.", f"{NAMES[a]}が{NAMES[b]}を{VERBS[v]}。")
            for a in NAMES for b in NAMES for v in VERBS if a != b]


def dataset(root: Path, n_train: int | None = None) -> Dataset:
    rows = pairs()[:n_train]
    text = root / "plain"
    text.mkdir(parents=True, exist_ok=True)
    for split, part in (("train", rows), ("valid", rows[:6]), ("test", rows[:6])):
        (text / f"{split}.src").write_text("".join(s + "\n" for s, _ in part), encoding="utf-8")
        (text / f"{split}.tgt").write_text("".join(t + "\n" for _, t in part), encoding="utf-8")
    return Dataset(root, ("train", "valid", "test"), text=text)


def run(**args) -> Run:
    return Run("llama-hf", "llama", "hf", args={"build": TINY, "prompt": PROMPT, **args})


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Two trainings on the same data and stand-in: LoRA a few steps, and full
    training long enough to learn the training pairs by heart."""
    root = tmp_path_factory.mktemp("hf")
    data = dataset(root / "data")
    backend = get_backend("hf")
    lora = backend.train(run(lora={"r": 4, "alpha": 8, "dropout": 0.0}, learning_rate=0.01,
                             batch_size=8, max_steps=4, save_steps=2, max_new_tokens=16),
                         "tiny", data, root / "lora", 1, show=False)
    full = backend.train(run(learning_rate=0.01, batch_size=8, epochs=40, warmup_steps=5,
                             max_new_tokens=24),
                         "tiny", data, root / "full", 1, show=False)
    return data, root, lora, full


def test_lora_checkpoints_hold_the_adapter_only_and_reload(trained):
    data, root, lora, _ = trained
    backend = get_backend("hf")
    steps = [c.at for c in backend.checkpoints(root / "lora", "step")]
    assert steps == [2, 4]
    ckpt = Path(lora["checkpoint"])
    names = {p.name for p in ckpt.iterdir()}
    assert {"adapter_model.safetensors", "adapter_config.json", "compsuite_hf.json"} <= names
    assert not any(n.startswith("model") and n.endswith(".safetensors") for n in names)
    base = json.loads((ckpt / "adapter_config.json").read_text())["base_model_name_or_path"]
    assert Path(base) == Path(lora["base"]) and (Path(base) / "config.json").is_file()
    # the adapter changes the model: its outputs differ from the base model's (LoRA's B
    # starts at zero; four updates at lr 0.01 move it)
    from safetensors.torch import load_file

    weights = load_file(ckpt / "adapter_model.safetensors")
    assert any("lora_B" in k and float(v.abs().max()) > 0 for k, v in weights.items())
    t = backend.load(ckpt, data, "translator", decoding({"batch_size": 4}))
    out = t.translate(["Emma saw Liam.", "Mia found Noah."])
    assert len(out) == 2 and all(isinstance(o, str) for o in out)


def test_full_training_learns_the_pairs_and_cuts_prompt_and_answer(trained):
    data, _, _, full = trained
    t = get_backend("hf").load(full["checkpoint"], data, "translator", decoding({"batch_size": 5}))
    src, ref = zip(*pairs())
    hyps = t.translate(list(src))
    # the answer alone: no prompt, no end-of-sentence token, no text after the stop
    assert not any("###" in h or "Input" in h or "</s>" in h or "\n" in h for h in hyps)
    right = sum(h == r for h, r in zip(hyps, ref))
    assert right >= 0.9 * len(ref), list(zip(hyps, ref))[:5]


def test_batched_generation_equals_one_at_a_time(trained):
    data, _, _, full = trained
    backend = get_backend("hf")
    src = [s for s, _ in pairs()][:11]
    t = counted(backend.load(full["checkpoint"], data, "translator", decoding({"batch_size": 4})))
    batched = t.translate(src)
    assert (t.calls, t.batches) == (1, 3)
    one = counted(backend.load(full["checkpoint"], data, "translator", decoding({"batch_size": 1})))
    assert [one.translate([s])[0] for s in src] == batched
    assert one.batches == len(src)


def test_predict_writes_one_line_per_source_and_returns_the_predictions(trained, tmp_path):
    data, _, _, full = trained
    backend = get_backend("hf")
    preds = backend.predict(full, data, "test", decoding({"batch_size": 4}), tmp_path, show=False)
    lines = preds.path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6 and preds.hypotheses == lines and len(preds.references) == 6
    # kept, read back
    again = backend.predict(full, data, "test", Decoding(), tmp_path, show=False)
    assert again.path == preds.path and again.hypotheses == preds.hypotheses


def test_labels_cover_the_answer_and_its_end_only(tmp_path):
    from compsuite.toolkits.hf.backend import Build, build

    data = dataset(tmp_path / "data")
    folder = build(data, Build(**TINY), PROMPT, show=False)
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    s = Settings(build=Build(**TINY), prompt=PROMPT)
    ex = Examples(tok, ["Emma saw Liam."], ["エマがリアムを見た。"], s)
    item = ex[0]
    answer = [i for i, lab in zip(item["input_ids"], item["labels"]) if lab != -100]
    assert answer[-1] == tok.eos_token_id
    assert tok.decode(answer[:-1]) == "エマがリアムを見た。"
    prompt = [i for i, lab in zip(item["input_ids"], item["labels"]) if lab == -100]
    assert prompt[0] == tok.bos_token_id
    assert tok.decode(prompt[1:]) == PROMPT.format(input="Emma saw Liam.")
    # cut at max_length, and counted
    short = Examples(tok, ["Emma saw Liam."], ["エマがリアムを見た。"],
                     Settings(build=Build(**TINY), prompt=PROMPT, max_length=5))
    assert len(short[0]["input_ids"]) == 5 and short.cut == 1


def test_the_stand_in_is_built_once_the_same_bytes(tmp_path):
    from compsuite.toolkits.hf.backend import Build, build

    a = build(dataset(tmp_path / "a"), Build(**TINY), PROMPT, show=False)
    b = build(dataset(tmp_path / "b"), Build(**TINY), PROMPT, show=False)
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_answer_stops_at_the_first_stop_string():
    from compsuite.toolkits.hf.translator import HFTranslator

    t = HFTranslator.__new__(HFTranslator)
    t.meta = {"stop": ["\n", "###"]}
    assert t.answer(" エマが来た。\n### Input: x") == "エマが来た。"
    assert t.answer("a ### b") == "a"
    t.meta = {"stop": []}
    assert t.answer(" a\nb ") == "a\nb"


# ----------------------------------------------------------------------------- configuration errors
def test_no_model_and_no_build_names_the_key():
    with pytest.raises(ConfigError, match=r"runs\.r\.args\.model: give the model's local folder"):
        settings(Run("r", "llama2", "hf", args={"prompt": PROMPT}), "paper")


def test_unset_model_variable_names_the_file_and_key(monkeypatch):
    """The SGET paper profile's Llama 2 run without ${LLAMA2_DIR}."""
    from compsuite.registry import get_study

    monkeypatch.delenv("LLAMA2_DIR", raising=False)
    r = get_study("sget").run("llama2-hf")
    with pytest.raises(ConfigError, match=r"sget\.yaml: runs\.llama2-hf\.args\.model: .*"
                                          "LLAMA2_DIR, which is not set"):
        settings(r, "paper")
    assert settings(r, "quick").build is not None   # the stand-in needs no folder


def test_missing_model_folder_names_the_key(tmp_path):
    r = Run("r", "llama2", "hf", args={"model": str(tmp_path / "nope"), "prompt": PROMPT})
    with pytest.raises(ConfigError, match=r"runs\.r\.args\.model: .*nope: no such file"):
        settings(r, "paper")


def test_a_folder_that_is_no_model_is_a_config_error(tmp_path):
    from compsuite.toolkits.hf.train import load_base

    (tmp_path / "empty").mkdir()
    s = Settings(model=str(tmp_path / "empty"), prompt=PROMPT)
    with pytest.raises(ConfigError, match="not a model folder transformers can load"):
        load_base(str(tmp_path / "empty"), s, cuda=False)


@pytest.mark.parametrize("args, match", [
    ({"prompt": "no input here"}, r"args\.prompt: the template has no \{input\}"),
    ({"lora": {"r": 0}}, r"args\.lora\.r must be a positive integer"),
    ({"kind": "encoder"}, r"args\.kind"),
    ({"batch_size": 64, "micro_batch_size": 48}, r"args\.micro_batch_size: 48 does not divide"),
    ({"learning_rat": 1}, r"unknown key 'learning_rat'"),
])
def test_bad_settings_name_the_key(args, match):
    with pytest.raises(ConfigError, match=match):
        settings(run(**args), "tiny")


def test_a_profile_override_merges_and_null_removes(monkeypatch):
    monkeypatch.setenv("LLAMA2_DIR", "/")
    r = Run("llama2-hf", "llama2", "hf",
            args={"model": "${LLAMA2_DIR}", "prompt": PROMPT, "lora": {"r": 8}},
            profiles={"quick": {"model": None, "build": TINY, "lora": None}})
    assert settings(r, "paper").lora.r == 8 and settings(r, "paper").model == "/"
    q = settings(r, "quick")
    assert q.model is None and q.lora is None and q.build.architecture == "llama"


def test_load_in_8bit_needs_a_gpu(tmp_path):
    from compsuite.toolkits.hf.backend import Build, build
    from compsuite.toolkits.hf.train import load_base

    folder = build(dataset(tmp_path / "d"), Build(**TINY), PROMPT, show=False)
    s = Settings(model=str(folder), prompt=PROMPT, load_in_8bit=True)
    with pytest.raises(ConfigError, match="load_in_8bit: needs a CUDA GPU"):
        load_base(str(folder), s, cuda=False)


def test_a_dataset_without_plain_text_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="reads plain text"):
        get_backend("hf").write_data(Dataset(tmp_path))


def test_seq2seq_stand_in_trains_and_translates(tmp_path):
    data = dataset(tmp_path / "data", n_train=8)
    t5 = {"architecture": "t5", "tokenizer_vocab": 300,
          "config": {"d_model": 32, "d_ff": 64, "d_kv": 16, "num_layers": 1, "num_heads": 2}}
    r = Run("t5-hf", "t5", "hf", args={"build": t5, "kind": "seq2seq", "prompt": "{input}",
                                        "learning_rate": 0.01, "batch_size": 4, "max_steps": 2,
                                        "save_steps": 2, "max_new_tokens": 8})
    backend = get_backend("hf")
    done = backend.train(r, "tiny", data, tmp_path / "run", 1, show=False)
    assert [c.at for c in backend.checkpoints(tmp_path / "run")] == [2]
    t = counted(backend.load(done["checkpoint"], data, "translator", decoding({"batch_size": 3})))
    out = t.translate(["Emma saw Liam.", "Mia found Noah.", "Noah saw Mia.", "Liam saw Mia."])
    assert len(out) == 4 and t.batches == 2


def test_the_paper_llama2_run_takes_a_step_on_a_local_model_folder(tmp_path, monkeypatch):
    """The SGET paper profile's settings (LoRA r 8, alpha 32, on q_proj and v_proj, the
    authors' prompt) load and train one step, with LLAMA2_DIR pointing at a tiny local
    Llama folder standing in for Llama-2-7b."""
    from compsuite.registry import get_study
    from compsuite.toolkits.hf.backend import Build, build

    data = dataset(tmp_path / "data", n_train=8)
    folder = build(data, Build(**TINY), PROMPT, show=False)
    monkeypatch.setenv("LLAMA2_DIR", str(folder))
    r = get_study("sget").run("llama2-hf")
    s = settings(r, "paper")
    assert (s.lora.r, s.lora.alpha, s.lora.dropout, s.learning_rate, s.batch_size, s.epochs) == (
        8, 32, 0.1, 1e-4, 64, 8)
    assert s.prompt == PROMPT and s.model == str(folder)
    backend = get_backend("hf")
    done = backend.train(r, "paper", data, tmp_path / "run", 1,
                         extra={"max_steps": 1, "save_steps": 1, "batch_size": 4}, show=False)
    ckpt = Path(done["checkpoint"])
    assert ckpt.name == "checkpoint-1" and (ckpt / "adapter_model.safetensors").is_file()
    assert done["stand_in"] is None and done["base"] == str(folder)


def test_sget_score_takes_an_hf_checkpoint_folder(trained, tmp_path, capsys):
    """``compsuite eval sget score --checkpoint <hf checkpoint>`` translates the plain
    English of --data (the model's own tokenizer; no --encoded needed)."""
    from compsuite.cli import main

    _, _, _, full = trained
    folder = tmp_path / "sget"
    folder.mkdir()
    (folder / "test.txt").write_text("".join(f"{s}\t{t}\tin_distribution\n" for s, t in pairs()),
                                     encoding="utf-8")
    assert main(["eval", "sget", "score", "--data", str(folder), "--split", "test",
                 "--checkpoint", full["checkpoint"], "--no-partial", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["n"] == len(pairs()) and res["exact_match"] >= 0.9


def test_an_interrupted_training_resumes_from_its_newest_checkpoint(tmp_path):
    import shutil

    data = dataset(tmp_path / "data", n_train=8)
    r = run(lora={"r": 4, "alpha": 8, "dropout": 0.0}, learning_rate=0.01, batch_size=4,
            max_steps=4, save_steps=2)
    backend = get_backend("hf")
    backend.train(r, "tiny", data, tmp_path / "run", 1, show=False)
    # as if stopped after the checkpoint of step 2: no train.json, no checkpoint-4
    (tmp_path / "run" / "train.json").unlink()
    shutil.rmtree(tmp_path / "run" / "checkpoints" / "checkpoint-4")
    (tmp_path / "run" / "train.log").unlink()
    done = backend.train(r, "tiny", data, tmp_path / "run", 1, show=False)
    log = (tmp_path / "run" / "train.log").read_text()
    steps = [int(line.split()[1].split("/")[0]) for line in log.splitlines()
             if line.startswith("step ")]
    assert steps == [3, 4], log[-2000:]     # steps 1 and 2 were not trained again
    assert Path(done["checkpoint"]).name == "checkpoint-4"


def test_accumulation_keeps_the_batch_over_several_processes(tmp_path):
    """torchrun's WORLD_SIZE processes: batch 64 over 4 processes of 16 is no
    accumulation; a batch the processes cannot divide is refused."""
    from compsuite.toolkits.hf.train import accumulation, training_arguments

    s = Settings(model="x", prompt=PROMPT, batch_size=64, micro_batch_size=16)
    assert accumulation(s) == 4 and accumulation(s, 4) == 1 and accumulation(s, 2) == 2
    with pytest.raises(ConfigError, match="not a multiple of micro_batch_size 16 x 3"):
        accumulation(s, 3)
    args = training_arguments({"out": str(tmp_path), "seed": 1, "cuda": False}, s)
    assert (args.per_device_train_batch_size, args.gradient_accumulation_steps) == (16, 4)


# ----------------------------------------------------------------------------- the model's positions
WORDS = "a man sees the dog cat sleeps runs and".split()


def tiny_gpt2(folder: Path, positions: int) -> Path:
    """A GPT-2 of ``positions`` learned positions (d 16, one layer), random weights."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from compsuite.toolkits.hf.backend import train_tokenizer

    tok = train_tokenizer([" ".join(WORDS)] * 4, 300)
    cfg = GPT2Config(vocab_size=len(tok), n_positions=positions, n_embd=16, n_layer=1,
                     n_head=2, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                     pad_token_id=tok.pad_token_id)
    torch.manual_seed(0)
    GPT2LMHeadModel(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def tiny_bert(folder: Path, positions: int) -> Path:
    """A BERT sentence-pair classifier of ``positions`` positions, random weights."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    from compsuite.toolkits.hf.backend import train_tokenizer

    tok = train_tokenizer([" ".join(WORDS)] * 4, 300)
    labels = {0: "entailment", 1: "neutral", 2: "contradiction"}
    cfg = BertConfig(vocab_size=len(tok), hidden_size=8, num_hidden_layers=1,
                     num_attention_heads=2, intermediate_size=16,
                     max_position_embeddings=positions, pad_token_id=tok.pad_token_id,
                     num_labels=3, id2label=labels, label2id={v: k for k, v in labels.items()})
    torch.manual_seed(0)
    BertForSequenceClassification(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def test_a_gpt2_is_held_to_its_positions(tmp_path):
    """n_positions 24: a prompt that leaves no position is an error naming the input
    before any batch is decoded (it was an IndexError inside generate); generation
    stops where the positions end, batched as one at a time."""
    from compsuite.toolkits.hf.translator import prompt_ids
    from compsuite.foundation.errors import DataError

    folder = tiny_gpt2(tmp_path / "gpt2", 24)
    backend = get_backend("hf")
    t = counted(backend.load(folder, None, "translator",
                             decoding({"max_new_tokens": 256, "batch_size": 4})))
    long = " ".join(WORDS * 3)
    with pytest.raises(DataError, match=r"gpt2: input 2 of 3 \('a man sees .*'\) is \d+ tokens "
                                        r"with its prompt, leaving no position .* at most 24 "
                                        r"\(n_positions 24"):
        t.translate(["a man", long, "the dog"])
    assert t.batches == 0 and t.limit == (24, "n_positions 24 in its config.json")
    n = len(prompt_ids(t.tokenizer, "a man sees the dog", True))
    assert t.room(n) == 24 - n and t.room(23) == 1 and t.room(24) == 0
    asked = []
    generate = t.model.generate

    def spy(**kw):
        asked.append((kw["input_ids"].shape[1], kw["max_new_tokens"]))
        return generate(**kw)
    t.model.generate = spy
    src = ["a man", "a man sees the dog and the cat", "the dog"]
    batched = t.translate(src)
    assert asked and all(width + new <= 24 for width, new in asked)
    one = backend.load(folder, None, "translator",
                       decoding({"max_new_tokens": 256, "batch_size": 1}))
    assert [one.translate([s])[0] for s in src] == batched


def test_a_bert_classifier_is_held_to_its_positions(tmp_path):
    """max_position_embeddings 16: a pair longer than that is an error naming it before
    any batch is classified (it was a RuntimeError inside the model)."""
    from compsuite.foundation.errors import DataError

    folder = tiny_bert(tmp_path / "bert", 16)
    c = counted(get_backend("hf").load(folder, None, "classifier"))
    assert len(c.classify([("a man sleeps", "a man runs")])) == 1
    c.batches = 0
    with pytest.raises(DataError, match=r"bert: input 2 of 2 \('a man sees .* \| the dog'\) is "
                                        r"\d+ tokens .* at most 16 \(max_position_embeddings"):
        c.classify([("a man", "a dog"), (" ".join(WORDS * 2), "the dog")])
    with pytest.raises(DataError, match="input 1 of 1"):
        c.features([" ".join(WORDS * 2)])
    assert c.batches == 0


def test_position_limit_reads_the_config_and_a_real_tokenizer_limit():
    from types import SimpleNamespace

    from transformers import GPT2Config, LlamaConfig, RobertaConfig, T5Config

    from compsuite.toolkits.hf.translator import position_limit  # noqa

    none = SimpleNamespace(model_max_length=int(1e30))
    assert position_limit(GPT2Config(n_positions=64), none)[0] == 64
    assert position_limit(LlamaConfig(max_position_embeddings=128), none)[0] == 128
    # RoBERTa's positions start after the padding id: 514 rows, 512 tokens
    assert position_limit(RobertaConfig(max_position_embeddings=514, pad_token_id=1),
                          none)[0] == 512
    assert position_limit(T5Config(), none) is None      # relative positions
    assert position_limit(T5Config(), SimpleNamespace(model_max_length=512)) == (
        512, "model_max_length 512 of its tokenizer")
    assert position_limit(GPT2Config(n_positions=64),
                          SimpleNamespace(model_max_length=32))[0] == 32


def test_training_cuts_examples_at_the_models_positions(tmp_path, capsys):
    """max_length 256 on a GPT-2 of 16 positions: lowered to 16, with a notice (the
    training was an IndexError)."""
    from dataclasses import asdict

    from compsuite.toolkits.hf.train import train_from_config

    folder = tiny_gpt2(tmp_path / "gpt2", 16)
    (tmp_path / "train.src").write_text(" ".join(WORDS * 3) + "\na man\n")
    (tmp_path / "train.tgt").write_text(" ".join(WORDS * 3) + "\nthe dog\n")
    s = Settings(model=str(folder), prompt="{input} =", max_steps=1, batch_size=2,
                 save_steps=1, max_length=256)
    cfg = {"settings": asdict(s), "base": str(folder), "seed": 1, "cuda": False,
           "train": [str(tmp_path / "train.src"), str(tmp_path / "train.tgt")],
           "out": str(tmp_path / "run" / "checkpoints")}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    train_from_config(tmp_path / "config.json")
    out = capsys.readouterr().out
    assert "max_length 256 lowered to 16" in out and "1 cut at 16 tokens" in out
    assert (tmp_path / "run" / "checkpoints" / "checkpoint-1" / "compsuite_hf.json").is_file()


# ----------------------------------------------------------------------------- the user's folder named
def test_a_junk_config_is_not_a_model_config_naming_the_users_folder(tmp_path):
    """A config.json that is JSON but no model's was taken for a causal LM, and the
    classifier's error named the run's own folder."""
    from compsuite.foundation.errors import DataError

    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "config.json").write_text('{"hello": 1}')
    backend = get_backend("hf")
    r = Run("system", "system", "hf", args={"model": str(junk), "train": False},
            source="the command line")
    with pytest.raises(ConfigError, match=rf"runs\.system\.args\.model: {junk}/config\.json: not "
                                          "a model's config \\(it names no model_type"):
        backend.train(r, "tiny", Dataset(tmp_path), tmp_path / "run", 1, show=False)
    gpt2 = tiny_gpt2(tmp_path / "gpt2", 24)
    r = Run("system", "system", "hf", args={"model": str(gpt2), "train": False})
    done = backend.train(r, "tiny", Dataset(tmp_path), tmp_path / "run2", 1, show=False)
    with pytest.raises(DataError) as e:
        backend.load(done["checkpoint"], None, "classifier")
    assert str(e.value).startswith(f"{gpt2.resolve()}: a causal language model, not a "
                                   "sequence classifier")
    bert = tiny_bert(tmp_path / "bert", 16)
    r = Run("system", "system", "hf", args={"model": str(bert), "train": False})
    done = backend.train(r, "tiny", Dataset(tmp_path), tmp_path / "run3", 1, show=False)
    with pytest.raises(DataError) as e:
        backend.load(done["checkpoint"], None, "translator")
    assert str(e.value).startswith(f"{bert.resolve()}: a sequence-classification model, not a "
                                   "translator")


# ----------------------------------------------------------------------------- decoding at scale
LONGER = ["Emma saw Liam and Mia found Noah.", "Liam.", "Noah found Emma, Mia saw Liam, "
          "Emma found Mia.", "Mia saw Noah."]


def test_adapters_swap_on_one_loaded_base(trained, monkeypatch):
    """Selection decodes every saved adapter: the base is loaded once and each adapter
    loaded onto it; the answers are those of a base loaded afresh for each."""
    from transformers import AutoModelForCausalLM

    from compsuite.toolkits.hf.translator import SharedBase

    data, root, _, _ = trained
    backend = get_backend("hf")
    ckpts = [c.path for c in backend.checkpoints(root / "lora", "step")]
    loads = []
    real = AutoModelForCausalLM.from_pretrained
    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained",
                        lambda *a, **k: loads.append(a[0]) or real(*a, **k))
    monkeypatch.setattr(SharedBase, "_kept", None)
    src = [s for s, _ in pairs()][:7] + LONGER
    swapped = [backend.load(c, data, "translator", decoding({"batch_size": 4})).translate(src)
               for c in ckpts]
    assert len(loads) == 1 and len(SharedBase._kept.adapters) == 2
    fresh = []
    for c in ckpts:
        SharedBase._kept = None
        fresh.append(backend.load(c, data, "translator",
                                  decoding({"batch_size": 4})).translate(src))
    assert len(loads) == 3 and fresh == swapped


def test_selection_on_a_sample_decodes_its_lines_as_in_full(trained, tmp_path):
    """SGET's selection with a sample on the hf backend's adapters: each adapter's sample
    lines are the lines its whole development decoding gives, and the finalists are
    decoded in full on the one loaded base."""
    import shutil

    from compsuite.eval.sget.selection import sample_lines, select_checkpoint

    data, root, _, full = trained
    backend = get_backend("hf")
    lines = sample_lines(6, 3, seed=1)
    for ckpt in [c.path for c in backend.checkpoints(root / "lora", "step")]:
        settings = decoding({"batch_size": 4})
        whole = backend.predict({"checkpoint": str(ckpt)}, data, "valid", settings,
                                tmp_path / ckpt.name, show=False).hypotheses
        assert backend.predict_lines({"checkpoint": str(ckpt)}, data, "valid", lines,
                                     settings, tmp_path / "s" / ckpt.name) == [
            whole[i] for i in lines]
    run_dir = tmp_path / "run"
    shutil.copytree(root / "lora", run_dir)
    shutil.rmtree(run_dir / "selection", ignore_errors=True)
    (run_dir / "selection.json").unlink(missing_ok=True)
    sel = select_checkpoint(backend, run_dir, data, decoding({"batch_size": 4}),
                            data.text / "valid.tgt", sample=3, finalists=1)
    assert set(sel["sample"]["by_step"]) == {"2", "4"} and sel["sample"]["n"] == 3
    assert set(sel["by_step"]) <= {"2", "4"} and str(sel["best_step"]) in sel["by_step"]
    assert sorted(p.name for p in (run_dir / "selection").rglob("pred-valid*.txt")) == sorted(
        ["pred-valid.sample3.txt"] * 2 + ["pred-valid.txt"] * len(sel["by_step"]))


@pytest.mark.parametrize("setting", ["merge", "sort", "stop_early"])
def test_merged_sorted_and_stopped_early_give_the_same_answers(trained, setting):
    """In float32 on the CPU: an adapter merged into a copy of its base, inputs sorted by
    length, greedy generation stopped at the stop string: each gives the answers of the
    plain way (unmerged, in input order, to the end-of-sentence token or the cap)."""
    from compsuite.toolkits.hf.translator import HFTranslator

    data, root, _, full = trained
    src = [s for s, _ in pairs()] + LONGER
    adapters = [c.path for c in get_backend("hf").checkpoints(root / "lora", "step")]
    for ckpt in adapters + [Path(full["checkpoint"])]:
        new = HFTranslator(ckpt, batch_size=5, **{setting: True})
        old = HFTranslator(ckpt, batch_size=5, **{setting: False})
        assert new.translate(src) == old.translate(src), (ckpt, setting)
        if setting == "merge" and ckpt in adapters:   # merged: no LoRA layer decodes
            assert not any("lora" in n for n, _ in new.model.named_parameters())
            assert any("lora" in n for n, _ in old.model.named_parameters())


def test_generation_stops_once_the_answer_holds_a_stop(trained):
    """The criterion reads the generated tokens only: the prompt's own newline stops
    nothing; a newline in the answer stops that prompt, not its neighbours."""
    import torch

    from compsuite.toolkits.hf.translator import StopAtAnswerEnd, prompt_ids

    _, _, _, full = trained
    t = get_backend("hf").load(full["checkpoint"], None, "translator", Decoding())
    tok = t.tokenizer
    prompt = prompt_ids(tok, PROMPT.format(input="Emma saw Liam."), True)
    assert "\n" in tok.decode(prompt)

    answers = [tok(a, add_special_tokens=False)["input_ids"]
               for a in ("エマが", "エマが\nリアム", "エマ")]
    m = max(map(len, answers))   # a batch's answers: as long as each other (padding after)
    ids = torch.tensor([prompt + a + [tok.pad_token_id] * (m - len(a)) for a in answers])
    stop = StopAtAnswerEnd(tok, ["\n"], len(prompt))   # one per generate call
    assert stop(ids, None).tolist() == [False, True, False]
    # a row found done stays done and is not read again at the next step
    assert stop(ids[[0, 0, 2]], None).tolist() == [False, True, False]
    first = StopAtAnswerEnd(tok, ["\n"], len(prompt))
    assert first(ids[:, :len(prompt) + 1], None).tolist() == [False, False, False]


def test_answer_room_comes_from_the_data_unless_set(trained, tmp_path):
    import shutil

    from compsuite.toolkits.hf.translator import META, answer_room

    data, _, _, full = trained
    backend = get_backend("hf")
    refs = (data.text / "valid.tgt").read_text(encoding="utf-8").splitlines()
    t = backend.load(full["checkpoint"], data, "translator", Decoding())
    assert t.max_new_tokens == 24                   # the run's own max_new_tokens
    assert backend.load(full["checkpoint"], data, "translator",
                        decoding({"max_new_tokens": 7})).max_new_tokens == 7
    longest = max(len(t.tokenizer(r, add_special_tokens=False)["input_ids"]) for r in refs)
    assert answer_room(t.tokenizer, refs) == longest + 16
    assert answer_room(t.tokenizer, ["x " * 200]) > 200 * 5 // 4 - 1
    # a run that sets none: the development targets decide; without data, 256
    unset = shutil.copytree(full["checkpoint"], tmp_path / "unset")
    meta = json.loads((unset / META).read_text())
    (unset / META).write_text(json.dumps({**meta, "max_new_tokens": None}))
    assert backend.load(unset, data, "translator", Decoding()).max_new_tokens == longest + 16
    assert backend.load(unset, None, "translator", Decoding()).max_new_tokens == 256
