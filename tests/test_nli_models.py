"""The sequential and recursive NLI models added for Nie et al.'s main comparison
(``fairseq_plugins/models/nli.py``: DR-BiLSTM and its BoW variant;
``fairseq_plugins/models/nli_trees.py``: S-TLSTM and G-TLSTM; the tree batching of
``fairseq_plugins/trees.py``): logits independent of padding, the tree-LSTM composing in
the order of a hand-made parse and equal to a per-node recursion, BoW blind to word
order, dependent reading, Gumbel selection, and parameter counts at the papers' sizes."""
import importlib
import random
import sys
from argparse import Namespace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
USER_DIR = ROOT / "fairseq_plugins"


@pytest.fixture(scope="module")
def plug():
    from fairseq import utils

    utils.import_user_module(Namespace(user_dir=str(USER_DIR)))
    return SimpleNamespace(nli=importlib.import_module("fairseq_plugins.models.nli"),
                           trees=importlib.import_module("fairseq_plugins.models.nli_trees"),
                           batching=importlib.import_module("fairseq_plugins.trees"))


def _task(n_tokens=40):
    from fairseq.data import Dictionary

    d = Dictionary()
    for i in range(n_tokens - d.nspecial):
        d.add_symbol(f"w{i}")
    return SimpleNamespace(source_dictionary=d, num_classes=3)


def right_branching(n):
    """(w0 (w1 (w2 ...))): children in post-order, the sentence's numbering."""
    out = []
    for k in range(n - 1):
        left = n - 2 - k
        right = n - 1 if k == 0 else n + k - 1
        out.append((left, right))
    return out


def left_branching(n):
    """(((w0 w1) w2) ...)."""
    return [(0, 1)] + [(n + k - 1, k + 1) for k in range(1, n - 1)]


def _net(premises, hypotheses, trees=None, pad=1):
    """Right-padded word tensors and, with ``trees`` ((premise trees, hypothesis trees)),
    the children tensors in the task's format (rows past n-2 are -1)."""
    out = {}
    for i, (name, sents) in enumerate((("premise", premises), ("hypothesis", hypotheses))):
        width = max(len(s) for s in sents)
        out[f"{name}_tokens"] = torch.tensor([s + [pad] * (width - len(s)) for s in sents])
        out[f"{name}_lengths"] = torch.tensor([len(s) for s in sents])
        if trees is not None:
            t = torch.full((len(sents), max(width - 1, 1), 2), -1)
            for b, (s, tree) in enumerate(zip(sents, trees[i])):
                tree = right_branching(len(s)) if tree is None else tree
                for k, lr in enumerate(tree):
                    t[b, k] = torch.tensor(lr)
            out[f"{name}_tree"] = t
    return out


def _cfg(cls, **kw):
    return SimpleNamespace(freeze_embeddings=False, **kw)


TINY = {
    "DRBiLSTM": ("nli", dict(embed_dim=8, hidden_size=6, mlp_dim=8, dropout=0.0, bow=False)),
    "DRBiLSTMBoW": ("nli", dict(embed_dim=8, hidden_size=6, mlp_dim=8, dropout=0.0, bow=True)),
    "SyntacticTreeLSTM": ("trees", dict(embed_dim=8, hidden_size=6, mlp_dim=8, dropout=0.0)),
    "GumbelTreeLSTM": ("trees", dict(embed_dim=8, hidden_size=6, mlp_dim=8, mlp_layers=1,
                                     dropout=0.0, batchnorm=True, leaf_rnn=True,
                                     temperature=1.0)),
}


def _model(plug, name, seed=0):
    torch.manual_seed(seed)
    module, kw = TINY[name]
    return getattr(getattr(plug, module), name)(_cfg(name, **kw), _task()).eval()


TREES = {"SyntacticTreeLSTM"}


