"""The lexical (BoW) model, LMS and CS_lambda of Nie, Wang and Bansal (2019), section 5,
with the Human and Majority Vote rows of Table 5: hand-made cases, and figures on the
reference SNLI dev sample (skipped when it is absent)."""
import os

import numpy as np
import pytest
from conftest import reference_path

from compsuite.foundation.errors import ConfigError, DataError
from compsuite.data_prep.nli.snli import Pair, read_all
from compsuite.data_prep.nli import lexical as L
from compsuite.models.protocol import Model

E, N, C = L.LABELS


def parse(tagged):
    """A flat PTB bracketing of [(word, tag)]."""
    return "(ROOT (S " + " ".join(f"({t} {w})" for w, t in tagged) + "))"


def make_pair(pid, prem, hyp, label, annotators=None):
    return Pair(pair_id=pid, premise=" ".join(w for w, _ in prem),
                hypothesis=" ".join(w for w, _ in hyp), label=label,
                annotator_labels=list(annotators or []),
                premise_parse=parse(prem), hypothesis_parse=parse(hyp))


def pair_keys(pair):
    return set(L.pair_features(pair))


# ------------------------------------------------------------------------ features
def test_features_keep_content_words_lowercased_with_cross_pairs():
    prem = [("A", "DT"), ("Dog", "NN"), ("is", "VBZ"), ("running", "VBG"), ("very", "RB"),
            ("quickly", "RB"), ("in", "IN"), ("the", "DT"), ("dog", "NN"), ("park", "NN"),
            ("2", "CD"), (".", ".")]
    hyp = [("The", "DT"), ("dogs", "NNS"), ("are", "VBP"), ("not", "RB"), ("faster", "JJR"),
           ("where", "WRB"), ("it", "PRP"), ("DOG", "NNP")]
    f = L.features(prem, hyp)
    p = {"dog", "is", "running", "very", "quickly", "park"}
    h = {"dogs", "are", "not", "faster", "dog"}
    assert f == {**{f"p={w}": 1 for w in p}, **{f"h={w}": 1 for w in h},
                 **{f"x={a}|{b}": 1 for a in p for b in h}}
    assert len(f) == len(p) + len(h) + len(p) * len(h)      # "Dog"/"dog" counted once
    assert "p=a" not in f and "p=in" not in f and "h=where" not in f and "h=it" not in f


def test_feature_kinds_never_collide():
    f = L.features([("dog", "NN")], [("dog", "NN")])
    assert f == {"p=dog": 1, "h=dog": 1, "x=dog|dog": 1}
    # a '|' inside a word cannot make ("a|b", "c") and ("a", "b|c") the same cross feature
    one = L.features([("a|b", "NN")], [("c", "NN")])
    two = L.features([("a", "NN")], [("b|c", "NN")])
    assert [k for k in one if k.startswith("x=")] != [k for k in two if k.startswith("x=")]
    assert L.features([("the", "DT")], [("of", "IN")]) == {}


def test_pair_features_read_the_parses():
    pair = make_pair("1", [("Two", "CD"), ("men", "NNS"), ("sleep", "VBP")],
                     [("Men", "NNS"), ("rest", "VBP")], E)
    assert pair_keys(pair) == {"p=men", "p=sleep", "h=men", "h=rest", "x=men|men",
                               "x=men|rest", "x=sleep|men", "x=sleep|rest"}
    no_parse = Pair(pair_id="2", premise="A dog", hypothesis="A cat", label=N)
    with pytest.raises(DataError, match="sentence1_parse"):
        L.pair_features(no_parse)


# ------------------------------------------------------------------------ LMS
def test_lms_is_the_highest_wrong_label_probability():
    probs = [[0.7, 0.2, 0.1],        # gold E: wrong labels 0.2, 0.1
             [0.7, 0.2, 0.1],        # gold C: 0.7
             [0.2, 0.4, 0.4],        # gold N, tie with a wrong label: 0.4
             [0.45, 0.1, 0.45],      # gold N, two wrong labels tied: 0.45
             [1 / 3, 1 / 3, 1 / 3],  # gold E: 1/3
             [0.0, 0.0, 1.0]]        # gold E: 1.0
    got = L.lms(probs, [E, C, N, N, E, E])
    assert got == pytest.approx([0.2, 0.7, 0.4, 0.45, 1 / 3, 1.0])
    assert L.lms(np.zeros((0, 3)), []) == []


