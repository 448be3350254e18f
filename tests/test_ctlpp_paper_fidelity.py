"""CTL++'s Bi-LSTM and training loop against the authors' released code
(RobertCsordas/ctlpp@1b5ab28; data_prep/ctlpp/doc.md, "Paper profile against the
authors' code"): the embeddings start as PyTorch's N(0, 1), dropout reaches the
embeddings only, the classifier reads the final forward state (after the end token) and
the final backward state (after the first token), and training batches hold one input
length and are drawn afresh each epoch."""
from argparse import Namespace
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from compsuite.foundation.checkout import ROOT


@pytest.fixture(scope="module")
def ctl():
    from fairseq import utils

    utils.import_user_module(Namespace(user_dir=str(ROOT / "fairseq_plugins")))
    import importlib

    return importlib.import_module("fairseq_plugins.models.ctlpp")


def _paper_bilstm(ctl, dropout=0.5):
    from fairseq.data import Dictionary

    d = Dictionary()
    for w in [chr(c) for c in range(ord("a"), ord("z") + 1)] + list("ABCDEF01234567"):
        d.add_symbol(w)
    d.finalize(padding_factor=8)       # as fairseq-preprocess writes dict.src.txt
    cfg = SimpleNamespace(hidden_size=128, embed_dim=256, layers=1, dropout=dropout)
    return ctl.CTLPPBiLSTM(cfg, SimpleNamespace(source_dictionary=d, num_classes=8)), d


def test_bilstm_embeddings_start_as_pytorch_default(ctl):
    """The authors' nn.Embedding keeps PyTorch's N(0, 1), not d ** -0.5 (1/16)."""
    torch.manual_seed(0)
    m, d = _paper_bilstm(ctl)
    rows = [i for i in range(len(d)) if i != d.pad()]
    w = m.embed.weight[rows]
    assert 0.9 < w.std().item() < 1.1 and abs(w.mean().item()) < 0.05


def test_bilstm_dropout_on_embeddings_only(ctl):
    """With dropout 0.5 in training, the classifier's input is the representation
    itself (the same random draws give the same features), not a dropped-out copy."""
    m, _ = _paper_bilstm(ctl)
    m.train()
    tokens = torch.tensor([[5, 6, 7, 8, 2], [9, 10, 11, 12, 2]])
    seen = {}
    m.out.register_forward_hook(lambda mod, inp, out: seen.setdefault("x", inp[0].detach()))
    torch.manual_seed(3)
    m(tokens)
    torch.manual_seed(3)
    h = m.features(tokens)
    assert torch.equal(seen["x"], h.detach())
    torch.manual_seed(3)
    m.eval()
    assert not torch.equal(m.features(tokens), h)     # dropout did act on the embeddings


def test_bilstm_reads_the_final_states(ctl):
    """Forward state after the end token, backward state after the first token
    (BidirectionalLSTMEncoder.get_run_summary_state), for padded inputs too."""
    torch.manual_seed(1)
    m, d = _paper_bilstm(ctl, dropout=0.0)
    m.eval()
    seq = torch.tensor([[5, 6, 7, 2]])
    out, _ = m.lstm(m.embed(seq))                     # [1, T, 2H]: fwd | bwd
    want = torch.cat([out[0, -1, :128], out[0, 0, 128:]])
    assert torch.allclose(m.features(seq)[0], want, atol=1e-6)
    padded = torch.tensor([[5, 6, 7, 2], [8, 2, d.pad(), d.pad()]])
    assert torch.allclose(m.features(padded)[0], want, atol=1e-6)
    alone = m.features(torch.tensor([[8, 2]]))[0]
    assert torch.allclose(m.features(padded)[1], alone, atol=1e-6)
    assert m.output_dim() == 256 and m.out.in_features == 256


def test_length_buckets_one_length_per_batch_drawn_afresh():
    """The authors' BucketedSampler: shuffle, leave out what does not fill a batch,
    sort by length (stable, so the shuffle orders each length), cut, per epoch."""
    from fairseq.data import data_utils

    from fairseq_plugins.tasks.sequence_classification import LengthBuckets

    rng = np.random.RandomState(0)
    sizes = rng.randint(3, 8, size=1003)
    ds = LengthBuckets(list(range(1003)), sizes, batch_size=10)
    with data_utils.numpy_seed(1 + 1):
        e1 = ds.ordered_indices()
    with data_utils.numpy_seed(1 + 2):
        e2 = ds.ordered_indices()
    with data_utils.numpy_seed(1 + 1):
        again = ds.ordered_indices()
    assert len(e1) == 1000 and len(set(e1)) == 1000                 # 3 left out this epoch
    assert np.array_equal(e1, again) and not np.array_equal(e1, e2)
    assert np.all(np.diff(sizes[e1]) >= 0)                          # sorted by length
    batches = [e1[i:i + 10] for i in range(0, 1000, 10)]
    mixed = [b for b in batches if len(set(sizes[b])) > 1]
    assert len(mixed) <= 4                                          # only at length borders
    same_len = e1[sizes[e1] == 5]
    assert not np.array_equal(same_len, np.sort(same_len))          # shuffled within a length