# ----------------------------------------------------------------------------- padding
@pytest.mark.parametrize("name", list(TINY))
def test_padding_does_not_change_logits(plug, name):
    model = _model(plug, name)
    trees = name in TREES
    short = ([5, 6, 7], [8, 9])
    long = ([10, 11, 12, 13, 14, 15, 16], [17, 18, 19, 20, 21, 22])
    t1 = ([None], [None]) if trees else None
    t2 = ([None, None], [None, None]) if trees else None
    alone = model(**_net([short[0]], [short[1]], t1))
    batch = model(**_net([short[0], long[0]], [short[1], long[1]], t2))
    assert batch.shape == (2, 3)
    assert torch.allclose(batch[0], alone[0], atol=1e-5)
    # a real word in the padding's place changes the example
    t3 = ([[(0, 1), (2, 3), (4, 5)] if trees else None, None], [None, None]) if trees else None
    other = model(**_net([short[0] + [4], long[0]], [short[1], long[1]], t3))
    assert not torch.allclose(other[0], batch[0], atol=1e-4)


# ----------------------------------------------------------------------------- trees
def test_tree_lstm_composes_in_the_order_of_a_hand_made_parse(plug):
    """((w0 w1) w2) and (w0 (w1 w2)): the root is the cell applied in the parse's order,
    computed here by hand; the two parses give different roots."""
    b = plug.batching
    torch.manual_seed(1)
    cell = b.BinaryTreeLSTM(4, 5)
    x = torch.randn(1, 3 + 2, 4)                      # 3 words, 2 internal nodes
    wx = cell.W(x[0])
    zero = torch.zeros(5)
    leaf = [cell.cell(wx[i], zero, zero, zero, zero) for i in range(3)]
    roots = {}
    for name, tree in (("left", [(0, 1), (3, 2)]), ("right", [(1, 2), (0, 3)])):
        children = torch.tensor([tree])
        h = cell(x, b.schedule(children, torch.tensor([3]), 3))
        if name == "left":
            first = cell.cell(wx[3], *leaf[0], *leaf[1])
            want = cell.cell(wx[4], *first, *leaf[2])[0]
        else:
            first = cell.cell(wx[3], *leaf[1], *leaf[2])
            want = cell.cell(wx[4], *leaf[0], *first)[0]
        assert torch.allclose(h[0, 4], want, atol=1e-6)     # the root: buffer T + n - 2
        assert torch.allclose(h[0, 3], first[0], atol=1e-6)
        roots[name] = h[0, 4]
    assert not torch.allclose(roots["left"], roots["right"], atol=1e-4)


def test_level_batching_equals_per_node_recursion(plug):
    b = plug.batching
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_tree_lstm import random_tree
    finally:
        sys.path.pop(0)
    rng = random.Random(0)
    torch.manual_seed(0)
    lens = [1, 5, 3, 9, 2, 9]
    T = max(lens)
    children = torch.full((len(lens), T - 1, 2), -1)
    trees = []
    for i, n in enumerate(lens):
        trees.append(random_tree(n, rng))
        for k, lr in enumerate(trees[-1]):
            children[i, k] = torch.tensor(lr)
    cell = b.BinaryTreeLSTM(4, 6)
    x = torch.randn(len(lens), 2 * T - 1, 4)
    sched = b.schedule(children, torch.tensor(lens), T)
    assert len(sched.levels) <= T - 1
    h = cell(x, sched)
    for i, n in enumerate(lens):
        xs = torch.cat([x[i, :n], x[i, T:T + n - 1]])
        ref = b.recursive_tree_lstm(cell, xs, torch.tensor(trees[i]).reshape(-1, 2), n)
        assert torch.allclose(torch.cat([h[i, :n], h[i, T:T + n - 1]]), ref, atol=1e-6)
        assert not h[i][~sched.node_mask[i]].any()          # padding nodes stay zero
    assert sched.root.tolist() == [0 if n == 1 else T + n - 2 for n in lens]


def test_schedule_rejects_a_parse_of_the_wrong_size(plug):
    b = plug.batching
    with pytest.raises(ValueError, match="1 internal nodes for 3 words"):
        b.schedule(torch.tensor([[[0, 1], [-1, -1]]]), torch.tensor([3]), 3)


def test_stlstm_reads_the_parse(plug):
    model = _model(plug, "SyntacticTreeLSTM")
    p, h = [5, 6, 7, 8], [9, 10, 11]
    a = model(**_net([p], [h], ([left_branching(4)], [None])))
    b = model(**_net([p], [h], ([right_branching(4)], [None])))
    assert not torch.allclose(a, b, atol=1e-5)
    with pytest.raises(ValueError, match="--pair-inputs tree"):
        model(**_net([p], [h]))


