"""The NLI paper profile against the original implementations, part 1 (ESIM, DAM, RSE,
DR-BiLSTM and their training; data_prep/nli/doc.md, "Paper profile against the
authors' code"): each setting fixed there is read back from the resolved paper
profile as fairseq-train parses it, or from the model it builds, and its behaviour is
checked (the schedule's halvings and stop, the optimizer's first step, the layers'
wiring, where dropout acts, the initialisation, the extra words)."""
import functools
from argparse import Namespace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
USER_DIR = ROOT / "fairseq_plugins"

ESIM_RUNS = ["esim-fairseq", "esim-bow-fairseq", "esim-ws-fairseq", "esim-adv-soswap-fairseq",
             "esim-adv-addamod-fairseq"]
DRBILSTM_RUNS = ["drbilstm-fairseq", "drbilstm-bow-fairseq", "drbilstm-ws-fairseq"]
RSE_RUNS = ["rse-fairseq", "rse-bow-fairseq"]


@pytest.fixture(scope="module")
def nli():
    from fairseq import utils

    utils.import_user_module(Namespace(user_dir=str(USER_DIR)))
    import fairseq_plugins.models.nli as models

    return models


def paper_args(run: str) -> dict:
    from compsuite.registry import get_study
    from compsuite.toolkits import get_backend

    return get_backend("fairseq").train_args(get_study("nli").run(run), "paper")


@functools.lru_cache(maxsize=None)
def parsed(run: str):
    """The paper profile's options of ``run`` as fairseq-train parses them (its own
    parser, the plugins registered), as fairseq's config object."""
    from fairseq import options
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf

    from compsuite.toolkits.base import to_cli

    parser = options.get_training_parser()
    ns = options.parse_args_and_arch(parser, input_args=[
        str(ROOT / "no-data"), "--user-dir", str(USER_DIR)] + to_cli(paper_args(run)))
    return convert_namespace_to_omegaconf(ns)


def fake_task(n=40):
    from fairseq.data import Dictionary

    d = Dictionary()
    for i in range(n):
        d.add_symbol(f"w{i}")
    return SimpleNamespace(source_dictionary=d, num_classes=3)


def net(rows, pad=1):
    width = max(len(r) for r in rows)
    t = torch.tensor([r + [pad] * (width - len(r)) for r in rows])
    return t, t.ne(pad).sum(1)


def logits(model, premises, hypotheses):
    p, pl = net(premises)
    h, hl = net(hypotheses)
    return model(p, pl, h, hl)


# ----------------------------------------------------------------------------- schedules
def run_schedule(cfg, accuracies):
    """fairseq-train's epoch loop (fairseq_cli/train.py, trainer.lr_step*) on given
    validation accuracies: the lr scheduler built from ``cfg`` is told each epoch's
    start and its accuracy at its end, and training stops before an epoch once the rate
    is at or below --stop-min-lr or the epoch cap is passed.  Returns the rate of each
    epoch that ran."""
    from fairseq.optim import build_optimizer
    from fairseq.optim.lr_scheduler import build_lr_scheduler

    opt = build_optimizer(cfg.optimizer, [torch.nn.Parameter(torch.zeros(2))])
    sched = build_lr_scheduler(cfg.lr_scheduler, opt)
    lr, rates = opt.get_lr(), []
    max_epoch = cfg.optimization.max_epoch or float("inf")
    for epoch, acc in enumerate(accuracies, start=1):
        if lr <= cfg.optimization.stop_min_lr or epoch > max_epoch:
            break
        sched.step_begin_epoch(epoch)
        rates.append(opt.get_lr())
        sched.step(epoch, acc)
        lr = sched.step_update(epoch * 100)
    return rates


