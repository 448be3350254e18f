"""A local Hugging Face model prompted as a served one (compsuite/toolkits/hf/prompted.py):
prompts tokenized as ``transformers serve`` tokenizes them (the text with the
tokenizer's special tokens; messages through the tokenizer's chat template), k-shot
demonstrations from a small dataset, an evaluate-only run's answers kept raw beside
what was read from them, its usage, the prompting settings merged key by key, the
constrained answer of a classification, and THE IDENTITY: the real ``transformers
serve`` serving the same tiny model answers every prompt (zero- and k-shot,
completions and chat, greedy, the same max_tokens and stop strings) exactly as the hf
backend does locally.  The tiny model is built here from a config, with a byte-level
BPE tokenizer trained offline; nothing is downloaded.

The server is started by tests/served_server.py's :class:`Served`, as in the served
backend's tests."""
import argparse
import json
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from compsuite.foundation.dataset import Dataset  # noqa: E402
from compsuite.foundation.errors import ConfigError  # noqa: E402
from compsuite.models.decoding import decoding  # noqa: E402
from compsuite.models.prompting import Prompter, prompt_spec  # noqa: E402
from compsuite.models.protocol import counted  # noqa: E402
from compsuite.studies.base import Run  # noqa: E402
from compsuite.toolkits import get_backend  # noqa: E402
from compsuite.toolkits.hf.backend import settings  # noqa: E402

TRAIN = [("jump twice", "JUMP JUMP"), ("walk left", "LTURN WALK"), ("run thrice", "RUN RUN RUN"),
         ("look right", "RTURN LOOK"), ("jump and walk", "JUMP WALK"),
         ("walk twice", "WALK WALK"), ("turn left", "LTURN"), ("look and run", "LOOK RUN")]
TEST = [("jump thrice", "JUMP JUMP JUMP"), ("walk right", "RTURN WALK"),
        ("run and look", "RUN LOOK"), ("look twice", "LOOK LOOK"), ("turn right", "RTURN"),
        ("jump left", "LTURN JUMP")]
WORDS = ("jump walk run look turn left right twice thrice and after opposite around JUMP "
         "WALK RUN LOOK LTURN RTURN yes no maybe").split()
#: a chat template of the tiny model's own (its tokenizer carries it, as a chat model's does)
CHAT = ("{{ bos_token }}{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n"
        "{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}")
TEMPLATE = "IN: {input} OUT:"


# ----------------------------------------------------------------------------- the tiny model
def build_tiny(folder: Path) -> Path:
    """A 2-layer Llama (d 32) with random weights under a fixed seed, and a byte-level
    BPE tokenizer (400 tokens) trained on a few hundred lines of the data's words, which
    adds ``<s>`` before a text (as Llama's does) and has :data:`CHAT` as its chat
    template.  Its weights are scaled (init 0.06, the end-of-sentence and line-break rows
    of the output layer doubled; no single bytes, ``<unk>`` or ``<s>`` ever answered) so
    that its greedy answers differ from input to input, and some end early (``</s>``) or
    hold a line break."""
    import random

    import torch
    from tokenizers import processors
    from transformers import LlamaConfig, LlamaForCausalLM

    from compsuite.toolkits.hf.backend import train_tokenizer

    rng = random.Random(0)
    tok = train_tokenizer([" ".join(rng.choice(WORDS) for _ in range(8)) for _ in range(200)],
                          400)
    tok._tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", tok.bos_token_id)])
    tok.chat_template = CHAT
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=256, initializer_range=0.06,
                      pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                      eos_token_id=tok.eos_token_id)
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg).eval()
    vocab = tok.get_vocab()
    with torch.no_grad():
        head = model.lm_head.weight
        for token, i in vocab.items():
            if (len(token) == 1 and token != "Ċ") or i in (tok.unk_token_id, tok.bos_token_id):
                head[i] = 0.0
        head[vocab["Ċ"]] *= 2
        head[tok.eos_token_id] *= 2
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def make_dataset(root: Path) -> Dataset:
    text = root / "plain"
    text.mkdir(parents=True, exist_ok=True)
    for split, rows in (("train", TRAIN), ("valid", TEST), ("test", TEST)):
        (text / f"{split}.src").write_text("".join(s + "\n" for s, _ in rows), encoding="utf-8")
        (text / f"{split}.tgt").write_text("".join(t + "\n" for _, t in rows), encoding="utf-8")
    return Dataset(root, ("train", "valid", "test"), text=text)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf_prompting")
    return build_tiny(root / "model"), make_dataset(root / "data")


