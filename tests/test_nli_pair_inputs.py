"""``--pair-inputs pos,tree,chars`` of ``--task sentence_pair_classification``: a tiny
hand-made raw folder binarised by write_fairseq_pairs (compsuite/toolkits/fairseq/data.py),
loaded by the task; the tensors of a hand-made example, the errors for a stream that
does not fit its sentence (naming split, side and line), the word shuffle and the
augmentation pools with pair inputs, and net_input without them unchanged."""
import importlib
from argparse import Namespace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from compsuite.toolkits.fairseq import data as writers
from compsuite.foundation.errors import DataError

ROOT = Path(__file__).resolve().parent.parent
USER_DIR = ROOT / "fairseq_plugins"

NOUNS = ["dog", "cat", "man", "woman", "boy", "girl"]
VERBS = ["sees", "likes", "chases", "helps"]
ADJS = ["big", "small", "happy"]


def _sentence(det, adj, subj, verb, obj):
    """(words, tags, transitions): ((a [adj] subj) (verb (a obj)))."""
    words = [det] + ([adj] if adj else []) + [subj, verb, "a", obj]
    tags = ["DT"] + (["JJ"] if adj else []) + ["NN", "VBZ", "DT", "NN"]
    subject = "S S S R R" if adj else "S S R"
    return words, tags, f"{subject} S S S R R R"


def _pairs(n, offset):
    out = []
    for k in range(offset, offset + n):
        s, o = NOUNS[k % 6], NOUNS[(k + 1) % 6]
        v, adj = VERBS[k % 4], ADJS[k % 3]
        kind = k % 3
        p = _sentence("a", None, s, v, o)
        if kind == 0:
            out.append((p, _sentence("a", None, s, v, o), "entailment"))
        elif kind == 1:
            out.append((p, _sentence("a", None, o, v, s), "contradiction"))
        else:
            out.append((p, _sentence("a", adj, s, v, o), "neutral"))
    return out


SPLITS = {"train": _pairs(42, 0), "valid": _pairs(12, 42), "test": _pairs(13, 54)}


def _write_raw(raw: Path, bad: dict | None = None) -> None:
    """The raw streams; ``bad``: (split, file) -> (line, replacement) for broken lines."""
    raw.mkdir(parents=True, exist_ok=True)
    for split, pairs in SPLITS.items():
        files: dict = {}
        for (p, h, label) in pairs:
            for side, (words, tags, tree) in (("premise", p), ("hypothesis", h)):
                files.setdefault(side, []).append(" ".join(words))
                files.setdefault(f"{side}_pos", []).append(" ".join(tags))
                files.setdefault(f"{side}_tree", []).append(tree)
                files.setdefault(f"{side}_chars", []).append(
                    " <w> ".join(" ".join(w) for w in words))
            files.setdefault("label", []).append(label)
        for (s, name), (line, text) in (bad or {}).items():
            if s == split:
                files[name][line - 1] = text
        for name, lines in files.items():
            (raw / f"{split}.{name}").write_text("".join(x + "\n" for x in lines))


@pytest.fixture(scope="module")
def plug():
    from fairseq import utils

    utils.import_user_module(Namespace(user_dir=str(USER_DIR)))
    return importlib.import_module("fairseq_plugins.tasks.sentence_pair_classification")


