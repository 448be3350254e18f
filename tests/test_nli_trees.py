"""Binary trees as shift-reduce transitions and the per-word streams of the NLI data
(data_prep/nli/trees.py, data_prep/nli/corpus.py's write_split): shipped binary parses
read, constituency parses binarised head-outward, the agreement of the two on the
reference sample of SNLI dev, and the six streams written for every split."""
import json
import random
from pathlib import Path

import pytest

from compsuite.data_prep.nli import corpus, trees
from compsuite.data_prep.nli.snli import parse_tree, read_all
from compsuite.foundation.errors import DataError

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT.parent / "shared" / "reference" / "nli" / "snli_1.0_dev_sample.jsonl"
#: measured on SAMPLE: 2,578 of 2,578 sentences (trees.py's docstring); the margin
#: leaves room for a slightly different sample, not for a different head table
MEASURED_AGREEMENT = 1.0


# ----------------------------------------------------------------------------- transitions
@pytest.mark.parametrize("text,leaves,transitions", [
    ("( ( Two women ) ( are . ) )", ["Two", "women", "are", "."], "S S R S S R R"),
    ("( ( ( a b ) c ) d )", ["a", "b", "c", "d"], "S S R S R S R"),
    ("( a ( b ( c d ) ) )", ["a", "b", "c", "d"], "S S S S R R R"),
    ("dog", ["dog"], "S"),
    ("( dog )", ["dog"], "S"),
    ("( ( ( -LRB- a ) ) )", ["-LRB-", "a"], "S S R"),
])
def test_read_binary_parse(text, leaves, transitions):
    assert trees.read_binary_parse(text) == (leaves, transitions.split())


@pytest.mark.parametrize("text,message", [
    ("( a b c )", "a bracket with 3 items"),
    ("( ( a b )", "1 not closed"),
    ("( a b ) )", "a ')' too many"),
    ("( a b ) c", "2 trees"),
    ("( )", "a bracket with 0 items"),
])
def test_read_binary_parse_errors(text, message):
    with pytest.raises(DataError, match=r"^here: ") as e:
        trees.read_binary_parse(text, "here")
    assert message in str(e.value)


def _random_tree(rng, words):
    if len(words) == 1:
        return words[0]
    k = rng.randint(1, len(words) - 1)
    return f"( {_random_tree(rng, words[:k])} {_random_tree(rng, words[k:])} )"


def test_transitions_round_trip():
    rng = random.Random(3)
    for n in range(1, 30):
        words = [f"w{i}" for i in range(n)]
        text = _random_tree(rng, words)
        leaves, transitions = trees.read_binary_parse(text)
        assert leaves == words and len(transitions) == 2 * n - 1
        trees.check_transitions(transitions, n)
        assert trees.to_brackets(words, transitions) == text


@pytest.mark.parametrize("transitions,n,message", [
    ("S R", 1, "transition 2 reduces a stack of 1"),
    ("S S", 2, "leave 2 stack items"),
    ("S S R", 3, "2 shifts"),
    ("S X", 2, "transition 2 is 'X'"),
])
def test_check_transitions(transitions, n, message):
    with pytest.raises(DataError, match=message):
        trees.check_transitions(transitions.split(), n)


# ----------------------------------------------------------------------------- binarisation
@pytest.mark.parametrize("parse,expected", [
    # S -> NP VP . : (NP (VP .)); VP -> VBZ NP PP : ((VBZ NP) PP); NP -> DT JJ NN: (DT (JJ NN))
    ("(ROOT (S (NP (DT A) (NN dog)) (VP (VBZ runs) (NP (DT a) (JJ big) (NN race)) "
     "(PP (IN in) (NP (NN town)))) (. .)))",
     "( ( A dog ) ( ( ( runs ( a ( big race ) ) ) ( in town ) ) . ) )"),
    # coordination: NP -> NP CC NP headed by the first NP
    ("(ROOT (NP (NP (NNS dogs)) (CC and) (NP (NNS cats))))", "( ( dogs and ) cats )"),
    # ... unless the child before the CC is punctuation: the last JJ stays the head
    ("(ROOT (ADJP (JJ red) (, ,) (JJ white) (, ,) (CC and) (JJ blue)))",
     "( red ( , ( white ( , ( and blue ) ) ) ) )"),
    ("(ROOT (ADJP (JJ red) (, ,) (JJ white) (CC and) (JJ blue)))",
     "( red ( , ( ( white and ) blue ) ) )"),
    # a unary chain collapses; one word is one shift
    ("(ROOT (NP (NN dog)))", "dog"),
    ("(ROOT (S (VP (VB Run)) (. !)))", "( Run ! )"),
])
def test_binarise_hand_made_parses(parse, expected):
    tree = parse_tree(parse)
    transitions = trees.binarise(tree)
    assert trees.to_brackets(trees.words_of(tree), transitions) == expected
    assert trees.read_binary_parse(expected)[1] == transitions