@pytest.mark.parametrize("run", ["esim-fairseq", "drbilstm-fairseq"])
def test_esim_schedule_halves_on_every_validation_without_a_better_accuracy(nli, run):
    """ESIM's code (lukecq1231/nli scripts/ESIM/main.py, train(); train.py: lrate 4e-4,
    patience 7, validFreq one epoch): a validation whose error is above the best so far
    halves the rate (a tie is not above), and training ends when the halvings exceed 7;
    no epoch cap.  DR-BiLSTM takes the same schedule (ours: Ghaeini et al. give none)."""
    cfg = parsed(run)
    assert cfg.optimizer._name == "adam" and list(cfg.optimization.lr) == [0.0004]
    assert cfg.dataset.batch_size == 32 and cfg.optimization.clip_norm == 10.0
    assert cfg.lr_scheduler._name == "reduce_lr_on_plateau"
    assert cfg.optimization.max_epoch == 0 and cfg.checkpoint.patience <= 0
    # improve, tie (no halving), worse (halving), improve, then nothing better
    accs = [80.0, 81.0, 81.0, 80.5, 82.0] + [81.0] * 20
    rates = run_schedule(cfg, accs)
    assert rates[:5] == [4e-4] * 4 + [2e-4]
    assert rates[5:] == [2e-4 / 2 ** k for k in range(7)]   # 1 + 7 halvings, the 8th ends it
    assert len(rates) == 12


def test_variants_train_as_their_model():
    """The BoW, word-shuffled and augmented runs take their model's paper settings; only
    the architecture or the shuffle differs (the study adds the augmentation pools)."""
    for base, runs in (("esim-fairseq", ESIM_RUNS), ("drbilstm-fairseq", DRBILSTM_RUNS),
                       ("rse-fairseq", RSE_RUNS)):
        want = paper_args(base)
        for run in runs:
            got = paper_args(run)
            assert {k: v for k, v in got.items() if k not in ("arch", "shuffle_words")} == \
                {k: v for k, v in want.items() if k != "arch"}, run
    assert paper_args("esim-ws-fairseq")["shuffle_words"] is True
    assert paper_args("drbilstm-ws-fairseq")["shuffle_words"] is True
    assert paper_args("esim-bow-fairseq")["arch"] == "nli_esim_bow"
    assert paper_args("rse-bow-fairseq")["arch"] == "nli_rse_bow"


def test_esim_paper_profile_takes_the_original_init_bos_eos_and_dropout():
    model = parsed("esim-fairseq").model
    assert model.original_init and model.bos_eos and model.unscaled_dropout
    assert model.hidden_size == 300 and model.mlp_dim == 300 and model.dropout == 0.5
    assert not getattr(parsed("drbilstm-fairseq").model, "original_init", False)


def test_esim_unscaled_dropout(nli):
    """scripts/ESIM/main.py dropout_layer: training x * mask (p 0.5), test x * 0.5."""
    model = nli.ESIM(nli.ESIMConfig(embed_dim=8, hidden_size=6, mlp_dim=5,
                                    unscaled_dropout=True), fake_task())
    x = torch.rand(2000) + 0.5
    model.eval()
    assert torch.allclose(model.drop(x), 0.5 * x)
    model.train()
    y = model.drop(x)
    kept = y != 0
    assert torch.equal(y[kept], x[kept]) and 0.4 < kept.float().mean() < 0.6
    plain = nli.ESIM(nli.ESIMConfig(embed_dim=8, hidden_size=6, mlp_dim=5), fake_task()).train()
    z = plain.drop(x)
    assert torch.allclose(z[z != 0], 2 * x[z != 0])       # PyTorch's: kept values doubled


def test_rse_schedule_is_three_epochs_of_2e4_2e4_1e4(nli):
    """easonnie/ResEncoder model/res_encoder.py train_snli: ``for i in range(3)``,
    lr = 2e-4 / 2 ** (i // 2), batch 32, no early stopping (RSE BoW: the same, see
    test_variants_train_as_their_model)."""
    for run in ["rse-fairseq"]:
        cfg = parsed(run)
        assert cfg.optimizer._name == "adam" and cfg.dataset.batch_size == 32
        assert cfg.optimization.max_epoch == 3 and cfg.checkpoint.patience <= 0
        assert run_schedule(cfg, [80.0, 70.0, 60.0, 50.0]) == [2e-4, 2e-4, 1e-4]
        assert cfg.optimization.clip_norm == 0
        # validations (and the best checkpoint) every 1,000 updates, not only per epoch
        assert cfg.dataset.validate_interval_updates == 1000
        assert cfg.checkpoint.save_interval_updates == 1000
        assert cfg.checkpoint.keep_interval_updates == 1
        m = cfg.model
        assert (m.hidden_sizes, m.mlp_dim, m.dropout, m.max_train_len) == ("600,600,600", 800,
                                                                           0.1, 60)


