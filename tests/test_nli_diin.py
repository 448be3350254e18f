"""``nli_diin`` (``fairseq_plugins/models/nli_diin.py``): the fixed length makes an
example's logits independent of its batch's padding, the paper-size parameter count,
gradients to every parameter, the exact-match feature, the missing-input errors, and
the cut of sentences longer than ``--fixed-len``.  Built against a fake task and
hand-made tensors (no data files)."""
import importlib
import logging
from argparse import Namespace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
USER_DIR = ROOT / "fairseq_plugins"

WORDS = ["a", "dog", "runs", "The", "the", "cat", "sleeps", "not", "n't", "big"]
TAGS = ["DT", "NN", "VBZ", "JJ", "RB"]
CHARS = list("abcdefghijklmnopqrstuvwxyzT'")


@pytest.fixture(scope="module")
def diin():
    from fairseq import utils
    from fairseq.models import MODEL_REGISTRY

    utils.import_user_module(Namespace(user_dir=str(USER_DIR)))
    mod = importlib.import_module("fairseq_plugins.models.nli_diin")
    assert MODEL_REGISTRY["nli_diin"] is mod.DIIN
    assert mod.DIIN.PAIR_INPUTS == ("pos", "chars")
    return mod


def _dict(symbols):
    from fairseq.data import Dictionary

    d = Dictionary()
    for s in symbols:
        d.add_symbol(s)
    return d


def _fake_task(pos=True, chars=True, n_pos_tags=len(TAGS), n_classes=3):
    words = _dict(WORDS)
    feats = {"pos": _dict(TAGS + [f"T{i}" for i in range(n_pos_tags - len(TAGS))])
             if pos else None,
             "chars": _dict(CHARS) if chars else None}
    return SimpleNamespace(source_dictionary=words, num_classes=n_classes,
                           feature_dictionary=lambda name: feats.get(name))


def _cfg(diin, **over):
    cfg = diin.DIINConfig()
    for k, v in over.items():
        setattr(cfg, k, v)
    return cfg


TINY = dict(embed_dim=8, char_embed_dim=3, char_filters=4, char_kernel=2, chars_per_word=5,
            fixed_len=8, highway_layers=1, scale_down_ratio=0.5, dense_blocks=2,
            dense_layers=2, growth_rate=3, transition_ratio=0.5)


def _model(diin, seed=0, task=None, **over):
    torch.manual_seed(seed)
    return diin.DIIN(_cfg(diin, **{**TINY, **over}), task or _fake_task()).eval()


def _side(task, sents, width=None, char_width=None):
    """sentences (lists of (word, tag)) -> tokens, lengths, pos, chars, right-padded to
    ``width`` words / ``char_width`` characters (default: the longest)."""
    wd, pd, cd = task.source_dictionary, task.feature_dictionary("pos"), \
        task.feature_dictionary("chars")
    width = width or max(len(s) for s in sents)
    char_width = char_width or max(len(w) for s in sents for w, _ in s)
    tok = torch.full((len(sents), width), wd.pad())
    pos = torch.full((len(sents), width), pd.pad())
    chars = torch.full((len(sents), width, char_width), cd.pad())
    for b, s in enumerate(sents):
        for i, (w, t) in enumerate(s):
            tok[b, i], pos[b, i] = wd.index(w), pd.index(t)
            for j, ch in enumerate(w):
                chars[b, i, j] = cd.index(ch)
    return tok, torch.tensor([len(s) for s in sents]), pos, chars


def _net(task, premises, hypotheses, width=None, char_width=None):
    out = {}
    for name, sents in (("premise", premises), ("hypothesis", hypotheses)):
        tok, n, pos, chars = _side(task, sents, width, char_width)
        out.update({f"{name}_tokens": tok, f"{name}_lengths": n, f"{name}_pos": pos,
                    f"{name}_chars": chars})
    return out


P1 = [("a", "DT"), ("big", "JJ"), ("dog", "NN"), ("runs", "VBZ")]
H1 = [("The", "DT"), ("dog", "NN"), ("sleeps", "VBZ")]
P2 = [("the", "DT"), ("cat", "NN"), ("does", "VBZ"), ("n't", "RB"), ("run", "VBZ")]
H2 = [("a", "DT"), ("cat", "NN"), ("runs", "VBZ"), ("not", "RB")]


