"""The NLI paper profile's S-TLSTM, G-TLSTM and DIIN runs against their authors' code
(data_prep/nli/doc.md, "Paper profile against the authors' code", part 2): each fixed
setting is pinned here, read from the resolved paper profile, parsed by fairseq, or
measured on a built model.

References: lukecq1231/nli @ f503a1b (S-TLSTM, scripts/TreeLSTM_IM), jihunchoi/
unsupervised-treelstm @ 47623f5 (G-TLSTM), YichenGong/Densely-Interactive-Inference-
Network @ cb2c23b (DIIN)."""
import importlib
import math
from argparse import Namespace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from compsuite.registry import get_study
from compsuite.toolkits import get_backend
from compsuite.toolkits.base import to_cli

ROOT = Path(__file__).resolve().parent.parent
USER_DIR = ROOT / "fairseq_plugins"
STUDY = get_study("nli")
SNLI_TRAIN_PAIRS = 549_367          # SNLI 1.0 train without the '-' labels


def _args(run, profile="paper"):
    return get_backend("fairseq").train_args(STUDY.run(run), profile)


@pytest.fixture(scope="module")
def plug():
    from fairseq import utils

    utils.import_user_module(Namespace(user_dir=str(USER_DIR)))
    return SimpleNamespace(
        trees=importlib.import_module("fairseq_plugins.models.nli_trees"),
        batching=importlib.import_module("fairseq_plugins.trees"),
        diin=importlib.import_module("fairseq_plugins.models.nli_diin"),
        crit=importlib.import_module("fairseq_plugins.criterions.diin_classification"))


def _words(n=40):
    from fairseq.data import Dictionary

    d = Dictionary()
    for i in range(n - d.nspecial):
        d.add_symbol(f"w{i}")
    return d


def _orthogonal(m, atol=1e-5):
    eye = torch.eye(m.size(1))
    return torch.allclose(m.t() @ m, eye, atol=atol)


# ----------------------------------------------------------------- resolved profile
def test_paper_profile_settings_from_the_authors_code():
    st = _args("stlstm-fairseq")
    # TreeLSTM_IM/train.py: lrate 0.0004, adam, batch 32, clip 10; main.py: halve on a
    # non-improving validation (a tie is an improvement: valid_err <= min), stop at the
    # 8th halving (patience 7, bad_counter > patience), max_epochs 5000
    assert (st["lr"], st["optimizer"], st["batch_size"], st["clip_norm"]) == \
        (0.0004, "adam", 32, 10.0)
    assert (st["lr_scheduler"], st["lr_shrink"], st["lr_patience"]) == \
        ("reduce_lr_on_plateau", 0.5, 0)
    assert -1e-6 < st["lr_threshold"] < 0
    assert 0.0004 / 2 ** 8 < st["stop_min_lr"] < 0.0004 / 2 ** 7
    assert st["patience"] == -1 and st["max_epoch"] == 0
    assert st["original_init"] is True and st["unscaled_dropout"] is True

    gt = _args("gtlstm-fairseq")
    # snli/train.py: Adam without --lr (1e-3), clip 5, ten validations an epoch, no
    # early stopping; supplement: batch 128, GloVe fixed
    assert (gt["lr"], gt["batch_size"], gt["clip_norm"], gt["freeze_embeddings"]) == \
        (0.001, 128, 5.0, True)
    assert gt["save_interval_updates"] == math.ceil(SNLI_TRAIN_PAIRS / 128) // 10 == 429
    assert gt["keep_interval_updates"] == 1 and gt["patience"] == -1
    assert gt["original_init"] is True

    di = _args("diin-fairseq")
    # parameters.py / train_mnli.py: Adadelta 0.5 only (no SGD switch), clip 1, batch 70,
    # L2 + diff penalty, eval_step 1000, early stop 35,000 steps after the best
    assert (di["optimizer"], di["lr"], di["clip_norm"], di["batch_size"]) == \
        ("adadelta", 0.5, 1.0, 70)
    assert di["criterion"] == "diin_classification"
    assert di["save_interval_updates"] == 1000 and di["keep_interval_updates"] == 1
    assert di["patience"] == 35 and di["max_epoch"] == 0
    assert "lr_scheduler" not in di