def test_fairseq_rebuilds_length_batches_each_epoch(tmp_path):
    """Through fairseq's own iterator: every training batch of 16 holds one length
    (but at the borders), and epoch 2's batches are not epoch 1's."""
    from compsuite.data_prep.ctlpp import CTLConfig, generate
    from compsuite.toolkits import get_backend
    from compsuite.foundation.dataset import Dataset
    from fairseq import options, tasks, utils
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf

    utils.import_user_module(Namespace(user_dir=str(ROOT / "fairseq_plugins")))
    data = Dataset(tmp_path, ("train", "valid", "test_iid", "test_ood"), "tiny")
    generate(data.raw, CTLConfig(n_train=300, n_test=20), seed=1)
    folder = get_backend("fairseq").write_data(data)
    parser = options.get_training_parser()
    args = options.parse_args_and_arch(parser, [
        str(folder), "--user-dir", str(ROOT / "fairseq_plugins"), "--task",
        "sequence_classification", "--arch", "ctlpp_bilstm", "--length-buckets",
        "--rebuild-batches", "--batch-size", "16", "--cpu", "--seed", "1"])
    cfg = convert_namespace_to_omegaconf(args)
    task = tasks.setup_task(cfg.task)
    task.load_dataset("train")
    ds = task.dataset("train")
    itr = task.get_batch_iterator(ds, max_sentences=16, seed=1, epoch=1,
                                  required_batch_size_multiple=8)
    epochs = []
    for _ in range(2):
        batches = [b["net_input"]["src_lengths"].tolist()
                   for b in itr.next_epoch_itr(shuffle=True)]
        assert all(len(b) == 16 for b in batches)                   # the rest left out
        assert sum(len(set(b)) > 1 for b in batches) <= 5           # 5 lengths: 4 borders
        epochs.append(batches)
    assert epochs[0] != epochs[1]


def test_table1_leaves_out_runs_that_did_not_converge():
    """paper/plot_1stage_performance.py: runs with IID accuracy <= 0.5 are left out and
    the first 25 others averaged; report.json keeps every seed."""
    from compsuite.eval.ctlpp.report import table1_section
    from compsuite.eval.reports.tables import paper_numbers

    def run(seed, iid, ood):
        return {"seed": seed, "test_iid": {"accuracy": iid}, "test_ood": {"accuracy": ood}}

    groups = {("bilstm", "A"): [run(3, 1.0, 0.9), run(1, 0.3, 0.1), run(2, 1.0, 1.0)]
                                + [run(s, 1.0, 0.5) for s in range(4, 40)]}
    report = {"table1": []}
    md = table1_section({"bilstm": {"paper_name": "Bi-LSTM"}}, groups, ["A"],
                        paper_numbers("ctlpp"), report)
    (row,) = report["table1"]
    assert row["seeds_kept"] == list(range(2, 27)) and row["seeds_run"] == 39
    assert row["ood"][:2] == [1.0, 0.9] and len(row["ood_every_seed"]) == 39
    assert "(14 of 39 left out)" in md
    report = {"table1": []}
    md = table1_section({"bilstm": {"paper_name": "Bi-LSTM"}},
                        {("bilstm", "A"): [run(1, 0.2, 0.1), run(2, 0.4, 0.3)]}, ["A"],
                        paper_numbers("ctlpp"), report)
    assert "| (0.30 ± 0.14) | (0.20 ± 0.14) | – (2 of 2 left out) |" in md
    assert report["table1"][0]["seeds"] == 0


def test_every_training_seed_reads_the_same_data(tmp_path):
    """The authors' datasets keep their default seed ("The seed for data generation is
    fixed", Appendix A.2): seeds 1 and 2 train on the same files; data_seed: null gives
    each its own."""
    from compsuite.registry import get_study
    from conftest import edited_study

    study = get_study("ctlpp")
    tiny = study.profile("tiny")
    assert tiny.settings.data_seed == study.profile("paper").settings.data_seed == 1
    one = study.prepare("A", 1, tiny, tmp_path / "D", show=False)
    two = study.prepare("A", 2, tiny, tmp_path / "D", show=False)
    assert one.root == two.root

    def per_seed(raw):
        raw["profiles"]["tiny"]["data_seed"] = None
    own = edited_study(tmp_path, "ctlpp", per_seed)
    three = own.prepare("A", 2, own.profile("tiny"), tmp_path / "D", show=False)
    assert three.root != one.root and three.root.name == "seed2"
