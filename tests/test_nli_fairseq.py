"""The NLI sentence-pair task and models (``fairseq_plugins/tasks/sentence_pair_classification.py``,
``fairseq_plugins/models/nli.py``): masking (padding never changes a model's output),
attention shapes and weights, bag-of-words variants blind to word order and recurrent
ones not, the per-epoch word shuffle, GloVe loading, and a smoke test that binarises
hand-made pairs with fairseq-preprocess, trains every model a few updates with
fairseq-train, reloads the checkpoints and predicts."""
import importlib
import os
import re
import subprocess
from argparse import Namespace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from compsuite.toolkits.writing import toolkit_command
from conftest import fairseq_predictions

ROOT = Path(__file__).resolve().parent.parent
USER_DIR = ROOT / "fairseq_plugins"


@pytest.fixture(scope="module")
def plug():
    from fairseq import utils
    from fairseq.models import MODEL_REGISTRY
    from fairseq.tasks import TASK_REGISTRY

    utils.import_user_module(Namespace(user_dir=str(USER_DIR)))
    models = importlib.import_module("fairseq_plugins.models.nli")
    task = importlib.import_module("fairseq_plugins.tasks.sentence_pair_classification")
    assert MODEL_REGISTRY["nli_esim"] is models.ESIM
    assert MODEL_REGISTRY["nli_rse_bow"] is models.ResidualSentenceEncoderBoW
    assert TASK_REGISTRY["sentence_pair_classification"] is task.SentencePairClassificationTask
    return SimpleNamespace(models=models, task=task)


def _fake_task(n_tokens=30, n_classes=3):
    from fairseq.data import Dictionary

    d = Dictionary()
    for i in range(n_tokens - d.nspecial):
        d.add_symbol(f"w{i}")
    return SimpleNamespace(source_dictionary=d, num_classes=n_classes)


TINY = {
    "ESIM": dict(embed_dim=8, hidden_size=6, mlp_dim=8, dropout=0.0, bow=False),
    "ESIMBoW": dict(embed_dim=8, hidden_size=6, mlp_dim=8, dropout=0.0, bow=True),
    "DecomposableAttention": dict(embed_dim=8, proj_dim=6, ff_dim=6, dropout=0.0),
    "ResidualSentenceEncoder": dict(embed_dim=8, hidden_sizes="4,4,6", mlp_dim=8, dropout=0.0,
                                    bow=False),
    "ResidualSentenceEncoderBoW": dict(embed_dim=8, hidden_sizes="4,4,6", mlp_dim=8,
                                       dropout=0.0, bow=True),
}


def _model(plug, name, seed=0):
    torch.manual_seed(seed)
    cfg = SimpleNamespace(freeze_embeddings=False, **TINY[name])
    return getattr(plug.models, name)(cfg, _fake_task()).eval()


def _net(premises, hypotheses, pad=1):
    out = {}
    for name, sents in (("premise", premises), ("hypothesis", hypotheses)):
        width = max(len(s) for s in sents)
        out[f"{name}_tokens"] = torch.tensor([s + [pad] * (width - len(s)) for s in sents])
        out[f"{name}_lengths"] = torch.tensor([len(s) for s in sents])
    return out


# ----------------------------------------------------------------------------- masking
def test_masked_helpers_ignore_padding(plug):
    m = plug.models
    scores = torch.tensor([[[5.0, 1.0, 100.0], [0.0, 0.0, 100.0]]])     # [1, 2, 3]
    keys = torch.tensor([[True, True, False]])
    w = m.masked_softmax(scores, keys[:, None, :])
    assert torch.all(w[..., 2] == 0)
    assert torch.allclose(w.sum(-1), torch.ones(1, 2))
    assert torch.allclose(w[0, 1, :2], torch.tensor([0.5, 0.5]))
    x = torch.tensor([[[1.0, -3.0], [2.0, -5.0], [50.0, 50.0]]])         # last row is padding
    mask = torch.tensor([[True, True, False]])
    assert m.masked_max(x, mask).tolist() == [[2.0, -3.0]]
    assert m.masked_mean(x, mask).tolist() == [[1.5, -4.0]]
    assert m.masked_sum(x, mask).tolist() == [[3.0, -8.0]]