# ----------------------------------------------------------------------------- ESIM
def test_esim_dropout_acts_on_the_projection_output(nli):
    """Their code: inp = relu(projection(m)); dropout(inp): the 8h-wide enhancement
    itself is never dropped."""
    model = nli.ESIM(nli.ESIMConfig(embed_dim=8, hidden_size=6, mlp_dim=5), fake_task())
    seen = []

    class Record(torch.nn.Module):
        def forward(self, x):
            seen.append(x.detach().clone())
            return x

    model.drop = Record()
    logits(model, [[5, 6, 7], [8, 9]], [[10, 11], [12, 13, 14]])
    widths = [(x.dim(), x.size(-1)) for x in seen]
    assert (3, 6) in widths and (3, 48) not in widths          # [B, L, h], never [B, L, 8h]
    assert all(bool((x >= 0).all()) for x in seen if x.dim() == 3 and x.size(-1) == 6)
    assert sorted(widths) == sorted([(3, 8), (3, 8), (3, 6), (3, 6), (2, 48), (2, 5)])


def _orthogonal(w):
    return torch.allclose(w @ w.T, torch.eye(w.size(0)), atol=1e-4)


def test_esim_original_init(nli):
    """scripts/ESIM/main.py: ortho_weight / norm_weight(scale 0.01), zero biases (at
    the paper's shape: word vectors as wide as the LSTMs, so every input block is
    square)."""
    task = fake_task(400)
    torch.manual_seed(0)
    sizes = dict(embed_dim=16, hidden_size=16, mlp_dim=64)
    model = nli.ESIM(nli.ESIMConfig(original_init=True, **sizes), task)
    for lstm in (model.encoder.lstm, model.composition.lstm):      # input 16 = hidden 16
        for name, w in lstm.named_parameters():
            if name.startswith("bias"):
                assert torch.all(w == 0)
            else:
                assert all(_orthogonal(g) for g in w.detach().chunk(4, 0)), name
    for lin in (model.project, model.hidden):
        assert abs(lin.weight.std().item() - 0.01) < 0.002 and torch.all(lin.bias == 0)
    assert torch.all(model.out.bias == 0) and model.out.weight.abs().max() < 0.05
    emb = model.embed.weight.detach()
    assert abs(emb[4:].std().item() - 0.01) < 0.002 and torch.all(emb[task.source_dictionary.pad()] == 0)
    # without the option: PyTorch's own initialisation (not orthogonal, not N(0, 0.01^2))
    plain = nli.ESIM(nli.ESIMConfig(**sizes), task)
    assert not _orthogonal(plain.encoder.lstm.weight_hh_l0.detach().chunk(4, 0)[0])
    assert not torch.all(plain.project.bias == 0)
    assert abs(plain.embed.weight[4:].std().item() - 1.0) < 0.1
    # the BoW variant's feed-forward layers take N(0, 0.01^2) too
    bow = nli.ESIM(nli.ESIMConfig(bow=True, original_init=True, **sizes), task)
    assert abs(bow.encoder.ff.weight.std().item() - 0.01) < 0.002


