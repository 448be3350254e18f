"""The CTL++ classifiers' parts, each setting as the authors' released code has it
(RobertCsordas/ctlpp@1b5ab28; data_prep/ctlpp/doc.md): geometric attention (no
self-attention, nearest match first and the right one on ties, weights at most 1, not
normalised, padding ignored), the NDR's copy gate and its dropout, relative attention,
dropout places, inits, the start-token readout, train and test layer counts, paper
sizes and parameter counts, and every model's shapes and padding invariance."""
import math
from argparse import Namespace
from types import SimpleNamespace

import pytest
import torch

from compsuite.foundation.checkout import ROOT


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


def test_geometric_order_nearest_first_right_on_ties(ctl):
    """The authors' window sums (geometric_attention/cuda_interface.cu) consider the key
    on the right first when two keys are as near."""
    assert ctl.geometric_order(4, "cpu").tolist() == [[1, 2, 3], [2, 0, 3], [3, 1, 0], [2, 1, 0]]
    before = ctl.geometric_precedence(5)
    assert before[2, 1, 3] and not before[2, 3, 1]           # query 2: key 3 before key 1
    assert not before[:, :, :].diagonal(dim1=0, dim2=2).any()  # a query is never its own key


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
    # all keys match with certainty: all weight on the nearest key, right on ties
    with torch.no_grad():
        att.direction.bias.fill_(50.0)
        att.direction.weight.zero_()
        att.q.weight.zero_()
        att.q.bias.zero_()
    w = att.weights(x, torch.zeros(3, 5, dtype=torch.bool))
    assert torch.allclose(w[0, 0, 2], torch.tensor([0.0, 0.0, 0.0, 1.0, 0.0]), atol=1e-4)
    assert torch.allclose(w[0, 0, 0], torch.tensor([0.0, 1.0, 0.0, 0.0, 0.0]), atol=1e-4)


def test_geometric_attention_weights_are_the_stick_breaking_product(ctl):
    """A_ij = p_ij prod_{m before j} (1 - p_im), not normalised; the logit is
    s q_i.k_j + s_d (left or right projection of h_i) + b with learned s, s_d, b."""
    torch.manual_seed(3)
    att = ctl.GeometricAttention(8, 2, dropout=0.0).eval()
    with torch.no_grad():
        att.bias.fill_(0.4)
        att.direction_scale.fill_(1.5)
        att.scale.fill_(0.9)
    x = torch.randn(1, 4, 8)
    w = att.weights(x, torch.zeros(1, 4, dtype=torch.bool))
    q = att.q(x).view(4, 2, 4)
    k = att.kv(x).view(4, 2, 2, 4)[:, :, 0]
    lr = att.direction(x).view(4, 2, 2)                      # per head: left, right
    order = ctl.geometric_order(4)
    for h in range(2):
        for i in range(4):
            miss = 1.0
            for j in order[i].tolist():
                side = 0 if j < i else 1
                p = torch.sigmoid(0.9 * q[i, h] @ k[j, h] + 1.5 * lr[i, h, side] + 0.4)
                assert torch.allclose(w[0, h, i, j], p * miss, atol=1e-6), (h, i, j)
                miss = miss * (1 - p)
    assert (w.sum(-1) < 1).all()                             # not normalised
    for name in ("scale", "direction_scale", "bias"):
        assert isinstance(getattr(att, name), torch.nn.Parameter)


def test_geometric_attention_projections_and_init(ctl):
    """Biases on the query and key/value projections, none on the output one; the
    authors' fans: query (d, d_head), the first half of the key/value rows (d, d_head),
    the second half (d, d), the output (d, d)."""
    torch.manual_seed(0)
    d, dh = 256, 64
    att = ctl.GeometricAttention(d, 4, dropout=0.1)
    assert att.q.bias is not None and att.kv.bias is not None and att.o.bias is None
    assert att.direction.out_features == 2 * 4

    def bound(fan_in, fan_out):
        return (6 / (fan_in + fan_out)) ** 0.5

    for w, b in ((att.q.weight, bound(d, dh)), (att.kv.weight[:d], bound(d, dh)),
                 (att.kv.weight[d:], bound(d, d)), (att.o.weight, bound(d, d))):
        assert 0.98 * b < w.abs().max().item() <= b
    assert att.scale.item() == pytest.approx(dh ** -0.5)
    assert att.direction_scale.item() == 1.0 and att.bias.item() == 0.0