@pytest.mark.parametrize("probs,gold,msg", [
    ([[0.5, 0.5]], [E], "shape"),
    ([[0.5, 0.3, 0.2]], [E, N], "1 probability rows but 2"),
    ([[0.5, 0.3, 0.2]], ["entails"], "unknown label"),
    ([[2.0, -1.0, 0.3]], [E], "summing to 1"),
    ([[0.5, 0.5, 0.5]], [E], "summing to 1"),
])
def test_lms_rejects_bad_input(probs, gold, msg):
    with pytest.raises(DataError, match=msg):
        L.lms(probs, gold)


# ------------------------------------------------------------------------ CS_lambda
def test_cs_subset_keeps_lms_at_or_above_lambda():
    v = [0.5, 0.4999, 0.7, 0.6999, 1.0, 0.0, 0.6]
    assert L.cs_subset(v, 0.5) == [0, 2, 3, 4, 6]
    assert L.cs_subset(v, 0.6) == [2, 3, 4, 6]
    assert L.cs_subset(v, 0.7) == [2, 4]
    assert L.cs_subset(v, 0) == list(range(len(v)))      # CS_0 is the whole set
    assert L.cs_subset(v, 1) == [4]


@pytest.mark.parametrize("lam", [-0.1, 1.01, True, "0.5", float("nan")])
def test_cs_subset_rejects_lambda_outside_0_1(lam):
    with pytest.raises(ConfigError, match="lambda"):
        L.cs_subset([0.5], lam)


def test_cs_subset_rejects_bad_lms():
    with pytest.raises(DataError, match="LMS value 1"):
        L.cs_subset([0.5, 1.5], 0.5)


def test_cs_table_scores_each_subset():
    v = [0.2, 0.55, 0.65, 0.75, 0.9]
    table = L.cs_table(v, {"a": [True, True, False, True, False],
                           "human": [True, None, True, True, None]})
    assert table["columns"] == ["whole", "CS_0.5", "CS_0.6", "CS_0.7"]
    assert table["size"] == {"whole": 5, "CS_0.5": 4, "CS_0.6": 3, "CS_0.7": 2}
    assert table["accuracy"]["a"] == pytest.approx(
        {"whole": 3 / 5, "CS_0.5": 2 / 4, "CS_0.6": 1 / 3, "CS_0.7": 1 / 2})
    # None (not scored) is left out of the model's own accuracy
    assert table["accuracy"]["human"] == pytest.approx(
        {"whole": 1.0, "CS_0.5": 1.0, "CS_0.6": 1.0, "CS_0.7": 1.0})
    assert L.cs_table(v, {"h": [None] * 5}, lambdas=(0.95,))["accuracy"]["h"] == \
        {"whole": None, "CS_0.95": None}
    with pytest.raises(DataError, match="model 'a': 2 results for 5"):
        L.cs_table(v, {"a": [True, False]})
    with pytest.raises(ConfigError):
        L.cs_table(v, {}, lambdas=(0.5, 7))


# ------------------------------------------------------------------------ human / majority
def test_human_row_draws_one_annotator_label():
    w = [("x", "NN")]
    pairs = [make_pair("agree", w, w, E, [E] * 5),
             make_pair("disagree", w, w, N, [C] * 5),
             make_pair("none", w, w, C, [])]
    assert L.human_correct(pairs, seed=3) == [True, False, None]
    res = L.human_accuracy(pairs, seed=3)
    assert res == {"accuracy": 0.5, "n": 2, "skipped": 1, "expected": 0.5}
    with pytest.raises(DataError, match="annotator labels"):
        L.human_accuracy(pairs[2:], seed=0)


def test_human_draw_is_seeded_uniform_and_order_free():
    pairs = [make_pair(f"p{i}", [("x", "NN")], [("y", "NN")], E, [E, N, N, C, N])
             for i in range(400)]
    a = L.human_correct(pairs, seed=1)
    assert a == L.human_correct(pairs, seed=1)
    assert a != L.human_correct(pairs, seed=2)
    assert 0.14 < sum(a) / len(a) < 0.26                 # one label in five is gold
    assert L.human_correct(pairs[::-1], seed=1) == a[::-1]
    assert L.human_accuracy(pairs, 1)["expected"] == pytest.approx(0.2)


