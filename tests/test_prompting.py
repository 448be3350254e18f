"""compsuite.models.prompting: templates, demonstrations, answers, on hand-made data."""
from __future__ import annotations

from pathlib import Path

import pytest

from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import ConfigError, DataError
from compsuite.models.prompting import Prompter, prompt_spec

TRAIN_SRC = ["copy A B", "reverse A B", "copy C D", "swap A B C", "append A , B",
             "reverse copy A", "echo X", "copy A B"]
TRAIN_TGT = ["A B", "B A", "C D", "C B A", "A B", "A", "X X", "A B"]


@pytest.fixture()
def data(tmp_path: Path) -> Dataset:
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "train.src").write_text("\n".join(TRAIN_SRC) + "\n")
    (raw / "train.tgt").write_text("\n".join(TRAIN_TGT) + "\n")
    (raw / "train.premise").write_text("a dog runs\na cat sleeps\n")
    (raw / "train.hypothesis").write_text("an animal runs\na dog sleeps\n")
    (raw / "train.label").write_text("entailment\ncontradiction\n")
    return Dataset(tmp_path)


def spec(**kw):
    return prompt_spec(kw, "test.yaml: prompting")


def test_zero_shot_text_and_messages(data):
    p = Prompter(spec(template="Q: {input}\nA:", instruction="Do it."), data)
    [prompt] = p.prompts(["copy Z"])
    assert prompt.text == "Do it.\n\nQ: copy Z\nA:"
    assert prompt.messages == ({"role": "system", "content": "Do it."},
                               {"role": "user", "content": "Q: copy Z\nA:"})
    assert prompt.key(chat=False) == prompt.text
    assert prompt.key(chat=True)[-1] == {"role": "user", "content": "Q: copy Z\nA:"}


def test_similar_picks_nearest_and_puts_it_last(data):
    p = Prompter(spec(template="{input} =", shots=2, strategy="similar"), data)
    [prompt] = p.prompts(["reverse A C"])
    # "reverse A B" shares the most words and pairs: last, nearest the input
    assert prompt.text.endswith("reverse A B = B A\n\nreverse A C =")
    assert prompt.text.count(" = ") == 2 + 0 and prompt.text.count("=") == 3
    user_turns = [m["content"] for m in prompt.messages if m["role"] == "user"]
    assert user_turns[-2:] == ["reverse A B =", "reverse A C ="]
    assert [m["content"] for m in prompt.messages if m["role"] == "assistant"][-1] == "B A"


def test_a_training_copy_of_the_input_is_never_its_demonstration(data):
    for strategy in ("random", "similar"):
        p = Prompter(spec(shots=3, strategy=strategy, seed=4), data)
        [prompt] = p.prompts(["copy A B"])
        assert "copy A B =" not in prompt.text
        assert prompt.text.count("copy A B") == 1    # the query only


def test_random_is_seeded_per_input_not_per_batch(data):
    p = Prompter(spec(shots=2, strategy="random", seed=7), data)
    alone = p.prompts(["echo Q"])[0]
    batch = p.prompts(["swap Q", "echo Q", "copy Q"])
    assert batch[1] == alone
    other_seed = Prompter(spec(shots=2, strategy="random", seed=8), data)
    assert any(other_seed.prompts([x])[0] != p.prompts([x])[0]
               for x in ["echo Q", "swap Q", "copy Q", "reverse Q"])


def test_structure_covers_the_inputs_functions(data):
    p = Prompter(spec(shots=2, strategy="structure",
                      structures=["copy", "reverse", "swap", "append", "echo"]), data)
    [prompt] = p.prompts(["swap echo Q"])
    shown = prompt.text.split("\n\n")[:-1]
    assert {s.split()[0] for s in shown} == {"swap", "echo"}


def test_structure_without_structures_is_refused():
    with pytest.raises(ConfigError, match="prompting.strategy: 'structure' needs structures"):
        spec(shots=2, strategy="structure")


def test_unknown_placeholder_is_refused():
    with pytest.raises(ConfigError, match=r"prompting.template: unknown placeholder \{src\}"):
        spec(template="{src} ->")


def test_pairs_and_label_words(data):
    s = spec(template="{premise} Question: {hypothesis}? Answer:", shots=1, strategy="similar",
             labels={"entailment": "yes", "contradiction": "no", "neutral": "maybe"},
             demonstrations={"folder": "raw", "input": ["train.premise", "train.hypothesis"],
                             "output": "train.label"})
    p = Prompter(s, data)
    [prompt] = p.prompts([("a dog sleeps", "a cat sleeps")])
    assert prompt.text == ("a cat sleeps Question: a dog sleeps? Answer: no\n\n"
                           "a dog sleeps Question: a cat sleeps? Answer:")
    assert p.answer(" Yes, it does.", classify=True).answer == "entailment"
    assert p.answer("perhaps", classify=True).answer == ""          # no class: wrong
    # first-token alternatives, where a server gives them
    assert p.answer("yes", classify=True,
                    logprobs={" no": -0.1, " yes": -2.0}).answer == "contradiction"


def test_extract_keeps_raw_and_cuts(data):
    p = Prompter(spec(stop=["###"]), data)
    a = p.answer("  B A ### Input: more\nnext line")
    assert (a.raw, a.answer) == ("  B A ### Input: more\nnext line", "B A")
    assert p.answer("").answer == ""                       # empty: an answer, scored wrong
    assert p.answer("\nlater").answer == ""                # the first line is empty
    assert Prompter(spec(stop=[], first_line=False), data).extract(" a\nb ") == "a\nb"


def test_label_and_hash_name_the_setting():
    zero, four = spec(), spec(shots=4, strategy="similar")
    assert zero.label() == "zero-shot" and four.label() == "4-shot similar"
    assert spec(chat=True).label() == "zero-shot, chat"
    assert zero.sha256() != four.sha256() and zero.sha256() == spec().sha256()


def test_demonstration_files_must_align(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "train.src").write_text("a\nb\n")
    (raw / "train.tgt").write_text("a\n")
    p = Prompter(spec(shots=1), Dataset(tmp_path))
    with pytest.raises(DataError, match="train.src: 2 lines, but .*train.tgt has 1"):
        p.prompts(["x"])


def test_shots_without_a_dataset_is_a_config_error():
    with pytest.raises(ConfigError, match="no dataset was given"):
        Prompter(spec(shots=1)).prompts(["x"])