@pytest.mark.parametrize("name", list(TINY))
def test_padding_does_not_change_logits(plug, name):
    model = _model(plug, name)
    short = ([5, 6, 7], [8, 9])
    long = ([10, 11, 12, 13, 14, 15, 16], [17, 18, 19, 20, 21, 22])
    alone = model(**_net([short[0]], [short[1]]))
    batch = model(**_net([short[0], long[0]], [short[1], long[1]]))   # short padded to 7 / 6
    assert batch.shape == (2, 3)
    assert torch.allclose(batch[0], alone[0], atol=1e-5)
    # extra all-padding columns change nothing either
    net = _net([short[0], long[0]], [short[1], long[1]])
    for side in ("premise", "hypothesis"):
        t = net[f"{side}_tokens"]
        net[f"{side}_tokens"] = torch.cat([t, torch.full((2, 4), 1)], 1)
    assert torch.allclose(model(**net), batch, atol=1e-5)
    # ...while a real token in the same place does
    net = _net([short[0] + [4], long[0]], [short[1], long[1]])
    assert not torch.allclose(model(**net)[0], batch[0], atol=1e-4)


def test_attention_shapes_and_weights(plug):
    esim = _model(plug, "ESIM")
    dam = _model(plug, "DecomposableAttention")
    B, La, Lb = 2, 5, 3
    a_mask = torch.tensor([[True] * 5, [True, True, False, False, False]])
    b_mask = torch.tensor([[True, True, True], [True, False, False]])
    for d, fn in ((12, esim.align), (6, dam.attend)):
        a, b = torch.randn(B, La, d), torch.randn(B, Lb, d)
        a_al, b_al, w_ab, w_ba = fn(a, b, a_mask, b_mask)
        assert a_al.shape == (B, La, d) and b_al.shape == (B, Lb, d)
        assert w_ab.shape == (B, La, Lb) and w_ba.shape == (B, Lb, La)
        assert torch.allclose(w_ab.sum(-1), torch.ones(B, La), atol=1e-5)
        assert torch.allclose(w_ba.sum(-1), torch.ones(B, Lb), atol=1e-5)
        assert torch.all(w_ab[1, :, 1:] == 0) and torch.all(w_ba[1, :, 2:] == 0)
        # the second hypothesis has one real word: every premise word aligns to it
        assert torch.allclose(a_al[1], b[1, 0].expand(La, d), atol=1e-6)
    # ESIM's encoder states are 2 x hidden wide; the enhancement is 4 x that
    tokens = torch.tensor([[5, 6, 7, 1]])
    assert esim.encode(tokens, tokens.ne(1)).shape == (1, 4, 12)


# ----------------------------------------------------------------------------- word order
@pytest.mark.parametrize("name,blind", [
    ("ESIMBoW", True), ("ResidualSentenceEncoderBoW", True), ("DecomposableAttention", True),
    ("ESIM", False), ("ResidualSentenceEncoder", False),
])
def test_bow_variants_are_blind_to_word_order(plug, name, blind):
    model = _model(plug, name, seed=3)
    p, h = [5, 6, 7, 8, 9], [10, 11, 12, 13]
    logits = model(**_net([p, [6, 7]], [h, [12]]))
    shuffled = model(**_net([[9, 7, 5, 8, 6], [7, 6]], [[13, 10, 12, 11], [12]]))
    same = torch.allclose(logits, shuffled, atol=1e-5)
    assert same == blind, (logits, shuffled)


def test_bow_replaces_every_recurrent_layer(plug):
    for name in ("ESIMBoW", "ResidualSentenceEncoderBoW"):
        model = _model(plug, name)
        assert not any(isinstance(mod, torch.nn.LSTM) for mod in model.modules())
    rse = _model(plug, "ResidualSentenceEncoder")
    lstms = [mod for mod in rse.modules() if isinstance(mod, torch.nn.LSTM)]
    # residual inputs: the embedding, then [embedding; sum of the earlier layers' outputs]
    assert [lstm.input_size for lstm in lstms] == [8, 8 + 8, 8 + 8]
    assert [lstm.hidden_size for lstm in lstms] == [4, 4, 6]