def spec(**keys):
    return prompt_spec({"template": TEMPLATE, "max_tokens": 12, **keys}, "test")


def lm(model, s, data=None, **kw):
    from compsuite.toolkits.hf.prompted import PromptedLM

    return PromptedLM(model, s, data, **kw)


# ----------------------------------------------------------------------------- prompts as tokens
def test_a_completion_prompt_is_the_text_with_the_tokenizers_own_special_tokens(tiny):
    folder, _ = tiny
    m = lm(folder, spec())
    [p] = Prompter(m.spec).prompts(["jump twice"])
    assert p.text == "IN: jump twice OUT:"
    tok = m.tokenizer
    ids = m.encode(p)
    # what /v1/completions does: tokenizer(prompt), here <s> and the text's own tokens
    assert ids == [tok.bos_token_id] + tok("IN: jump twice OUT:", add_special_tokens=False)[
        "input_ids"]
    assert tok.decode(ids) == "<s>IN: jump twice OUT:"


def test_a_chat_prompt_goes_through_the_tokenizers_chat_template(tiny, tmp_path):
    folder, _ = tiny
    m = lm(folder, spec(chat=True, instruction="Translate."))
    [p] = Prompter(m.spec).prompts(["jump twice"])
    assert p.messages == ({"role": "system", "content": "Translate."},
                          {"role": "user", "content": "IN: jump twice OUT:"})
    tok = m.tokenizer
    by_hand = "<s><system>Translate.\n<user>IN: jump twice OUT:\n<assistant>"
    assert m.encode(p) == tok(by_hand, add_special_tokens=False)["input_ids"]
    assert tok.decode(m.encode(p)) == by_hand
    # a tokenizer without a chat template: an error naming the folder, before any prompt
    bare = tmp_path / "bare"
    import shutil

    shutil.copytree(folder, bare)
    (bare / "chat_template.jinja").unlink(missing_ok=True)
    cfg = json.loads((bare / "tokenizer_config.json").read_text())
    cfg.pop("chat_template", None)
    (bare / "tokenizer_config.json").write_text(json.dumps(cfg))
    with pytest.raises(ConfigError, match=rf"{bare}: prompting.chat is true, but its "
                                          "tokenizer has no chat template"):
        lm(bare, spec(chat=True))


def test_k_shot_prompts_hold_demonstrations_from_the_dataset(tiny):
    """Two demonstrations, the most similar training inputs by TF-IDF (the most similar
    last); the same in chat as turns; and the chat template over them."""
    folder, data = tiny
    s = spec(shots=2, strategy="similar", instruction="Translate.")
    [p] = Prompter(s, data).prompts(["jump thrice"])
    # "jump twice" shares "jump", "run thrice" the rarer "thrice" (each in one line)
    assert p.text == ("Translate.\n\n"
                      "IN: jump twice OUT: JUMP JUMP\n\n"
                      "IN: run thrice OUT: RUN RUN RUN\n\n"
                      "IN: jump thrice OUT:")
    m = lm(folder, spec(shots=2, strategy="similar", instruction="Translate.", chat=True), data)
    [p] = m.prompter.prompts(["jump thrice"])
    assert [m["content"] for m in p.messages] == [
        "Translate.", "IN: jump twice OUT:", "JUMP JUMP", "IN: run thrice OUT:", "RUN RUN RUN",
        "IN: jump thrice OUT:"]
    by_hand = ("<s><system>Translate.\n<user>IN: jump twice OUT:\n<assistant>JUMP JUMP\n"
               "<user>IN: run thrice OUT:\n<assistant>RUN RUN RUN\n<user>IN: jump thrice OUT:\n"
               "<assistant>")
    assert m.tokenizer.decode(m.encode(p)) == by_hand