def test_head_rules():
    assert trees.head_child("S", ["NP", "VP", "."]) == 1
    assert trees.head_child("VP", ["VBG", "NP", "PP"]) == 0
    assert trees.head_child("NP", ["DT", "NN", "CC", "NN"]) == 1       # coordination
    assert trees.head_child("NP", ["NP", "POS"]) == 1
    assert trees.head_child("NP-SBJ", ["DT", "NN"]) == 1               # function tags
    assert trees.head_child("FOO", ["NP", "VP"]) == 0                  # unknown: leftmost
    assert trees.head_child("FRAG", ["NP", ","]) == 0                  # never punctuation


def test_streams_of_one_sentence():
    tree = parse_tree("(ROOT (S (NP (-LRB- -LRB-) (NN dog) (-RRB- -RRB-)) (VP (VBZ barks)) "
                      "(. .)))")
    streams = trees.sentence_streams(tree, None, "x")
    assert streams["words"] == "( dog ) barks ."
    assert streams["pos"] == "-LRB- NN -RRB- VBZ ."
    assert streams["chars"] == "( <w> d o g <w> ) <w> b a r k s <w> ."
    # NP -> -LRB- NN -RRB- is headed by the noun: ((( dog) )) ; S -> NP VP . : (NP (VP .))
    assert streams["tree"] == "S S S R R S S R R"
    # a shipped binary parse is used as it is (its PTB tokens mapped like the words)
    shipped = trees.sentence_streams(tree, "( ( ( -LRB- dog ) -RRB- ) ( barks . ) )", "x")
    assert shipped["tree"] == "S S R S R S S R R"
    assert {k: v for k, v in shipped.items() if k != "tree"} == \
        {k: v for k, v in streams.items() if k != "tree"}
    with pytest.raises(DataError, match=r"f.jsonl:7: sentence1_binary_parse: its 4 leaves "
                                        r"are not the parse's 5 words"):
        trees.sentence_streams(tree, "( ( -LRB- dog ) ( barks . ) )",
                               "f.jsonl:7: sentence1_binary_parse")


@pytest.mark.skipif(not SAMPLE.is_file(), reason=f"{SAMPLE} absent")
def test_agreement_with_shipped_binary_parses():
    result = trees.agreement(SAMPLE)
    assert result["sentences"] > 2000
    assert result["share"] >= MEASURED_AGREEMENT - 0.01, result["differ"]


# ----------------------------------------------------------------------------- the writer
def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _row(i, p_parse, h_parse, label="entailment", **extra):
    p, h = parse_tree(p_parse), parse_tree(h_parse)
    return {"sentence1": " ".join(p.leaves()), "sentence2": " ".join(h.leaves()),
            "sentence1_parse": p_parse, "sentence2_parse": h_parse, "gold_label": label,
            "pairID": f"p{i}", **extra}


P1 = "(ROOT (S (NP (DT A) (NN dog)) (VP (VBZ chases) (NP (DT a) (NN cat))) (. .)))"
P2 = "(ROOT (S (NP (DT The) (NN man)) (VP (VBZ sleeps)) (. .)))"


def test_leaf_mismatch_is_an_error_naming_file_and_line(tmp_path):
    good = _row(0, P1, P2, sentence1_binary_parse="( ( A dog ) ( ( chases ( a cat ) ) . ) )",
                sentence2_binary_parse="( ( The man ) ( sleeps . ) )")
    bad = _row(1, P1, P2, sentence1_binary_parse="( ( A dog ) ( ( chases ( a cow ) ) . ) )")
    path = _jsonl(tmp_path / "pairs.jsonl", [good, bad])
    pairs, _ = read_all(path)
    assert pairs[0].premise_binary_parse.startswith("( ( A dog )")
    assert pairs[1].hypothesis_binary_parse == ""
    with pytest.raises(DataError, match=rf"{path}:2: sentence1_binary_parse: .*'cow' vs 'cat'"):
        corpus.write_split(tmp_path / "raw", "train", pairs)