def test_geometric_attention_dropout_reaches_the_keys(ctl):
    torch.manual_seed(4)
    att = ctl.GeometricAttention(8, 2, dropout=1.0).train()
    x = torch.randn(2, 5, 8)
    pad = torch.zeros(2, 5, dtype=torch.bool)
    w = att.weights(x, pad)
    with torch.no_grad():                      # the same without keys: what dropout 1 leaves
        att.kv.weight[:, :].view(2, 2, 4, 8)[:, 0] = 0   # per head: key rows, value rows
        att.kv.bias.view(2, 2, 4)[:, 0] = 0
    assert torch.allclose(w, att.eval().weights(x, pad), atol=1e-6)


def _ndr(ctl, **changes):
    cfg = dict(d_model=16, heads=4, ff=32, layers=3, test_layers=None, dropout=0.0,
               attention_dropout=0.0, gate_dropout=0.0)
    cfg.update(changes)
    return ctl.CTLPPNDR(SimpleNamespace(**cfg), _task())


def _transformer(ctl, **changes):
    cfg = dict(d_model=16, heads=4, ff=32, layers=3, test_layers=None, dropout=0.0,
               attention_dropout=0.0)
    cfg.update(changes)
    return ctl.CTLPPTransformer(SimpleNamespace(**cfg), _task())


def test_ndr_copy_gate_shapes_and_copying(ctl):
    m = _ndr(ctl).eval()
    h = torch.randn(2, 6, 16)
    pad = torch.zeros(2, 6, dtype=torch.bool)
    new, g = m.gated_layer(h, pad)
    assert new.shape == h.shape and g.shape == h.shape and torch.all((g > 0) & (g < 1))
    assert torch.equal(m.layer(h, pad), new)
    with torch.no_grad():                    # a closed gate copies the input through
        m.gate2.bias.fill_(-1e4)
    new, _ = m.gated_layer(h, pad)
    assert torch.allclose(new, h, atol=1e-5)


def test_ndr_gate_is_a_two_layer_mlp_starting_at_minus_3(ctl):
    m = _ndr(ctl, d_model=256, ff=512)
    assert (m.gate1.in_features, m.gate1.out_features) == (256, 256)   # gate_size_multiplier 1
    assert (m.gate2.in_features, m.gate2.out_features) == (256, 256)   # not a scalar gate
    assert torch.all(m.gate2.bias == -3.0)


def test_ndr_gate_dropout_closes_whole_columns_in_training_only(ctl):
    torch.manual_seed(5)
    m = _ndr(ctl, gate_dropout=0.5)
    with torch.no_grad():
        m.gate2.bias.fill_(1e4)                  # open gates: a column changes unless dropped
    h = torch.randn(8, 6, 16)
    pad = torch.zeros(8, 6, dtype=torch.bool)
    new, _ = m.train().gated_layer(h, pad)
    same = (new == h)                            # [B, T, d]
    copied = same.all(-1)
    assert torch.equal(copied, same.any(-1))     # a column is copied whole or not at all
    assert 0.2 < copied.float().mean() < 0.8
    new, _ = m.eval().gated_layer(h, pad)
    assert not (new == h).all(-1).any()          # no gate dropout in evaluation


def test_ndr_dropout_only_on_the_attention_output(ctl):
    """u = LN(h + drop(att)); the feed-forward path and the gate see no dropout."""
    import torch.nn.functional as F

    torch.manual_seed(6)
    m = _ndr(ctl, dropout=1.0).train()
    h = torch.randn(2, 5, 16)
    new, g = m.gated_layer(h, torch.zeros(2, 5, dtype=torch.bool))
    u = m.ln_att(h)
    update = m.ln_ff(m.ff2(F.gelu(m.ff1(u))) + u)
    gate = torch.sigmoid(m.gate2(F.gelu(m.gate1(u))))
    assert torch.allclose(g, gate, atol=1e-6)
    assert torch.allclose(new, gate * update + (1 - gate) * h, atol=1e-5)


def test_ndr_evaluates_with_more_layers_than_it_trains(ctl):
    """universal.n_test_layers: 8 applications in training, 10 in evaluation."""
    m = _ndr(ctl, layers=2, test_layers=5)
    calls = []
    inner = m.layer
    m.layer = lambda x, pad: calls.append(1) or inner(x, pad)
    tokens = torch.tensor([[5, 6, 2]])
    m.train()(tokens)
    assert len(calls) == 2
    calls.clear()
    m.eval()(tokens)
    assert len(calls) == 5
    t = _transformer(ctl, layers=3)              # the Transformer: as many as in training
    calls.clear()
    inner_t = t.layer
    t.layer = lambda x, pad: calls.append(1) or inner_t(x, pad)
    t.eval()(tokens)
    assert len(calls) == 3