def test_esim_reads_each_sentence_between_bos_and_eos(nli):
    """scripts/ESIM/data_iterator.py: ``ss.insert(0, '_BOS_')``, ``ss.append('_EOS_')``."""
    task = fake_task()
    d = task.source_dictionary
    t, _ = net([[5, 6, 7], [8]])
    assert nli.wrap_bos_eos(t, d.pad(), d.bos(), d.eos()).tolist() == [
        [d.bos(), 5, 6, 7, d.eos()], [d.bos(), 8, d.eos(), d.pad(), d.pad()]]
    torch.manual_seed(0)
    wrapped = nli.ESIM(nli.ESIMConfig(embed_dim=8, hidden_size=6, mlp_dim=5, bos_eos=True),
                       task).eval()
    plain = nli.ESIM(nli.ESIMConfig(embed_dim=8, hidden_size=6, mlp_dim=5), task).eval()
    plain.load_state_dict(wrapped.state_dict())
    b, e = d.bos(), d.eos()
    prem, hyp = [[5, 6, 7], [8, 9]], [[10, 11], [12, 13, 14]]
    got = logits(wrapped, prem, hyp)
    assert torch.allclose(got, logits(plain, [[b] + p + [e] for p in prem],
                                      [[b] + h + [e] for h in hyp]), atol=1e-6)
    assert not torch.allclose(got, logits(plain, prem, hyp), atol=1e-4)


# ----------------------------------------------------------------------------- DAM
def test_dam_paper_profile(nli):
    """harvardnlp/decomp-attn: train.lua (hidden 200, dropout 0.2, 100 epochs, param_init
    0.01, adagrad 0.05, fix_word_vecs 1), preprocess.py (batchsize 32, BOS first),
    get_pretrain_vecs.py (rows / their norm), utils.lua (accumulators from 0.1)."""
    cfg = parsed("dam-fairseq")
    m = cfg.model
    assert (m.proj_dim, m.ff_dim, m.dropout) == (200, 200, 0.2)
    assert m.freeze_embeddings and m.unit_norm_embeddings and m.null_token and m.original_init
    assert cfg.optimizer._name == "adagrad_acc" and cfg.optimizer.initial_accumulator_value == 0.1
    assert list(cfg.optimization.lr) == [0.05] and cfg.dataset.batch_size == 32
    assert cfg.optimization.max_epoch == 100 and cfg.checkpoint.patience <= 0
    assert cfg.optimization.clip_norm == 0
    # the optimizer's first step: w - lr * g / sqrt(0.1 + g^2), not fairseq's w - lr * sign(g)
    from fairseq.optim import build_optimizer

    w = torch.nn.Parameter(torch.zeros(3))
    opt = build_optimizer(cfg.optimizer, [w])
    w.grad = torch.tensor([0.01, -0.2, 0.0])
    opt.step()
    want = -0.05 * w.grad / torch.sqrt(0.1 + w.grad ** 2)
    assert torch.allclose(w.detach(), want, atol=1e-7)


def test_dam_unit_norm_null_token_and_init(nli):
    task = fake_task()
    d = task.source_dictionary
    small = dict(embed_dim=8, proj_dim=6, ff_dim=6, dropout=0.0)
    torch.manual_seed(0)
    model = nli.DecomposableAttention(nli.DAMConfig(unit_norm_embeddings=True, **small),
                                      task).eval()
    prem, hyp = [[5, 6, 7], [8, 9]], [[10, 11], [12, 13, 14]]
    before = logits(model, prem, hyp)
    with torch.no_grad():
        model.embed.weight[6] *= 3.0                     # a longer vector, the same direction
    assert torch.allclose(before, logits(model, prem, hyp), atol=1e-6)
    model.unit_norm = False
    assert not torch.allclose(before, logits(model, prem, hyp), atol=1e-4)
    # the null token: the same as putting <s> before each sentence by hand
    torch.manual_seed(0)
    nulled = nli.DecomposableAttention(nli.DAMConfig(null_token=True, **small), task).eval()
    plain = nli.DecomposableAttention(nli.DAMConfig(**small), task).eval()
    plain.load_state_dict(nulled.state_dict())
    b = d.bos()
    got = logits(nulled, prem, hyp)
    assert torch.allclose(got, logits(plain, [[b] + p for p in prem], [[b] + h for h in hyp]),
                          atol=1e-6)
    assert not torch.allclose(got, logits(plain, prem, hyp), atol=1e-4)
    # the replication's N(0, 0.01^2) for every weight and bias (not the embedding)
    init = nli.DecomposableAttention(nli.DAMConfig(original_init=True), task)
    for name, p in init.named_parameters():
        if not name.startswith("embed.") and p.numel() >= 200:
            assert abs(p.std().item() - 0.01) < 0.003, name
    assert abs(init.embed.weight[4:].std().item() - 1.0) < 0.1