@pytest.mark.parametrize("run", ["stlstm-fairseq", "gtlstm-fairseq", "diin-fairseq"])
@pytest.mark.parametrize("profile", ["quick", "tiny"])
def test_paper_only_options_stay_out_of_quick_and_tiny(run, profile):
    args = _args(run, profile)
    for key in ("original_init", "unscaled_dropout", "lr_threshold", "stop_min_lr",
                "save_interval_updates", "keep_interval_updates"):
        assert key not in args, key
    assert args["criterion"] == "sequence_classification"
    assert args["patience"] == -1


@pytest.mark.parametrize("run", ["stlstm-fairseq", "gtlstm-fairseq", "diin-fairseq"])
def test_fairseq_parses_the_paper_arguments(plug, run):
    """Every paper option is one fairseq knows for that architecture and criterion."""
    from fairseq import options

    args = _args(run)
    parser = options.get_training_parser()
    ns = options.parse_args_and_arch(
        parser, ["unused-data-dir", "--user-dir", str(USER_DIR)] + to_cli(args))
    for key, want in args.items():
        got = getattr(ns, key)
        assert got == want or got == [want] or str(got) == str(want), (key, got, want)


def test_stop_rule_counts_every_non_improving_validation(plug):
    """fairseq's plateau scheduler with the paper profile's S-TLSTM options halves the
    rate at every validation that is not at least as good as the best so far (ties
    are not), and fairseq-train stops at the 8th halving: TreeLSTM_IM/main.py's rule."""
    from fairseq.optim import FairseqOptimizer
    from fairseq.optim.lr_scheduler.reduce_lr_on_plateau import (
        ReduceLROnPlateauLRSchedule, ReduceLROnPlateauLRScheduleConfig)

    a = _args("stlstm-fairseq")

    class Opt(FairseqOptimizer):
        def __init__(self):
            super().__init__(None)
            self._optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)],
                                              lr=a["lr"])

    cfg = ReduceLROnPlateauLRScheduleConfig(
        lr_shrink=a["lr_shrink"], lr_threshold=a["lr_threshold"],
        lr_patience=a["lr_patience"], lr=[a["lr"]], maximize_best_checkpoint_metric=True)
    sched = ReduceLROnPlateauLRSchedule(cfg, Opt())
    # accuracies at successive epochs; "bad" marks the ones their code counts
    accs = [70.0, 75.0, 75.0, 74.0, 76.0, 76.0, 75.5, 75.9, 77.0, 76.0, 76.5, 76.9, 77.0,
            76.2, 76.8, 76.1, 99.0]
    bad = [False, False, False, True, False, False, True, True, False, True, True, True,
           False, True, True]
    lr, epochs = a["lr"], 0
    for epoch, acc in enumerate(accs, start=1):
        if lr <= a["stop_min_lr"]:          # fairseq_cli/train.py's check before an epoch
            break
        epochs = epoch
        lr = sched.step(epoch, acc)
        assert math.isclose(lr, a["lr"] * 0.5 ** sum(bad[:epoch])), epoch
    assert sum(bad) == 8 and epochs == len(bad)     # the 8th halving ended training


# ----------------------------------------------------------------- S-TLSTM
def _stlstm(plug, **over):
    cfg = plug.trees.STLSTMConfig(embed_dim=12, hidden_size=12, mlp_dim=12, dropout=0.5)
    for k, v in over.items():
        setattr(cfg, k, v)
    torch.manual_seed(0)
    return plug.trees.SyntacticTreeLSTM(cfg, SimpleNamespace(source_dictionary=_words(200),
                                                             num_classes=3))