# ----------------------------------------------------------------------------- an evaluate-only run
def test_a_prompted_run_keeps_raw_and_read_answers_and_its_usage(tiny, tmp_path):
    folder, data = tiny
    backend = get_backend("hf")
    r = Run("lm-hf", "lm", "hf", args={"model": str(folder), "train": False,
                                       "prompting": {"shots": 2}},
            defaults={"prompting": {"template": TEMPLATE, "max_tokens": 12,
                                    "strategy": "similar"}})
    system = backend.system(r, "tiny")
    assert system["prompting"] == "2-shot similar"
    assert system["template_sha256"] == spec(shots=2, strategy="similar").sha256()
    done = backend.train(r, "tiny", data, tmp_path / "run", 1, show=False)
    meta = json.loads((Path(done["checkpoint"]) / "compsuite_hf.json").read_text())
    assert meta["prompting"]["shots"] == 2 and meta["prompt_batch_size"] == 1
    preds = backend.predict(done, data, "test", decoding({"batch_size": 32}), tmp_path / "run",
                            show=False)
    assert len(preds.hypotheses) == len(TEST)
    lines = [json.loads(x) for x in (tmp_path / "run" / "answers.jsonl").read_text().splitlines()]
    assert [x["index"] for x in lines] == list(range(len(TEST)))
    assert [x["input"] for x in lines] == [s for s, _ in TEST]
    assert {x["label"] for x in lines} == {"translate test"}
    s = Prompter(spec(shots=2, strategy="similar"), data)
    for x, hyp in zip(lines, preds.hypotheses):
        assert x["answer"] == s.extract(x["raw"]) == hyp
        assert x["tokens_out"] <= 12 and x["tokens_in"] > 10
    assert len({x["raw"] for x in lines}) > 3   # answers differ from input to input
    usage = backend.usage(tmp_path / "run")
    assert usage["prompts"] == len(TEST) and usage["prompting"] == "2-shot similar"
    assert usage["tokens_in"] == sum(x["tokens_in"] for x in lines)
    assert usage["tokens_out"] == sum(x["tokens_out"] for x in lines)
    assert usage["api"] == "completions" and usage["decoding"]["batch_size"] == 1
    assert backend.usage(tmp_path) is None   # a folder nothing was prompted in


def test_prompts_go_one_at_a_time_unless_a_batch_is_asked(tiny):
    folder, data = tiny
    sources = [s for s, _ in TEST]
    one = counted(lm(folder, spec(shots=1), data))
    answers = one.translate(sources)
    assert one.batches == len(sources)
    batched = counted(lm(folder, spec(shots=1), data, batch_size=4))
    assert batched.translate(sources) == answers and batched.batches == 2
    # on this model left-padded batches give the same answers; in general they need not
    # (the last bits of the logits change with the padding: docs/prompting.md)
    assert [a.raw for a in batched.answers] == [a.raw for a in one.answers]