def test_write_split_uses_the_shipped_parse_else_ours(tmp_path):
    left = "( ( ( ( A dog ) chases ) ( a cat ) ) . )"      # not what binarise gives
    rows = [_row(0, P1, P2, sentence1_binary_parse=left), _row(1, P2, P1)]
    pairs, _ = read_all(_jsonl(tmp_path / "pairs.jsonl", rows))
    raw = tmp_path / "raw"
    assert corpus.write_split(raw, "test", pairs) == 2
    lines = {n: (raw / f"test.{n}").read_text().splitlines()
             for n in corpus.SIDES + corpus.FEATURE_SIDES}
    assert lines["premise"] == ["A dog chases a cat .", "The man sleeps ."]
    assert lines["premise_tree"][0] == " ".join(trees.read_binary_parse(left)[1])
    assert lines["premise_tree"][1] == " ".join(trees.binarise(parse_tree(P2)))
    assert lines["hypothesis_tree"][0] == "S S R S S R R"            # ours: (The man) (sleeps .)
    assert lines["premise_pos"][0] == "DT NN VBZ DT NN ."
    assert lines["hypothesis_chars"][1].split(" <w> ")[:2] == ["A", "d o g"]
    assert corpus.read_split(raw, "test")["pairid"] == ["p0", "p1"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A small dataset built twice from the same files (synthetic pairs, and a test set
    with shipped binary parses), with adversarial pools."""
    from compsuite.data_prep.nli.synthetic import generate_pairs

    files = tmp_path_factory.mktemp("nlitrees_files")
    for name, (split, n) in {"train": ("train", 150), "dev": ("dev", 40)}.items():
        _jsonl(files / f"{name}.jsonl", generate_pairs(n, 1, split))
    test = []
    for r in generate_pairs(40, 2, "test"):
        for k in ("sentence1", "sentence2"):
            tree = parse_tree(r[f"{k}_parse"])
            r[f"{k}_binary_parse"] = trees.to_brackets(tree.leaves(), trees.binarise(tree))
        test.append(r)
    _jsonl(files / "test.jsonl", test)
    source = corpus.Source(name="tiny", train=[files / "train.jsonl"], valid=files / "dev.jsonl",
                           evals={"test": files / "test.jsonl"})
    roots = []
    for k in range(2):
        root = tmp_path_factory.mktemp(f"nlitrees_build{k}")
        manifest = corpus.build(root, source, pools=True, show=False,
                                lexical={"hash_bits": 12})
        roots.append((root, manifest))
    return source, roots


def test_build_writes_every_stream_for_every_split_reproducibly(built):
    source, [(a, manifest), (b, _)] = built
    splits = corpus.splits_of(source, pools=True)
    assert {"adv_soswap", "pool_addamod"} <= set(splits)
    assert manifest["generator_version"] == corpus.RAW_VERSION
    for split in splits:
        cols = corpus.read_split(a / "raw", split)
        for side in ("premise", "hypothesis"):
            words = [line.split() for line in cols[side]]
            pos = (a / "raw" / f"{split}.{side}_pos").read_text().splitlines()
            tree = (a / "raw" / f"{split}.{side}_tree").read_text().splitlines()
            chars = (a / "raw" / f"{split}.{side}_chars").read_text().splitlines()
            assert len(pos) == len(tree) == len(chars) == len(words) > 0, split
            for w, p, t, c in zip(words, pos, tree, chars):
                assert len(p.split()) == len(w)
                trees.check_transitions(t.split(), len(w), f"{split}.{side}_tree")
                assert c.split(f" {trees.WORD_SEP} ") == [" ".join(x) for x in w]
        for name in corpus.SIDES + corpus.FEATURE_SIDES:
            f = f"{split}.{name}"
            assert f in manifest["sha256"], f
            assert (a / "raw" / f).read_bytes() == (b / "raw" / f).read_bytes(), f