def test_majority_vote_row():
    assert L.majority_label([N, C, C, N, E]) == N          # tie N/C: first in LABELS order
    assert L.majority_label([C, C, E]) == C
    assert L.majority_correct([C, E, C], [C, C, E]) == [True, False, True]
    assert L.majority_accuracy([C, E, C, N], [C, C, E]) == 0.5
    with pytest.raises(DataError, match="no training labels"):
        L.majority_label([])
    with pytest.raises(DataError, match="unknown label"):
        L.majority_accuracy(["yes"], [C])


# ------------------------------------------------------------------------ classifier
CUES = {E: ("outdoors", "RB"), N: ("tall", "JJ"), C: ("sleeping", "VBG")}
NOUNS = [f"noun{i}" for i in range(60)]


def cue_pairs(n, seed, start=0):
    """Pairs whose label is decided by one hypothesis word (``CUES``); the rest is
    noise shared by every label."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        label = L.LABELS[i % 3]
        a, b = rng.choice(NOUNS[start:start + 30], 2, replace=False)
        prem = [("A", "DT"), (a, "NN"), ("is", "VBZ"), ("near", "IN"), ("the", "DT"), (b, "NN")]
        hyp = [("The", "DT"), (a, "NN"), ("is", "VBZ"), CUES[label]]
        out.append(make_pair(f"{seed}-{i}", prem, hyp, label))
    return out


def test_classifier_learns_a_lexical_cue():
    clf = L.LexicalClassifier(C=1.0).fit(cue_pairs(30, seed=0))
    test = cue_pairs(30, seed=1, start=30)                  # unseen nouns, same cues
    proba = clf.predict_proba(test)
    assert proba.shape == (30, 3)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert clf.classify(test) == [p.label for p in test]
    # the cue's column wins by a margin, not by a hair
    gold = [L.LABELS.index(p.label) for p in test]
    assert (proba[np.arange(30), gold] > 0.5).all()
    # and LMS is low on pairs the lexical cue solves
    assert max(L.lms(proba, [p.label for p in test])) < 0.5


def test_classifier_protocol_and_errors(tmp_path):
    clf = L.LexicalClassifier(C=1.0, name="bow")
    assert isinstance(clf, Model) and clf.capabilities == {"classify"} and clf.name == "bow"
    with pytest.raises(DataError, match="not trained"):
        clf.classify(cue_pairs(3, 0))
    with pytest.raises(DataError, match="not trained"):
        clf.save(tmp_path / "m.joblib")
    with pytest.raises(DataError, match="needs all of"):
        clf.fit([p for p in cue_pairs(30, 0) if p.label != N])
    clf.fit(cue_pairs(30, 0))
    clf.classify(cue_pairs(3, 1))
    clf.predict_proba(cue_pairs(3, 1))
    with pytest.raises(NotImplementedError, match="no representation"):
        clf.features(cue_pairs(3, 1))
    # feature dicts are accepted in place of pairs
    feats = [L.pair_features(p) for p in cue_pairs(3, 1)]
    assert np.array_equal(clf.predict_proba(feats), clf.predict_proba(cue_pairs(3, 1)))
    for bad in (0, -1.0, float("inf"), "1"):
        with pytest.raises(ConfigError, match="C must be"):
            L.LexicalClassifier(C=bad)
    with pytest.raises(ConfigError, match="grid"):
        L.LexicalClassifier(grid=())
    with pytest.raises(DataError, match="pass C explicitly"):
        L.LexicalClassifier().fit(cue_pairs(30, 0))           # 10% of 30 premises < 10 pairs


def test_C_chosen_on_held_out_premises_deterministically():
    train = cue_pairs(240, seed=0)
    a = L.LexicalClassifier(seed=0).fit(train)
    b = L.LexicalClassifier(seed=0).fit(train)
    assert a.C in L.C_GRID and set(a.held_out_loss) == set(L.C_GRID)
    assert a.C == min(a.held_out_loss, key=a.held_out_loss.get)
    assert f"|C:{a.C:g}|" in a.signature()
    assert "C_rule:heldout10%-logloss-grid(0.1,0.3,1,3,10)-seed0" in a.signature()
    test = cue_pairs(30, seed=5)
    assert a.held_out_loss == b.held_out_loss
    assert np.array_equal(a.predict_proba(test), b.predict_proba(test))
    other = L.LexicalClassifier(seed=1).fit(train)            # another held-out part
    assert other.held_out_loss != a.held_out_loss
    given = L.LexicalClassifier(C=3.0)
    assert "|C:3|C_rule:given|" in given.signature()
    assert given.fit(train).held_out_loss == {}


def test_group_split_keeps_groups_whole():
    groups = [i // 3 for i in range(300)]
    kept, held = L.group_split(groups, 0.1, seed=4)
    assert len(held) == 30 and sorted(kept + held) == list(range(300))
    assert not {groups[i] for i in kept} & {groups[i] for i in held}
    assert L.group_split(groups, 0.1, seed=4) == (kept, held)
    assert L.group_split(groups, 0.1, seed=5) != (kept, held)
    with pytest.raises(ConfigError, match="fraction"):
        L.group_split(groups, 1.5, 0)


def test_save_load_round_trip(tmp_path):
    clf = L.LexicalClassifier(C=0.3).fit(cue_pairs(60, seed=2))
    path = tmp_path / "sub" / "lexical.joblib"
    clf.save(path)
    assert os.listdir(path.parent) == ["lexical.joblib"]      # no temporary file left
    back = L.LexicalClassifier.load(path)
    test = cue_pairs(30, seed=3, start=20)
    assert np.array_equal(back.predict_proba(test), clf.predict_proba(test))
    assert back.signature() == clf.signature()
    with pytest.raises(DataError, match="no such file"):
        L.LexicalClassifier.load(tmp_path / "missing.joblib")
    (tmp_path / "junk.joblib").write_bytes(b"not a model")
    with pytest.raises(DataError, match="not a saved LexicalClassifier"):
        L.LexicalClassifier.load(tmp_path / "junk.joblib")


# ------------------------------------------------------------------------ reference sample
@pytest.fixture(scope="module")
def snli_dev():
    pairs, stats = read_all(reference_path("nli", "snli_1.0_dev_sample.jsonl"))
    return pairs


def test_reference_sample_lms_and_cs(snli_dev):
    train, test = L.premise_split(snli_dev, 0.2, seed=0)
    assert not {p.premise for p in train} & {p.premise for p in test}
    assert 0.15 < len(test) / len(snli_dev) < 0.25
    clf = L.LexicalClassifier(seed=0).fit(train)
    gold = [p.label for p in test]
    proba = clf.predict_proba(test)
    assert proba.shape == (len(test), 3) and np.allclose(proba.sum(axis=1), 1.0)
    pred = clf.classify(test)
    acc = np.mean([p == g for p, g in zip(pred, gold)])
    majority = L.majority_accuracy(gold, [p.label for p in train])
    assert acc > majority + 0.03
    v = L.lms(proba, gold)
    sizes = {lam: len(L.cs_subset(v, lam)) for lam in (0.0, 0.5, 0.6, 0.7)}
    assert sizes[0.0] == len(test) > sizes[0.5] >= sizes[0.6] >= sizes[0.7]
    assert sizes[0.5] > sizes[0.7] and sizes[0.5] > 0
    table = L.cs_table(v, {"lexical": [p == g for p, g in zip(pred, gold)],
                           "human": L.human_correct(test, seed=0),
                           "majority": L.majority_correct(gold, [p.label for p in train])})
    # on CS_0.5 a wrong label has p >= 0.5: the lexical model itself gets none right
    assert table["accuracy"]["lexical"]["CS_0.5"] == 0.0
    assert table["accuracy"]["lexical"]["whole"] == pytest.approx(acc)
    print(f"\n{clf.signature()}\nheld-out log-loss by C: {clf.held_out_loss}\n"
          f"train {len(train)} / held out {len(test)} pairs; accuracy {acc:.4f}, "
          f"majority {majority:.4f}\nLMS quartiles "
          f"{np.round(np.percentile(v, [0, 25, 50, 75, 100]), 3).tolist()}\n"
          f"|CS_lambda|: {sizes}\n{table}")


def test_reference_sample_human_row(snli_dev):
    rows = [L.human_accuracy(snli_dev, seed=s) for s in range(3)]
    assert all(r["n"] == len(snli_dev) and r["skipped"] == 0 for r in rows)
    # Table 5 gives 88.32 on the whole SNLI dev set; a sample of 1,273 pairs should land
    # within a few points of it (one draw's standard error here is about 0.9 points)
    assert 0.86 < rows[0]["expected"] < 0.90
    assert all(0.85 < r["accuracy"] < 0.91 for r in rows)
    assert len({r["accuracy"] for r in rows}) > 1             # the seed does matter
    print("\nhuman row: " + ", ".join(f"seed {s}: {r['accuracy']:.4f}"
                                       for s, r in enumerate(rows))
          + f"; expected {rows[0]['expected']:.4f}")