def test_stlstm_original_initialisation(plug):
    m = _stlstm(plug, original_init=True)
    h = 12
    for cell in (m.encoder, m.composition):
        for g in range(4):                               # square input blocks: orthogonal
            assert _orthogonal(cell.W.weight[g * h:(g + 1) * h].t())
        assert torch.count_nonzero(cell.W.bias) == 0
        for g in range(5):
            for side in range(2):
                assert _orthogonal(cell.U.weight[g * h:(g + 1) * h, side * h:(side + 1) * h])
    for layer in (m.project, m.hidden, m.out):
        assert torch.count_nonzero(layer.bias) == 0
        assert 0.007 < layer.weight.std().item() < 0.013
    emb = m.embed.weight.detach()
    assert torch.count_nonzero(emb[m.pad]) == 0
    assert 0.009 < emb.std().item() < 0.011
    # a non-square input block (embedding 20 -> 12) is N(0, 0.01^2) instead
    wide = _stlstm(plug, original_init=True, embed_dim=20)
    assert 0.008 < wide.encoder.W.weight.std().item() < 0.012
    # without the flag: PyTorch's defaults (the quick and tiny profiles)
    plain = _stlstm(plug)
    assert plain.embed.weight.std().item() > 0.5
    assert not _orthogonal(plain.encoder.U.weight[:h, :h], atol=1e-2)


def test_stlstm_unscaled_dropout(plug):
    m = _stlstm(plug, unscaled_dropout=True)
    assert isinstance(m.drop, plug.trees.UnscaledDropout)
    x = torch.randn(200, 30).abs() + 0.1
    m.drop.eval()
    assert torch.allclose(m.drop(x), 0.5 * x)            # test time: scaled by 1 - p
    m.drop.train()
    y = m.drop(x)
    kept = y != 0
    assert torch.equal(y[kept], x[kept])                 # training: kept units unscaled
    assert 0.4 < kept.float().mean().item() < 0.6
    assert isinstance(_stlstm(plug).drop, torch.nn.Dropout)


# ----------------------------------------------------------------- G-TLSTM
def _gtlstm(plug, glove=None, **over):
    cfg = plug.trees.GTLSTMConfig(embed_dim=16, hidden_size=12, mlp_dim=24, original_init=True)
    for k, v in over.items():
        setattr(cfg, k, v)
    torch.manual_seed(0)
    task = SimpleNamespace(source_dictionary=_words(300), num_classes=3,
                           cfg=SimpleNamespace(embedding_path=glove))
    return plug.trees.GumbelTreeLSTM(cfg, task)


def test_gtlstm_original_initialisation(plug):
    m = _gtlstm(plug)
    leaf, h = m.encoder.leaf, 12
    assert 0.8 * math.sqrt(2 / 16) < leaf.weight_ih.std().item() < 1.2 * math.sqrt(2 / 16)
    assert _orthogonal(leaf.weight_hh)                   # [4h, h]: orthonormal columns
    assert torch.count_nonzero(leaf.bias_hh) == 0
    assert torch.equal(leaf.bias_ih[h:2 * h], torch.ones(h))
    assert torch.count_nonzero(leaf.bias_ih) == h
    lin = m.mlp[0]
    assert 0.8 * math.sqrt(2 / 48) < lin.weight.std().item() < 1.2 * math.sqrt(2 / 48)
    assert torch.count_nonzero(lin.bias) == 0
    assert 0.009 < m.embed.weight.std().item() < 0.011
    # with GloVe given, the words it lacks stay zero vectors (their load_glove)
    assert torch.count_nonzero(_gtlstm(plug, glove="vectors.txt").embed.weight) == 0
    # no leaf LSTM: the word map is He-normal with a zero bias
    no_leaf = _gtlstm(plug, no_leaf_rnn=True).encoder.leaf_map
    assert torch.count_nonzero(no_leaf.bias) == 0
    assert 0.8 * math.sqrt(2 / 16) < no_leaf.weight.std().item() < 1.2 * math.sqrt(2 / 16)
    # without the flag the leaf biases keep PyTorch's uniform draw
    plain = _gtlstm(plug, original_init=False)
    assert torch.count_nonzero(plain.encoder.leaf.bias_hh) > h