def test_attention_models_read_the_start_token_column(ctl):
    """A start token (fairseq's <s>) in front of the input, its column classified."""
    torch.manual_seed(7)
    task = _task()
    bos = task.source_dictionary.bos()
    tokens = torch.tensor([[5, 6, 7, 2], [8, 9, 2, task.source_dictionary.pad()]])
    t = _transformer(ctl, layers=0, dropout=0.5).train()     # no layer: the embedding itself
    feats = t.features(tokens)
    assert torch.equal(feats, t.embed.weight[bos].expand(2, -1))   # no dropout on embeddings
    assert torch.equal(t(tokens), t.out(feats))                      # nor before the classifier
    n = _ndr(ctl, dropout=0.5, gate_dropout=0.0).train()
    with torch.no_grad():
        n.gate2.bias.fill_(-1e4)                 # closed gates: every column is copied through
    assert torch.allclose(n.features(tokens), n.embed.weight[bos].expand(2, -1), atol=1e-5)
    assert torch.allclose(n(tokens), n.out(n.features(tokens)), atol=1e-6)


def test_transformer_dropout_places(ctl):
    """x = LN(x + drop(att(x))); x = LN(x + drop(W2 drop(relu(W1 x)))): with dropout 1
    nothing but the two norms is left."""
    torch.manual_seed(8)
    t = _transformer(ctl, dropout=1.0).train()
    x = torch.randn(2, 5, 16)
    assert torch.allclose(t.layer(x, torch.zeros(2, 5, dtype=torch.bool)),
                          t.ln2(t.ln1(x)), atol=1e-6)


def test_relative_attention_dropout_reaches_keys_not_weights(ctl):
    """Dropout 1 on the keys and relative-position keys leaves uniform attention over the
    unpadded keys (dropout on the weights would leave nothing)."""
    torch.manual_seed(9)
    att = ctl.RelativeMultiheadAttention(8, 2, dropout=1.0).train()
    x = torch.randn(1, 4, 8)
    pad = torch.tensor([[False, False, False, True]])
    v = att.kv(x).view(1, 4, 2, 2, 4)[:, :3, :, 1]           # unpadded values, per head
    expected = att.o(v.mean(1).reshape(1, 8)).expand(4, 8)
    assert torch.allclose(att(x, pad)[0], expected, atol=1e-6)


def test_relative_attention_scores_as_the_authors(ctl):
    """score(i, j) = s ((q_i + u).k_j + (q_i + v).W_r r(j - i)), r with sines in the even
    and cosines in the odd channels, no projection biases, a learned scale from
    1/sqrt(d_head)."""
    torch.manual_seed(10)
    att = ctl.RelativeMultiheadAttention(8, 2, dropout=0.0).eval()
    assert att.q.bias is None and att.kv.bias is None and att.pos.bias is None
    assert att.o.bias is None
    assert isinstance(att.scale, torch.nn.Parameter) and att.scale.item() == pytest.approx(0.5)
    with torch.no_grad():
        att.content_bias.normal_()
        att.position_bias.normal_()
        att.scale.fill_(0.7)
    assert torch.allclose(ctl.sinusoids(torch.tensor([3]), 4)[0],
                          torch.tensor([math.sin(3), math.cos(3), math.sin(0.03), math.cos(0.03)]))
    T = 3
    x = torch.randn(1, T, 8)
    q = att.q(x).view(T, 2, 4)
    k, v = att.kv(x).view(T, 2, 2, 4).unbind(2)
    out = torch.zeros(T, 2, 4)
    for h in range(2):
        for i in range(T):
            s = torch.stack([
                (q[i, h] + att.content_bias[h]) @ k[j, h]
                + (q[i, h] + att.position_bias[h])
                @ att.pos(ctl.sinusoids(torch.tensor([j - i]), 8))[0].view(2, 4)[h]
                for j in range(T)]) * 0.7
            out[i, h] = s.softmax(0) @ v[:, h]
    assert torch.allclose(att(x, torch.zeros(1, T, dtype=torch.bool))[0],
                          att.o(out.reshape(T, 8)), atol=1e-5)


def test_embedding_inits(ctl):
    """The Transformer's embeddings from kaiming_normal_ (std sqrt(2/d)); the NDR's
    PyTorch's N(0, 1)."""
    torch.manual_seed(11)
    task = _paper_task()
    t = ctl.CTLPPTransformer(ctl.SharedTransformerConfig(), task)
    n = ctl.CTLPPNDR(ctl.NDRConfig(), task)
    assert t.embed.weight.std().item() == pytest.approx((2 / 128) ** 0.5, rel=0.05)
    assert n.embed.weight.std().item() == pytest.approx(1.0, rel=0.05)