# ----------------------------------------------------------------------------- the shuffle
def test_shuffle_permutes_real_tokens_only(plug):
    shuffle = plug.task.shuffle_words
    pad = 1
    tokens = torch.tensor([[4, 5, 6, 7, 8, 9, 10, 11],
                           [12, 13, 14, 15, 16, pad, pad, pad],
                           [17, 18, 19, pad, pad, pad, pad, pad],
                           [20, pad, pad, pad, pad, pad, pad, pad]])
    ids = [3, 10, 11, 12]
    out = shuffle(tokens, pad, ids, seed=1, epoch=1, side=0)
    for row, new in zip(tokens, out):
        n = int(row.ne(pad).sum())
        assert sorted(new[:n].tolist()) == sorted(row[:n].tolist())
        assert torch.all(new[n:] == pad)
    assert not torch.equal(out, tokens)
    assert torch.equal(out, shuffle(tokens, pad, ids, seed=1, epoch=1, side=0))     # determined
    assert not torch.equal(out[:2], shuffle(tokens, pad, ids, seed=1, epoch=2, side=0)[:2])
    assert not torch.equal(out[:2], shuffle(tokens, pad, ids, seed=2, epoch=1, side=0)[:2])
    assert not torch.equal(out[:2], shuffle(tokens, pad, ids, seed=1, epoch=1, side=1)[:2])
    # an example's permutation is its own: the same wherever it sits in a batch
    alone = shuffle(tokens[1:2], pad, [10], seed=1, epoch=1, side=0)
    assert torch.equal(alone[0], out[1])
    with pytest.raises(ValueError, match="right-padded"):
        shuffle(torch.tensor([[pad, 4, 5]]), pad, [0], seed=1, epoch=1, side=0)


# ----------------------------------------------------------------------------- GloVe
def test_glove_loading_hand_made_file(plug, tmp_path):
    from fairseq.data import Dictionary

    d = Dictionary()
    for w in ("dog", "Cat", "bird", "."):
        d.add_symbol(w)
    glove = tmp_path / "vectors.txt"
    # ". . ." is one multi-word entry of GloVe 840B, not the word "."
    glove.write_text("dog 0.5 1 -1 2\n. . . 8 8 8 8\ncat 3 3 3 3\nfish 9 9 9 9\n")
    weight = torch.zeros(len(d), 4)
    weight[d.index("bird")] = 7.0
    stats = plug.task.load_word_vectors(str(glove), d, weight)
    assert stats == {"found": 2, "lowercase": 1, "types": 4, "dim": 4}
    assert torch.all(weight[d.index(".")] == 0)
    assert weight[d.index("dog")].tolist() == [0.5, 1.0, -1.0, 2.0]
    assert weight[d.index("Cat")].tolist() == [3.0] * 4           # by its lower-cased form
    assert weight[d.index("bird")].tolist() == [7.0] * 4          # not in the file: kept
    assert torch.all(weight[: d.nspecial] == 0)                   # specials never looked up
    # a word2vec header is skipped; an exact match beats a lower-cased one
    glove.write_text("3 4\ncat 3 3 3 3\nCat 1 1 1 1\nbird 2 2 2 2\n")
    stats = plug.task.load_word_vectors(str(glove), d, weight)
    assert stats["found"] == 2 and stats["lowercase"] == 0
    assert weight[d.index("Cat")].tolist() == [1.0] * 4
    for line, n in (("dog 1 2 3\n", 3), ("3 5\nbird 1 2 3 4 5\n", 5)):
        glove.write_text(line)
        with pytest.raises(ValueError, match=f"has {n} values; the model's embeddings have 4"):
            plug.task.load_word_vectors(str(glove), d, torch.zeros(len(d), 4))
    with pytest.raises(FileNotFoundError):
        plug.task.load_word_vectors(str(tmp_path / "none.txt"), d, weight)


# ----------------------------------------------------------------------------- data
NOUNS = ["dog", "cat", "man", "woman", "boy", "girl"]
VERBS = ["sees", "likes", "chases", "helps"]
ADJS = ["big", "small", "happy"]