# ----------------------------------------------------------------------------- word order
@pytest.mark.parametrize("name,blind", [("DRBiLSTMBoW", True), ("DRBiLSTM", False),
                                        ("GumbelTreeLSTM", False)])
def test_bow_variants_are_blind_to_word_order(plug, name, blind):
    model = _model(plug, name, seed=3)
    logits = model(**_net([[5, 6, 7, 8, 9], [6, 7]], [[10, 11, 12, 13], [12]]))
    shuffled = model(**_net([[9, 7, 5, 8, 6], [7, 6]], [[13, 10, 12, 11], [12]]))
    assert torch.allclose(logits, shuffled, atol=1e-5) == blind
    if blind:
        assert not any(isinstance(m, torch.nn.LSTM) for m in model.modules())


def test_dependent_reading_conditions_each_sentence_on_the_other(plug):
    """DR-BiLSTM's encoding of the premise changes with the hypothesis (its dependent
    reading starts from the hypothesis's final state); ESIM-style independent encoding
    would not."""
    model = _model(plug, "DRBiLSTM", seed=2)
    reader = model.encoder
    u = torch.randn(1, 4, 8)
    m4, m3 = torch.ones(1, 4, dtype=torch.bool), torch.ones(1, 3, dtype=torch.bool)
    (ui1, ud1), _ = reader(u, torch.randn(1, 3, 8), m4, m3)
    (ui2, ud2), _ = reader(u, torch.randn(1, 3, 8), m4, m3)
    assert torch.allclose(ui1, ui2)                 # the independent reading does not
    assert not torch.allclose(ud1, ud2, atol=1e-5)  # the dependent one does


def test_gumbel_selection_is_straight_through_and_deterministic_in_evaluation(plug):
    model = _model(plug, "GumbelTreeLSTM", seed=4)
    net = _net([[5, 6, 7, 8, 9, 10]], [[11, 12, 13]])
    assert torch.equal(model(**net), model(**net))           # argmax at evaluation
    enc = model.encoder
    enc.train()
    scores = torch.tensor([[0.1, 2.0, -1.0, 0.0]], requires_grad=True)
    valid = torch.tensor([[True, True, True, False]])
    y = enc.select(scores, valid)
    assert y.sum().item() == pytest.approx(1.0) and y[0, 3] == 0      # one-hot, valid only
    (y * torch.arange(4.0)).sum().backward()
    assert scores.grad is not None and scores.grad[0, :3].abs().sum() > 0  # through softmax
    model.train()
    model(**_net([[5, 6, 7, 8], [5, 7]], [[9, 10], [11, 12, 13]])).sum().backward()
    assert model.encoder.query.grad is not None and model.encoder.query.grad.abs().sum() > 0


# ----------------------------------------------------------------------------- sizes
def _count(model):
    return sum(p.numel() for k, p in model.named_parameters()
               if not k.startswith(("embed.", "node_input")))


def test_parameter_counts_at_paper_size(plug):
    """Without the word embeddings (and S-TLSTM's internal-node input, an embedding row
    in the original), as the papers count.  S-TLSTM: Chen et al. (2017) Table 1 gives HIM
    7.7M and ESIM 4.3M, so the tree model alone about 3.4M; G-TLSTM: Choi et al. (2018)
    Table 1: 100D 262K, 300D 2.9M, 600D 10.3M; DR-BiLSTM: no count in Ghaeini et al."""
    t, n = plug.trees, plug.nli
    task = _task()
    assert _count(t.SyntacticTreeLSTM(t.STLSTMConfig(), task)) == 3_423_903
    assert _count(t.GumbelTreeLSTM(t.GTLSTMConfig(), task)) == 2_861_547
    assert _count(t.GumbelTreeLSTM(t.GTLSTMConfig(hidden_size=600, mlp_layers=3,
                                                  dropout=0.2), task)) == 10_336_147
    assert _count(t.GumbelTreeLSTM(t.GTLSTMConfig(embed_dim=100, hidden_size=100, mlp_dim=200,
                                                  batchnorm=False), task)) == 262_203
    assert _count(n.DRBiLSTM(n.DRBiLSTMConfig(), task)) == 9_196_653
    assert _count(n.DRBiLSTMBoW(n.DRBiLSTMBoWConfig(), task)) == 3_919_053