def test_transformer_feed_forward_init(ctl):
    torch.manual_seed(12)
    t = ctl.CTLPPTransformer(ctl.SharedTransformerConfig(), _paper_task())
    # xavier_normal_ with the ReLU gain, xavier_uniform_
    assert t.ff1.weight.std().item() == pytest.approx(2 ** 0.5 * (2 / (128 + 256)) ** 0.5,
                                                      rel=0.05)
    b = (6 / (128 + 256)) ** 0.5
    assert 0.98 * b < t.ff2.weight.abs().max().item() <= b


def _paper_task():
    """The input dictionary the suite's writer makes for the paper's task: fairseq's 4
    specials, 32 functions and 8 symbols, padded to a multiple of 8."""
    from fairseq.data import Dictionary

    d = Dictionary()
    for w in [f"f{i}" for i in range(32)] + [str(i) for i in range(8)]:
        d.add_symbol(w)
    d.finalize(padding_factor=8)
    assert len(d) == 48
    return SimpleNamespace(source_dictionary=d, num_classes=8)


def test_paper_size_defaults_and_parameter_counts(ctl):
    """The sweeps' sizes (ff_multiplier 2: ff 256 and 512) and Table 2's counts: the
    authors' checkpoints also hold buffers (two 1999 x 128 relative-position tables in
    the Transformer's attention, a 5000-long index in both) and a 42-row embedding
    (40 symbols, end and start) where fairseq's has 48 rows (<pad>, <unk> and 4 fillers
    more); the Transformer's attention also holds an unused scalar."""
    from eval.reports.tables import paper_numbers

    task = _paper_task()
    t = ctl.CTLPPTransformer(ctl.SharedTransformerConfig(), task)
    n = ctl.CTLPPNDR(ctl.NDRConfig(), task)
    assert (t.cfg.d_model, t.cfg.heads, t.ff1.out_features, t.cfg.layers) == (128, 4, 256, 8)
    assert (n.cfg.d_model, n.cfg.heads, n.ff1.out_features, n.cfg.layers,
            n.cfg.test_layers) == (256, 4, 512, 8, 10)
    counts = {k: sum(p.numel() for p in m.parameters()) for k, m in (("transformer", t),
                                                                     ("ndr", n))}
    assert counts == {"transformer": 155_785, "ndr": 674_835}
    table2 = paper_numbers("ctlpp")["table2"]
    authors = {"transformer": counts["transformer"] - 6 * 128 + 1 + 2 * 1999 * 128 + 5000,
               "ndr": counts["ndr"] - 6 * 256 + 5000}
    for k in authors:
        assert math.ceil(authors[k] / 1000) * 1000 == table2[k]["params"], k


def test_paper_profile_args_are_the_sweeps(ctl):
    from compsuite.registry import get_study
    from compsuite.toolkits import get_backend

    study, fairseq = get_study("ctlpp"), get_backend("fairseq")
    t = fairseq.train_args(study.run("transformer-fairseq"), "paper")
    n = fairseq.train_args(study.run("ndr-fairseq"), "paper")
    pick = ("arch", "d_model", "heads", "ff", "layers", "dropout", "attention_dropout",
            "weight_decay", "clip_norm", "max_update", "lr", "batch_size", "warmup_updates")
    assert {k: t.get(k) for k in pick} == dict(
        arch="ctlpp_transformer", d_model=128, heads=4, ff=256, layers=8, dropout=0.1,
        attention_dropout=0.1, weight_decay=0.0025, clip_norm=5.0, max_update=300000,
        lr=0.00015, batch_size=512, warmup_updates=500)
    assert {k: n.get(k) for k in pick + ("test_layers", "gate_dropout")} == dict(
        arch="ctlpp_ndr", d_model=256, heads=4, ff=512, layers=8, dropout=0.5,
        attention_dropout=0.1, weight_decay=0.0, clip_norm=1.0, max_update=80000,
        lr=0.00015, batch_size=512, warmup_updates=500, test_layers=10, gate_dropout=0.1)
    for r in ("transformer-fairseq", "ndr-fairseq"):
        assert study.run(r).gpu == {"amp": True}


@pytest.mark.parametrize("name,cfg", [
    ("CTLPPBiLSTM", dict(hidden_size=16, embed_dim=12, layers=1, dropout=0.0)),
    ("CTLPPTransformer", dict(d_model=16, heads=4, ff=32, layers=3, dropout=0.0,
                              attention_dropout=0.0)),
    ("CTLPPNDR", dict(d_model=16, heads=4, ff=32, layers=3, test_layers=4, dropout=0.0,
                      attention_dropout=0.0, gate_dropout=0.0)),
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