# ----------------------------------------------------------------------------- padding
def test_padding_does_not_change_logits(diin):
    task = _fake_task()
    model = _model(diin, task=task)
    with torch.no_grad():
        alone = model(**_net(task, [P1], [H1]))
        batch = model(**_net(task, [P1, P2], [H1, H2]))              # P1 padded to 5 words
        wide = model(**_net(task, [P1, P2], [H1, H2], width=7, char_width=7))
    assert alone.shape == (1, 3)
    torch.testing.assert_close(batch[0], alone[0], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(wide, batch, rtol=1e-5, atol=1e-6)


def test_longer_sentence_is_cut_and_warned_once(diin, caplog):
    task = _fake_task()
    model = _model(diin, task=task, fixed_len=4, dense_blocks=2)
    diin.DIIN._warned_long = False
    long_p = P2 + [("big", "JJ")]                       # 6 words > fixed_len 4
    with caplog.at_level(logging.WARNING, logger=diin.__name__), torch.no_grad():
        out = model(**_net(task, [long_p], [H2]))
        model(**_net(task, [long_p], [H2]))
    warnings = [r for r in caplog.records if "--fixed-len 4" in r.getMessage()]
    assert len(warnings) == 1
    # only the first 4 words count, except the exact match, computed on whole sentences:
    # dropping the words past 4 changes nothing here (none of them occurs in H2)
    with torch.no_grad():
        cut = model(**_net(task, [long_p[:4]], [H2]))
    torch.testing.assert_close(out, cut, rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------- size
def _count(model, skip=("embed.weight", "char_embed.weight")):
    return sum(p.numel() for n, p in model.named_parameters() if n not in skip)


def test_parameter_count_at_paper_size(diin):
    # a 47-symbol POS dictionary (fairseq's 4 specials + 43 tags) gives the paper's
    # 448-wide embedding: 300 + 100 + 47 + 1
    task = _fake_task(n_pos_tags=43)
    assert len(task.feature_dictionary("pos")) == 47
    model = diin.DIIN(diin.DIINConfig(), task)
    assert model.dim == 448 and model.feature_dim == 6 * 6 * 156
    parts = {
        "highway": 804_608, "encoders": 2_416_514, "dense": 1_127_479, "out": 16_851,
        "char_conv": 4_100}
    for name, n in parts.items():
        assert sum(p.numel() for p in getattr(model, name).parameters()) == n, name
    ours = _count(model)
    assert ours == 4_369_552
    # the original code's counter, which skips the char CNN's filter (5 × 8 × 100 =
    # 4,000), prints 4,365,552 for this network
    assert ours - 5 * 8 * 100 == 4_365_552


# ----------------------------------------------------------------------------- gradients
def test_gradients_reach_every_parameter(diin):
    task = _fake_task()
    model = _model(diin, task=task).train()
    model.drop.set_num_updates(200_000)            # some dropout on
    assert 0 < model.drop.p < 1
    net = _net(task, [P1, P2], [H1, H2])
    loss = torch.nn.functional.cross_entropy(model(**net), torch.tensor([0, 2]))
    loss.backward()
    for name, p in model.named_parameters():
        if name.endswith("score.bias"):
            # the tri-linear score's bias adds the same number to every key's score: the
            # softmax does not change, so its gradient is zero up to rounding
            assert p.grad is not None and p.grad.abs().sum() < 1e-6, name
            continue
        assert p.grad is not None and p.grad.abs().sum() > 0, name


def test_dropout_decays_like_the_original(diin):
    drop = diin.DecayingDropout(0.0, 0.977, 10_000)
    assert drop.p == 0.0
    drop.set_num_updates(10_000)
    assert drop.p == pytest.approx(1 - 0.977)
    drop.set_num_updates(25_000)
    assert drop.p == pytest.approx(1 - 0.977 ** 2.5)
    model = _model(diin)
    model.set_num_updates(30_000)                   # fairseq's trainer calls this
    assert model.drop.p == pytest.approx(1 - 0.977 ** 3)


def test_separate_or_shared_encoders(diin):
    assert len(_model(diin).encoders) == 2
    assert len(_model(diin, share_encoder=True).encoders) == 1


# ----------------------------------------------------------------------------- exact match
def test_exact_match_feature(diin):
    task = _fake_task()
    model = _model(diin, task=task)
    net = _net(task, [P1, P2], [H1, H2])
    em = model.exact_match(net["premise_tokens"], net["hypothesis_tokens"])
    # P1 a big dog runs | H1 The dog sleeps: only "dog"
    assert em[0].tolist() == [0, 0, 1, 0, 0]
    # P2 the cat does n't run | H2 a cat runs not: "cat", and "n't" ~ "not";
    # "does"/"run" are unknown words (<unk>) and never match
    assert em[1].tolist() == [0, 1, 0, 1, 0]
    em_h = model.exact_match(net["hypothesis_tokens"], net["premise_tokens"])
    assert em_h[0].tolist() == [0, 1, 0, 0]            # "The" vs "a big dog runs"
    assert em_h[1].tolist() == [0, 1, 0, 1]
    # case folding: "The" matches "the"
    p = _net(task, [[("the", "DT")]], [[("The", "DT")]])
    assert model.exact_match(p["premise_tokens"], p["hypothesis_tokens"]).tolist() == [[1.0]]


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("pos,chars", [(False, True), (True, False), (False, False)])
def test_missing_feature_dictionary_is_an_error(diin, pos, chars):
    with pytest.raises(ValueError, match="--pair-inputs"):
        _model(diin, task=_fake_task(pos=pos, chars=chars))
    bare = SimpleNamespace(source_dictionary=_dict(WORDS), num_classes=3)
    with pytest.raises(ValueError, match="--pair-inputs"):
        _model(diin, task=bare)


@pytest.mark.parametrize("drop", ["premise_pos", "hypothesis_chars"])
def test_missing_input_is_an_error(diin, drop):
    task = _fake_task()
    model = _model(diin, task=task)
    net = _net(task, [P1], [H1])
    del net[drop]
    with pytest.raises(ValueError, match=f"--pair-inputs.*{drop}"):
        model(**net)