def _pairs(n, offset):
    """Hand-made pairs: the same clause (entailment), subject and object swapped
    (contradiction), an adjective added (neutral)."""
    out = []
    for k in range(offset, offset + n):
        s, o = NOUNS[k % 6], NOUNS[(k // 6 + k + 1) % 6]
        if s == o:
            o = NOUNS[(k + 2) % 6]
        v, adj = VERBS[k % 4], ADJS[k % 3]
        p = f"a {s} {v} a {o}"
        kind = k % 3
        if kind == 0:
            out.append((p, f"a {s} {v} a {o}", "entailment"))
        elif kind == 1:
            out.append((p, f"a {o} {v} a {s}", "contradiction"))
        else:
            out.append((p, f"a {adj} {s} {v} a {o}", "neutral"))
    return out


SPLITS = {"train": _pairs(42, 0), "valid": _pairs(12, 42), "test": _pairs(13, 54)}


def _run(cmd, cwd, log):
    with open(log, "w") as fh:
        proc = subprocess.run(cmd, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT)
    assert proc.returncode == 0, Path(log).read_text()[-3000:]


@pytest.fixture(scope="module")
def nli_bin(tmp_path_factory):
    """The hand-made pairs binarised by the two documented fairseq-preprocess calls."""
    root = tmp_path_factory.mktemp("nli_fairseq")
    raw, out = root / "raw", root / "bin"
    raw.mkdir()
    for split, pairs in SPLITS.items():
        for i, side in enumerate(("premise", "hypothesis", "label")):
            (raw / f"{split}.{side}").write_text("".join(p[i] + "\n" for p in pairs))
    prefs = ["--trainpref", str(raw / "train"), "--validpref", str(raw / "valid"),
             "--testpref", str(raw / "test"), "--destdir", str(out), "--workers", "1"]
    pre = toolkit_command("fairseq-preprocess")
    _run(pre + ["--source-lang", "premise", "--target-lang", "hypothesis",
                "--joined-dictionary"] + prefs, root, root / "pre-words.log")
    _run(pre + ["--only-source", "--source-lang", "label", "--padding-factor", "1"] + prefs,
         root, root / "pre-labels.log")
    for split in SPLITS:
        for f in (f"{split}.premise-hypothesis.premise", f"{split}.premise-hypothesis.hypothesis",
                  f"{split}.label-None.label"):
            assert (out / f"{f}.bin").is_file() and (out / f"{f}.idx").is_file(), f
    return root


def _task(plug, data, **kw):
    cfg = SimpleNamespace(data=str(data), max_positions=512, shuffle_words=False,
                          embedding_path=None, seed=1)
    for k, v in kw.items():
        setattr(cfg, k, v)
    return plug.task.SentencePairClassificationTask.setup_task(cfg)


def test_augmentation_adds_a_fresh_seeded_sample_each_epoch(plug, nli_bin):
    """Table 4's augmentation: the train split plus N pairs of the pool, a different
    sample each epoch, the same for the same seed and epoch; fairseq reloads train."""
    task = _task(plug, nli_bin / "bin", augment_subsets="test,valid", augment_per_epoch=10)
    assert task.has_sharded_data("train") and not task.has_sharded_data("valid")
    e1, e2 = task.augmentation_sample(25, 1), task.augmentation_sample(25, 2)
    assert len(e1) == 10 and len(set(e1)) == 10 and list(e1) != list(e2)
    assert list(task.augmentation_sample(25, 1)) == list(e1)
    assert len(task.augmentation_sample(4, 1)) == 4            # a small pool: all of it
    ds = task.load_dataset("train", epoch=2)
    assert len(ds) == 42 + 10
    # every training pair is there, plus the sampled pool pairs with their labels
    task0 = _task(plug, nli_bin / "bin")
    d = task.source_dictionary
    def texts(dataset):
        return sorted((d.string(dataset[i]["net_input.premise_tokens"]),
                       d.string(dataset[i]["net_input.hypothesis_tokens"]),
                       int(dataset[i]["target"])) for i in range(len(dataset)))
    plain = texts(task0.load_dataset("train"))
    pool = texts(task0.load_dataset("test")) + texts(task0.load_dataset("valid"))
    got = texts(ds)
    rest = list(got)
    for item in plain:
        rest.remove(item)
    assert len(rest) == 10 and all(item in pool for item in rest)
    assert texts(task.load_dataset("train", epoch=3)) != got
    batch = ds.collater([ds[i] for i in range(len(ds))])
    assert batch["net_input"]["premise_tokens"].shape[0] == 52


def test_task_reads_three_streams(plug, nli_bin):
    task = _task(plug, nli_bin / "bin")
    assert sorted(task.class_names()) == ["contradiction", "entailment", "neutral"]
    ds = task.load_dataset("test")
    assert len(ds) == 13
    batch = ds.collater([ds[i] for i in range(4)])
    net = batch["net_input"]
    assert set(net) == {"premise_tokens", "premise_lengths", "hypothesis_tokens",
                        "hypothesis_lengths"}
    d = task.source_dictionary
    for i in range(4):
        p, h, label = SPLITS["test"][i]
        n = int(net["premise_lengths"][i])
        assert d.string(net["premise_tokens"][i, :n]) == p          # no </s>, no padding
        m = int(net["hypothesis_lengths"][i])
        assert d.string(net["hypothesis_tokens"][i, :m]) == h
        assert torch.all(net["hypothesis_tokens"][i, m:] == d.pad())  # padded on the right
        assert task.class_names()[int(batch["target"][i])] == label
    assert batch["ntokens"] == int(net["premise_lengths"].sum() + net["hypothesis_lengths"].sum())
    encoded = task.encode_pairs([SPLITS["test"][0][:2]])
    assert torch.equal(encoded["premise_tokens"][0], net["premise_tokens"][0, :5])


def test_task_shuffles_training_batches_only(plug, nli_bin):
    task = _task(plug, nli_bin / "bin", shuffle_words=True)
    ds = task.load_dataset("valid")
    batch = ds.collater([ds[i] for i in range(8)])
    seen = []

    class Criterion:
        def __call__(self, model, sample):
            seen.append(sample["net_input"])
            loss = model(**sample["net_input"]).sum()
            return loss, 1, {}

    class Optimizer:
        def backward(self, loss):
            loss.backward()

    cfg = SimpleNamespace(freeze_embeddings=False, **TINY["ESIM"])
    model = plug.models.ESIM(cfg, SimpleNamespace(source_dictionary=task.source_dictionary,
                                                  num_classes=task.num_classes))
    task.begin_epoch(1, model)
    task.train_step(batch, model, Criterion(), Optimizer(), 0)
    task.train_step(batch, model, Criterion(), Optimizer(), 1)
    task.begin_epoch(2, model)
    task.train_step(batch, model, Criterion(), Optimizer(), 2)
    task.valid_step(batch, model, Criterion())
    orig = batch["net_input"]["premise_tokens"]
    assert not torch.equal(seen[0]["premise_tokens"], orig)
    assert torch.equal(seen[0]["premise_tokens"], seen[1]["premise_tokens"])  # same epoch
    assert not torch.equal(seen[0]["premise_tokens"], seen[2]["premise_tokens"])
    assert not torch.equal(seen[0]["hypothesis_tokens"], batch["net_input"]["hypothesis_tokens"])
    assert torch.equal(seen[3]["premise_tokens"], orig)                      # validation
    for s in seen[:3]:
        assert torch.equal(s["premise_tokens"].sort(1).values, orig.sort(1).values)
        assert torch.equal(s["premise_lengths"], batch["net_input"]["premise_lengths"])
    assert torch.equal(batch["net_input"]["premise_tokens"], orig)         # input untouched
    assert not _task(plug, nli_bin / "bin").cfg.shuffle_words


def test_task_builds_models_with_pretrained_vectors(plug, nli_bin, tmp_path):
    glove = tmp_path / "g.txt"
    glove.write_text("Dog 9 9 9 9\ndog 1 2 3 4\n")
    task = _task(plug, nli_bin / "bin", embedding_path=str(glove))
    from omegaconf import OmegaConf

    cfg = OmegaConf.structured(plug.models.DAMConfig(_name="nli_dam", embed_dim=4, proj_dim=3,
                                                     ff_dim=3))
    model = task.build_model(cfg)
    dog = task.source_dictionary.index("dog")
    assert model.embed.weight[dog].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert task.embedding_stats == {"found": 1, "lowercase": 0, "types": 12, "dim": 4}
    assert torch.all(model.embed.weight[task.source_dictionary.pad()] == 0)
    # a model rebuilt for a checkpoint takes its weights from there, not from the file
    again = task.build_model(cfg, from_checkpoint=True)
    assert again.embed.weight[dog].tolist() != [1.0, 2.0, 3.0, 4.0]
    assert model.embed.weight.requires_grad
    cfg.freeze_embeddings = True
    assert not task.build_model(cfg).embed.weight.requires_grad


# ----------------------------------------------------------------------------- smoke
GLOVE_WORDS = {"dog": 0.1, "cat": -0.2, "man": 0.3, "zebra": 0.4}
RUNS = {
    "esim": ["--arch", "nli_esim", "--embed-dim", "8", "--hidden-size", "6", "--mlp-dim", "8",
             "--shuffle-words"],
    "esim_bow": ["--arch", "nli_esim_bow", "--embed-dim", "8", "--hidden-size", "6",
                 "--mlp-dim", "8"],
    "dam": ["--arch", "nli_dam", "--embed-dim", "8", "--proj-dim", "6", "--ff-dim", "6",
            "--optimizer", "adagrad", "--lr", "0.05"],
    "rse": ["--arch", "nli_rse", "--embed-dim", "8", "--hidden-sizes", "4,4,4", "--mlp-dim", "8",
            "--embedding-path", "GLOVE"],
}


@pytest.fixture(scope="module")
def trained(nli_bin):
    """Every model trained 3 updates with fairseq-train (two at a time)."""
    glove = nli_bin / "glove.txt"
    glove.write_text("".join(f"{w} " + " ".join([str(v)] * 8) + "\n"
                             for w, v in GLOVE_WORDS.items()))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    base = [str(nli_bin / "bin"), "--user-dir", str(USER_DIR),
            "--task", "sentence_pair_classification", "--criterion", "sequence_classification",
            "--cpu", "--max-update", "3", "--batch-size", "8", "--optimizer", "adam",
            "--lr", "0.001", "--num-workers", "0", "--valid-subset", "valid,test",
            "--log-format", "simple", "--log-interval", "1", "--seed", "1",
            "--no-epoch-checkpoints"]
    procs, out = {}, {}
    names = list(RUNS)
    for start in range(0, len(names), 2):
        for name in names[start:start + 2]:
            args = [str(glove) if a == "GLOVE" else a for a in RUNS[name]]
            log = open(nli_bin / f"train-{name}.log", "w")
            procs[name] = (subprocess.Popen(
                toolkit_command("fairseq-train") + base + args
                + ["--save-dir", str(nli_bin / f"ck-{name}")],
                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env), log)
        for name in names[start:start + 2]:
            proc, log = procs[name]
            rc = proc.wait(timeout=300)
            log.close()
            text = (nli_bin / f"train-{name}.log").read_text()
            assert rc == 0, f"{name}:\n{text[-3000:]}"
            out[name] = text
    return nli_bin, out


def _logged_accuracy(log: str, subset: str) -> float:
    found = re.findall(rf"valid on '{subset}' subset \|.*?\baccuracy ([\d.]+)", log)
    assert found, log[-2000:]
    return float(found[-1])


@pytest.mark.parametrize("name", list(RUNS))
def test_fairseq_train_reload_and_predict(plug, trained, name):
    from fairseq import checkpoint_utils

    root, logs = trained
    log = logs[name]
    assert "num_updates 3" in log and "done training" in log
    ck = root / f"ck-{name}" / "checkpoint_last.pt"
    glove, moved = root / "glove.txt", root / "glove.moved"
    if name == "rse":              # a reloaded model needs no GloVe file: its weights are saved
        glove.rename(moved)
    try:
        models, cfg, task = checkpoint_utils.load_model_ensemble_and_task(
            [str(ck)], arg_overrides={"data": str(root / "bin")})
    finally:
        if moved.exists():
            moved.rename(glove)
    assert cfg.model._name == RUNS[name][1]
    assert type(task).__name__ == "SentencePairClassificationTask"
    if name == "esim_bow":
        assert cfg.model.bow and not any(isinstance(m, torch.nn.LSTM) for m in models[0].modules())
    preds = fairseq_predictions(task, models, "test")
    assert sorted(preds) == list(range(13))                      # every example, none dropped
    gold = [p[2] for p in SPLITS["test"]]
    acc = 100.0 * sum(preds[i] == g for i, g in enumerate(gold)) / len(gold)
    # the reloaded model is the trained one: its accuracy is what training logged
    assert acc == pytest.approx(_logged_accuracy(log, "test"), abs=0.01)
    # raw text through the dictionary gives the same predictions
    raw = task.predict(models, task.encode_pairs([p[:2] for p in SPLITS["test"]]))
    assert raw == [preds[i] for i in range(13)]
    if name == "rse":
        # dog, cat, man are in the dictionary, zebra is not
        assert cfg.task.embedding_path == str(glove)
        assert re.search(r"pretrained word vectors: 3 of \d+ dictionary types found", log)
        assert "pretrained word vectors" not in "".join(logs[n] for n in RUNS if n != "rse")