def _rebinarise(folder: Path, split: str, name: str, lines: list) -> None:
    """Replace one binarised stream (``{split}.premise_F-hypothesis_F.{name}``) by
    ``lines``, encoded with the folder's dictionary as fairseq-preprocess does (the
    writer would refuse to binarise a broken line)."""
    from fairseq.data import Dictionary, indexed_dataset

    feature = name.split("_", 1)[1]
    d = Dictionary.load(str(folder / f"dict.premise_{feature}.txt"))
    stem = folder / f"{split}.premise_{feature}-hypothesis_{feature}.{name}"
    builder = indexed_dataset.make_builder(f"{stem}.bin", impl="mmap", vocab_size=len(d))
    for line in lines:
        builder.add_item(d.encode_line(line, add_if_not_exist=False))
    builder.finalize(f"{stem}.idx")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The good folder, binarised; and a copy with a bad tree (test line 2, premise)
    and a bad tag count (valid line 3, hypothesis)."""
    import shutil

    root = tmp_path_factory.mktemp("pair_inputs")
    _write_raw(root / "raw")
    manifest = writers.write_fairseq_pairs(root / "raw", root / "bin")
    shutil.copytree(root / "bin", root / "badbin")
    bad = {("test", "premise_tree"): (2, "S S R R S S S R R"),
           ("valid", "hypothesis_pos"): (3, "DT NN VBZ DT")}
    _write_raw(root / "badraw", bad)
    for split, name in bad:
        lines = (root / "badraw" / f"{split}.{name}").read_text().splitlines()
        _rebinarise(root / "badbin", split, name, lines)
    return SimpleNamespace(root=root, manifest=manifest)


def _task(plug, folder, **kw):
    cfg = SimpleNamespace(data=str(folder), max_positions=512, shuffle_words=False,
                          embedding_path=None, seed=1, pair_inputs="")
    for k, v in kw.items():
        setattr(cfg, k, v)
    return plug.SentencePairClassificationTask.setup_task(cfg)


# ----------------------------------------------------------------------------- the writer
def test_writer_binarises_every_feature(data):
    m = data.manifest
    assert m["pair_features"] == ["pos", "tree", "chars"] and m["pair_features_partial"] == {}
    assert m["args"]["pair_features"] == ["pos", "tree", "chars"]
    out = data.root / "bin"
    for f in ("pos", "tree", "chars"):
        assert (out / f"dict.premise_{f}.txt").is_file()
        for split in SPLITS:
            for side in ("premise", "hypothesis"):
                stem = f"{split}.premise_{f}-hypothesis_{f}.{side}_{f}"
                assert (out / f"{stem}.bin").is_file() and (out / f"{stem}.idx").is_file()
    tree_dict = (out / "dict.premise_tree.txt").read_text().split()
    assert {"S", "R"} <= set(tree_dict[::2])


@pytest.mark.parametrize("bad,message", [
    ({("test", "premise_tree"): (2, "S S R R S S S R R")},
     r"test\.premise_tree:2: transition 4 reduces a stack of one item"),
    ({("valid", "hypothesis_pos"): (3, "DT NN VBZ DT")},
     r"valid\.hypothesis_pos:3: 4 words, .*valid\.hypothesis:3 has 6"),
    ({("train", "premise_chars"): (5, "a <w> <w> d o g")},
     r"train\.premise_chars:5: a word without characters"),
    ({("test", "hypothesis_tree"): (1, "S S R S S R")},
     r"test\.hypothesis_tree:1: the transitions leave 2 stack items"),
])
def test_writer_checks_feature_lines(tmp_path, bad, message):
    _write_raw(tmp_path / "raw", bad)
    with pytest.raises(DataError, match=message):
        writers.check_pairs(tmp_path / "raw", list(SPLITS), ["pos", "tree", "chars"])


def test_writer_leaves_out_features_missing_in_a_split(tmp_path):
    _write_raw(tmp_path / "raw")
    (tmp_path / "raw" / "valid.hypothesis_chars").unlink()
    features, partial = writers.pair_features(tmp_path / "raw", list(SPLITS))
    assert features == ["pos", "tree"] and partial == {"chars": ["valid"]}
    (tmp_path / "raw" / "train.premise_pos").write_text("DT\n")
    with pytest.raises(DataError, match=r"train\.premise_pos has 1 lines, .*train\.premise has 42"):
        writers.check_pairs(tmp_path / "raw", list(SPLITS), features)


# ----------------------------------------------------------------------------- the task
def test_tensors_of_hand_made_examples(plug, data):
    task = _task(plug, data.root / "bin", pair_inputs="pos,tree,chars")
    assert task.pair_inputs == ("pos", "tree", "chars")
    pos, chars = task.feature_dictionary("pos"), task.feature_dictionary("chars")
    assert pos.index("VBZ") != pos.unk() and chars.index("g") != chars.unk()
    ds = task.load_dataset("test")
    # test pairs 54..56: entailment (5 + 5 words), contradiction (5 + 5), neutral (5 + 6)
    batch = ds.collater([ds[i] for i in range(3)])
    net = batch["net_input"]
    assert net["premise_pos"].shape == net["premise_tokens"].shape == (3, 5)
    assert net["hypothesis_pos"].shape == net["hypothesis_tokens"].shape == (3, 6)
    (p_words, p_tags, _), (h_words, h_tags, _), _ = SPLITS["test"][2]
    assert pos.string(net["premise_pos"][2]) == " ".join(p_tags)
    assert pos.string(net["hypothesis_pos"][0, :5]) == "DT NN VBZ DT NN"
    assert torch.all(net["hypothesis_pos"][0, 5:] == pos.pad())
    # (a dog) (sees (a cat)): words 0..4, reduces 5 = (0 1), 6 = (3 4), 7 = (2 6), 8 = (5 7)
    assert net["premise_tree"].shape == (3, 4, 2)
    assert net["premise_tree"][0].tolist() == [[0, 1], [3, 4], [2, 6], [5, 7]]
    # (a (big boy)) (...): six words, one row more; the five-word rows end with -1
    assert net["hypothesis_tree"].shape == (3, 5, 2)
    assert net["hypothesis_tree"][2].tolist() == [[1, 2], [0, 6], [4, 5], [3, 8], [7, 9]]
    assert net["hypothesis_tree"][0, 4].tolist() == [-1, -1]
    longest = max(len(w) for s in SPLITS["test"][:3] for side in s[:2] for w in side[0])
    assert net["hypothesis_chars"].shape == (3, 6, longest)
    word = net["hypothesis_chars"][2, 2]
    assert chars.string(word[word.ne(chars.pad())]) == " ".join(h_words[2])
    assert torch.all(net["hypothesis_chars"][0, 5] == chars.pad())       # no sixth word
    word = net["premise_chars"][0, 0]                                    # "a"
    assert chars.string(word[:1]) == "a" and torch.all(word[1:] == chars.pad())


def test_one_word_sentence_tree_rows_are_empty(plug):
    base = SimpleNamespace(sizes=[1], __getitem__=None)
    ds = plug._TreeDataset(base, shift=4)
    ds.base = [torch.tensor([4])]                           # one shift: one word
    assert ds[0].shape == (0, 2)
    assert ds.collater([ds[0]]).tolist() == [[[-1, -1]]]


def test_net_input_without_pair_inputs_unchanged(plug, data):
    task = _task(plug, data.root / "bin")
    assert task.feature_dictionary("pos") is None and task.pair_inputs == ()
    ds = task.load_dataset("test")
    net = ds.collater([ds[i] for i in range(3)])["net_input"]
    assert set(net) == {"premise_tokens", "premise_lengths", "hypothesis_tokens",
                        "hypothesis_lengths"}
    only_tree = _task(plug, data.root / "bin", pair_inputs="tree")
    ds = only_tree.load_dataset("test")
    net = ds.collater([ds[i] for i in range(3)])["net_input"]
    assert set(net) - {"premise_tokens", "premise_lengths", "hypothesis_tokens",
                       "hypothesis_lengths"} == {"premise_tree", "hypothesis_tree"}
    with pytest.raises(ValueError, match="--pair-inputs: unknown input"):
        _task(plug, data.root / "bin", pair_inputs="pos,parse")


@pytest.mark.parametrize("split,inputs,message", [
    ("test", "tree", r"test: premise line 2: its tree input does not fit the sentence: "
                     r"the transitions do not build one binary tree"),
    ("valid", "pos", r"valid: hypothesis line 3: its pos input does not fit the sentence: "
                     r"4 tags for 6 words"),
])
def test_a_stream_that_does_not_fit_is_an_error(plug, data, split, inputs, message):
    task = _task(plug, data.root / "badbin", pair_inputs=inputs)
    with pytest.raises(ValueError, match=message):
        task.load_dataset(split)
    task.load_dataset("train")                 # the other splits are fine


def test_missing_streams_are_an_error(plug, data, tmp_path):
    import shutil

    shutil.copytree(data.root / "bin", tmp_path / "bin")
    (tmp_path / "bin" / "dict.premise_chars.txt").unlink()
    with pytest.raises(FileNotFoundError, match=r"--pair-inputs chars: .*dict\.premise_chars"):
        _task(plug, tmp_path / "bin", pair_inputs="pos,chars")
    (tmp_path / "bin" / "test.premise_pos-hypothesis_pos.hypothesis_pos.idx").unlink()
    with pytest.raises(FileNotFoundError, match="split 'test' not found"):
        _task(plug, tmp_path / "bin", pair_inputs="pos").load_dataset("test")


def test_shuffle_moves_tags_and_characters_with_their_words(plug, data):
    task = _task(plug, data.root / "bin", pair_inputs="pos,tree,chars", shuffle_words=True)
    ds = task.load_dataset("train")
    batch = ds.collater([ds[i] for i in range(8)])
    out = task.shuffled(batch, epoch=3)
    before, after = batch["net_input"], out["net_input"]
    changed = False
    for side in ("premise", "hypothesis"):
        assert torch.equal(after[f"{side}_tree"], before[f"{side}_tree"])    # kept
        for r in range(8):
            def triples(net):
                return sorted((int(t), int(p), tuple(c.tolist())) for t, p, c in zip(
                    net[f"{side}_tokens"][r], net[f"{side}_pos"][r], net[f"{side}_chars"][r]))
            assert triples(after) == triples(before)
        changed |= not torch.equal(after[f"{side}_tokens"], before[f"{side}_tokens"])
    assert changed
    w, ch = task.source_dictionary, task.feature_dictionary("chars")
    for r in range(8):   # each word still has its own characters
        for t, c in zip(after["premise_tokens"][r], after["premise_chars"][r]):
            if int(t) != w.pad():
                assert ch.string(c[c.ne(ch.pad())]) == " ".join(w[int(t)])


def test_augmentation_pool_carries_pair_inputs(plug, data):
    task = _task(plug, data.root / "bin", pair_inputs="pos,tree,chars",
                 augment_subsets="test", augment_per_epoch=5)
    ds = task.load_dataset("train", epoch=2)
    assert len(ds) == 42 + 5
    batch = ds.collater([ds[i] for i in range(len(ds))])
    net = batch["net_input"]
    assert net["premise_pos"].shape == net["premise_tokens"].shape
    assert net["hypothesis_chars"].shape[:2] == net["hypothesis_tokens"].shape
    lengths = net["hypothesis_lengths"]
    filled = (net["hypothesis_tree"][:, :, 0] >= 0).sum(1)
    assert torch.equal(filled, lengths - 1)                  # n-1 reduces per sentence


def test_a_model_needing_inputs_not_loaded_is_refused(plug, data, monkeypatch):
    from fairseq.tasks import FairseqTask

    class NeedsTree(torch.nn.Module):
        PAIR_INPUTS = ("pos", "tree")

    monkeypatch.setattr(FairseqTask, "build_model",
                        lambda self, cfg, from_checkpoint=False: NeedsTree())
    task = _task(plug, data.root / "bin", pair_inputs="tree")
    with pytest.raises(ValueError, match=r"pass --pair-inputs pos,tree \(missing: pos\)"):
        task.build_model(SimpleNamespace())
    task = _task(plug, data.root / "bin", pair_inputs="tree,pos")
    assert isinstance(task.build_model(SimpleNamespace()), NeedsTree)
