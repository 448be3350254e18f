"""The CTL++ classifiers' parts: geometric attention (no self-attention, nearest match
first, weights at most 1, padding ignored), the NDR copy gate, relative attention,
and every model's shapes and padding invariance."""
from argparse import Namespace
from types import SimpleNamespace

import pytest
import torch

from compsuite.registry import ROOT


@pytest.fixture(scope="module")
def ctl():
    from fairseq import utils
    from fairseq.models import MODEL_REGISTRY

    utils.import_user_module(Namespace(user_dir=str(ROOT / "fairseq_plugins")))
    import importlib

    mod = importlib.import_module("fairseq_plugins.models.ctlpp")
    assert MODEL_REGISTRY["ctlpp_ndr"] is mod.CTLPPNDR
    return mod


def _task(n_tokens=20, n_classes=8):
    from fairseq.data import Dictionary

    d = Dictionary()
    for i in range(n_tokens - d.nspecial):
        d.add_symbol(f"t{i}")
    return SimpleNamespace(source_dictionary=d, num_classes=n_classes)


def test_geometric_order_nearest_first_left_on_ties(ctl):
    assert ctl.geometric_order(4, "cpu").tolist() == [[1, 2, 3], [0, 2, 3], [1, 3, 0], [2, 1, 0]]


def test_geometric_attention_takes_the_nearest_match(ctl):
    torch.manual_seed(0)
    att = ctl.GeometricAttention(8, 2, dropout=0.0).eval()
    x = torch.randn(3, 5, 8)
    pad = torch.zeros(3, 5, dtype=torch.bool)
    pad[2, 3:] = True
    w = att.weights(x, pad)
    assert w.shape == (3, 2, 5, 5)
    assert torch.all(w.diagonal(dim1=-2, dim2=-1) == 0)            # never itself
    assert torch.all(w.sum(-1) <= 1 + 1e-5) and torch.all(w >= 0)
    assert torch.all(w[2, :, :, 3:] == 0)                            # never padding
    # all keys match with certainty: all weight on the nearest key, left on ties
    with torch.no_grad():
        att.direction.bias.fill_(50.0)
        att.direction.weight.zero_()
        att.qkv.weight.zero_()
        att.qkv.bias.zero_()
    w = att.weights(x, torch.zeros(3, 5, dtype=torch.bool))
    assert torch.allclose(w[0, 0, 2], torch.tensor([0.0, 1.0, 0.0, 0.0, 0.0]), atol=1e-4)
    assert torch.allclose(w[0, 0, 0], torch.tensor([0.0, 1.0, 0.0, 0.0, 0.0]), atol=1e-4)


def test_ndr_copy_gate_shapes_and_copying(ctl):
    cfg = SimpleNamespace(d_model=16, heads=4, ff=32, layers=3, dropout=0.0, gate_dropout=0.1)
    m = ctl.CTLPPNDR(cfg, _task()).eval()
    h = torch.randn(2, 6, 16)
    pad = torch.zeros(2, 6, dtype=torch.bool)
    new, g = m.layer(h, pad)
    assert new.shape == h.shape and g.shape == h.shape and torch.all((g > 0) & (g < 1))
    with torch.no_grad():                    # a closed gate copies the input through
        m.gate.bias.fill_(-1e4)
    new, _ = m.layer(h, pad)
    assert torch.allclose(new, h, atol=1e-5)


@pytest.mark.parametrize("name,cfg", [
    ("CTLPPBiLSTM", dict(hidden_size=16, embed_dim=12, layers=1, dropout=0.0)),
    ("CTLPPTransformer", dict(d_model=16, heads=4, ff=32, layers=3, dropout=0.0)),
    ("CTLPPNDR", dict(d_model=16, heads=4, ff=32, layers=3, dropout=0.0, gate_dropout=0.0)),
])
def test_models_classify_and_ignore_padding(ctl, name, cfg):
    torch.manual_seed(1)
    task = _task()
    m = getattr(ctl, name)(SimpleNamespace(**cfg), task).eval()
    pad = task.source_dictionary.pad()
    tokens = torch.tensor([[5, 6, 7, 2], [8, 9, 2, pad]])
    logits = m(tokens, torch.tensor([4, 3]))
    assert logits.shape == (2, 8)
    alone = m(tokens[1:, :3], torch.tensor([3]))          # the same input without padding
    assert torch.allclose(logits[1], alone[0], atol=1e-5)
    assert m.features(tokens).shape == (2, m.output_dim())


def test_relative_attention_depends_on_relative_positions_only(ctl):
    torch.manual_seed(2)
    att = ctl.RelativeMultiheadAttention(8, 2, dropout=0.0).eval()
    x = torch.randn(1, 3, 8)
    shifted = torch.cat([torch.zeros(1, 2, 8), x], 1)     # the same tokens, later
    pad = torch.tensor([[True, True, False, False, False]])
    out = att(x, torch.zeros(1, 3, dtype=torch.bool))
    out_shifted = att(shifted, pad)
    assert torch.allclose(out, out_shifted[:, 2:], atol=1e-5)


def test_class_dictionary_without_fairseq_filler_symbols(ctl, tmp_path):
    """fairseq-preprocess pads dict.tgt.txt to a multiple of 8 with madeupwordNNNN: the
    task counts and names only the real classes, and a model gets one output per class."""
    from fairseq.data import Dictionary
    from fairseq_plugins.labels import class_names
    from fairseq_plugins.tasks.sequence_classification import SequenceClassificationTask

    labels = Dictionary()
    for c in "0123456789":
        labels.add_symbol(c)
    labels.finalize(padding_factor=8)           # 4 special + 10 classes -> 16 symbols
    assert len(labels) == 16 and labels[15] == "madeupword0001"
    assert class_names(labels) == list("0123456789")
    assert SequenceClassificationTask.num_classes_of(labels) == 10
    bad = Dictionary()
    for c in ("a", "madeupword0000", "b"):
        bad.add_symbol(c)
    with pytest.raises(ValueError, match="filler symbol"):
        class_names(bad)


def test_checkpoints_with_filler_outputs_still_load(ctl):
    """A model trained before the fillers were dropped has 12 output rows for 8 classes;
    its state dict loads into the 8-class model, the real rows kept."""
    torch.manual_seed(1)
    cfg = SimpleNamespace(hidden_size=16, embed_dim=12, layers=1, dropout=0.0)
    old = ctl.CTLPPBiLSTM(cfg, _task(n_classes=12))
    new = ctl.CTLPPBiLSTM(cfg, _task(n_classes=8))
    new.load_state_dict(old.state_dict())
    assert torch.equal(new.out.weight, old.out.weight[:8])
    assert torch.equal(new.out.bias, old.out.bias[:8])
    tokens = torch.tensor([[5, 6, 7, 2]])
    assert torch.equal(new(tokens), old(tokens)[:, :8])