def test_a_classification_is_the_likeliest_label_word(tiny, tmp_path):
    import torch

    folder, data = tiny
    labels = {"entailment": "yes", "neutral": "maybe", "contradiction": "no"}
    s = spec(template="{premise} ? {hypothesis} :", labels=labels)
    m = lm(folder, s, data, folder=tmp_path)
    pairs = [("jump twice", "jump"), ("walk left", "run"), ("look", "look right")]
    got = m.classify(pairs)
    assert set(got) <= set(labels)
    lines = [json.loads(x) for x in (tmp_path / "answers.jsonl").read_text().splitlines()]
    assert [x["input"] for x in lines] == [list(p) for p in pairs]
    for x, cls in zip(lines, got):
        assert set(x["scores"]) == set(labels)
        assert cls == max(x["scores"], key=x["scores"].get) == x["answer"]
        assert x["raw"] == labels[cls]
    # the score of one label word, by hand: its tokens' log-probabilities after the prompt
    tok, model = m.tokenizer, m.model
    prompt = tok("jump twice ? jump :")["input_ids"]
    word = tok(" maybe", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logp = model(torch.tensor([prompt + word])).logits[0].log_softmax(-1)
    by_hand = sum(float(logp[len(prompt) - 1 + k, t]) for k, t in enumerate(word))
    assert lines[0]["scores"]["neutral"] == pytest.approx(by_hand, abs=1e-5)
    assert len({json.dumps(x["scores"]) for x in lines}) == 3
    with pytest.raises(ConfigError, match="classifying needs prompting.labels"):
        lm(folder, spec(), data).classify(pairs)


def test_nli_asks_a_prompted_causal_lm_for_the_likeliest_label_word(tiny, tmp_path):
    """An NLI study with an evaluate-only hf run of a causal LM whose prompting names
    the label words: every evaluation set classified, scored, and its usage recorded."""
    from conftest import edited_study

    from compsuite.runner import Runner

    folder, _ = tiny
    words = {"entailment": "yes", "neutral": "maybe", "contradiction": "no"}

    def edit(raw):
        raw["architectures"]["lm"] = {"paper_name": "a prompted LM"}
        raw["runs"]["lm-hf"] = {"architecture": "lm", "toolkit": "hf", "args": {
            "model": str(folder), "train": False,
            "prompting": {"template": "{premise} ? {hypothesis} :", "labels": words}}}
    (tmp_path / "yaml").mkdir()
    study = edited_study(tmp_path / "yaml", "nli", edit)
    runner = Runner(study, "tiny", data_root=tmp_path / "DATA", runs_root=tmp_path / "runs",
                    show=False)
    [res] = runner.run(runner.plan(runs=["lm-hf"]))
    assert res["system"]["prompting"] == "zero-shot"
    for name, ev in res["eval"].items():
        assert ev["score"]["n"] > 0 and 0 <= ev["score"]["whole"] <= 100, name
    unit = tmp_path / "runs" / "nli" / "tiny" / "synthetic" / "lm-hf" / "seed1"
    preds = [line.split("\t")[1] for f in unit.glob("predictions-*.tsv")
             for line in f.read_text().splitlines()]
    assert preds and set(preds) <= set(words) and len(set(preds)) > 1
    lines = (unit / "answers.jsonl").read_text().splitlines()
    assert res["usage"]["prompts"] == len(lines) == len(preds)
    assert res["usage"]["tokens_out"] == 0   # scored, nothing generated


# ----------------------------------------------------------------------------- settings
def test_prompting_merges_key_by_key_and_a_null_leaves_it_out(tiny):
    folder, _ = tiny
    study = {"template": TEMPLATE, "shots": 4, "strategy": "similar"}

    def run(args, profiles=None, defaults=None):
        return Run("lm-hf", "lm", "hf", args={"model": str(folder), "train": False, **args},
                   profiles=profiles or {}, defaults={"prompting": study} if defaults is None
                   else defaults)

    s = settings(run({"prompting": {"shots": 1}}, {"tiny": {"prompting": {"chat": True}}}),
                 "tiny")
    assert (s.prompting["template"], s.prompting["shots"], s.prompting["strategy"],
            s.prompting["chat"]) == (TEMPLATE, 1, "similar", True)
    assert settings(run({}), "tiny").spec().label() == "4-shot similar"
    assert settings(run({}, {"tiny": {"prompting": None}}), "tiny").prompting is None
    assert settings(run({}, defaults={}), "tiny").prompting is None   # the plain template
    # the run's own prompt, stop and max_new_tokens (and --hf-prompt) are its prompting's
    s = settings(run({"prompt": "Q: {input} A:", "max_new_tokens": 7, "stop": ["A:"]}), "tiny")
    assert (s.prompting["template"], s.prompting["max_tokens"], s.prompting["stop"]) == (
        "Q: {input} A:", 7, ["A:"])
    with pytest.raises(ConfigError, match=r"runs\.lm-hf\.args\.prompt: a prompted run's "
                                          r"prompt is its prompting\.template, which "
                                          r"args\.prompting sets too"):
        settings(run({"prompt": "Q: {input}", "prompting": {"template": "{input}"}}), "tiny")
    with pytest.raises(ConfigError, match=r"args\.prompting\.shots: 0 or more"):
        settings(run({"prompting": {"shots": -1}}), "tiny")
    with pytest.raises(ConfigError, match=r"args\.prompting: unknown key 'shot'"):
        settings(run({"prompting": {"shot": 1}}), "tiny")
    # a run that trains is not prompted: the study's prompting left out, its own refused
    trained = Run("t-hf", "lm", "hf", args={"build": {}}, defaults={"prompting": study})
    assert settings(trained, "tiny").prompting is None
    with pytest.raises(ConfigError, match=r"runs\.t-hf\.args\.prompting: a run that trains "
                                          "is not prompted"):
        settings(Run("t-hf", "lm", "hf", args={"build": {}, "prompting": {"shots": 1}}), "tiny")
    # nor is a classifier: the study's prompting left out, its own refused
    clf = run({"kind": "classifier"})
    assert settings(clf, "tiny").prompting is None
    with pytest.raises(ConfigError, match="prompting is for a causal language model, and "
                                          "this run's is a classifier model"):
        settings(run({"kind": "classifier", "prompting": {"shots": 0}}), "tiny")


def test_a_trained_runs_config_is_the_same_with_a_study_prompting(tiny, tmp_path):
    """A study that prompts its hf models changes nothing of its trained runs (their
    config, and the hash their folders are checked by)."""
    _, data = tiny
    backend = get_backend("hf")
    args = {"build": {"architecture": "llama"}, "prompt": "{input} =", "max_steps": 1}
    plain = backend.config(Run("t", "lm", "hf", args=args), "tiny", data, tmp_path, 1)
    prompted = backend.config(Run("t", "lm", "hf", args=args,
                                  defaults={"prompting": {"shots": 2}}), "tiny", data, tmp_path, 1)
    assert plain == prompted and "prompting" not in plain["settings"]


def test_hf_model_with_shots_and_demos_on_the_command_line(tiny):
    folder, _ = tiny
    backend = get_backend("hf")
    parser = argparse.ArgumentParser()
    backend.add_system_arguments(parser)
    backend.add_system_arguments(argparse.ArgumentParser())   # declared once per parser
    assert {"--shots", "--demos"} <= set(backend.system_options)
    opts = parser.parse_args(["--hf-model", str(folder), "--shots", "2", "--demos", "similar",
                              "--hf-prompt", "Q: {input}\\nA:"])
    system = backend.user_system(opts)
    assert system.args == {"model": str(folder), "train": False, "prompt": "Q: {input}\nA:",
                           "prompting": {"shots": 2, "strategy": "similar"}}
    r = Run("mine", "mine", "hf", args=system.args,
            defaults={"prompting": {"template": "{input}", "chat": True}})
    s = settings(r, "tiny").spec()
    assert (s.template, s.shots, s.strategy, s.chat) == ("Q: {input}\nA:", 2, "similar", True)
    plain = backend.user_system(parser.parse_args(["--hf-model", str(folder)]))
    assert "prompting" not in plain.args


# ----------------------------------------------------------------------------- the identity
@pytest.fixture(scope="module")
def served(tiny, tmp_path_factory):
    from served_server import Served   # tests/served_server.py: the tests' one server

    folder, _ = tiny
    with Served(folder, tmp_path_factory.mktemp("serve") / "serve.log") as server:
        yield server


@pytest.mark.parametrize("shots", [0, 2])
@pytest.mark.parametrize("chat", [False, True], ids=["completions", "chat"])
def test_the_served_model_answers_as_the_local_one(tiny, served, shots, chat):
    """THE IDENTITY: the same prompts sent to ``transformers serve`` (the openai client,
    temperature 0, the prompting's max_tokens and stop strings) come back with the very
    text the hf backend generates locally, and are read into the same answers."""
    from openai import OpenAI

    folder, data = tiny
    s = spec(shots=shots, strategy="random", chat=chat,
             stop=["\n", "TURN"] if shots else ["\n"])
    sources = [x for x, _ in TEST]
    local = lm(folder, s, data)
    local_answers = local.translate(sources)
    prompts = Prompter(s, data).prompts(sources)
    client = OpenAI(base_url=served.url, api_key="none", timeout=120, max_retries=0)
    served_raw = []
    for p in prompts:
        common = {"model": str(folder), "temperature": 0, "max_tokens": s.max_tokens,
                  "stop": s.stop}
        if chat:
            reply = client.chat.completions.create(messages=[dict(m) for m in p.messages],
                                                   **common)
            served_raw.append(reply.choices[0].message.content or "")
        else:
            reply = client.completions.create(prompt=p.text, **common)
            served_raw.append(reply.choices[0].text)
        assert reply.usage.prompt_tokens == len(local.encode(p))
    client.close()
    assert [a.raw for a in local.answers] == served_raw
    assert local_answers == [local.prompter.extract(r) for r in served_raw]
    # not a vacuous identity: the answers differ from input to input, and (but in
    # zero-shot chat) the server stopped some at a stop string, as the local model did
    assert len(set(served_raw)) >= 3, served_raw
    if shots or not chat:
        assert any(any(x in r for x in s.stop) for r in served_raw), served_raw
