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

from conftest import fairseq_predictions

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
                                     dropout=0.0, no_batchnorm=False, no_leaf_rnn=False,
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
    # four pairs and a cross-entropy: batch normalisation over two examples maps every
    # feature to ±1, which leaves (almost) no gradient to pass back
    model.train()
    net = _net([[5, 6, 7, 8], [5, 7], [9, 8, 7], [6, 5, 4, 9, 8]],
               [[9, 10], [11, 12, 13], [4, 5], [7, 7, 6]])
    torch.nn.functional.cross_entropy(model(**net), torch.tensor([0, 1, 2, 0])).backward()
    assert model.encoder.query.grad is not None and model.encoder.query.grad.abs().sum() > 0


def test_gumbel_tree_merges_the_chosen_pair_and_shifts_the_rest(plug):
    """With each step's choice forced, the root is the hand-made composition: merge
    (w2 w3), then (w0 w1), then the two; a shorter sentence in the same batch keeps its
    root once it has one."""
    import torch.nn.functional as F

    torch.manual_seed(5)
    enc = plug.trees.GumbelTreeEncoder(4, 5, leaf_rnn=True, temperature=1.0).eval()
    x = torch.randn(2, 4, 4)
    choices = iter([2, 0, 0])

    def forced(scores, valid):
        want = torch.full((scores.size(0),), next(choices))
        ok = valid[torch.arange(scores.size(0)), want]
        idx = torch.where(ok, want, valid.float().argmax(-1))   # a shorter row: its first
        return F.one_hot(idx, scores.size(-1)).float()

    enc.select = forced
    root = enc(x, torch.tensor([4, 2]))
    h, c = enc.leaves(x)
    leaf = [(h[:1, i], c[:1, i]) for i in range(4)]
    p23 = enc.compose(*leaf[2], *leaf[3])
    p01 = enc.compose(*leaf[0], *leaf[1])
    assert torch.allclose(root[0], enc.compose(*p01, *p23)[0][0], atol=1e-6)
    short = enc.compose(h[1:, 0], c[1:, 0], h[1:, 1], c[1:, 1])[0][0]
    assert torch.allclose(root[1], short, atol=1e-6)   # merged at step 1, kept after


def test_gtlstm_trains_on_a_batch_of_one(plug):
    model = _model(plug, "GumbelTreeLSTM").train()
    model(**_net([[5, 6, 7]], [[8, 9]])).sum().backward()


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
                                                  no_batchnorm=True), task)) == 262_203
    assert _count(n.DRBiLSTM(n.DRBiLSTMConfig(), task)) == 9_196_653
    assert _count(n.DRBiLSTMBoW(n.DRBiLSTMBoWConfig(), task)) == 3_919_053


# ----------------------------------------------------------------------------- fairseq
#: one run per new model (the BoW and WS variants share DR-BiLSTM's code path: the BoW
#: layers are unit-tested above, word shuffling in tests/test_nli_fairseq.py)
NEW_RUNS = ["drbilstm-fairseq", "stlstm-fairseq", "gtlstm-fairseq", "diin-fairseq"]


@pytest.fixture(scope="module")
def pair_bin(tmp_path_factory):
    """Synthetic pairs written by the study's pair writer (words, POS, trees,
    characters) and binarised by write_fairseq_pairs."""
    import json

    from compsuite.toolkits.fairseq.data import write_fairseq_pairs
    from compsuite.data_prep.nli import corpus
    from compsuite.data_prep.nli.snli import read_jsonl
    from compsuite.data_prep.nli.synthetic import generate_pairs

    root = tmp_path_factory.mktemp("nli_models")
    raw = root / "raw"
    for split, n in (("train", 48), ("valid", 16), ("test", 19)):
        path = root / f"{split}.jsonl"
        pairs = generate_pairs(n, 5, "dev" if split == "valid" else split)
        path.write_text("".join(json.dumps(p) + "\n" for p in pairs))
        corpus.write_split(raw, split, list(read_jsonl(path)))
    write_fairseq_pairs(raw, root / "bin", splits=("train", "valid", "test"))
    return root


def _command(root, name, args, max_update):
    from compsuite.toolkits.writing import toolkit_command
    from compsuite.toolkits.base import to_cli

    args = dict(args)
    args.update(task="sentence_pair_classification", criterion="sequence_classification",
                cpu=True, max_update=max_update, max_epoch=None, patience=-1, num_workers=0,
                valid_subset="valid,test", log_format="simple", log_interval=1, seed=1,
                no_epoch_checkpoints=True, save_dir=str(root / f"ck-{name}"))
    return (toolkit_command("fairseq-train") + [str(root / "bin"), "--user-dir", str(USER_DIR)]
            + to_cli(args))