# ----------------------------------------------------------------- DIIN
def _diin(plug, **over):
    from fairseq.data import Dictionary

    def d(symbols):
        out = Dictionary()
        for s in symbols:
            out.add_symbol(s)
        return out

    feats = {"pos": d(["DT", "NN", "VBZ"]), "chars": d(list("abcdefgh"))}
    task = SimpleNamespace(source_dictionary=_words(30), num_classes=3,
                           feature_dictionary=lambda name: feats.get(name))
    cfg = plug.diin.DIINConfig(embed_dim=8, char_embed_dim=3, char_filters=4, char_kernel=2,
                               chars_per_word=5, fixed_len=8, highway_layers=1,
                               scale_down_ratio=0.5, dense_blocks=2, dense_layers=2,
                               growth_rate=3)
    for k, v in over.items():
        setattr(cfg, k, v)
    torch.manual_seed(0)
    return plug.diin.DIIN(cfg, task)


def test_diin_regularisation_terms(plug):
    m = _diin(plug)
    assert (m.cfg.l2_ratio, m.cfg.l2_full_reg_step, m.cfg.diff_penalty) == \
        (9e-5, 100000, 1e-3)                              # parameters.py defaults
    weights = {id(w) for w in m.l2_weights()}
    # their L2 covers every kernel / weight matrix, and nothing else
    named = dict(m.named_parameters())
    for name, p in named.items():
        kernel = name.endswith("weight") and not name.startswith(("embed", "char_"))
        assert (id(p) in weights) == kernel, name
    l2 = sum((p.detach() ** 2).sum() for p in m.l2_weights()) / 2
    diff = 0.0
    for a, b in zip(m.encoders[0][0].parameters(), m.encoders[1][0].parameters()):
        if a.dim() > 1:
            diff += ((a.detach() - b.detach()) ** 2).sum() / 2
    for step, sig in ((0, 1 / (1 + math.exp(8))), (50_000, 0.5), (100_000, 1 / (1 + math.exp(-8)))):
        m.set_num_updates(step)
        assert m.num_updates == step and m.drop.num_updates == step
        want = sig * 9e-5 * l2 + 1e-3 * diff
        assert torch.allclose(m.regularization_loss(), torch.as_tensor(want).float(),
                              rtol=1e-5)
    # one shared encoder: no difference penalty
    shared = _diin(plug, share_encoder=True)
    shared.set_num_updates(0)
    l2s = sum((p.detach() ** 2).sum() for p in shared.l2_weights()) / 2
    assert torch.allclose(shared.regularization_loss(), l2s * 9e-5 / (1 + math.exp(8)))


def test_diin_criterion_adds_the_penalty_in_training_only(plug):
    from fairseq.criterions import CRITERION_REGISTRY

    assert CRITERION_REGISTRY["diin_classification"] is plug.crit.DIINClassificationCriterion
    logits = torch.tensor([[2.0, 0.0, -1.0], [0.0, 1.0, 0.0]])

    class Stub(torch.nn.Module):
        def forward(self, **net):
            return logits

        def regularization_loss(self):
            return torch.tensor(0.25)

    sample = {"net_input": {}, "target": torch.tensor([0, 2]), "ntokens": 4}
    crit = plug.crit.DIINClassificationCriterion(None)
    ce = torch.nn.functional.cross_entropy(logits, sample["target"], reduction="sum")
    model = Stub()
    loss, n, log = crit(model.train(), sample)
    assert n == 2 and torch.isclose(loss, ce + 2 * 0.25)
    assert torch.isclose(log["loss"], ce)
    loss, _, _ = crit(model.eval(), sample)
    assert torch.isclose(loss, ce)
