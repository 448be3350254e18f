"""The hf toolkit backend (compsuite/toolkits/hf.py) on tiny models built from a config:
training a few steps (LoRA and full), adapter-only checkpoints that reload, batched
generation equal to one-at-a-time generation, the prompt and the answer cut where they
should be, and configuration errors that name the key.  Nothing is downloaded."""
import json
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("peft")

from compsuite.errors import ConfigError  # noqa: E402
from compsuite.registry import Run  # noqa: E402
from compsuite.toolkits import Dataset, get_backend  # noqa: E402
from compsuite.toolkits.hf import Examples, Settings, settings  # noqa: E402

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
    steps = [s for s, _ in backend.checkpoints(root / "lora")]
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
    t = backend.load(ckpt, data, "translator", {"batch_size": 4})
    out = t.translate(["Emma saw Liam.", "Mia found Noah."])
    assert len(out) == 2 and all(isinstance(o, str) for o in out)


def test_full_training_learns_the_pairs_and_cuts_prompt_and_answer(trained):
    data, _, _, full = trained
    t = get_backend("hf").load(full["checkpoint"], data, "translator", {"batch_size": 5})
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
    t = backend.load(full["checkpoint"], data, "translator", {"batch_size": 4})
    batched = t.translate(src)
    assert (t.calls, t.batches) == (1, 3)
    one = backend.load(full["checkpoint"], data, "translator", {"batch_size": 1})
    assert [one.translate([s])[0] for s in src] == batched
    assert one.batches == len(src)


def test_predict_writes_one_line_per_source_and_read_predictions(trained, tmp_path):
    data, _, _, full = trained
    backend = get_backend("hf")
    out = backend.predict(full, data, "test", {"batch_size": 4}, tmp_path, show=False)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6
    assert backend.predict(full, data, "test", {}, tmp_path, show=False) == out  # kept


def test_labels_cover_the_answer_and_its_end_only(tmp_path):
    from compsuite.toolkits.hf import Build, build

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
    from compsuite.toolkits.hf import Build, build

    a = build(dataset(tmp_path / "a"), Build(**TINY), PROMPT, show=False)
    b = build(dataset(tmp_path / "b"), Build(**TINY), PROMPT, show=False)
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_answer_stops_at_the_first_stop_string():
    from compsuite.eval.translators.hf_backend import HFTranslator

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
    from compsuite.toolkits.hf import load_base

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
    from compsuite.toolkits.hf import Build, build, load_base

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
    assert [s for s, _ in backend.checkpoints(tmp_path / "run")] == [2]
    t = backend.load(done["checkpoint"], data, "translator", {"batch_size": 3})
    out = t.translate(["Emma saw Liam.", "Mia found Noah.", "Noah saw Mia.", "Liam saw Mia."])
    assert len(out) == 4 and t.batches == 2


def test_the_paper_llama2_run_takes_a_step_on_a_local_model_folder(tmp_path, monkeypatch):
    """The SGET paper profile's settings (LoRA r 8, alpha 32, on q_proj and v_proj, the
    authors' prompt) load and train one step, with LLAMA2_DIR pointing at a tiny local
    Llama folder standing in for Llama-2-7b."""
    from compsuite.registry import get_study
    from compsuite.toolkits.hf import Build, build

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
    from compsuite.toolkits.hf import accumulation, training_arguments

    s = Settings(model="x", prompt=PROMPT, batch_size=64, micro_batch_size=16)
    assert accumulation(s) == 4 and accumulation(s, 4) == 1 and accumulation(s, 2) == 2
    with pytest.raises(ConfigError, match="not a multiple of micro_batch_size 16 x 3"):
        accumulation(s, 3)
    args = training_arguments({"out": str(tmp_path), "seed": 1, "cuda": False}, s)
    assert (args.per_device_train_batch_size, args.gradient_accumulation_steps) == (16, 4)