@pytest.fixture(scope="module")
def trained(pair_bin):
    """fairseq-train, two at a time: each new run at the tiny profile's size for 3
    updates, and at the paper profile's (full-size models) for 1 update without
    validation.  Returns name -> the run's log."""
    import os
    import subprocess

    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    jobs = [(run, _study_args(run, "tiny"), 3) for run in NEW_RUNS]
    for run in NEW_RUNS:
        args = _study_args(run, "paper")
        args.update(disable_validation=True)
        jobs.append((f"paper-{run}", args, 1))
    logs = {}
    for start in range(0, len(jobs), 2):
        procs = []
        for name, args, updates in jobs[start:start + 2]:
            fh = open(pair_bin / f"train-{name}.log", "w")
            procs.append((name, fh, subprocess.Popen(_command(pair_bin, name, args, updates),
                                                     cwd=ROOT, stdout=fh,
                                                     stderr=subprocess.STDOUT, env=env)))
        for name, fh, proc in procs:
            rc = proc.wait(timeout=600)
            fh.close()
            logs[name] = (pair_bin / f"train-{name}.log").read_text()
            assert rc == 0, f"{name}:\n{logs[name][-3000:]}"
    return logs


def _study_args(run, profile):
    from compsuite.registry import get_study
    from compsuite.toolkits import get_backend

    study = get_study("nli")
    return get_backend("fairseq").train_args(study.run(run), profile)


@pytest.mark.parametrize("run", NEW_RUNS)
def test_fairseq_train_reload_and_predict(plug, run, pair_bin, trained):
    """Each new model, at the tiny profile's size, trains a few updates with
    fairseq-train on the pair writer's streams, reloads from its checkpoint and predicts
    every test pair; the reloaded model's accuracy is what training logged."""
    import re

    from fairseq import checkpoint_utils

    from compsuite.torch_compat import allow_toolkit_checkpoints

    log = trained[run]
    assert "num_updates 3" in log and "done training" in log
    allow_toolkit_checkpoints()
    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task(
        [str(pair_bin / f"ck-{run}" / "checkpoint_last.pt")],
        arg_overrides={"data": str(pair_bin / "bin")})
    preds = fairseq_predictions(task, models, "test")
    assert sorted(preds) == list(range(19))
    gold = (pair_bin / "raw" / "test.label").read_text().split()
    acc = 100.0 * sum(preds[i] == g for i, g in enumerate(gold)) / len(gold)
    logged = re.findall(r"valid on 'test' subset \|.*?\baccuracy ([\d.]+)", log)
    assert acc == pytest.approx(float(logged[-1]), abs=0.01)
    # the study's classifier reads the raw streams (words and, for these models, their
    # parses, tags and characters) and predicts the same labels
    from compsuite.data_prep.nli.corpus import read_split
    from compsuite.toolkits.fairseq.classifier import FairseqClassifier
    from compsuite.eval.nli.predict import pairs_of

    clf = FairseqClassifier(pair_bin / f"ck-{run}" / "checkpoint_last.pt", pair_bin / "bin",
                            batch_size=5)
    assert set(clf.pair_inputs) == set(cfg.task.pair_inputs.split(",")) - {""}
    raw = pair_bin / "raw"
    pairs = pairs_of(raw, "test", read_split(raw, "test"), clf.pair_inputs)
    assert clf.classify(pairs) == [preds[i] for i in range(19)]
    if clf.pair_inputs:
        with pytest.raises(ValueError, match="--pair-inputs"):
            clf.classify([p[:2] for p in pairs])


@pytest.mark.parametrize("run", NEW_RUNS)
def test_paper_config_runs_one_update(run, pair_bin, trained):
    """The paper profile's settings (full-size models) load and train one update; the
    checkpoint records the paper's architecture and sizes."""
    import torch

    from compsuite.torch_compat import allow_toolkit_checkpoints

    assert "done training" in trained[f"paper-{run}"]
    allow_toolkit_checkpoints()
    ck = torch.load(pair_bin / f"ck-paper-{run}" / "checkpoint_last.pt", map_location="cpu")
    model = dict(ck["cfg"]["model"])
    args = _study_args(run, "paper")
    assert model["_name"] == args["arch"]
    for key, want in args.items():
        if key in model and key not in ("lr", "dropout"):
            assert str(model[key]) == str(want), (key, model[key], want)