# ----------------------------------------------------------------------------- RSE
def test_rse_residual_wiring(nli):
    """model/res_encoder.py: lstm_1 reads [e; out_1], lstm_2 reads [e; out_1 + out_2]."""
    task = fake_task()
    paper = nli.ResidualSentenceEncoder(nli.RSEConfig(), task)
    assert [layer.lstm.input_size for layer in paper.layers] == [300, 1500, 1500]
    assert [layer.lstm.hidden_size for layer in paper.layers] == [600, 600, 600]
    # without the word embeddings: 28,352,003 (the shortcut wiring would be 34,112,003)
    assert sum(p.numel() for k, p in paper.named_parameters()
               if not k.startswith("embed.")) == 28_352_003
    torch.manual_seed(0)
    model = nli.ResidualSentenceEncoder(nli.RSEConfig(embed_dim=8, hidden_sizes="4,4,5",
                                                      mlp_dim=8, dropout=0.0), task).eval()
    ins, outs = [], []

    def record(module, args, out):
        ins.append(args[0])
        outs.append(out)

    for layer in model.layers:
        layer.register_forward_hook(record)
    tokens = torch.tensor([[5, 6, 7, 8]])
    model.encode(tokens, tokens.ne(1))
    e = model.embed(tokens)
    assert torch.equal(ins[0], e)
    assert torch.allclose(ins[1], torch.cat([e, outs[0]], -1))
    assert torch.allclose(ins[2], torch.cat([e, outs[0] + outs[1]], -1))
    with pytest.raises(ValueError, match="equally wide"):
        nli.ResidualSentenceEncoder(nli.RSEConfig(hidden_sizes="4,5,6"), task)


def test_rse_classifier_drops_after_the_hidden_layer_only(nli):
    """model/res_encoder.py: Sequential(mlp_1, ReLU, Dropout, sm)."""
    model = nli.ResidualSentenceEncoder(nli.RSEConfig(embed_dim=8, hidden_sizes="4,4,4",
                                                      mlp_dim=7), fake_task())
    seen = []

    class Record(torch.nn.Module):
        def forward(self, x):
            seen.append(x.size(-1))
            return x

    model.drop = Record()
    logits(model, [[5, 6, 7]], [[8, 9]])
    assert seen == [7]


def test_rse_cuts_training_sentences_to_max_train_len(nli):
    """model/res_encoder.py: max_l = 60 in training (l.clamp(max=max_l), s[:max_l])."""
    torch.manual_seed(0)
    model = nli.ResidualSentenceEncoder(nli.RSEConfig(embed_dim=8, hidden_sizes="4,4,4",
                                                      mlp_dim=8, dropout=0.0,
                                                      max_train_len=5), fake_task())
    long = [5, 6, 7, 8, 9, 10, 11]
    other = long[:5] + [20, 21]                     # differs only after the 5th word
    model.train()
    assert torch.allclose(logits(model, [long], [[8, 9]]), logits(model, [other], [[8, 9]]))
    model.eval()
    assert not torch.allclose(logits(model, [long], [[8, 9]]),
                              logits(model, [other], [[8, 9]]), atol=1e-5)


def test_added_words_do_not_make_logits_depend_on_padding(nli):
    """<s>/</s> (ESIM) and the null <s> (DAM) go where each sentence starts and ends,
    not after the batch's padding."""
    task = fake_task()
    for model in (nli.ESIM(nli.ESIMConfig(embed_dim=8, hidden_size=6, mlp_dim=5, bos_eos=True,
                                          dropout=0.0), task),
                  nli.DecomposableAttention(nli.DAMConfig(embed_dim=8, proj_dim=6, ff_dim=6,
                                                          null_token=True, dropout=0.0),
                                            task)):
        model.eval()
        alone = logits(model, [[5, 6, 7]], [[8, 9]])
        padded = logits(model, [[5, 6, 7], [10, 11, 12, 13, 14, 15]], [[8, 9], [16, 17, 18, 19]])
        assert torch.allclose(alone[0], padded[0], atol=1e-5), type(model).__name__
